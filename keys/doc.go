// Package keys is the public half of Probity's keys: the key document that publishes
// the public Ed25519 keys an issuer signs with, their validity windows and revocations,
// and its strict parser (Parse, Load), validation and encoding (MarshalDocument). It is
// what an auditor needs to verify, and all package verifier imports of keys; it holds
// no private key.
//
// Private keys live in package keys/signing: generating keys, PKCS#8 files, the key
// directory with its crash-safe creation, rotation and revocation, and the Signer.
//
// # Key document
//
// The key document is published at /.well-known/probity-keys.json (its file name in a key
// directory is keys.json). It is a JSON object with exactly these members, in this order
// when written:
//
//	format_version  number   2 (FormatVersion), or 3 (FormatVersion3) when the document
//	                         lists a webhook key; 1 (FormatVersion1) is still read
//	issuer          string   who signs with these keys, e.g. "https://probity.dev";
//	                         1 to 256 bytes of UTF-8 without control characters
//	keys            array    1 to 64 key objects
//	log             object or null  format_version 2 and 3, where it is required: the
//	                         issuer's transparency log, {"origin": …, "key": …}; null
//	                         for a document without a log
//	webhook         object   format_version 3 only, where it is required: the key that
//	                         signs the issuer's webhook deliveries, {"public_key": …}
//
// A format_version 1 document has exactly the first three members (it is the format
// before the log, and old key histories hold it); a format_version 2 document has the
// first four; a format_version 3 document has all five. A document is written as format
// 3 exactly when it lists a webhook key, so every document without one reads as before.
// Any other format_version is rejected before the rest is read.
//
// The webhook object has exactly one string member:
//
//	public_key  the Ed25519 public key of the issuer's webhook deliveries in the Standard
//	            Webhooks form (https://www.standardwebhooks.com/, "Signature scheme":
//	            asymmetric public keys are "whpk_" + base64): "whpk_" followed by the
//	            canonical standard base64 (padded) of the 32 raw key bytes, 49
//	            characters in all. It is not one of the keys in keys: a key has one
//	            use. Package notify/webhook signs and verifies deliveries with it
//	            (signature identifier v1a).
//
// The log object has exactly two string members:
//
//	origin  the log's origin, the first line of its checkpoints (C2SP tlog-checkpoint):
//	        LogOrigin(issuer), the issuer URL without its scheme, keeping host[:port]
//	        and path, with "/log" appended, e.g. "probity.dev/log"; 1 to 256 bytes of
//	        printable ASCII without spaces or "+"
//	key     the C2SP signed-note verifier key its checkpoints are signed with,
//	        origin+hash+base64: the name is exactly origin, hash eight lower-case hex
//	        digits (the signed-note key hash), base64 canonical standard base64 of 0x01
//	        followed by the 32-byte Ed25519 public key
//
// Each key object has exactly these eight members, in this order; all eight must be
// present, with null for an unset optional value:
//
//	key_id             string  first 16 lower-case hex digits of SHA-256 over the SPKI DER
//	algorithm          string  always "Ed25519"
//	spki               string  standard base64 (padded, canonical) of the key's DER
//	                           SubjectPublicKeyInfo, which for Ed25519 is exactly 44 bytes
//	spki_sha256        string  64 lower-case hex digits: SHA-256 over the SPKI DER
//	valid_from         string  first instant the key may sign
//	valid_until        string or null  last instant the key may sign; null = open-ended;
//	                           when set it is strictly after valid_from
//	revoked_at         string or null  when the key was revoked
//	revocation_reason  string or null  why; 1 to 200 bytes of UTF-8 without control
//	                           characters. revoked_at and revocation_reason are both set
//	                           or both null.
//
// Timestamps are exactly attest.TimeLayout: RFC 3339 in UTC with three fractional digits
// and a literal "Z", e.g. 2026-08-22T00:00:00.000Z. A key is valid at an instant t iff
// valid_from <= t <= valid_until, compared at millisecond precision; both ends are
// inclusive. key_id values are unique within a document, and so are spki values. Unknown
// members, missing members, members of the wrong type, duplicate member names (also
// after Unicode NFC normalization), invalid UTF-8, nesting deeper than 64, trailing data
// and documents larger than 1 MiB are all rejected.
//
// An example with a retired key and its successor:
//
//	{
//	  "format_version": 1,
//	  "issuer": "https://probity.dev",
//	  "keys": [
//	    {
//	      "key_id": "70222b3a2c05e79a",
//	      "algorithm": "Ed25519",
//	      "spki": "MCowBQYDK2VwAyEA…",
//	      "spki_sha256": "70222b3a2c05e79a…",
//	      "valid_from": "2026-08-22T00:00:00.000Z",
//	      "valid_until": "2026-11-01T12:00:00.000Z",
//	      "revoked_at": null,
//	      "revocation_reason": null
//	    },
//	    {
//	      "key_id": "…",
//	      "algorithm": "Ed25519",
//	      "spki": "MCowBQYDK2VwAyEA…",
//	      "spki_sha256": "…",
//	      "valid_from": "2026-11-01T12:00:00.000Z",
//	      "valid_until": null,
//	      "revoked_at": null,
//	      "revocation_reason": null
//	    }
//	  ]
//	}
//
// (The "…" elisions stand for the rest of each value.) Written as format_version 2, the
// same document ends with the log:
//
//	  ],
//	  "log": {
//	    "origin": "probity.dev/log",
//	    "key": "probity.dev/log+4fb7b9f2+ARl/ayPhbIUyxqvIOPrNXqeJvgx2spIDNAOb+os9No1h"
//	  }
//	}
//
// # Key document history
//
// Every version of the key document is signed and appended to the transparency log as a
// record of its own (kind keys), so that the key history cannot be rewritten: a key
// added to keys.json, or a valid_from moved back, without a logged version is caught by
// comparing the served document with the latest logged one. A version is a DSSE
// envelope over an in-toto statement with predicate type
// https://probity.dev/attestation/keys/v1 (package attest, "Keys predicate"): its
// number, its event (generated, rotated, revoked, log_key_added, webhook_key_added), issuedAt, the
// document in canonical form, and for every version after the first the "sha256:"
// digest of the previous version's canonical document (CanonicalDocument,
// DocumentDigest). OpenVersion checks one version against the one before it; these are
// the rules, each a HistoryReason when broken:
//
//   - Numbers run 1, 2, 3, … without a gap, each previous digest names the document of
//     the version before, and issuedAt never goes back. Every version's document is
//     format_version 2, or 3 from the version that adds the webhook key on.
//   - Version 1 (event generated) is signed by a key it lists, unrevoked and valid at its
//     issuedAt (before its valid_until, when it has one). What it lists is trusted as of when it is logged: a key directory made
//     before versions existed gets version 1 of its document as it then was.
//   - Version n+1 is signed by at least one key that version n lists, unrevoked in
//     version n and valid at version n+1's issuedAt (issuedAt plays observedAt's role)
//     but not at the end of its window (issuedAt is before its valid_until, so a key
//     retired by a rotation authorizes nothing issued at the rotation's instant or
//     later), and that version n+1 does not revoke: a rotation is signed by the old key (and the
//     new one), a revocation by a key that stays valid. A signing key that is the only
//     valid one is therefore rotated before it is revoked. Every signature present is by
//     a distinct key the new document lists, and verifies.
//   - The document changes only as the event says (CheckChange). The issuer and the log,
//     once set, never change; keys are never removed and a key's key_id, spki and
//     valid_from never change; a valid_until may only be set or moved earlier, never
//     before issuedAt; a revocation is never undone or changed, and its revoked_at is not
//     after issuedAt; a new key's valid_from is not before issuedAt (no key is ever
//     valid before the version that publishes it) and a new key is not revoked.
//     rotated adds at least one key (and may end windows); revoked revokes at least one
//     key and changes nothing else; log_key_added sets the log and changes nothing else;
//     webhook_key_added sets the webhook key (format_version 3) and changes nothing
//     else. The webhook key, once set, never changes or goes (the format never goes
//     back).
//
// The key document in force at log index i is the document of the latest version logged
// at an index below i (version 1's for records logged before it). package verifier
// checks a log's versions as a chain with their log indexes (KeyHistory).
//
// # Revocation
//
// revoked_at is when a key stopped being trusted. A record logged, and witnessed, before
// a key's revocation time stays valid; one after it does not: a signature by a key
// revoked at R counts only for a record whose log bundle shows a trusted witness
// cosignature earlier than R on a checkpoint that holds the record (package verifier,
// VerifyBundle). Without a log proof a revoked key's signature is invalid, as it always
// was: nothing else shows that the record existed before R.
//
// # Key directory
//
// A key directory holds the key document as DocumentFile (keys.json, mode 0644) beside the
// signing key, the log key and the signed versions (versions/000001.dsse, …); package
// keys/signing writes and reads it, and keys.json is always the latest version's
// document.
package keys
