package notify

// ShownVersion is a version as Probity's own words show it, the rule of the change
// e-mails: a semantic version (at most 64 bytes, an optional "v") as its three numbers,
// with its pre-release only when that is a common tag (beta.1, rc.2, …) and
// " (pre-release)" otherwise, and without build metadata; "" for anything else, which
// must then not be shown at all. Other senders of Probity's words (the webhooks) show
// versions by it too, so a server's version text never reaches them.
func ShownVersion(v string) string { return shownVersion(v) }
