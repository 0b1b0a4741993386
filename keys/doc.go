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
//	format_version  number   always 1
//	issuer          string   who signs with these keys, e.g. "https://probity.dev";
//	                         1 to 256 bytes of UTF-8 without control characters
//	keys            array    1 to 64 key objects
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
// (The "…" elisions stand for the rest of each value.)
//
// # Key directory
//
// A key directory holds the key document as DocumentFile (keys.json, mode 0644) beside the
// signing key; package keys/signing writes and reads it.
package keys
