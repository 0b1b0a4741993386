// Package signing is the private half of Probity's keys: Ed25519 signing keys, their
// PKCS#8 files, the key directory that holds them beside the key document, and the
// Signer that signs DSSE envelopes. The public key document (format, parsing,
// validation) is package keys, which an auditor reads without this package: nothing the
// standalone verifier builds imports keys/signing.
//
// # Key directory
//
// A key directory holds the signing key, signing-key.pem (PKCS#8 "PRIVATE KEY" PEM,
// mode 0600), and the key document, keys.json (mode 0644). GenerateDir creates both,
// EnsureDir creates a whole key directory on first start without ever leaving a
// half-made one, RotateDir replaces the signing key while keeping every earlier public
// key listed, RevokeDir marks a key revoked, and OpenDir loads the directory for
// signing. Every file is written atomically: a temporary file in the same directory,
// fsync, rename, fsync of the directory. The order of writes ensures that a crash never
// leaves a signing-key.pem whose key is not listed in keys.json.
package signing
