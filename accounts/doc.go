// Package accounts signs people in and keeps their sessions: sign-in with a code sent
// by e-mail or with GitHub (OAuth 2.0, authorization code with PKCE), server-side
// sessions, the CSRF token of a session, a safe return address after sign-in, and
// account deletion (issue 17). It is the site's first write path, so every input is
// bounded and every secret is random, hashed at rest and compared in constant time.
//
// # Sign-in by e-mail code
//
// RequestCode validates the address (ASCII, one @, a dotted domain, at most 254
// bytes), counts the request against two limits (ClientRequestsPerHour per client key,
// CodesPerAddressPerHour per address: ErrTooMany beyond either), then against the
// site's cap (Config.SiteCodesPerHour codes an hour to all addresses together:
// ErrSiteBusy beyond it, which bounds what a crowd of clients can make the site send)
// and sends an 8-digit code from crypto/rand through the CodeMailer right away. It never looks at whether
// the address has an account: the answer, the e-mail and the time taken are the same
// either way, and an account is made only when a code is entered (VerifyCode), so
// asking for a code tells nobody whether an address is known.
//
// A code is valid for CodeLifetime and works once. The store keeps
//
//	address_hash = SHA-256("probity address v1" 0x00 email_key)
//	code_key     = HMAC-SHA256(key = Config.Secret, message = "probity sign-in code key v1")
//	code_hash    = HMAC-SHA256(key = code_key, message = email_key 0x00 code)
//
// where email_key is the lower-cased address: never the code, and the address itself
// only once it has an account. Config.Secret is the server's secret, kept outside the
// store (the data directory's notify.key): a copy of the store alone cannot test a
// guess of a code offline, and the same secret after a restart checks the codes sent
// before it. VerifyCode counts the check against
// ClientChecksPerHour per client, then spends one try of every live code of the address
// (in one statement, before comparing: a code is compared at most MaxCodeTries times
// however many checks run at once), compares each code's hash with hmac.Equal, and
// deletes the matching code (the first to delete it wins) with every other code of the
// address. A wrong, expired, used or dead code is the same ErrBadCode. Guessing is
// bounded three ways: MaxCodeTries per code, CodesPerAddressPerHour × MaxCodeTries per
// address an hour, ClientChecksPerHour per client an hour; against 10⁸ codes.
//
// AddEmail runs the same check to give a signed-in account an address (a GitHub
// account, which has none, to receive e-mails), unless another account has it.
//
// The per-client limits count ClientKey of the request's client address: an IPv4
// address, or an IPv6 address's /64, so that a client cannot escape them by taking a
// new address of its /64 for every request. Client keys are stored as
// SHA-256("probity client v1" 0x00 key). The site's cap is kept in
// ⌈SiteCodesPerHour/64⌉ throttles (the store keeps at most 64 events a throttle)
// filed under SHA-256("probity site codes v1" 0x00 shard number), which no address
// hashes to.
//
// # Sessions
//
// A session token is 32 bytes from crypto/rand, base64url without padding (43
// characters): the cookie's value. The store keeps SHA-256 of the 32 bytes only. A
// session lasts SessionLifetime from its last renewal; a use renews it when the last
// renewal is SessionRenewEvery old or more, so a busy session writes at most once an
// hour. Every sign-in makes a new session with a new token: a token from before the
// sign-in (one an attacker planted in the browser, or the browser's previous session)
// is never given the new account. SignOut deletes one session, SignOutEverywhere every
// session of an account.
//
// The CSRF token of a session is
//
//	base64url(HMAC-SHA256(key = the session token's 32 bytes, message = "probity csrf v1"))
//
// (43 characters): a hidden form field that only a page of the signed-in session can
// know, checked with CheckCSRF in constant time. It is derived, not stored.
//
// # Sign-in with GitHub
//
// GitHubStart returns GitHub's authorize URL, with a random state and a PKCE S256
// challenge, and the value of a short-lived cookie that binds them to the browser:
//
//	v1.<state>.<verifier>.<issued, Unix ms>.<base64url of the return address>
//
// (state and verifier 43 base64url characters each). GitHubFinish refuses a callback
// whose state differs from the cookie's (compared in constant time) or whose cookie is
// older than GitHubStateLifetime, exchanges the code with the verifier, reads GET
// {api}/user, and finds the account by GitHub's numeric user id, never by login (a login
// can be renamed and reused): a renamed user keeps the account, whose login follows.
// Nothing but the id and the login is read or kept. The endpoints are configurable
// (GitHubConfig), so tests run against internal/githubfake.
//
// # Return address
//
// SafeReturn accepts only a local absolute path ("/…"), nothing that a browser could
// read as another origin; anything else becomes DefaultReturn.
package accounts
