package attest

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
)

// testSigner is an Ed25519 dsse.Signer with Probity's key id, for tests of this package
// only; the service uses signing.Signer.
type testSigner struct {
	priv ed25519.PrivateKey
	id   string
}

func newTestSigner(seed []byte) *testSigner {
	priv := ed25519.NewKeyFromSeed(seed)
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(der)
	return &testSigner{priv: priv, id: hex.EncodeToString(sum[:])[:16]}
}

func (s *testSigner) Sign(_ context.Context, data []byte) ([]byte, error) {
	return ed25519.Sign(s.priv, data), nil
}
func (s *testSigner) KeyID() (string, error) { return s.id, nil }
func (s *testSigner) Verify(_ context.Context, data, sig []byte) error {
	if !ed25519.Verify(s.priv.Public().(ed25519.PublicKey), data, sig) {
		return errors.New("bad signature")
	}
	return nil
}
func (s *testSigner) Public() crypto.PublicKey { return s.priv.Public() }

// exampleSeed is the worked example's private key seed: the 32 bytes 0x00, 0x01, … 0x1f.
func exampleSeed() []byte {
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = byte(i)
	}
	return seed
}

// catalogIDs are the remote check ids of DESIGN.md's catalog, one result each in a
// realistic statement.
var catalogIDs = []string{
	"reachability", "latency", "tls_certificate", "transport", "protocol_revision",
	"discovery_handshake", "tools_list", "error_taxonomy", "redirect_policy", "auth_metadata",
	"hidden_instructions", "destructive_annotations", "toolset_fingerprint", "schema_fingerprint",
	"surface_fingerprint", "toolset_unchanged_vs_approved", "schema_unchanged_vs_approved",
	"surface_unchanged_vs_approved",
}

// realisticStatement is a full-coverage probe statement with one result per catalog check.
func realisticStatement(fp Fingerprints) *Statement {
	checks := make([]CheckResult, 0, len(catalogIDs))
	for _, id := range catalogIDs {
		c := CheckResult{ID: id, Status: StatusVerified}
		switch id {
		case "latency":
			c.Reason = &CheckReason{Key: "measured", Params: map[string]any{"handshakeMs": 182, "toolsListMs": 95}}
		case "tls_certificate":
			c.Reason = &CheckReason{Key: "valid", Params: map[string]any{"daysLeft": 61, "version": "TLS1.3"}}
		case "protocol_revision":
			c.Reason = &CheckReason{Key: "negotiated", Params: map[string]any{"version": "2025-11-25"}}
		case "auth_metadata":
			c.Status, c.Reason = StatusUnverified, &CheckReason{Key: "no_challenge"}
		case "toolset_unchanged_vs_approved", "schema_unchanged_vs_approved", "surface_unchanged_vs_approved":
			c.Status, c.Reason = StatusUnverified, &CheckReason{Key: "no_baseline"}
		}
		checks = append(checks, c)
	}
	url := "https://mcp.example.com/mcp"
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: url, Digest: DigestSet{"sha256": fp.Surface[len("sha256:"):]}}},
		PredicateType: ProbePredicateType,
		Predicate: &ProbePredicate{
			Probe:           ProbeInfo{ToolVersion: "0.1.0", SuiteVersion: "2026.11", SuiteDigest: Digest([]byte("suite"))},
			Target:          Target{Kind: "remote", URL: url},
			ObservedAt:      "2026-11-30T12:00:00.000Z",
			RoundID:         "r-20261130-0001",
			Coverage:        CoverageFull,
			ProtocolVersion: "2025-11-25",
			ServerInfo:      &ServerInfo{Name: "example-server", Version: "1.4.2"},
			Fingerprints:    &fp,
			ToolCount:       12,
			Pages:           1,
			Checks:          checks,
			Timings:         Timings{HandshakeMs: 182, ToolsListMs: 95, TotalMs: 431},
		},
	}
}
