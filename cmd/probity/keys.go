package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
)

const keysUsage = `Usage: probity keys <subcommand> [flags]

Manage Probity's Ed25519 signing keys and the key document (keys.json) that publishes
their public halves at /.well-known/probity-keys.json.

Subcommands:

	generate   create a signing key and a key document in a new key directory
	rotate     replace the signing key; earlier keys stay listed so old statements verify
	revoke     mark a key revoked in the key document
	show       validate a key document and print its keys

Run "probity keys <subcommand> -h" for a subcommand's flags.
`

const keysGenerateUsage = `Usage: probity keys generate --dir DIR [--issuer URL]

Create a new Ed25519 signing key in DIR/signing-key.pem (PKCS#8 PEM, mode 0600) and a
key document listing it in DIR/keys.json (mode 0644), valid from now. DIR is created
with mode 0700 if missing. Refuses to run if either file already exists; to replace the
signing key use "probity keys rotate".

Flags:

	--dir DIR      key directory (required)
	--issuer URL   issuer named in the key document (default https://probity.dev)
`

const keysRotateUsage = `Usage: probity keys rotate --dir DIR

Replace the signing key in DIR with a new one, valid from now. The previous key stays
listed in DIR/keys.json with valid_until set to now, so statements it signed keep
verifying; both windows include the rotation millisecond, so a statement observed at
exactly that instant verifies under either key.

The previous private key is deleted, not archived: a retired private key that still
exists could be used to forge statements dated inside its window.

Publish the updated keys.json before statements signed with the new key are served.

Flags:

	--dir DIR   key directory (required)
`

const keysRevokeUsage = `Usage: probity keys revoke --dir DIR --key-id ID --reason TEXT

Mark the key ID revoked in DIR/keys.json as of now, recording why, as a new signed
version of the key document (signed by the signing key; a running "probity serve"
appends it to the transparency log within a minute, "probity round" when it next
runs). The signing key cannot sign its own
revocation: to revoke it, run "probity keys rotate" first, then revoke the old key.
Records logged and witnessed before the revocation stay valid; later ones signed by
the key do not. Publish the updated keys.json.

Flags:

	--dir DIR       key directory (required)
	--key-id ID     key_id of the key to revoke (required)
	--reason TEXT   why the key is revoked, 1 to 200 bytes (required)
`

const keysShowUsage = `Usage: probity keys show (--dir DIR | --keys FILE) [--json]

Validate a key document and print its keys: key id, validity window and status
(active, pending, retired, or revoked with the reason). Private keys are never read.

Flags:

	--dir DIR     key directory; shows DIR/keys.json
	--keys FILE   key document file
	--json        print the validated document as JSON instead of a table
`

// keysCLI runs "probity keys"; now and rand are seams for tests.
type keysCLI struct {
	now            func() time.Time
	rand           io.Reader
	stdout, stderr io.Writer
}

func runKeys(args []string, stdout, stderr io.Writer) int {
	c := &keysCLI{now: time.Now, rand: rand.Reader, stdout: stdout, stderr: stderr}
	return c.run(args)
}

func (c *keysCLI) run(args []string) int {
	if len(args) == 0 {
		io.WriteString(c.stderr, keysUsage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(c.stdout, keysUsage)
		return 0
	case "generate":
		return c.generate(args[1:])
	case "rotate":
		return c.rotate(args[1:])
	case "revoke":
		return c.revoke(args[1:])
	case "show":
		return c.show(args[1:])
	}
	return c.usageError("", fmt.Sprintf("unknown keys subcommand %q", args[0]))
}

// parseFlags parses args into fs; it returns -1 to continue or an exit code.
func (c *keysCLI) parseFlags(flags *flag.FlagSet, usage string, args []string) int {
	flags.SetOutput(io.Discard)
	flags.Usage = func() {}
	if err := parseFlags(flags, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(c.stdout, usage)
			return 0
		}
		return c.usageError(flags.Name(), err.Error())
	}
	if flags.NArg() > 0 {
		return c.usageError(flags.Name(), fmt.Sprintf("unexpected argument %q", flags.Arg(0)))
	}
	return -1
}

func (c *keysCLI) usageError(sub, msg string) int {
	fmt.Fprintf(c.stderr, "error: %s\n", msg)
	if sub == "" {
		fmt.Fprintf(c.stderr, "hint: run \"probity keys -h\" for the list of subcommands\n")
	} else {
		fmt.Fprintf(c.stderr, "hint: run \"probity keys %s -h\" for usage\n", sub)
	}
	return 2
}

func (c *keysCLI) fail(err error, hints ...string) int {
	fmt.Fprintf(c.stderr, "error: %v\n", err)
	for _, h := range hints {
		fmt.Fprintf(c.stderr, "hint: %s\n", h)
	}
	return 2
}

func (c *keysCLI) generate(args []string) int {
	flags := flag.NewFlagSet("generate", flag.ContinueOnError)
	dir := flags.String("dir", "", "")
	issuer := flags.String("issuer", "https://probity.dev", "")
	if code := c.parseFlags(flags, keysGenerateUsage, args); code >= 0 {
		return code
	}
	if *dir == "" {
		return c.usageError("generate", "--dir is required")
	}
	d, err := signing.GenerateDir(*dir, *issuer, c.now(), c.rand)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return c.fail(err, "to replace the signing key, run: probity keys rotate --dir "+shellQuote(*dir))
		}
		return c.fail(err)
	}
	k := d.Keys[0]
	fmt.Fprintf(c.stdout, "generated signing key %s, valid from %s\n", k.KeyID, attest.FormatTime(k.ValidFrom))
	fmt.Fprintf(c.stdout, "  private key:  %s (mode 0600; keep it secret)\n", filepath.Join(*dir, signing.PrivateKeyFile))
	fmt.Fprintf(c.stdout, "  key document: %s (publish it at %s)\n", filepath.Join(*dir, keys.DocumentFile), publishURL(d.Issuer))
	return 0
}

func (c *keysCLI) rotate(args []string) int {
	flags := flag.NewFlagSet("rotate", flag.ContinueOnError)
	dir := flags.String("dir", "", "")
	if code := c.parseFlags(flags, keysRotateUsage, args); code >= 0 {
		return code
	}
	if *dir == "" {
		return c.usageError("rotate", "--dir is required")
	}
	oldID := signingKeyID(*dir) // "" if unreadable; RotateDir reports why
	d, nk, err := signing.RotateDir(*dir, c.now(), c.rand)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "rotated the signing key in %s\n", *dir)
	fmt.Fprintf(c.stdout, "  new key:      %s, valid from %s\n", nk.KeyID, attest.FormatTime(nk.ValidFrom))
	if old, ok := d.Lookup(oldID); ok && oldID != nk.KeyID && old.ValidUntil != nil {
		fmt.Fprintf(c.stdout, "  previous key: %s, valid until %s (private key deleted; public key stays listed)\n", old.KeyID, attest.FormatTime(*old.ValidUntil))
	}
	fmt.Fprintf(c.stdout, "publish the updated %s at %s\n", filepath.Join(*dir, keys.DocumentFile), publishURL(d.Issuer))
	return 0
}

func (c *keysCLI) revoke(args []string) int {
	flags := flag.NewFlagSet("revoke", flag.ContinueOnError)
	dir := flags.String("dir", "", "")
	keyID := flags.String("key-id", "", "")
	reason := flags.String("reason", "", "")
	if code := c.parseFlags(flags, keysRevokeUsage, args); code >= 0 {
		return code
	}
	switch {
	case *dir == "":
		return c.usageError("revoke", "--dir is required")
	case *keyID == "":
		return c.usageError("revoke", "--key-id is required")
	case *reason == "":
		return c.usageError("revoke", "--reason is required")
	}
	d, err := signing.RevokeDir(*dir, *keyID, *reason, c.now())
	if err != nil {
		return c.fail(err)
	}
	k, _ := d.Lookup(*keyID)
	fmt.Fprintf(c.stdout, "revoked key %s at %s (reason: %s)\n", k.KeyID, attest.FormatTime(*k.RevokedAt), *k.RevocationReason)
	fmt.Fprintf(c.stdout, "publish the updated %s at %s\n", filepath.Join(*dir, keys.DocumentFile), publishURL(d.Issuer))
	return 0
}

func (c *keysCLI) show(args []string) int {
	flags := flag.NewFlagSet("show", flag.ContinueOnError)
	dir := flags.String("dir", "", "")
	file := flags.String("keys", "", "")
	asJSON := flags.Bool("json", false, "")
	if code := c.parseFlags(flags, keysShowUsage, args); code >= 0 {
		return code
	}
	path := *file
	switch {
	case *dir != "" && *file != "":
		return c.usageError("show", "give either --dir or --keys, not both")
	case *dir != "":
		path = filepath.Join(*dir, keys.DocumentFile)
	case *file == "":
		return c.usageError("show", "--dir or --keys is required")
	}
	d, err := keys.Load(path)
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		data, err := keys.MarshalDocument(d)
		if err != nil {
			return c.fail(err)
		}
		c.stdout.Write(data)
		return 0
	}
	now := c.now()
	fmt.Fprintf(c.stdout, "issuer: %s\n", d.Issuer)
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY ID\tVALID FROM\tVALID UNTIL\tSTATUS")
	for i := range d.Keys {
		k := &d.Keys[i]
		until := "-"
		if k.ValidUntil != nil {
			until = attest.FormatTime(*k.ValidUntil)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.KeyID, attest.FormatTime(k.ValidFrom), until, keyStatus(k, now))
	}
	tw.Flush()
	return 0
}

// keyStatus describes k at now: revoked (with when and why), active, pending or retired.
func keyStatus(k *keys.Key, now time.Time) string {
	switch {
	case k.Revoked():
		return fmt.Sprintf("revoked %s: %s", attest.FormatTime(*k.RevokedAt), *k.RevocationReason)
	case k.ValidAt(now):
		return "active"
	case now.Before(k.ValidFrom):
		return "pending"
	default:
		return "retired"
	}
}

// signingKeyID returns the key_id of DIR/signing-key.pem, or "" if it cannot be loaded.
func signingKeyID(dir string) string {
	priv, err := signing.LoadPrivateKey(filepath.Join(dir, signing.PrivateKeyFile))
	if err != nil {
		return ""
	}
	defer clear(priv)
	return signing.NewSigner(priv).ID()
}

// publishURL is where the key document of issuer belongs.
func publishURL(issuer string) string {
	const wellKnown = "/.well-known/probity-keys.json"
	if strings.HasPrefix(issuer, "https://") || strings.HasPrefix(issuer, "http://") {
		return strings.TrimSuffix(issuer, "/") + wellKnown
	}
	return wellKnown
}

// shellQuote quotes s for a POSIX shell if it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
