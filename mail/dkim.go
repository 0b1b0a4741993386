package mail

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/emersion/go-msgauth/dkim"
)

// DKIMConfig names the key that signs every message (RFC 6376) and where its public
// half is published: the TXT record "Selector._domainkey.Domain". DKIMRecord gives
// the record's value.
type DKIMConfig struct {
	// Domain is the signing domain (d=). It must be the domain of Config.From or a
	// parent of it, so that the signature aligns with the From address (DMARC).
	Domain string
	// Selector is the selector (s=), one DNS label or several separated by dots.
	Selector string
	// KeyFile is a PEM file holding one private key: Ed25519 or RSA (at least
	// 1024 bits; 2048 recommended) as "PRIVATE KEY" (PKCS #8), or RSA as
	// "RSA PRIVATE KEY" (PKCS #1). Encrypted keys are not supported.
	KeyFile string
}

// maxKeyFile bounds the key file read: an RSA 8192-bit PEM key is about 6.5 KB.
const maxKeyFile = 64 << 10

// dkimHeaderKeys are the header fields every signature covers. RFC 8058 section 4
// requires List-Unsubscribe and List-Unsubscribe-Post to be signed. The fields a
// forger would most like to add are listed twice ("oversigned", RFC 6376 section
// 8.15), so that adding a second instance of one of them breaks the signature.
var dkimHeaderKeys = []string{
	"From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type",
	"List-Id", "List-Unsubscribe", "List-Unsubscribe-Post", "Auto-Submitted",
	"From", "To", "Subject", "Date", "Message-ID", "List-Id", "List-Unsubscribe",
	"List-Unsubscribe-Post",
}

// DKIMRecord reads cfg.KeyFile and returns the DNS TXT record to publish for it:
// its name ("Selector._domainkey.Domain") and its value ("v=DKIM1; k=ed25519;
// p=…" or "v=DKIM1; k=rsa; p=…"). Long RSA values must be split into strings of at
// most 255 bytes in the zone file; resolvers join them again.
func DKIMRecord(cfg DKIMConfig) (name, value string, err error) {
	if err := checkDKIMNames(cfg); err != nil {
		return "", "", err
	}
	key, err := loadDKIMKey(cfg.KeyFile)
	if err != nil {
		return "", "", err
	}
	value, err = dkimTXT(key.Public())
	if err != nil {
		return "", "", err
	}
	return cfg.Selector + "._domainkey." + cfg.Domain, value, nil
}

func dkimTXT(pub crypto.PublicKey) (string, error) {
	switch pub := pub.(type) {
	case ed25519.PublicKey:
		return "v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(pub), nil
	case *rsa.PublicKey:
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return "", fmt.Errorf("mail: couldn't encode the DKIM public key: %w", err)
		}
		return "v=DKIM1; k=rsa; p=" + base64.StdEncoding.EncodeToString(der), nil
	}
	return "", fmt.Errorf("mail: DKIM keys must be Ed25519 or RSA, not %T", pub)
}

// newDKIM checks cfg against the From domain and returns the signing options.
func newDKIM(cfg DKIMConfig, fromDomain string) (*dkim.SignOptions, error) {
	if err := checkDKIMNames(cfg); err != nil {
		return nil, err
	}
	d := strings.ToLower(cfg.Domain)
	if f := strings.ToLower(fromDomain); f != d && !strings.HasSuffix(f, "."+d) {
		return nil, fmt.Errorf("mail: the DKIM domain %q is neither the From domain %q nor a parent of it; receivers checking DMARC alignment would reject the mail: set DKIM.Domain to %q", cfg.Domain, fromDomain, fromDomain)
	}
	key, err := loadDKIMKey(cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	opts := &dkim.SignOptions{
		Domain:                 cfg.Domain,
		Selector:               cfg.Selector,
		Signer:                 key,
		Hash:                   crypto.SHA256,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed,
		BodyCanonicalization:   dkim.CanonicalizationRelaxed,
		HeaderKeys:             dkimHeaderKeys,
	}
	// NewSigner validates the options (key type, canonicalization) once, here,
	// instead of at the first message.
	s, err := dkim.NewSigner(opts)
	if err != nil {
		return nil, fmt.Errorf("mail: invalid DKIM configuration: %w", err)
	}
	_ = s.Close() // the signer saw no message; its error ("no header") does not matter
	return opts, nil
}

func checkDKIMNames(cfg DKIMConfig) error {
	if !isDomain(cfg.Domain) {
		return fmt.Errorf("mail: DKIM.Domain %q is not a domain name (like example.org)", cfg.Domain)
	}
	if !isDomain(cfg.Selector) && !isLabel(cfg.Selector) {
		return fmt.Errorf("mail: DKIM.Selector %q is not a DNS label (like probity1)", cfg.Selector)
	}
	if cfg.KeyFile == "" {
		return fmt.Errorf("mail: DKIM.KeyFile is empty: give the PEM file of the signing key")
	}
	return nil
}

// loadDKIMKey reads exactly one unencrypted PEM private key, Ed25519 or RSA.
func loadDKIMKey(path string) (crypto.Signer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mail: couldn't read the DKIM key: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("mail: couldn't read the DKIM key %q: %w", path, err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("mail: the DKIM key file %q is larger than %d bytes; it should hold one PEM private key", path, maxKeyFile)
	}
	block, rest := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("mail: the DKIM key file %q holds no PEM block; expected \"-----BEGIN PRIVATE KEY-----\"", path)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("mail: the DKIM key file %q holds more than one PEM block; keep only the private key", path)
	}
	var key any
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "ENCRYPTED PRIVATE KEY":
		return nil, fmt.Errorf("mail: the DKIM key %q is encrypted; decrypt it (openssl pkey -in KEY -out PLAIN) and protect the file with mode 0600 instead", path)
	default:
		return nil, fmt.Errorf("mail: the DKIM key file %q holds a %q PEM block; expected \"PRIVATE KEY\" (Ed25519 or RSA) or \"RSA PRIVATE KEY\"", path, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("mail: couldn't parse the DKIM key %q: %w", path, err)
	}
	switch k := key.(type) {
	case ed25519.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		if bits := k.N.BitLen(); bits < 1024 {
			return nil, fmt.Errorf("mail: the DKIM RSA key %q has %d bits; receivers ignore signatures by keys under 1024 bits (RFC 8301): use 2048 bits or Ed25519", path, bits)
		}
		return k, nil
	}
	return nil, fmt.Errorf("mail: the DKIM key %q is a %T; only Ed25519 and RSA keys can sign DKIM", path, key)
}
