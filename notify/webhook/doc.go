// Package webhook tells an account's webhooks of each change of the entries it follows:
// a JSON POST signed per the Standard Webhooks specification with an Ed25519 signature
// whose public key the key document publishes, so that a receiver verifies it with no
// shared secret. It registers webhooks (Service.Register, CheckURL), plans deliveries
// from recorded changes (Service.Plan), delivers them through the egress guard with
// retries (Service.Deliver, run by the River job of AddWorkers and PeriodicJobs),
// disables a webhook that keeps failing, keeps a delivery log its owner reads
// (Service.Log), and gives receivers Verify.
//
// # Signature (Standard Webhooks 1.0.0, asymmetric)
//
// The scheme is Standard Webhooks' (https://www.standardwebhooks.com/, specification
// spec/standard-webhooks.md, sections "Signature scheme" and "Webhook headers"), with
// its asymmetric signature, identifier v1a. Every attempt carries three headers:
//
//	webhook-id         the delivery's id, "msg_" + webhook id + "_" + entry id + "_" +
//	                   change number, e.g. msg_7_42_3: the same on every retry, so a
//	                   receiver can use it as its idempotency key
//	webhook-timestamp  the attempt's time, decimal Unix seconds (new on every retry)
//	webhook-signature  "v1a," + standard base64 (padded, 88 characters) of the 64-byte
//	                   Ed25519 signature
//
// The signed bytes are exactly the id, a full stop, the timestamp, a full stop and the
// body as sent: "{webhook-id}.{webhook-timestamp}.{body}" (SignedContent). The id and the
// timestamp never hold a full stop. The key is the issuer's webhook key: its public half
// is in the key document (/.well-known/probity-keys.json, format_version 3, member
// webhook.public_key) as "whpk_" + standard base64 of the 32 raw key bytes; the private
// half is kept beside the record keys (keys/signing, webhook-key.whsk, as "whsk_" +
// standard base64 of the 64-byte private key). The webhook key signs nothing else, and
// no record key signs a webhook. One key serves every receiver: the specification
// suggests a key per endpoint or customer for asymmetric signatures, but a published
// key needs no distribution at all, and a receiver trusts only the key of the document
// it fetched from the issuer, never one a request names.
//
// A receiver (Verify, Verifier.Verify) reads the three headers, refuses a timestamp more
// than five minutes (DefaultTolerance) from its clock either way (replays), and accepts
// the delivery if one space-separated entry of webhook-signature is "v1a," and a
// signature that verifies over the signed bytes with the published key; other entries
// (other identifiers) are skipped. The body must be verified as received, before any
// JSON parsing. A worked example, which the tests check: with the private key whose
// seed is the 32 bytes 0x00, 0x01, …, 0x1f,
//
//	public key         whpk_A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=
//	webhook-id         msg_1_2_3
//	webhook-timestamp  1795000000
//	body               {"type":"entry.changed"}
//	signed bytes       msg_1_2_3.1795000000.{"type":"entry.changed"}
//	webhook-signature  v1a,JqEC2tlxMBoMWn1OTw7Di09fEqNQ9yOvCA1Eg2pALMKAp9U6V1+StyVA5TMORODwkUcMxBro3LnMHoUfzzxBAw==
//
// # Payload
//
// The body is one compact JSON object (Standard Webhooks' recommended shape: type,
// timestamp, data), at most 16 KiB, with no server text: an entry is named by its slug,
// the one name Probity chose, never by the name or description its server gives, and
// the change by Probity's own one-line summary (Summary): counts and fixed words, and a
// version only as a semantic version shown by the change e-mails' rule
// (notify.ShownVersion), never the version text a server or registry gave.
//
//	{"type":"entry.changed","timestamp":"2026-12-01T12:00:00.000Z",
//	 "data":{"entry":{"slug":"acme-tools","url":"https://probity.dev/s/acme-tools"},
//	         "change":{"number":3,"kind":"tools","summary":"2 tools added, 1 removed",
//	                   "recorded_at":"2026-12-01T12:00:00.000Z",
//	                   "url":"https://probity.dev/s/acme-tools/history#ch-3"},
//	         "links":{"history":"https://probity.dev/s/acme-tools/history",
//	                  "followed":"https://probity.dev/followed",
//	                  "keys":"https://probity.dev/.well-known/probity-keys.json"}}}
//
// kind is one of "tools", "version" and "operator_edit" (baselines are not sent);
// timestamp and recorded_at are when the change was recorded.
//
// # Registration
//
// An account registers at most five URLs (MaxPerAccount; the store enforces it too). A
// URL is at most 2048 bytes, https (http only to a loopback host when the egress guard
// allows loopback, i.e. in tests and the demo), without user name, password or fragment,
// and its host must be public: an IP literal, or every address its name resolves to at
// registration, in loopback, private, link-local, CGNAT, metadata or other non-public
// space is refused with an error that says so (CheckURL; errors wrap ErrInvalidURL).
//
// # Delivery
//
// Deliveries are planned from the changes committed since the last run, walked in
// commit order with a cursor (the ledger number the planner has planned through, moved
// in the transaction that stores the deliveries of the changes it passed), a page of
// changes at a time: one per change (not hidden, not a baseline) per enabled webhook
// of every account following the entry, registered by the time the change was
// recorded. A change committed late, long after its recorded time, is planned by the
// next run; none is planned twice, whatever the delivery log has pruned since. Each attempt dials through
// the egress guard, which checks every address at dial time (a name that resolves to
// private space later is refused then, and DNS rebinding cannot slip through), follows
// no redirect (a 3xx is a failure: the owner is told to register the URL it points to),
// and is bounded by a 10-second timeout (DefaultTimeout); at most 4 KiB of the response
// is read and none of it is kept. A 2xx response is a success. Any other outcome is a
// failure, retried after 1 minute, 5 minutes, 30 minutes, 2 hours and 6 hours
// (DefaultBackoff); after the sixth attempt the delivery has failed. Ten failed
// attempts in a row, across the webhook's deliveries, disable the webhook
// (DefaultDisableAfter), and a 410 Gone disables it at once (Standard Webhooks:
// the receiver asks to be sent no more); the owner sees why, and may enable it again.
// Each delivery's outcome (attempts, last status, last error in fixed words, never the
// receiver's text nor the URL, whose path or query may hold the receiver's secret) is
// in its webhook's delivery log, the newest 100 deliveries; the server's log gets the
// same words, and no URL either.
//
// Four attempts run at once, at most one per webhook: a webhook's deliveries go one
// after another, so a slow receiver holds one attempt at a time and never delays
// another webhook's deliveries (the attempt's timeout bounds how long it holds it).
// A worker holds a claimed delivery for the attempt's timeout and 30 seconds, and
// starts its attempt only while the hold will outlast it: a delivery that waited too
// long behind its webhook's slow attempts is left to the next run. A worker killed
// during an attempt leaves the delivery to be attempted again when the hold ends, with
// the same webhook-id: the receiver may get a delivery twice, never loses one, and
// deduplicates on webhook-id.
package webhook
