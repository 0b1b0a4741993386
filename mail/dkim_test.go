package mail_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/probity-dev/probity/mail"
)

// writeKey writes key as a PEM file of the given block type and returns its path.
func writeKey(t testing.TB, blockType string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dkim.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func ed25519KeyFile(t testing.TB) string {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return writeKey(t, "PRIVATE KEY", der)
}

// lookupTXT answers only the one record DKIMRecord says to publish.
func lookupTXT(name, value string) func(string) ([]string, error) {
	return func(domain string) ([]string, error) {
		if domain == name {
			return []string{value}, nil
		}
		return nil, fmt.Errorf("no TXT record for %s", domain)
	}
}

// TestDKIM signs with Ed25519 and with RSA (PKCS #8 and PKCS #1 files), sends
// through the sink, and verifies the received bytes with go-msgauth's verifier
// against the TXT record DKIMRecord gives; changing the List-Unsubscribe URL, or
// adding a second Subject, breaks the signature.
func TestDKIM(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, keyFile, algo string
	}{
		{"ed25519", ed25519KeyFile(t), "ed25519-sha256"},
		{"rsa pkcs8", writeKey(t, "PRIVATE KEY", pkcs8), "rsa-sha256"},
		{"rsa pkcs1", writeKey(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), "rsa-sha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sk := secureSink(t, nil)
			cfg := config(sk)
			// A parent of the From domain aligns too.
			cfg.From = "Probity <notify@mail.probity.example>"
			cfg.DKIM = &mail.DKIMConfig{Domain: "probity.example", Selector: "probity2026", KeyFile: tc.keyFile}
			s := newSender(t, cfg)
			if err := s.Send(ctxT(t), sample()); err != nil {
				t.Fatal(err)
			}
			msgs, err := sk.Wait(ctxT(t), 1)
			if err != nil {
				t.Fatal(err)
			}
			raw := msgs[0].Data
			if !bytes.HasPrefix(raw, []byte("DKIM-Signature: ")) {
				t.Errorf("the message does not start with its DKIM-Signature: %.80q", raw)
			}
			if !bytes.Contains(raw, []byte("a="+tc.algo)) {
				t.Errorf("the signature does not say a=%s", tc.algo)
			}

			name, value, err := mail.DKIMRecord(*cfg.DKIM)
			if err != nil {
				t.Fatal(err)
			}
			if name != "probity2026._domainkey.probity.example" || !strings.HasPrefix(value, "v=DKIM1; k=") {
				t.Errorf("DKIMRecord = %q, %q", name, value)
			}
			opts := &dkim.VerifyOptions{LookupTXT: lookupTXT(name, value)}
			verifs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(verifs) != 1 || verifs[0].Err != nil {
				t.Fatalf("verifications %+v, want one valid signature", verifs)
			}
			v := verifs[0]
			if v.Domain != "probity.example" {
				t.Errorf("signing domain %q", v.Domain)
			}
			signed := strings.ToLower(strings.Join(v.HeaderKeys, ","))
			for _, f := range []string{"from", "to", "subject", "date", "message-id", "list-id", "list-unsubscribe", "list-unsubscribe-post"} {
				if !slices.Contains(strings.Split(signed, ","), f) {
					t.Errorf("%s is not signed (h=%s)", f, signed)
				}
			}

			for what, forged := range map[string][]byte{
				"another unsubscribe URL": bytes.Replace(raw, []byte("tok123"), []byte("tok999"), 1),
				"a second Subject":        bytes.Replace(raw, []byte("\r\nFrom: "), []byte("\r\nSubject: urgent\r\nFrom: "), 1),
				"another body":            bytes.Replace(raw, []byte("2 tools added"), []byte("9 tools added"), 1),
			} {
				if bytes.Equal(forged, raw) {
					t.Fatalf("%s: the forgery changed nothing", what)
				}
				verifs, err := dkim.VerifyWithOptions(bytes.NewReader(forged), opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(verifs) != 1 || verifs[0].Err == nil {
					t.Errorf("%s: the signature still verifies", what)
				}
			}
		})
	}
}

// TestDKIMKeyFiles: key files that cannot sign are refused with a reason.
func TestDKIMKeyFiles(t *testing.T) {
	good := ed25519KeyFile(t)
	goodPEM, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	twoBlocks := filepath.Join(t.TempDir(), "two.pem")
	if err := os.WriteFile(twoBlocks, append(goodPEM, goodPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("just some text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"two blocks", twoBlocks, "more than one PEM block"},
		{"no PEM", notPEM, "no PEM block"},
		{"encrypted", writeKey(t, "ENCRYPTED PRIVATE KEY", []byte{1, 2, 3}), "encrypted"},
		{"certificate", writeKey(t, "CERTIFICATE", []byte{1, 2, 3}), "CERTIFICATE"},
		{"garbage key", writeKey(t, "PRIVATE KEY", []byte{1, 2, 3}), "parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mail.DKIMConfig{Domain: "probity.example", Selector: "s1", KeyFile: tc.file}
			_, err := mail.NewSender(mail.Config{Host: "smtp.example.org", From: "notify@probity.example", DKIM: &cfg})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewSender = %v, want an error mentioning %q", err, tc.want)
			}
			if _, _, err := mail.DKIMRecord(cfg); err == nil {
				t.Error("DKIMRecord accepted the file")
			}
		})
	}
}
