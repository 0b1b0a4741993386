// Package signing is the private half of Probity's keys: Ed25519 signing keys, their
// PKCS#8 files, the key directory that holds them beside the key document, and the
// Signer that signs DSSE envelopes. The public key document (format, parsing,
// validation) is package keys, which an auditor reads without this package: nothing the
// standalone verifier builds imports keys/signing.
//
// # Key directory
//
// A key directory holds the signing key, signing-key.pem (PKCS#8 "PRIVATE KEY" PEM,
// mode 0600), the log key, log-key.note (a C2SP signed-note signer key that signs the
// transparency log's checkpoints, mode 0600; LoadLogSigner), the webhook key,
// webhook-key.whsk (a Standard Webhooks "whsk_" secret key that signs webhook
// deliveries, mode 0600; EnsureWebhookKey adds it, LoadWebhookSigner loads it), the key document,
// keys.json (mode 0644), and the signed history of the key document,
// versions/000001.dsse, versions/000002.dsse, … (one keys/v1 DSSE envelope each; see
// package keys, "Key document history"; Versions reads them for the service to log).
// GenerateDir creates them all, EnsureDir creates a whole key directory on first start
// without ever leaving a half-made one, RotateDir replaces the signing key while keeping
// every earlier public key listed, RevokeDir marks a key revoked, and OpenDir loads the
// directory for signing. Generate, rotate and revoke each write a new signed version
// first, then keys.json from it; keys.json never changes otherwise, and OpenDir, RotateDir
// and RevokeDir refuse a keys.json that differs from the latest version (except the one
// a crash left a version behind, which they complete). OpenDir gives a directory made
// before versions existed its log key and version 1. Every file is written atomically:
// a temporary file in the same directory, fsync, rename (or link), fsync of the
// directory. The order of writes ensures that a crash never leaves a signing-key.pem
// whose key is not listed in keys.json, nor a keys.json that is not a signed version.
package signing
