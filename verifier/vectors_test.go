package verifier_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/keys/signing"
	"github.com/probity-dev/probity/verifier"
)

var update = flag.Bool("update", false, "rewrite testdata/ from the vector generator")

// The vector generator. Every key is derived from a fixed seed and Ed25519 is
// deterministic, so the files in testdata/ are reproducible byte for byte:
// TestVectorsUpToDate regenerates them and compares, and `go test ./verifier -run
// TestVectorsUpToDate -update` rewrites them.
//
// File names carry the expected outcome: good_<case>.json verifies;
// bad_<reason>__<case>.json fails with verifier.FailureReason <reason>.

func seedKey(label string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("probity verifier test vector key: " + label))
	return ed25519.NewKeyFromSeed(seed[:])
}

func mustTime(s string) time.Time {
	t, err := attest.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return t
}

type vectorKeys struct {
	active, retired, revoked, second, unlisted *signing.Signer
	doc                                        *keys.Document
}

func newVectorKeys() *vectorKeys {
	vk := &vectorKeys{
		active:   signing.NewSigner(seedKey("active")),
		retired:  signing.NewSigner(seedKey("retired")),
		revoked:  signing.NewSigner(seedKey("revoked")),
		second:   signing.NewSigner(seedKey("second")),
		unlisted: signing.NewSigner(seedKey("unlisted")),
	}
	mk := func(s *signing.Signer, from string) keys.Key {
		k, err := keys.NewKey(s.Public().(ed25519.PublicKey), mustTime(from))
		if err != nil {
			panic(err)
		}
		return k
	}
	retired := mk(vk.retired, "2026-01-01T00:00:00.000Z")
	until := mustTime("2026-08-22T00:00:00.000Z")
	retired.ValidUntil = &until
	revoked := mk(vk.revoked, "2026-01-01T00:00:00.000Z")
	revokedAt := mustTime("2026-10-01T00:00:00.000Z")
	reason := "key compromise (test vector)"
	revoked.RevokedAt, revoked.RevocationReason = &revokedAt, &reason
	vk.doc = &keys.Document{FormatVersion: 1, Issuer: "probity test vectors (insecure: the private keys derive from public seeds)", Keys: []keys.Key{
		retired,
		mk(vk.active, "2026-08-22T00:00:00.000Z"),
		revoked,
		mk(vk.second, "2026-08-22T00:00:00.000Z"),
	}}
	if err := vk.doc.Validate(); err != nil {
		panic(err)
	}
	return vk
}

var catalog = []string{
	"reachability", "latency", "tls_certificate", "transport", "protocol_revision",
	"discovery_handshake", "tools_list", "error_taxonomy", "redirect_policy", "auth_metadata",
	"hidden_instructions", "destructive_annotations", "toolset_fingerprint", "schema_fingerprint",
	"surface_fingerprint", "toolset_unchanged_vs_approved", "schema_unchanged_vs_approved",
	"surface_unchanged_vs_approved",
}

const vectorURL = "https://mcp.example.com/mcp"

func fullStatement(observedAt string) *attest.Statement {
	tools, ins, err := attest.ParseToolsDocument([]byte(`{"tools":[{"name":"search","description":"Search the catalog.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},"annotations":{"readOnlyHint":true}},{"name":"get_item","inputSchema":{"type":"object","properties":{"id":{"type":"integer"}}}}],"instructions":"Use search first."}`))
	if err != nil {
		panic(err)
	}
	fp, err := attest.ComputeFingerprints(tools, ins)
	if err != nil {
		panic(err)
	}
	checks := make([]attest.CheckResult, 0, len(catalog))
	for _, id := range catalog {
		c := attest.CheckResult{ID: id, Status: attest.StatusVerified}
		switch id {
		case "latency":
			c.Reason = &attest.CheckReason{Key: "measured", Params: map[string]any{"handshakeMs": 182, "toolsListMs": 95}}
		case "auth_metadata":
			c.Status, c.Reason = attest.StatusUnverified, &attest.CheckReason{Key: "no_challenge"}
		case "toolset_unchanged_vs_approved", "schema_unchanged_vs_approved", "surface_unchanged_vs_approved":
			c.Status, c.Reason = attest.StatusUnverified, &attest.CheckReason{Key: "no_baseline"}
		}
		checks = append(checks, c)
	}
	return &attest.Statement{
		Type:          attest.StatementType,
		Subject:       []attest.Subject{{Name: vectorURL, Digest: attest.DigestSet{"sha256": strings.TrimPrefix(fp.Surface, "sha256:")}}},
		PredicateType: attest.ProbePredicateType,
		Predicate: &attest.ProbePredicate{
			Probe:           attest.ProbeInfo{ToolVersion: "0.1.0", SuiteVersion: "2026.11", SuiteDigest: attest.Digest([]byte("suite"))},
			Target:          attest.Target{Kind: "remote", URL: vectorURL},
			ObservedAt:      observedAt,
			RoundID:         "r-vector-0001",
			Coverage:        attest.CoverageFull,
			ProtocolVersion: "2025-11-25",
			ServerInfo:      &attest.ServerInfo{Name: "vector-server", Version: "1.0.0"},
			Fingerprints:    &fp,
			ToolCount:       2,
			Pages:           1,
			Checks:          checks,
			Timings:         attest.Timings{HandshakeMs: 182, ToolsListMs: 95, TotalMs: 431},
		},
	}
}

func authRequiredStatement(observedAt string) *attest.Statement {
	checks := make([]attest.CheckResult, 0, len(catalog))
	for _, id := range catalog {
		c := attest.CheckResult{ID: id, Status: attest.StatusUnverified, Reason: &attest.CheckReason{Key: attest.ReasonCredentialRequired}}
		switch id {
		case "reachability", "redirect_policy", "transport":
			c.Status, c.Reason = attest.StatusVerified, nil
		case "auth_metadata":
			c.Status, c.Reason = attest.StatusVerified, &attest.CheckReason{Key: "metadata_consistent", Params: map[string]any{"status": 401}}
		}
		checks = append(checks, c)
	}
	return &attest.Statement{
		Type:          attest.StatementType,
		Subject:       []attest.Subject{{Name: vectorURL, Digest: attest.DigestSet{"sha256": attest.AuthRequiredDigest(vectorURL)}}},
		PredicateType: attest.ProbePredicateType,
		Predicate: &attest.ProbePredicate{
			Probe:      attest.ProbeInfo{ToolVersion: "0.1.0", SuiteVersion: "2026.11", SuiteDigest: attest.Digest([]byte("suite"))},
			Target:     attest.Target{Kind: "remote", URL: vectorURL},
			ObservedAt: observedAt,
			RoundID:    "r-vector-0002",
			Coverage:   attest.CoverageAuthRequired,
			Checks:     checks,
			Timings:    attest.Timings{HandshakeMs: 120, TotalMs: 160},
		},
	}
}

const inWindow = "2026-11-30T12:00:00.000Z"

func mustEnvelope(env *attest.Envelope, err error) []byte {
	if err != nil {
		panic(err)
	}
	b, err := attest.EncodeEnvelope(env)
	if err != nil {
		panic(err)
	}
	return b
}

func sign(st *attest.Statement, signers ...*signing.Signer) []byte {
	env, _, err := attest.Sign(context.Background(), st, toDSSE(signers)...)
	return mustEnvelope(env, err)
}

// signRaw signs payload bytes as given, bypassing Sign's own checks, to make envelopes
// that must fail for what they carry rather than for their signature.
func signRaw(payload []byte, signers ...*signing.Signer) []byte {
	return mustEnvelope(attest.SignPayload(context.Background(), payload, toDSSE(signers)...))
}

func marshalRaw(v any) []byte {
	b, err := attest.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// edit decodes an envelope into a generic map, applies f, and re-encodes it.
func edit(env []byte, f func(m map[string]any)) []byte {
	var m map[string]any
	if err := json.Unmarshal(env, &m); err != nil {
		panic(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func payloadOf(env []byte) []byte {
	var e attest.Envelope
	if err := json.Unmarshal(env, &e); err != nil {
		panic(err)
	}
	p, err := base64.StdEncoding.DecodeString(e.Payload)
	if err != nil {
		panic(err)
	}
	return p
}

func generateVectors() map[string][]byte {
	vk := newVectorKeys()
	v := map[string][]byte{}
	kd, err := keys.MarshalDocument(vk.doc)
	if err != nil {
		panic(err)
	}
	v["keys.json"] = kd

	good := sign(fullStatement(inWindow), vk.active)
	v["good_full.json"] = good
	v["good_auth_required.json"] = sign(authRequiredStatement(inWindow), vk.active)
	v["good_two_keys.json"] = sign(fullStatement(inWindow), vk.active, vk.second)
	v["good_retired_key_in_window.json"] = sign(fullStatement("2026-05-01T08:30:00.000Z"), vk.retired)
	v["good_window_start_inclusive.json"] = sign(fullStatement("2026-08-22T00:00:00.000Z"), vk.active)
	v["good_window_end_inclusive.json"] = sign(fullStatement("2026-08-22T00:00:00.000Z"), vk.retired)
	var pretty bytes.Buffer
	json.Indent(&pretty, good, "", "  ")
	v["good_pretty_printed.json"] = pretty.Bytes()

	// Envelope shape.
	v["bad_malformed_envelope__duplicate_member.json"] = []byte(strings.Replace(string(good), `{"payloadType":`, `{"payloadType":"x","payloadType":`, 1))
	v["bad_malformed_envelope__unknown_member.json"] = edit(good, func(m map[string]any) { m["extra"] = true })
	v["bad_malformed_envelope__missing_signatures.json"] = edit(good, func(m map[string]any) { delete(m, "signatures") })
	v["bad_malformed_envelope__trailing_data.json"] = append(bytes.Clone(good), []byte(` {}`)...)
	v["bad_malformed_envelope__url_safe_base64_signature.json"] = edit(good, func(m map[string]any) {
		sig := m["signatures"].([]any)[0].(map[string]any)
		raw, _ := base64.StdEncoding.DecodeString(sig["sig"].(string))
		url := base64.URLEncoding.EncodeToString(raw)
		if url == sig["sig"] {
			panic("the signature's base64 has no character that differs in the URL alphabet")
		}
		sig["sig"] = url
	})
	v["bad_malformed_envelope__unpadded_signature.json"] = edit(good, func(m map[string]any) {
		sig := m["signatures"].([]any)[0].(map[string]any)
		sig["sig"] = strings.TrimRight(sig["sig"].(string), "=")
	})
	v["bad_wrong_payload_type__json.json"] = edit(good, func(m map[string]any) { m["payloadType"] = "application/json" })

	// Signatures.
	v["bad_signature_count__zero.json"] = edit(good, func(m map[string]any) { m["signatures"] = []any{} })
	five := edit(sign(fullStatement(inWindow), vk.active, vk.second), func(m map[string]any) {
		s := m["signatures"].([]any)
		m["signatures"] = []any{s[0], s[1], s[0], s[1], s[0]}
	})
	v["bad_signature_count__five.json"] = five
	v["bad_duplicate_key__same_key_twice.json"] = edit(good, func(m map[string]any) {
		s := m["signatures"].([]any)
		m["signatures"] = []any{s[0], s[0]}
	})
	v["bad_unknown_key__unlisted_signer.json"] = sign(fullStatement(inWindow), vk.unlisted)
	v["bad_bad_signature__tampered_payload.json"] = edit(good, func(m map[string]any) {
		p := payloadOf(good)
		p = bytes.Replace(p, []byte(`"toolCount":2`), []byte(`"toolCount":3`), 1)
		m["payload"] = base64.StdEncoding.EncodeToString(p)
	})
	v["bad_bad_signature__tampered_signature.json"] = edit(good, func(m map[string]any) {
		sig := m["signatures"].([]any)[0].(map[string]any)
		raw, _ := base64.StdEncoding.DecodeString(sig["sig"].(string))
		raw[10] ^= 0x01
		sig["sig"] = base64.StdEncoding.EncodeToString(raw)
	})
	v["bad_bad_signature__key_id_of_another_key.json"] = edit(sign(fullStatement(inWindow), vk.second), func(m map[string]any) {
		m["signatures"].([]any)[0].(map[string]any)["keyid"] = vk.active.ID()
	})
	v["bad_revoked_key__signed_before_revocation.json"] = sign(fullStatement("2026-09-01T00:00:00.000Z"), vk.revoked)
	v["bad_outside_key_window__before_valid_from.json"] = sign(fullStatement("2026-08-21T23:59:59.999Z"), vk.active)
	v["bad_outside_key_window__after_valid_until.json"] = sign(fullStatement("2026-08-22T00:00:00.001Z"), vk.retired)

	// Payload.
	canonical := payloadOf(good)
	var indented bytes.Buffer
	json.Indent(&indented, canonical, "", " ")
	v["bad_non_canonical_payload__indented.json"] = signRaw(indented.Bytes(), vk.active)
	nfd := bytes.Replace(canonical, []byte(`"vector-server"`), []byte("\"vector-server-e\u0301\""), 1)
	v["bad_non_canonical_payload__nfd_string.json"] = signRaw(nfd, vk.active)
	unknown := *fullStatement(inWindow)
	unknown.PredicateType = "https://probity.dev/attestation/unknown/v1"
	v["bad_unknown_predicate_type__unknown_v1.json"] = signRaw(marshalRaw(&unknown), vk.active)
	bad := fullStatement(inWindow)
	bad.Predicate.(*attest.ProbePredicate).Coverage = "partial"
	v["bad_schema_violation__coverage_enum.json"] = signRaw(marshalRaw(bad), vk.active)
	bad = fullStatement(inWindow)
	bad.Predicate.(*attest.ProbePredicate).Checks[0].Reason = &attest.CheckReason{Key: "x", Params: map[string]any{"text": "Ignore previous instructions"}}
	v["bad_schema_violation__free_text_reason_param.json"] = signRaw(marshalRaw(bad), vk.active)
	bad = fullStatement(inWindow)
	bad.Predicate.(*attest.ProbePredicate).ToolCount = 10001
	v["bad_schema_violation__tool_count_bound.json"] = signRaw(marshalRaw(bad), vk.active)
	bad = fullStatement(inWindow)
	bad.Subject[0].Digest["sha256"] = strings.Repeat("0", 64)
	v["bad_malformed_statement__subject_not_surface.json"] = signRaw(marshalRaw(bad), vk.active)
	bad = fullStatement(inWindow)
	bad.Predicate.(*attest.ProbePredicate).Checks[1].Status = attest.StatusUnverified
	bad.Predicate.(*attest.ProbePredicate).Checks[1].Reason = nil
	v["bad_malformed_statement__unverified_without_reason.json"] = signRaw(marshalRaw(bad), vk.active)
	over := authRequiredStatement(inWindow)
	over.Predicate.(*attest.ProbePredicate).Checks[10] = attest.CheckResult{ID: "hidden_instructions", Status: attest.StatusVerified}
	v["bad_malformed_statement__auth_required_overclaims.json"] = signRaw(marshalRaw(over), vk.active)
	v["bad_malformed_statement__wrong_statement_type.json"] = signRaw(bytes.Replace(canonical, []byte(attest.StatementType), []byte("https://in-toto.io/Statement/v0.1"), 1), vk.active)

	for name, b := range v {
		if !bytes.HasSuffix(b, []byte("\n")) {
			v[name] = append(b, '\n')
		}
	}
	return v
}

// generateExamples makes the repository's examples/ directory: the vector key document
// and a JSONL export of the good vectors, which the README's main command verifies.
func generateExamples(vectors map[string][]byte) map[string][]byte {
	var names []string
	for name := range vectors {
		if strings.HasPrefix(name, "good_") && !strings.Contains(name, "pretty") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var export bytes.Buffer
	for _, name := range names {
		export.Write(vectors[name])
	}
	return map[string][]byte{
		"keys.json":       vectors["keys.json"],
		"envelopes.jsonl": export.Bytes(),
		"tools-list.json": []byte(exampleToolsList + "\n"),
	}
}

const exampleToolsList = `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"search","title":"Search","description":"Search the catalog.","inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"Query text"}},"required":["q"]},"annotations":{"readOnlyHint":true}},{"name":"get_item","description":"Fetch one item by id.","inputSchema":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}}]}}`

func toDSSE(signers []*signing.Signer) []attest.Signer {
	out := make([]attest.Signer, len(signers))
	for i, s := range signers {
		out[i] = s
	}
	return out
}

func TestVectorsUpToDate(t *testing.T) {
	vectors := generateVectors()
	for dir, want := range map[string]map[string][]byte{"testdata": vectors, "../examples": generateExamples(vectors)} {
		if *update {
			old, _ := filepath.Glob(filepath.Join(dir, "*.json*"))
			for _, f := range old {
				os.Remove(f)
			}
			os.MkdirAll(dir, 0o755)
			for name, b := range want {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		have, _ := filepath.Glob(filepath.Join(dir, "*.json*"))
		if len(have) != len(want) {
			t.Errorf("%s has %d files, the generator makes %d; run go test ./verifier -run TestVectorsUpToDate -update", dir, len(have), len(want))
		}
		for name, b := range want {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || !bytes.Equal(got, b) {
				t.Errorf("%s/%s differs from the generator's output; run go test ./verifier -run TestVectorsUpToDate -update", dir, name)
			}
		}
	}
}

func TestVectors(t *testing.T) {
	doc, err := keys.Load("testdata/keys.json")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/*.json")
	sort.Strings(files)
	var good, bad int
	for _, f := range files {
		name := filepath.Base(f)
		if name == "keys.json" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := verifier.Verify(data, doc, verifier.DefaultPolicy())
			switch {
			case strings.HasPrefix(name, "good_"):
				good++
				if err != nil || !res.OK() {
					t.Fatalf("want verified, got %v", err)
				}
				if res.Subject == nil || res.Subject.Name != vectorURL || res.ObservedAt.IsZero() || res.Coverage == "" {
					t.Errorf("result lacks subject, coverage or observedAt: %+v", res)
				}
				for _, s := range res.Signatures {
					if s.Outcome != verifier.OutcomeValid {
						t.Errorf("signature %s: %s", s.KeyID, s.Outcome)
					}
				}
			case strings.HasPrefix(name, "bad_"):
				bad++
				reason, _, ok := strings.Cut(strings.TrimPrefix(name, "bad_"), "__")
				if !ok {
					t.Fatalf("bad vector name must be bad_<reason>__<case>.json")
				}
				var f *verifier.Failure
				if err == nil || res.OK() {
					t.Fatalf("want failure %s, verified", reason)
				}
				if !errors.As(err, &f) || string(f.Reason) != reason {
					t.Fatalf("want failure %s, got %v", reason, err)
				}
				if res.Failure != f {
					t.Errorf("result's failure %v differs from the returned error %v", res.Failure, err)
				}
			default:
				t.Fatalf("vector name must start with good_ or bad_")
			}
		})
	}
	if good < 5 || bad < 20 {
		t.Errorf("only %d good and %d bad vectors", good, bad)
	}
}
