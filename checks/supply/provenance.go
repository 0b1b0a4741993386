package supply

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	_ "embed"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/probity-dev/probity/locator"
)

var _ ProvenanceVerifier = (*Verifier)(nil)

// The pinned trust material. sigstore/README.md says where each file comes from and how
// an operator refreshes it; nothing is fetched at run time.
var (
	//go:embed sigstore/trusted_root.json
	pinnedTrustedRoot []byte
	//go:embed sigstore/npm-keys.json
	pinnedNPMKeys []byte
)

// The attestation kinds ProvenanceFacts.Kinds lists.
const (
	// AttestationNPMProvenance is npm's SLSA build provenance (keyless, signed by the
	// GitHub Actions workflow that ran `npm publish --provenance`).
	AttestationNPMProvenance = "npm-slsa-provenance"
	// AttestationNPMPublish is npm's publish attestation, signed by the registry's key.
	AttestationNPMPublish = "npm-publish"
	// AttestationPyPI is a PEP 740 attestation of a PyPI distribution file, signed by
	// the project's Trusted Publisher.
	AttestationPyPI = "pypi-pep740"
)

// The in-toto predicate types the verifier accepts.
const (
	predicateSLSAv1      = "https://slsa.dev/provenance/v1"
	predicateSLSAv02     = "https://slsa.dev/provenance/v0.2"
	predicateNPMPublish  = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"
	predicatePyPIPublish = "https://docs.pypi.org/attestations/publish/v1"
)

// Bounds on what the verifier reads. A document above maxAttestationDocument is refused
// unread; attestations past maxAttestations are not verified.
const (
	maxAttestationDocument = 4 << 20
	maxAttestations        = 16
	maxPEP740TlogEntries   = 8
	maxNPMKeys             = 16
	maxProvenanceError     = 1024 // bytes of ProvenanceFacts.Error
	maxProvenanceReason    = 240  // bytes of one attestation's reason within it
)

// githubActionsIssuer is the OIDC issuer of GitHub Actions workflow identities.
const githubActionsIssuer = "https://token.actions.githubusercontent.com"

var (
	githubRepoURLRE = regexp.MustCompile(`^https://github\.com/[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	githubRepoRE    = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	workflowFileRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,255}$`)
	gitCommitRE     = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)
	// npmNameRE admits current and legacy npm names (legacy ones may have capitals),
	// nothing that would change the meaning of a purl.
	npmNameRE    = regexp.MustCompile(`^(?:@[^\s/@%?#]+/)?[^\s/@%?#]+$`)
	npmVersionRE = regexp.MustCompile(`^[0-9A-Za-z.+-]+$`)
)

// DefaultTrustedRoot returns the pinned Sigstore public-good trusted root (embedded JSON,
// the copy sigstore-go v1.3.0 ships as examples/trusted-root-public-good.json). The
// caller gets its own copy.
func DefaultTrustedRoot() []byte {
	return bytes.Clone(pinnedTrustedRoot)
}

// Verifier verifies npm and PyPI attestations offline against a pinned Sigstore trusted
// root. It never touches the network and never verifies against the current time:
// certificates and npm key expiries are checked at the time the transparency log recorded
// the signature (the integrated time of the Rekor entry, attested by its signed entry
// timestamp) or at an RFC 3161 timestamp from a timestamping authority the root trusts, so
// verdicts on old attestations do not change as their short-lived certificates expire.
//
// A Verifier is safe for concurrent use.
type Verifier struct {
	// keyless verifies Fulcio-certified signatures (npm SLSA provenance, PEP 740): a
	// transparency log entry, an observer timestamp and an embedded SCT are required.
	keyless *verify.Verifier
	// npmKeyed verifies npm publish attestations: signed with a pinned npm registry
	// key, logged in Rekor.
	npmKeyed *verify.Verifier
	// githubAnyRepository accepts any GitHub Actions workflow identity; npm provenance
	// is then bound to its repository by the certificate's extensions.
	githubAnyRepository verify.CertificateIdentity
}

// VerifierOption configures NewVerifier.
type VerifierOption func(*verifierConfig) error

type verifierConfig struct {
	npmKeys []byte
}

// WithNPMKeys replaces the pinned npm registry keys with keysJSON, a document in the form
// of the registry's keys endpoint (/-/npm/v1/keys): {"keys":[{"keyid", "keytype",
// "scheme", "key", "expires"}]}. Every key must be an ECDSA P-256 key whose keyid is its
// OpenSSH SHA256 fingerprint; a key with an expiry date verifies only signatures logged
// before it.
func WithNPMKeys(keysJSON []byte) VerifierOption {
	return func(c *verifierConfig) error {
		if len(keysJSON) == 0 {
			return errors.New("empty npm keys document")
		}
		c.npmKeys = keysJSON
		return nil
	}
}

// NewVerifier returns a Verifier trusting the Sigstore trusted root trustedRootJSON
// (normally DefaultTrustedRoot()) and the pinned npm registry keys (or those given with
// WithNPMKeys).
func NewVerifier(trustedRootJSON []byte, opts ...VerifierOption) (*Verifier, error) {
	cfg := verifierConfig{npmKeys: pinnedNPMKeys}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	if len(trustedRootJSON) == 0 {
		return nil, errors.New("no trusted root given")
	}
	trustedRoot, err := root.NewTrustedRootFromJSON(trustedRootJSON)
	if err != nil {
		return nil, fmt.Errorf("couldn't load trusted root: %w", err)
	}
	npmKeys, err := parseNPMKeys(cfg.npmKeys)
	if err != nil {
		return nil, fmt.Errorf("couldn't load npm keys: %w", err)
	}

	keyless, err := verify.NewVerifier(trustedRoot,
		verify.WithTransparencyLog(1),
		verify.WithObserverTimestamps(1),
		verify.WithSignedCertificateTimestamps(1),
		verify.WithoutStatementPredicate())
	if err != nil {
		return nil, fmt.Errorf("couldn't configure keyless verifier: %w", err)
	}
	npmKeyed, err := verify.NewVerifier(root.TrustedMaterialCollection{trustedRoot, npmKeys},
		verify.WithTransparencyLog(1),
		verify.WithObserverTimestamps(1),
		verify.WithoutStatementPredicate())
	if err != nil {
		return nil, fmt.Errorf("couldn't configure npm key verifier: %w", err)
	}
	anyRepo, err := verify.NewShortCertificateIdentity(githubActionsIssuer, "", "", `^https://github\.com/`)
	if err != nil {
		return nil, fmt.Errorf("couldn't build certificate identity: %w", err)
	}
	return &Verifier{keyless: keyless, npmKeyed: npmKeyed, githubAnyRepository: anyRepo}, nil
}

// npmKeysDocument is the registry's keys endpoint (/-/npm/v1/keys).
type npmKeysDocument struct {
	Keys []struct {
		Expires *string `json:"expires"`
		KeyID   string  `json:"keyid"`
		KeyType string  `json:"keytype"`
		Scheme  string  `json:"scheme"`
		Key     string  `json:"key"`
	} `json:"keys"`
}

func parseNPMKeys(doc []byte) (*root.TrustedPublicKeyMaterial, error) {
	var d npmKeysDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	if len(d.Keys) == 0 || len(d.Keys) > maxNPMKeys {
		return nil, fmt.Errorf("%d keys (want 1 to %d)", len(d.Keys), maxNPMKeys)
	}
	keys := make(map[string]*root.ExpiringKey, len(d.Keys))
	for _, k := range d.Keys {
		if k.KeyType != "ecdsa-sha2-nistp256" || k.Scheme != "ecdsa-sha2-nistp256" {
			return nil, fmt.Errorf("key %q: unsupported type %q/%q", k.KeyID, k.KeyType, k.Scheme)
		}
		der, err := base64.StdEncoding.DecodeString(k.Key)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.KeyID, err)
		}
		pub, err := x509.ParsePKIXPublicKey(der)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.KeyID, err)
		}
		ec, ok := pub.(*ecdsa.PublicKey)
		if !ok || ec.Curve != elliptic.P256() {
			return nil, fmt.Errorf("key %q is not an ECDSA P-256 key", k.KeyID)
		}
		fp, err := sshFingerprintP256(ec)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.KeyID, err)
		}
		if k.KeyID != fp {
			return nil, fmt.Errorf("key %q: keyid is not the key's fingerprint %q", k.KeyID, fp)
		}
		if _, dup := keys[k.KeyID]; dup {
			return nil, fmt.Errorf("key %q listed twice", k.KeyID)
		}
		var expires time.Time
		if k.Expires != nil {
			if expires, err = time.Parse(time.RFC3339Nano, *k.Expires); err != nil {
				return nil, fmt.Errorf("key %q: expires: %w", k.KeyID, err)
			}
		}
		sv, err := signature.LoadECDSAVerifier(ec, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.KeyID, err)
		}
		keys[k.KeyID] = root.NewExpiringKey(sv, time.Time{}, expires)
	}
	return root.NewTrustedPublicKeyMaterialFromMapping(keys), nil
}

// sshFingerprintP256 returns the OpenSSH SHA256 fingerprint of an ECDSA P-256 key, the
// form npm uses as keyid: "SHA256:" and the unpadded base64 SHA-256 of the key's SSH wire
// encoding (string "ecdsa-sha2-nistp256", string "nistp256", string Q).
func sshFingerprintP256(pub *ecdsa.PublicKey) (string, error) {
	ek, err := pub.ECDH()
	if err != nil {
		return "", err
	}
	var wire []byte
	for _, field := range [][]byte{[]byte("ecdsa-sha2-nistp256"), []byte("nistp256"), ek.Bytes()} {
		wire = binary.BigEndian.AppendUint32(wire, uint32(len(field)))
		wire = append(wire, field...)
	}
	sum := sha256.Sum256(wire)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:]), nil
}

// npmAttestations is the npm attestations endpoint response
// (/-/npm/v1/attestations/{name}@{version}).
type npmAttestations struct {
	Attestations []struct {
		PredicateType string          `json:"predicateType"`
		Bundle        json.RawMessage `json:"bundle"`
	} `json:"attestations"`
}

// VerifyNPM verifies the npm attestations endpoint response
// (/-/npm/v1/attestations/{name}@{version}: {"attestations":[{"predicateType":…,
// "bundle":{…}}]}) for the package version whose dist.integrity (sha512-<base64>) is
// given.
//
// Each attestation must be a Sigstore bundle whose in-toto statement has exactly one
// subject, the package's purl (pkg:npm/<name>@<version>, a scope's @ written %40) with the
// sha512 digest of dist.integrity, and the predicate type the endpoint declared:
//   - SLSA provenance (v1 or v0.2) signed by a GitHub Actions workflow through Fulcio;
//     Repository and Commit are read from the certificate (source repository URI and
//     digest) and must agree with the predicate's workflow and resolved dependencies;
//   - the publish attestation signed with a pinned npm registry key, whose predicate
//     names the same package and version.
//
// No document, or one listing no attestation, is Present false (Source.Outcome
// SourceNoData); a document that is not JSON of that shape or is larger than 4 MiB is
// Source.Outcome SourceFailed. Otherwise Present is true and Verified says at least one
// attestation verified; Kinds lists those that did, and Error says why any other did
// not (at most 16 are verified). Source.URL and Source.FetchedAt are the caller's to
// set.
func (v *Verifier) VerifyNPM(attestations []byte, name, version, integrity string) ProvenanceFacts {
	facts := ProvenanceFacts{Version: version, Source: Source{Outcome: SourceNoData}}
	if len(attestations) > maxAttestationDocument {
		return failedProvenance(facts, fmt.Sprintf("attestations document is larger than %d bytes", maxAttestationDocument))
	}
	if len(bytes.TrimSpace(attestations)) == 0 {
		facts.Source.Error = "no attestations"
		return facts
	}
	var doc npmAttestations
	if err := json.Unmarshal(attestations, &doc); err != nil {
		return failedProvenance(facts, "attestations document is not valid JSON of the expected shape")
	}
	if len(doc.Attestations) == 0 {
		facts.Source.Error = "no attestations"
		return facts
	}
	facts.Source.Outcome = SourceOK
	facts.Present = true

	var t provenanceTally
	purl, digest, err := npmSubject(name, version, integrity)
	if err != nil {
		t.fail("", err)
		return t.finish(facts)
	}
	for i, a := range doc.Attestations {
		if i == maxAttestations {
			t.fail("", fmt.Errorf("%d attestations not verified (at most %d are)", len(doc.Attestations)-i, maxAttestations))
			break
		}
		kind, src, err := v.verifyNPMAttestation(a.PredicateType, a.Bundle, name, version, purl, digest)
		if err != nil {
			t.fail(kind, err)
			continue
		}
		t.pass(kind, src)
	}
	return t.finish(facts)
}

// npmSubject returns the purl of name@version and the sha512 digest of integrity.
func npmSubject(name, version, integrity string) (purl string, digest []byte, err error) {
	if len(name) > 214 || !npmNameRE.MatchString(name) || strings.ContainsFunc(name, provenanceUnsafeRune) {
		return "", nil, fmt.Errorf("invalid package name %q", provenanceClip(name, 64))
	}
	if len(version) > 256 || !npmVersionRE.MatchString(version) {
		return "", nil, fmt.Errorf("invalid version %q", provenanceClip(version, 64))
	}
	// dist.integrity is a Subresource Integrity string: whitespace-separated
	// "<alg>-<base64>[?options]" tokens.
	for tok := range strings.FieldsSeq(integrity) {
		b64, ok := strings.CutPrefix(tok, "sha512-")
		if !ok {
			continue
		}
		b64, _, _ = strings.Cut(b64, "?")
		d, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(d) != 64 {
			return "", nil, errors.New("package integrity has a malformed sha512 digest")
		}
		digest = d
		break
	}
	if digest == nil {
		return "", nil, errors.New("package integrity has no sha512 digest")
	}
	// npm writes the purl as npm-package-arg's toPurl does: the leading @ of a scope
	// URI-encoded, nothing else.
	if scoped, ok := strings.CutPrefix(name, "@"); ok {
		return "pkg:npm/%40" + scoped + "@" + version, digest, nil
	}
	purl = "pkg:npm/" + name + "@" + version
	return purl, digest, nil
}

// verifyNPMAttestation verifies one attestation of the npm endpoint and returns its kind
// and, for provenance, the source it names.
func (v *Verifier) verifyNPMAttestation(predicateType string, rawBundle json.RawMessage, name, version, purl string, digest []byte) (kind string, src provenanceSource, err error) {
	switch predicateType {
	case predicateSLSAv1, predicateSLSAv02:
		kind = AttestationNPMProvenance
	case predicateNPMPublish:
		kind = AttestationNPMPublish
	default:
		return "", src, fmt.Errorf("unsupported predicate type %q", provenanceClip(predicateType, 96))
	}
	b, err := parseBundle(rawBundle)
	if err != nil {
		return kind, src, err
	}
	artifact := verify.WithArtifactDigest("sha512", digest)

	var res *verify.VerificationResult
	if kind == AttestationNPMPublish {
		res, err = v.npmKeyed.Verify(b, verify.NewPolicy(artifact, verify.WithKey()))
	} else {
		res, err = v.keyless.Verify(b, verify.NewPolicy(artifact, verify.WithCertificateIdentity(v.githubAnyRepository)))
	}
	if err != nil {
		return kind, src, err
	}
	if err := checkStatement(res, predicateType, purl, "sha512", digest); err != nil {
		return kind, src, err
	}
	payload := b.GetDsseEnvelope().GetPayload()

	if kind == AttestationNPMPublish {
		var st struct {
			Predicate struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"predicate"`
		}
		if err := json.Unmarshal(payload, &st); err != nil {
			return kind, src, errors.New("publish predicate is malformed")
		}
		if st.Predicate.Name != name || st.Predicate.Version != version {
			return kind, src, fmt.Errorf("publish predicate names %q@%q", provenanceClip(st.Predicate.Name, 64), provenanceClip(st.Predicate.Version, 32))
		}
		return kind, src, nil
	}

	src, err = sourceFromCertificate(res)
	if err != nil {
		return kind, src, err
	}
	if err := crossCheckSLSA(payload, src); err != nil {
		return kind, src, err
	}
	return kind, src, nil
}

// parseBundle parses a Sigstore bundle (protobuf JSON, unknown fields refused) that must
// carry a DSSE envelope.
func parseBundle(raw []byte) (*bundle.Bundle, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, errors.New("no bundle")
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("malformed bundle: %w", err)
	}
	if b.GetDsseEnvelope() == nil {
		return nil, errors.New("bundle carries no DSSE envelope")
	}
	return &b, nil
}

// checkStatement checks the verified statement: the expected predicate type, and exactly
// one subject, named subject, with the artifact digest (sigstore-go checked that some
// subject has it; this also binds the name).
func checkStatement(res *verify.VerificationResult, predicateType, subject, alg string, digest []byte) error {
	st := res.Statement
	if st == nil {
		return errors.New("no in-toto statement")
	}
	if st.GetPredicateType() != predicateType {
		return fmt.Errorf("statement predicate type %q, want %q", provenanceClip(st.GetPredicateType(), 96), predicateType)
	}
	subjects := st.GetSubject()
	if len(subjects) != 1 {
		return fmt.Errorf("statement has %d subjects, want 1", len(subjects))
	}
	if got := subjects[0].GetName(); got != subject {
		return fmt.Errorf("statement subject is %q, want %q", provenanceClip(got, 96), subject)
	}
	if got := subjects[0].GetDigest()[alg]; got != hex.EncodeToString(digest) {
		return fmt.Errorf("statement subject %s digest does not match", alg)
	}
	return nil
}

// provenanceSource is the repository and commit an attestation names.
type provenanceSource struct {
	Repository string // https://github.com/OWNER/REPO
	Commit     string
}

// sourceFromCertificate reads the source repository and commit from the verified Fulcio
// certificate's extensions: Source Repository URI and Digest, or for certificates issued
// before those existed the Build Config URI and the GitHub workflow extensions.
func sourceFromCertificate(res *verify.VerificationResult) (provenanceSource, error) {
	if res.Signature == nil || res.Signature.Certificate == nil {
		return provenanceSource{}, errors.New("no certificate")
	}
	ext := res.Signature.Certificate.Extensions
	var src provenanceSource
	switch {
	case ext.SourceRepositoryURI != "":
		src.Repository = ext.SourceRepositoryURI
	case ext.BuildConfigURI != "":
		src.Repository = githubRepoFromWorkflowURI(ext.BuildConfigURI)
	case ext.GithubWorkflowRepository != "":
		src.Repository = "https://github.com/" + ext.GithubWorkflowRepository
	}
	if !githubRepoURLRE.MatchString(src.Repository) {
		return provenanceSource{}, fmt.Errorf("certificate names no GitHub source repository (%q)", provenanceClip(src.Repository, 96))
	}
	src.Commit = ext.SourceRepositoryDigest
	if src.Commit == "" {
		src.Commit = ext.GithubWorkflowSHA
	}
	src.Commit = strings.ToLower(src.Commit)
	if !gitCommitRE.MatchString(src.Commit) {
		return provenanceSource{}, fmt.Errorf("certificate names no source commit (%q)", provenanceClip(src.Commit, 72))
	}
	return src, nil
}

// githubRepoFromWorkflowURI returns https://github.com/OWNER/REPO from a workflow URI
// such as https://github.com/OWNER/REPO/.github/workflows/release.yml@refs/heads/main.
func githubRepoFromWorkflowURI(uri string) string {
	rest, ok := strings.CutPrefix(uri, "https://github.com/")
	if !ok {
		return ""
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 || !strings.HasPrefix(parts[2], ".github/workflows/") {
		return ""
	}
	return "https://github.com/" + parts[0] + "/" + parts[1]
}

// slsaPredicate holds the parts of SLSA provenance v1 and v0.2 that name the source.
type slsaPredicate struct {
	Predicate struct {
		// v1
		BuildDefinition struct {
			ExternalParameters struct {
				Workflow struct {
					Repository string `json:"repository"`
				} `json:"workflow"`
			} `json:"externalParameters"`
			ResolvedDependencies []slsaMaterial `json:"resolvedDependencies"`
		} `json:"buildDefinition"`
		// v0.2
		Invocation struct {
			ConfigSource slsaMaterial `json:"configSource"`
		} `json:"invocation"`
	} `json:"predicate"`
}

type slsaMaterial struct {
	URI    string            `json:"uri"`
	Digest map[string]string `json:"digest"`
}

// crossCheckSLSA checks that the (signed) SLSA predicate, where it names the source,
// names the repository and commit of the certificate.
func crossCheckSLSA(payload []byte, src provenanceSource) error {
	var p slsaPredicate
	if err := json.Unmarshal(payload, &p); err != nil {
		return errors.New("SLSA predicate is malformed")
	}
	if r := p.Predicate.BuildDefinition.ExternalParameters.Workflow.Repository; r != "" && !strings.EqualFold(r, src.Repository) {
		return fmt.Errorf("SLSA workflow repository %q differs from the certificate's %q", provenanceClip(r, 96), src.Repository)
	}
	var materials []slsaMaterial
	if deps := p.Predicate.BuildDefinition.ResolvedDependencies; len(deps) > 0 {
		materials = deps[:1] // the first resolved dependency is the source
	}
	if cs := p.Predicate.Invocation.ConfigSource; cs.URI != "" {
		materials = append(materials, cs)
	}
	for _, m := range materials {
		repo, _, _ := strings.Cut(strings.TrimPrefix(m.URI, "git+"), "@")
		if !strings.EqualFold(strings.TrimSuffix(repo, ".git"), src.Repository) {
			return fmt.Errorf("SLSA source %q differs from the certificate's repository %q", provenanceClip(m.URI, 96), src.Repository)
		}
		for _, alg := range []string{"gitCommit", "sha1"} {
			if c, ok := m.Digest[alg]; ok && !strings.EqualFold(c, src.Commit) {
				return fmt.Errorf("SLSA source commit %q differs from the certificate's %q", provenanceClip(c, 72), src.Commit)
			}
		}
	}
	return nil
}

// PEP 740 provenance objects, as PyPI's integrity API serves them
// (/integrity/{project}/{version}/{filename}/provenance).
type pep740Provenance struct {
	Version            int `json:"version"`
	AttestationBundles []struct {
		Publisher    pep740Publisher   `json:"publisher"`
		Attestations []json.RawMessage `json:"attestations"`
	} `json:"attestation_bundles"`
}

// pep740Publisher is the Trusted Publisher PyPI recorded for an attestation bundle.
type pep740Publisher struct {
	Kind       string `json:"kind"`
	Repository string `json:"repository"`
	Workflow   string `json:"workflow"`
}

type pep740Attestation struct {
	Version              int `json:"version"`
	VerificationMaterial struct {
		Certificate         []byte            `json:"certificate"`
		TransparencyEntries []json.RawMessage `json:"transparency_entries"`
	} `json:"verification_material"`
	Envelope struct {
		Statement []byte `json:"statement"`
		Signature []byte `json:"signature"`
	} `json:"envelope"`
}

// distFile is the distribution file a provenance document belongs to, with the digest
// its attestations must carry; invalid says why it cannot be verified, if so.
type distFile struct {
	name    string
	alg     string // "sha256" for PyPI
	digest  []byte
	invalid string
}

// VerifyPyPI verifies the PEP 740 provenance objects of a PyPI release
// ({"version":1,"attestation_bundles":[{"publisher":{…},"attestations":[…]}]}), one per
// file: provenance[i] belongs to files[i] (nil or empty when that file has none).
//
// Each attestation is converted to a Sigstore bundle (v0.3: the certificate, the
// transparency log entries and a DSSE envelope of the statement) and verified: its
// statement has exactly one subject, the file's name with the file's sha256, and predicate
// type PyPI publish v1 or SLSA provenance v1; its certificate was issued to the bundle's
// Trusted Publisher, a GitHub Actions workflow (source repository
// https://github.com/<publisher.repository>, build config
// .github/workflows/<publisher.workflow>). Repository and Commit come from the
// certificate. Other publisher kinds (GitLab, Google, ActiveState) are reported as
// unsupported. A file whose name is not a distribution of project, or whose SHA256 is not
// hex, verifies nothing.
//
// Outcomes are as for VerifyNPM (a provenance document that cannot be read counts as a
// failed attestation beside readable ones, and as Source.Outcome SourceFailed alone);
// at most 16 attestations are verified, and documents past them are not read. Verified
// attestations that name different repositories or commits verify nothing.
func (v *Verifier) VerifyPyPI(provenance [][]byte, project, version string, files []PyPIFile) ProvenanceFacts {
	dists := make([]distFile, len(files))
	for i, f := range files {
		dists[i] = distFile{name: f.Filename, alg: "sha256"}
		d, err := hex.DecodeString(f.SHA256)
		switch {
		case err != nil || len(d) != sha256.Size:
			dists[i].invalid = "the file's sha256 is not a hex SHA-256 digest"
		case !pypiFileOfProject(f.Filename, project):
			dists[i].invalid = fmt.Sprintf("%q is not a distribution of %q", provenanceClip(f.Filename, 96), provenanceClip(project, 64))
		default:
			dists[i].digest = d
		}
	}
	return v.verifyPEP740(provenance, version, dists)
}

// pypiFileOfProject says filename is a distribution of project (names compared after PEP
// 503 normalization, with the version's separator).
func pypiFileOfProject(filename, project string) bool {
	if project == "" {
		return false
	}
	return strings.HasPrefix(locator.PEP503(filename), locator.PEP503(project)+"-")
}

// verifyPEP740 verifies provenance[i] for files[i].
func (v *Verifier) verifyPEP740(provenance [][]byte, version string, files []distFile) ProvenanceFacts {
	facts := ProvenanceFacts{Version: version, Source: Source{Outcome: SourceNoData}}
	type item struct {
		file      int // index into files
		publisher pep740Publisher
		raw       json.RawMessage
	}
	var (
		items     []item
		malformed []string // why documents could not be read
		unread    bool     // documents left unread: enough attestations to verify
	)
	for i, doc := range provenance {
		if len(items) > maxAttestations {
			unread = slices.ContainsFunc(provenance[i:], func(d []byte) bool { return len(bytes.TrimSpace(d)) > 0 })
			break
		}
		if len(doc) > maxAttestationDocument {
			malformed = append(malformed, fmt.Sprintf("provenance document %d is larger than %d bytes", i+1, maxAttestationDocument))
			continue
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var p pep740Provenance
		if err := json.Unmarshal(doc, &p); err != nil {
			malformed = append(malformed, fmt.Sprintf("provenance document %d is not valid JSON of the expected shape", i+1))
			continue
		}
		if p.Version != 1 {
			malformed = append(malformed, fmt.Sprintf("provenance document %d has version %d, want 1", i+1, p.Version))
			continue
		}
		for _, ab := range p.AttestationBundles {
			for _, raw := range ab.Attestations {
				items = append(items, item{i, ab.Publisher, raw})
			}
		}
	}
	if len(items) == 0 {
		if len(malformed) > 0 {
			return failedProvenance(facts, provenanceClip(strings.Join(malformed, "; "), maxProvenanceError))
		}
		facts.Source.Error = "no attestations"
		return facts
	}
	facts.Source.Outcome = SourceOK
	facts.Present = true

	var t provenanceTally
	for _, m := range malformed {
		t.fail("", errors.New(m))
	}
	for i, it := range items {
		if i == maxAttestations {
			unread = true
			break
		}
		if it.file >= len(files) {
			t.fail(AttestationPyPI, fmt.Errorf("provenance document %d belongs to no file", it.file+1))
			continue
		}
		src, err := v.verifyPEP740Attestation(it.raw, it.publisher, files[it.file])
		if err != nil {
			t.fail(AttestationPyPI, err)
			continue
		}
		t.pass(AttestationPyPI, src)
	}
	if unread {
		t.fail("", fmt.Errorf("attestations past the first %d not verified", maxAttestations))
	}
	return t.finish(facts)
}

// verifyPEP740Attestation converts one PEP 740 attestation to a Sigstore bundle and
// verifies it for file.
func (v *Verifier) verifyPEP740Attestation(raw json.RawMessage, pub pep740Publisher, file distFile) (provenanceSource, error) {
	var src provenanceSource
	if file.invalid != "" {
		return src, errors.New(file.invalid)
	}
	b, err := pep740Bundle(raw)
	if err != nil {
		return src, err
	}
	// Refuse other predicate types before the costly verification; checkStatement
	// checks the type again on the verified statement.
	var st struct {
		PredicateType string `json:"predicateType"`
	}
	if err := json.Unmarshal(b.GetDsseEnvelope().GetPayload(), &st); err != nil {
		return src, errors.New("statement is malformed")
	}
	if st.PredicateType != predicatePyPIPublish && st.PredicateType != predicateSLSAv1 {
		return src, fmt.Errorf("unsupported predicate type %q", provenanceClip(st.PredicateType, 96))
	}
	identity, err := trustedPublisherIdentity(pub)
	if err != nil {
		return src, err
	}
	res, err := v.keyless.Verify(b, verify.NewPolicy(verify.WithArtifactDigest(file.alg, file.digest), verify.WithCertificateIdentity(identity)))
	if err != nil {
		return src, err
	}
	if err := checkStatement(res, st.PredicateType, file.name, file.alg, file.digest); err != nil {
		return src, err
	}
	if err := checkTrustedPublisher(res.Signature.Certificate, pub); err != nil {
		return src, err
	}
	return sourceFromCertificate(res)
}

// trustedPublisherIdentity is the certificate identity policy of a Trusted Publisher:
// for GitHub, a workflow identity issued by GitHub Actions. The workflow itself is
// checked on the Build Config URI by checkTrustedPublisher, since the signing workflow
// (the SAN) may be a reusable workflow the publisher's workflow calls.
func trustedPublisherIdentity(pub pep740Publisher) (verify.CertificateIdentity, error) {
	if pub.Kind != "GitHub" {
		return verify.CertificateIdentity{}, fmt.Errorf("trusted publisher kind %q is not supported", provenanceClip(pub.Kind, 32))
	}
	if !githubRepoRE.MatchString(pub.Repository) || !workflowFileRE.MatchString(pub.Workflow) {
		return verify.CertificateIdentity{}, errors.New("trusted publisher names no valid GitHub repository and workflow")
	}
	return verify.NewShortCertificateIdentity(githubActionsIssuer, "", "", `^https://github\.com/`)
}

// checkTrustedPublisher checks the certificate against a GitHub Trusted Publisher the way
// PyPI does: the source repository is the publisher's repository, and the build config
// (the top-level workflow) is the publisher's workflow in it. GitHub names are compared
// without regard to case.
func checkTrustedPublisher(cert *certificate.Summary, pub pep740Publisher) error {
	if cert == nil {
		return errors.New("no certificate")
	}
	wantRepo := "https://github.com/" + pub.Repository
	if !strings.EqualFold(cert.SourceRepositoryURI, wantRepo) {
		return fmt.Errorf("certificate source repository %q is not the trusted publisher's %q", provenanceClip(cert.SourceRepositoryURI, 96), wantRepo)
	}
	wantConfig := wantRepo + "/.github/workflows/" + pub.Workflow + "@"
	if got := cert.BuildConfigURI; len(got) <= len(wantConfig) || !strings.EqualFold(got[:len(wantConfig)], wantConfig) {
		return fmt.Errorf("certificate build config %q is not the trusted publisher's workflow %q", provenanceClip(got, 128), pub.Workflow)
	}
	return nil
}

// pep740Bundle converts a PEP 740 attestation to a Sigstore bundle v0.3, as the
// pypi-attestations reference implementation does: the leaf certificate, the
// transparency log entries (already in the bundle's protobuf JSON form) and a DSSE
// envelope with the in-toto statement and its one signature.
func pep740Bundle(raw json.RawMessage) (*bundle.Bundle, error) {
	var a pep740Attestation
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, errors.New("attestation is not valid JSON of the expected shape")
	}
	if a.Version != 1 {
		return nil, fmt.Errorf("attestation version %d, want 1", a.Version)
	}
	vm := a.VerificationMaterial
	if len(vm.Certificate) == 0 || len(a.Envelope.Statement) == 0 || len(a.Envelope.Signature) == 0 {
		return nil, errors.New("attestation lacks its certificate, statement or signature")
	}
	if n := len(vm.TransparencyEntries); n == 0 || n > maxPEP740TlogEntries {
		return nil, fmt.Errorf("attestation has %d transparency entries (want 1 to %d)", n, maxPEP740TlogEntries)
	}
	type sig struct {
		Sig []byte `json:"sig"`
	}
	var bj struct {
		MediaType            string `json:"mediaType"`
		VerificationMaterial struct {
			Certificate struct {
				RawBytes []byte `json:"rawBytes"`
			} `json:"certificate"`
			TlogEntries []json.RawMessage `json:"tlogEntries"`
		} `json:"verificationMaterial"`
		DSSEEnvelope struct {
			Payload     []byte `json:"payload"`
			PayloadType string `json:"payloadType"`
			Signatures  []sig  `json:"signatures"`
		} `json:"dsseEnvelope"`
	}
	bj.MediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	bj.VerificationMaterial.Certificate.RawBytes = vm.Certificate
	bj.VerificationMaterial.TlogEntries = vm.TransparencyEntries
	bj.DSSEEnvelope.Payload = a.Envelope.Statement
	bj.DSSEEnvelope.PayloadType = "application/vnd.in-toto+json"
	bj.DSSEEnvelope.Signatures = []sig{{Sig: a.Envelope.Signature}}
	data, err := json.Marshal(bj)
	if err != nil {
		return nil, errors.New("attestation could not be converted to a bundle")
	}
	return parseBundle(data)
}

// provenanceTally collects the verdicts on a version's attestations.
type provenanceTally struct {
	kinds    []string
	src      provenanceSource
	verified bool
	conflict bool
	reasons  []string
}

func (t *provenanceTally) pass(kind string, src provenanceSource) {
	t.verified = true
	if !slices.Contains(t.kinds, kind) {
		t.kinds = append(t.kinds, kind)
	}
	if src.Repository == "" {
		return
	}
	switch {
	case t.src.Repository == "":
		t.src = src
	case !strings.EqualFold(t.src.Repository, src.Repository) || t.src.Commit != src.Commit:
		t.conflict = true
		t.reasons = append(t.reasons, fmt.Sprintf("verified attestations name different sources (%s@%s, %s@%s)",
			t.src.Repository, t.src.Commit, src.Repository, src.Commit))
	}
}

func (t *provenanceTally) fail(kind string, err error) {
	reason := provenanceClip(err.Error(), maxProvenanceReason)
	if kind != "" {
		reason = kind + ": " + reason
	}
	t.reasons = append(t.reasons, reason)
}

func (t *provenanceTally) finish(facts ProvenanceFacts) ProvenanceFacts {
	if t.verified && !t.conflict {
		facts.Verified = true
		facts.Kinds = t.kinds
		facts.Repository = t.src.Repository
		facts.Commit = t.src.Commit
	}
	if len(t.reasons) > 0 {
		facts.Error = provenanceClip(strings.Join(t.reasons, "; "), maxProvenanceError)
	} else if !facts.Verified {
		facts.Error = "no attestation verified"
	}
	return facts
}

func failedProvenance(facts ProvenanceFacts, reason string) ProvenanceFacts {
	facts.Source.Outcome = SourceFailed
	facts.Source.Error = reason
	facts.Error = reason
	return facts
}

// provenanceClip makes text from an attestation or a verifier error fit for
// ProvenanceFacts.Error: printable characters only, at most n bytes.
func provenanceClip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if provenanceUnsafeRune(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// provenanceUnsafeRune reports control, format (bidi, zero-width) and other invisible
// runes that must not reach evidence text.
func provenanceUnsafeRune(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Co, r) || (!unicode.IsPrint(r) && r != ' ')
}
