// Package attest defines Probity's attestation format: the in-toto statement and its
// probe predicate, the canonical encoding every signature covers, the fingerprints of a
// tool list, and DSSE signing. This comment is the format's specification; the worked
// example at its end is rebuilt byte for byte by the package's tests.
//
// # Envelope
//
// A signed record is a DSSE envelope (https://github.com/secure-systems-lab/dsse),
// serialized as one line of JSON with its members in this order:
//
//	{"payloadType":"application/vnd.in-toto+json","payload":"<base64>","signatures":[{"keyid":"<key id>","sig":"<base64>"}]}
//
// Both base64 fields use the standard alphabet with padding (RFC 4648 §4); verifiers
// reject the URL alphabet, missing padding and non-zero trailing bits. An envelope
// carries 1 to 4 signatures, each by a distinct key. Envelope JSON is strict: no
// duplicate or unknown members, no trailing data.
//
// # Signed bytes
//
// Each signature is Ed25519 (RFC 8032, pure, no prehash) over the DSSE pre-authentication
// encoding of the payload:
//
//	PAE = "DSSEv1" SP LEN(payloadType) SP payloadType SP LEN(payload) SP payload
//
// where SP is one space (0x20), LEN is the byte length in ASCII decimal without leading
// zeros, payloadType is exactly application/vnd.in-toto+json, and payload is the
// statement's canonical bytes (below). The key id is the first 16 lowercase hex
// characters of SHA-256 over the signing key's SubjectPublicKeyInfo DER (RFC 8410); the
// key document (package keys) lists each key with its validity window, and a signature
// counts only if the statement's observedAt lies inside its key's window.
//
// # Statement and predicate
//
// The payload is an in-toto Statement v1 with exactly the members _type
// (https://in-toto.io/Statement/v1), subject (exactly one), predicateType and predicate.
// The probe predicate, https://probity.dev/attestation/probe/v1, is ProbePredicate; its
// JSON Schema (schema/probe-v1.schema.json, ProbeSchemaJSON) is kept in lockstep with the
// Go type by the tests. The major version is part of the URI: any change a v1 verifier
// would reject is a new predicate type. Third-party text (tool descriptions, server
// instructions) never enters the signed payload, only its fingerprints; reason
// parameters are bounded numbers or short constant tokens. Rules beyond the schema:
//
//   - a remote subject's name is the normalized endpoint URL and equals target.url;
//   - coverage full requires fingerprints and protocolVersion, and for a remote target
//     the subject digest sha256 equals the surface fingerprint's hex;
//   - coverage auth_required has no fingerprints, toolCount and pages 0, for a remote
//     target the subject digest sha256 is AuthRequiredDigest(name) (SHA-256 of the name
//     as a canonical JSON string), and every check other than reachability,
//     redirect_policy, transport and auth_metadata is UNVERIFIED with reason
//     credential_required;
//   - check ids are unique, and an UNVERIFIED check carries a reason.
//
// A round that never completed a handshake is not signed at all.
//
// # Change predicate
//
// https://probity.dev/attestation/change/v1 (ChangePredicate, schema/change-v1.schema.json)
// records one change of an entry's history: its per-entry number, recordedAt (the time
// held to the key's window, as observedAt is for rounds), origin (automatic or operator),
// kind (baseline, tools, version, operator_edit), a one-line summary of counts and
// version numbers, badges, and the before and after states. A state names the signed
// round it was read in by roundId and payloadDigest ("sha256:" + hex SHA-256 of that
// round's DSSE payload), with the surface and instructions fingerprints and the tool
// count it recorded, or a version, or the digest of an operator edit. So a history can be
// verified offline: each change verifies on its own, and its two rounds verify and carry
// the fingerprints it names. Rules beyond the schema:
//
//   - exactly one subject: the entry's url (remote) or package reference, with the digest
//     sha256 = hex SHA-256 of the canonical bytes of the predicate's after member
//     (ChangeSubjectDigest);
//   - roundId and payloadDigest come together; a baseline has no before and names its
//     round and surface, or (an npm or PyPI entry's: "observation started at version
//     X") the version and nothing else; a tools change names both rounds and surfaces; a
//     version change names the new version; an operator edit names the edit's digest;
//   - origin is operator exactly for operator edits; no badge appears twice.
//
// The badges are those of package history/diff (no_longer_read_only, newly_destructive,
// new_destructive_tool, newly_required_param, invisible_characters, new_instructions)
// and differs_from_approved: a tools change whose new surface differs from the entry's
// approved baseline (baseline predicate) when it was recorded.
//
// # Supply predicate
//
// https://probity.dev/attestation/supply/v1 (SupplyPredicate,
// schema/supply-v1.schema.json) records one run of the eleven supply-chain checks of an
// entry (seed 004): for each check, in SupplyCheckIDs order, its status (passed, failed,
// partial, skipped), weight, points in thousandths and whether a failure is serious;
// weightRan, score and verified; evaluatedAt (held to the key's window); the package
// version read, the repository and commit a verified build provenance names, and the
// Scorecard commit. The subject is the entry's url or package reference, with the
// SHA-256 of the canonical facts document the checks read. A verifier recomputes the
// decision from the checks, so a Verified badge can be checked offline:
//
//   - passed earns the full weight, failed and skipped nothing, partial a share strictly
//     between; only a failed check is serious (which failures are serious is the suite's
//     rule, checks/supply: the verifier only reads the flag);
//   - skipped is a check that did not count: one that does not apply or had no data, and
//     one Probity could not run because a source could not be read on its side (quota,
//     timeout, 5xx, network). The suite shows the latter as "not run, retried"
//     (checks/supply.StatusNotRun) and runs it again within hours; it is signed as
//     skipped, since both count neither way and a fifth status would be a new predicate
//     type;
//   - weightRan is the weight of the checks not skipped; score is the points over
//     weightRan as a percentage, rounded half up (SupplyScore);
//   - verified holds exactly when score ≥ 80 (SupplyVerifiedMinScore), weightRan ≥ 60
//     (SupplyVerifiedMinWeightRan), no check is serious, and source_repository passed
//     (SupplyVerified). These thresholds, ids and weights live here only; checks/supply
//     decides with them.
//
// # Keys predicate
//
// https://probity.dev/attestation/keys/v1 (KeysPredicate, schema/keys-v1.schema.json)
// is one version of an issuer's key document (package keys), signed and logged like any
// record (kind keys), so that the key history is append-only too. Its members:
//
//	version   1, 2, 3, … (at most MaxKeysVersion)
//	event     generated (version 1, and only it), rotated, revoked, log_key_added or
//	          webhook_key_added
//	issuedAt  when the version was made: the time held to the signing keys' windows,
//	          as observedAt is for rounds
//	document  the key document, format_version 2 (3 once it lists a webhook key), as
//	          a JSON object (canonical within the canonical payload)
//	previous  "sha256:" + hex SHA-256 of the previous version's canonical document;
//	          absent in version 1, required in every later one
//
// The one subject is the issuer (the document's issuer member) with the digest sha256 =
// hex SHA-256 of the document's canonical bytes (KeysDocumentDigest). NewKeysStatement
// builds the statement. Which keys may sign a version, and how a document may change
// from one version to the next, are package keys' rules ("Key document history"):
// version 1 is signed by a key it lists itself; version n+1 by a key that version n
// lists, unrevoked, valid at issuedAt and before its valid_until (a rotation by the old
// key and the new one, a revocation by a key that stays valid). This package checks what it can without the
// key document's own rules: the schema, previous and event against the version number,
// and the subject.
//
// Test vector (TestKeysVector rebuilds it). The key of the worked example below
// (a050837d85070582), valid from 2026-11-30T12:00:00.000Z, and a log key of origin
// probity.dev/log give version 1, issued at that instant, of this document (canonical
// bytes, 478, wrapped here):
//
//	{"format_version":2,"issuer":"https://probity.dev","keys":[{"algorithm":"Ed25519","
//	key_id":"a050837d85070582","revocation_reason":null,"revoked_at":null,"spki":"MCow
//	BQYDK2VwAyEAA6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=","spki_sha256":"a050837d8
//	5070582ccf7394b0988847cc312cb88259b894899f6f239cf1791a5","valid_from":"2026-11-30T
//	12:00:00.000Z","valid_until":null}],"log":{"key":"probity.dev/log+4fb7b9f2+ARl/ayP
//	hbIUyxqvIOPrNXqeJvgx2spIDNAOb+os9No1h","origin":"probity.dev/log"}}
//
// whose digest, the subject's, is
//
//	69ca53e56cb1f231b4e5f43e68281f93b81062850af2f88b805a4b387b3e8c39
//
// The statement's canonical bytes (805) are
//
//	{"_type":"https://in-toto.io/Statement/v1","predicate":{"document":{…},"event":"gener
//	ated","issuedAt":"2026-11-30T12:00:00.000Z","version":1},"predicateType":"https://pr
//	obity.dev/attestation/keys/v1","subject":[{"digest":{"sha256":"69ca53e56cb1f231b4e5f
//	43e68281f93b81062850af2f88b805a4b387b3e8c39"},"name":"https://probity.dev"}]}
//
// with the document above in place of {…}, and the key's Ed25519 signature over their PAE
// is
//
//	3AiDkq4m+JhzIrbatMgD4GhbI0cQJwuxoa/EhKT30x+zYL6d6v0BsA3LWjEkZy6lCP6T4erDogoOhYOJGejoAA==
//
// # Dispute and outcome predicates
//
// https://probity.dev/attestation/dispute/v1 (DisputePredicate,
// schema/dispute-v1.schema.json) is a maintainer's public dispute of one check result of
// a signed round: the entry (as in a change), the entry's dispute number (1, 2, …),
// openedAt (held to the key's window), the finding (the round's probe record by ledger
// seq and payloadDigest, the checkId, and the status the round recorded), the
// maintainer's statement and an optional evidence URL, and toolVersion. It never names
// the maintainer or the account. Rules beyond the schema:
//
//   - exactly one subject: the entry's url or package reference, with sha256 = the hex
//     of the finding's payloadDigest (the subject pins the signed round);
//   - statement: 1 to 2,000 characters (code points, after NFC), valid UTF-8, no
//     control character but the newline (CheckDisputeText); evidence: "" or an https
//     URL with a host and no user name, of at most 2,048 bytes, without white space or
//     the characters a URL holds only escaped (CheckEvidenceURL). Both are the
//     maintainer's words: a reader shows them as plain text, never as markup;
//   - a remote entry has a url and no package; any other a package and no url.
//
// https://probity.dev/attestation/outcome/v1 (OutcomePredicate,
// schema/outcome-v1.schema.json) is an operator's decision on a dispute: the entry, the
// dispute (its number and its record: ledger seq and payloadDigest of the dispute's
// DSSE payload), decision (upheld, rejected, or corrected), suiteVersion (present
// exactly for corrected: the check suite version that corrects the finding), reason
// (as a statement), decidedAt and toolVersion; never the operator's name. Its one
// subject is the entry's url or package reference with sha256 = the hex of the
// dispute's payload digest.
//
// Offline, each verifies on its own (signature, key window, rules). Given both, a
// verifier also checks the link (CheckOutcomeLink): the same entry, the dispute's
// number, the dispute payload's digest, and, when the dispute's ledger seq is known
// (a bundle or the log), that seq. Whether the contested round itself held that status
// is checked by verifying the round's bundle (seq and digest named in the finding);
// whether a dispute has an outcome at all is only known from the log. The ledger kinds
// are "dispute" and "outcome".
//
// Worked example (TestDisputeWorkedExample): the dispute of the check
// destructive_annotations, FAILED in the round of record 41, of
// https://mcp.example.com/mcp, opened on 2026-12-02 at 09:30 UTC, has the canonical
// payload
//
//	{"_type":"https://in-toto.io/Statement/v1","predicate":{"entry":{"kind":"remote",
//	"slug":"mcp-example-com","url":"https://mcp.example.com/mcp"},"evidence":
//	"https://github.com/example/mcp/blob/main/notes.go","finding":{"checkId":
//	"destructive_annotations","record":{"payloadDigest":"sha256:0a0a…0a","seq":41},
//	"status":"FAILED"},"number":1,"openedAt":"2026-12-02T09:30:00.000Z","statement":
//	"The tool delete_note asks for confirmation.\nSee the linked source.",
//	"toolVersion":"0.1.0"},"predicateType":"https://probity.dev/attestation/dispute/v1",
//	"subject":[{"digest":{"sha256":"0a0a…0a"},"name":"https://mcp.example.com/mcp"}]}
//
// (one line, no white space; "0a0a…0a" is 0x0a 32 times in hex).
//
// # Withdrawal predicate
//
// https://probity.dev/attestation/withdrawal/v1 (WithdrawalPredicate,
// schema/withdrawal-v1.schema.json) records an operator's answer to a report that a
// Verified server is harmful (seed 004: answered within 72 hours): the entry's Verified
// withdrawn, or a withdrawal undone. It is logged like any record (kind withdrawal). Its
// members:
//
//	entry        the entry, as in a change (EntryRef)
//	number       1, 2, … over the entry's withdrawal records (at most MaxWithdrawalNumber)
//	action       withdrawn or restored
//	reason       the operator's reason: plain text, 1 to 2000 characters, no control
//	             characters but tab and line feed, not blank; shown as plain text
//	at           when the operator decided: the time held to the key's window
//	supply       the signed supply run whose Verified is withdrawn (the entry's newest
//	             Verified run when withdrawn; the one that was withdrawn when restored):
//	             seq, its ledger sequence number (its log index + 1), and payloadDigest,
//	             "sha256:" + hex SHA-256 of its DSSE payload
//	toolVersion  the version of Probity that signed it
//
// The one subject is the entry's url (remote) or package reference with the digest
// sha256 = the hex of supply.payloadDigest, so the record pins the run it is about.
// A remote entry has a url and no package, any other a package and no url. A verifier
// of an entry's Verified reads the entry's newest withdrawal record: while it is
// withdrawn, no supply run makes the entry Verified, a later one neither; only a
// restored record does.
//
// Worked example (TestWithdrawalWorkedExample rebuilds it): the canonical payload of
// withdrawal 1 of the remote entry acme-files, withdrawn at 2026-03-02T10:00:00.000Z
// from the supply run of sequence number 42 (wrapped here):
//
//	{"_type":"https://in-toto.io/Statement/v1","predicate":{"action":"withdrawn","at":"2
//	026-03-02T10:00:00.000Z","entry":{"kind":"remote","slug":"acme-files","url":"https:/
//	/mcp.acme.example/mcp"},"number":1,"reason":"The server uploads the files it reads t
//	o a third party.","supply":{"payloadDigest":"sha256:abababababababababababababababab
//	abababababababababababababababab","seq":42},"toolVersion":"probity-0.9.0"},"predicat
//	eType":"https://probity.dev/attestation/withdrawal/v1","subject":[{"digest":{"sha256
//	":"abababababababababababababababababababababababababababababababab"},"name":"https:
//	//mcp.acme.example/mcp"}]}
//
// # Baseline predicate
//
// https://probity.dev/attestation/baseline/v1 (BaselinePredicate,
// schema/baseline-v1.schema.json) records a tool surface an entry's maintainer approved
// (issue 18, "Approve a baseline"); from the entry's next round the checks
// toolset_unchanged_vs_approved, schema_unchanged_vs_approved and
// surface_unchanged_vs_approved compare the round's fingerprints with it. Its members:
//
//	entry         the entry, as in a change (EntryRef)
//	number        the entry's baseline number: 1, 2, … in the order approved
//	approvedAt    when it was approved: the time held to the signing key's window, as
//	              observedAt is for rounds
//	fingerprints  toolset, schema and surface: those of the basis round, exactly
//	toolCount     the basis round's tool count, 1 or more (no tools, nothing to approve)
//	basis         the signed round it was taken from, by roundId and payloadDigest
//	              ("sha256:" + hex SHA-256 of that round's DSSE payload), as a change
//	              names its rounds; a verifier holding the round checks that it carries
//	              these fingerprints. (Not by ledger sequence number: a record's number
//	              is given by the sequencing step after it is stored, and the digest is
//	              what ties the two records.)
//	toolVersion   Probity's version
//
// Who approved is never part of it. The one subject is the entry's url (remote) or
// package reference with the digest sha256 = the hex of the approved surface
// fingerprint. NewBaselineStatement builds the statement over NewBaselinePredicate; its
// ledger kind is baseline.
//
// Test vector (TestBaselineVector rebuilds it): baseline 1 of the remote entry
// mcp-example-com-mcp, approved at 2026-11-30T12:30:00.000Z from round
// c20261130T120000000Z-e1 of 3 tools, with toolset, schema, surface and round payload
// digests sha256:111…, 222…, 333… and 444… (64 hex digits each), Probity 0.1.0, has the
// canonical payload (wrapped here; each run of digits is 64 long)
//
//	{"_type":"https://in-toto.io/Statement/v1","predicate":{"approvedAt":"2026-11-30T12:30:00.000Z",
//	"basis":{"payloadDigest":"sha256:444…","roundId":"c20261130T120000000Z-e1"},"entry":{"kind":
//	"remote","slug":"mcp-example-com-mcp","url":"https://mcp.example.com/mcp"},"fingerprints":
//	{"schema":"sha256:222…","surface":"sha256:333…","toolset":"sha256:111…"},"number":1,
//	"toolCount":3,"toolVersion":"0.1.0"},"predicateType":"https://probity.dev/attestation/
//	baseline/v1","subject":[{"digest":{"sha256":"333…"},"name":"https://mcp.example.com/mcp"}]}
//
// and the worked example's key (a050837d85070582) signs its PAE as
//
//	M7LtlT4CGOQjW9L3jO61nSsSMciouPHOtIx7arR9GKBNzFCPaKKTfiFwESMMb2E8qTWqf7KHZLqnSmhCZe8oDQ==
//
// # Building and signing
//
// Each statement is put together by the constructor beside its predicate:
// NewProbeStatement (with NewServerInfo and NewTimings for the schema's bounds),
// NewChangeStatement, NewSupplyStatement over NewSupplyPredicate, and NewBaselineStatement
// over NewBaselinePredicate. Check encodes a
// statement canonically and applies every rule above with the code DecodeStatement runs
// for a verifier; the Checked it returns is signed by its Sign method without a second
// check, so a statement is validated once, and nothing is signed that a verifier would
// refuse. Sign is Check followed by Checked.Sign.
//
// # Canonical form: nfc-jcs/v1
//
// The canonical bytes of a JSON document are produced in two steps:
//
//  1. Every string and every object key is normalized to Unicode NFC. Two keys of one
//     object that are equal after normalization are an error, reported apart from a
//     plain duplicate key.
//  2. The result is serialized per RFC 8785 (JSON Canonicalization Scheme): no
//     insignificant whitespace, object members sorted by the UTF-16 code units of their
//     keys, numbers in ECMAScript shortest round-trip form, strings with only the escapes
//     RFC 8785 requires (\" \\ \b \f \n \r \t and \u00xx in lowercase hex for other
//     control characters).
//
// Input is rejected, never repaired, when it has invalid UTF-8, a lone or misordered
// UTF-16 surrogate escape, a duplicate key, a number that is not finite as an IEEE 754
// double (1e400), an integer beyond ±2^53, a run of more than 30 consecutive combining
// marks (text that is not stream-safe, UAX #15, and whose NFC therefore differs between
// implementations), nesting deeper than 64 arrays and objects, or anything after the
// top-level value. An integer beyond ±2^53 is an integer literal (no fraction, no
// exponent) beyond it, or any number whose value as a double has a magnitude between
// 2^53 and 1e21 however it is written (1e20, 9007199254740994.0; 9007199254740993.0 is
// the double 2^53 and accepted as such): RFC 8785 would write those as
// integer literals, so rejecting them keeps the canonical form free of integers a double
// cannot hold and lets Canonicalize accept its own output. From 1e21 up, RFC 8785 uses an
// exponent (1e+21) and the number is accepted. Go values are encoded with encoding/json
// first (Marshal), and strings holding invalid UTF-8 are rejected rather than replaced
// with U+FFFD.
//
// Canonical bytes are produced once, from typed Go values, and signed as they are; a
// verifier rejects a payload that is not byte for byte its own canonical form.
//
// Implementation note: the RFC 8785 serialization is written by this package's strict
// scanner, with github.com/gowebpki/jcs (v1.0.2) formatting numbers. The tests and fuzz
// targets require the scanner's output to equal jcs.Transform of the NFC-normalized input
// for every document the scanner accepts. Running jcs.Transform itself on the signing and
// verifying paths was measured at about 47 µs for a 2.3 KB statement, nearly the whole
// budget of 50 µs per signature (README, Performance), so jcs serves as the oracle
// rather than the hot path.
//
// # Fingerprints
//
// A fingerprint is "sha256:" followed by the lowercase hex SHA-256 of canonical bytes.
// Four are computed over the tools array of a tools/list result (all pages joined in
// order) and the server's instructions:
//
//   - toolset: the array of the tool names;
//   - schema: the array of objects {"inputSchema": …, "name": …};
//   - surface: the array of objects with the members name, title, description,
//     inputSchema, outputSchema and annotations as the tool sent them (a member the tool
//     did not send is absent, one it sent as null is null; other members are ignored);
//   - instructions: the instructions as a JSON string; a server that sent none has the
//     fingerprint of the empty string.
//
// Array elements are sorted by the tool name after NFC, comparing UTF-16 code units
// (so a name starting with a supplementary character sorts before one starting with
// U+E000–U+FFFF); duplicate names are kept. Ties are broken by the canonical bytes of the
// inputSchema (schema) or of the whole element (surface), compared as bytes. Every tool
// must be an object whose name is a string. The same tool list sent in NFC and in NFD,
// in any order, with members in any order, has one set of fingerprints. On NFC input,
// toolset and schema equal the projection-v1 fingerprints another observer publishes,
// so independent observations can be compared.
//
// # Log leaf
//
// Every ledger record (package store: probe, change, supply and key-document records,
// and tombstones) is appended, in ledger order and exactly once, to Probity's
// transparency log (C2SP tlog-tiles, package translog). The record with ledger sequence
// number N is the leaf at log index N-1. A leaf is bytes, at most 65,535 (MaxLeafSize,
// the tlog-tiles bound), of this form: three lines, each ending in one LF (0x0a),
//
//	probity.dev/log-leaf/v1
//	seq N
//	kind K
//
// where N is the sequence number in decimal without leading zeros and K the record's
// kind (1 to 32 of a-z, 0-9 and _, starting with a letter: probe, change, supply, keys,
// baseline, or tombstone), then exactly one body:
//
//   - envelope L, LF, then the L bytes of the record's DSSE envelope exactly as stored
//     (compact, one line, no trailing newline). This is the form whenever the whole leaf
//     fits in 65,535 bytes (RecordLeaf), which every envelope of today's predicates does.
//   - envelope-sha256 H, LF: H is the lower-case hex SHA-256 of the envelope, the form
//     for an envelope too large to be inline; a verifier holding the envelope decides
//     which form applies by its size alone, so one envelope has one leaf.
//   - tombstone L, LF, then L bytes: the tombstone of an entry's deletion (K is
//     tombstone), its TombstoneDocument in canonical form, which names the records the
//     deletion removed from the ledger by sequence number, kind and payload digest
//     (ParseTombstoneDocument says exactly which documents are well formed).
//   - tombstone-sha256 H, LF: H is the lower-case hex SHA-256 of a tombstone document too
//     large to be inline (a deletion of hundreds of records; decided by size alone, as
//     for envelopes); the export's index lists what it removed.
//   - removed payload-sha256 H, LF: a record the deletion of its entry removed from the
//     ledger before it was logged; H is its payload digest as its tombstone lists it.
//
// Nothing else is a leaf (ParseLeaf). The log's Merkle tree is RFC 6962's: a leaf's hash
// is SHA-256 of 0x00 followed by the leaf, an interior node's SHA-256 of 0x01 and its
// two children.
//
// Worked example. The envelope of the worked example below (1,796 bytes), as the record
// with sequence number 1, kind probe, is the leaf at log index 0: the 52 bytes
//
//	probity.dev/log-leaf/v1
//	seq 1
//	kind probe
//	envelope 1796
//
// followed by the envelope, 1,851 bytes in all, with the leaf hash
//
//	0e82cb89797e331f20444dfa3f6ef5ce9f26d5b623bca07c6554ea69f913aef8
//
// Deleting its entry on 2026-12-01 at 10:00 UTC, with the reason "the operator removed
// the server", takes sequence number 2; the tombstone's leaf, at log index 1, is
// (the last line wrapped here; it is one line of 228 bytes without a trailing newline)
//
//	probity.dev/log-leaf/v1
//	seq 2
//	kind tombstone
//	tombstone 228
//	{"deletedAt":"2026-12-01T10:00:00.000Z","entry":"example","reason":"the operator r
//	emoved the server","removed":[{"kind":"probe","payloadDigest":"sha256:d6709818060e
//	c01433c73eb48ac52102d36baa1955b9f9db2ebd9bbaa5c2db42","seq":1}]}
//
// with the leaf hash
//
//	3b513b513b807ab7c778d1d5918fe522dd17c1c78c15e500149c4d3c02ad3665
//
// and the tree of these two leaves has the root hash
//
//	62dbe7e0435852c7a7455332e4856d0c0a894b5b63145d4beadb9432b8682553
//
// # Bundle
//
// A bundle (Bundle, BundleFormat) lets anyone check offline that a signed record is in
// the log: one JSON object with the members
//
//	bundle              "probity.dev/log-bundle/v1"
//	logIndex            the record's log index (its sequence number minus 1)
//	kind                the record's kind, as in its leaf
//	envelope            the DSSE envelope as a JSON object; its compact form
//	                    (json.Compact) is the envelope the leaf holds
//	inclusionProof      RFC 6962 inclusion proof of the leaf in the tree of the
//	                    checkpoint's size: an array of standard base64 32-byte hashes
//	checkpoint          the checkpoint (C2SP tlog-checkpoint) as a signed note, with the
//	                    log's signature and the witnesses' cosignatures (C2SP
//	                    tlog-cosignature/v1); the earliest checkpoint the log published
//	                    that holds the record
//	previousCheckpoint  optional: the checkpoint published before it, which does not hold
//	                    the record (its size is at most logIndex)
//	consistencyProof    with previousCheckpoint: the RFC 6962 consistency proof from it
//	                    to checkpoint
//
// Cosignature timestamps on the two checkpoints bound when the record was logged: not
// after the earliest cosignature on checkpoint, not before the latest on
// previousCheckpoint. Package verifier checks a bundle (the leaf rebuilt from kind,
// logIndex+1 and the envelope; the proofs; the log's and the witnesses' signatures) and
// holds a record's own time to those bounds.
//
// # Worked example
//
// Private key seed (RFC 8032), the 32 bytes 0x00 … 0x1f:
//
//	000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
//
// Public key as SPKI DER in base64, and its key id:
//
//	MCowBQYDK2VwAyEAA6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=
//	a050837d85070582
//
// The tools/list result
//
//	{"tools":[{"name":"echo","description":"Echoes the input.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}
//
// has the fingerprints
//
//	toolset sha256:814fb24ccab132875d3212aa862578b1b02261c1c1dd6601bec877f6cac9225b
//	schema sha256:0ba47954bfa4d30e07816c0a49e274d869dfcc40c5ce77b46fc4d338d15048d3
//	surface sha256:593c0a3edf88c080e6cc750109a5f8a0ca0fd9874bd9f89c5f643eea2338af4f
//	instructions sha256:12ae32cb1ec02d01eda3581b127c1fee3b0dc53572ed6baf239721a03d82e126
//
// A full-coverage statement about https://mcp.example.com/mcp observed at
// 2026-11-30T12:00:00.000Z has these canonical bytes (wrapped here; the payload is one line
// with no newline):
//
//	{"_type":"https://in-toto.io/Statement/v1","predicate":{"checks":[{"id":
//	"reachability","status":"VERIFIED"},{"id":"auth_metadata","reason":{"key
//	":"no_challenge"},"status":"UNVERIFIED"}],"coverage":"full","fingerprint
//	s":{"instructions":"sha256:12ae32cb1ec02d01eda3581b127c1fee3b0dc53572ed6
//	baf239721a03d82e126","schema":"sha256:0ba47954bfa4d30e07816c0a49e274d869
//	dfcc40c5ce77b46fc4d338d15048d3","surface":"sha256:593c0a3edf88c080e6cc75
//	0109a5f8a0ca0fd9874bd9f89c5f643eea2338af4f","toolset":"sha256:814fb24cca
//	b132875d3212aa862578b1b02261c1c1dd6601bec877f6cac9225b"},"observedAt":"2
//	026-11-30T12:00:00.000Z","pages":1,"probe":{"suiteDigest":"sha256:de3777
//	7926c98d2aaa01b27776b4e022d735022fefaaac72829325349722c46b","suiteVersio
//	n":"2026.11","toolVersion":"0.1.0"},"protocolVersion":"2025-11-25","roun
//	dId":"r-example-1","serverInfo":{"name":"example","version":"1.0.0"},"ta
//	rget":{"kind":"remote","url":"https://mcp.example.com/mcp"},"timings":{"
//	handshakeMs":120,"toolsListMs":80,"totalMs":260},"toolCount":1},"predica
//	teType":"https://probity.dev/attestation/probe/v1","subject":[{"digest":
//	{"sha256":"593c0a3edf88c080e6cc750109a5f8a0ca0fd9874bd9f89c5f643eea2338a
//	f4f"},"name":"https://mcp.example.com/mcp"}]}
//
// The signed message is the PAE prefix below, one space (0x20), then those bytes:
//
//	DSSEv1 28 application/vnd.in-toto+json 1197
//
// The Ed25519 signature, in base64:
//
//	xd9sIRVdfZ1cgUSFn3/+SxZt79BlV8Byz38gIFobNXEzcDM558JKdE/srUQo9NLYTGPyVr/baKtIV3S/8CUcDQ==
//
// and the envelope (wrapped here; one line):
//
//	{"payloadType":"application/vnd.in-toto+json","payload":"eyJfdHlwZSI6Imh
//	0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEiLCJwcmVkaWNhdGUiOnsiY2hlY2tzIjp
//	beyJpZCI6InJlYWNoYWJpbGl0eSIsInN0YXR1cyI6IlZFUklGSUVEIn0seyJpZCI6ImF1dGh
//	fbWV0YWRhdGEiLCJyZWFzb24iOnsia2V5Ijoibm9fY2hhbGxlbmdlIn0sInN0YXR1cyI6IlV
//	OVkVSSUZJRUQifV0sImNvdmVyYWdlIjoiZnVsbCIsImZpbmdlcnByaW50cyI6eyJpbnN0cnV
//	jdGlvbnMiOiJzaGEyNTY6MTJhZTMyY2IxZWMwMmQwMWVkYTM1ODFiMTI3YzFmZWUzYjBkYzU
//	zNTcyZWQ2YmFmMjM5NzIxYTAzZDgyZTEyNiIsInNjaGVtYSI6InNoYTI1NjowYmE0Nzk1NGJ
//	mYTRkMzBlMDc4MTZjMGE0OWUyNzRkODY5ZGZjYzQwYzVjZTc3YjQ2ZmM0ZDMzOGQxNTA0OGQ
//	zIiwic3VyZmFjZSI6InNoYTI1Njo1OTNjMGEzZWRmODhjMDgwZTZjYzc1MDEwOWE1ZjhhMGN
//	hMGZkOTg3NGJkOWY4OWM1ZjY0M2VlYTIzMzhhZjRmIiwidG9vbHNldCI6InNoYTI1Njo4MTR
//	mYjI0Y2NhYjEzMjg3NWQzMjEyYWE4NjI1NzhiMWIwMjI2MWMxYzFkZDY2MDFiZWM4NzdmNmN
//	hYzkyMjViIn0sIm9ic2VydmVkQXQiOiIyMDI2LTExLTMwVDEyOjAwOjAwLjAwMFoiLCJwYWd
//	lcyI6MSwicHJvYmUiOnsic3VpdGVEaWdlc3QiOiJzaGEyNTY6ZGUzNzc3NzkyNmM5OGQyYWF
//	hMDFiMjc3NzZiNGUwMjJkNzM1MDIyZmVmYWFhYzcyODI5MzI1MzQ5NzIyYzQ2YiIsInN1aXR
//	lVmVyc2lvbiI6IjIwMjYuMTEiLCJ0b29sVmVyc2lvbiI6IjAuMS4wIn0sInByb3RvY29sVmV
//	yc2lvbiI6IjIwMjUtMTEtMjUiLCJyb3VuZElkIjoici1leGFtcGxlLTEiLCJzZXJ2ZXJJbmZ
//	vIjp7Im5hbWUiOiJleGFtcGxlIiwidmVyc2lvbiI6IjEuMC4wIn0sInRhcmdldCI6eyJraW5
//	kIjoicmVtb3RlIiwidXJsIjoiaHR0cHM6Ly9tY3AuZXhhbXBsZS5jb20vbWNwIn0sInRpbWl
//	uZ3MiOnsiaGFuZHNoYWtlTXMiOjEyMCwidG9vbHNMaXN0TXMiOjgwLCJ0b3RhbE1zIjoyNjB
//	9LCJ0b29sQ291bnQiOjF9LCJwcmVkaWNhdGVUeXBlIjoiaHR0cHM6Ly9wcm9iaXR5LmRldi9
//	hdHRlc3RhdGlvbi9wcm9iZS92MSIsInN1YmplY3QiOlt7ImRpZ2VzdCI6eyJzaGEyNTYiOiI
//	1OTNjMGEzZWRmODhjMDgwZTZjYzc1MDEwOWE1ZjhhMGNhMGZkOTg3NGJkOWY4OWM1ZjY0M2V
//	lYTIzMzhhZjRmIn0sIm5hbWUiOiJodHRwczovL21jcC5leGFtcGxlLmNvbS9tY3AifV19","
//	signatures":[{"keyid":"a050837d85070582","sig":"xd9sIRVdfZ1cgUSFn3/+SxZt
//	79BlV8Byz38gIFobNXEzcDM558JKdE/srUQo9NLYTGPyVr/baKtIV3S/8CUcDQ=="}]}
package attest
