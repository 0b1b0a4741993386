// Package badge draws the badges that Probity's directory serves at
// /badge/{slug}.svg and /badge/{slug}.json: a flat SVG in shields.io's
// geometry, and the JSON that shields.io's endpoint badge reads.
//
// The package is pure: For decides what an entry's badge says from a State
// the caller has already loaded, SVG and ShieldsJSON render it, and
// CacheControl says how long a client may keep it. Nothing here does I/O,
// and nothing here knows about gin or the store.
//
// # What the badge says
//
// The label is always "probity". The message says what matters most about the
// entry, and its color tells the messages apart at a glance; the text always
// says it too, so no one needs to tell colors apart. Decide tries these in order
// and the first that applies is the entry's verdict, which For draws:
//
//	verdict          message            color       when
//	not_yet_checked  not yet checked    lightgrey   no round and no supply run: nothing has been checked
//	offline          offline            dark grey   the newest round got no answer (no DNS, no connection, a timeout, TLS, a 5xx)
//	risks            N risks, 1 risk    red         the newest signed round has N findings: check results FAILED or OBSERVED_RISK
//	login_required   login required     blue-grey   the newest round is signed and the server asked for a login (auth_required)
//	verified         verified           green       the signed supply run passed the supply checks (State.Verified)
//	supply_score     score N            blue        no round; a signed supply run that did not verify the entry, with its score
//	supply_score     checked            blue        no round; a signed supply run with a score outside 0..100
//	unsigned         unsigned           grey        the newest round is not signed (no handshake, no tools, blocked)
//	unsigned         unsigned           grey        no round; only an unsigned supply run (State.Checked)
//	no_risks_found   no risks found     blue        the newest round is signed, read the tools in full and has no findings
//	checked          checked            blue-grey   the newest round is signed with a coverage this package does not know
//
// The verdict is the one precedence of everything that says in a word what an
// entry is: the badge, the summary card on top of the entry's pages and the
// entry's row in the directory all call Decide, and only say it in their own
// words (the card, for instance, names the findings).
//
// After "login required", "unsigned", "no risks found" and "checked" (with a
// round), an entry with a signed supply run that did not verify it gets the
// run's score: "no risks found | score 87". The alarms (offline, risks) and
// "verified" carry no score: the message is what they report.
//
// Why this order:
//
//   - "offline" first: when the newest round got no answer, nothing newer
//     than that can be said, and a badge must not keep saying "verified" about
//     a server no one can reach.
//   - Findings come from the newest signed round, which may be older than the
//     newest round: a round is unsigned when the probe could not complete
//     (no MCP handshake, no tool list, the address blocked), and such a round
//     observed nothing that clears an older finding. So a risk stays on the
//     badge until a signed round no longer finds it, and an unsigned round
//     never makes a risky entry look better. An offline entry is "offline"
//     whatever it found before (its entry page still lists the findings).
//   - "login required" before "verified": the tools of a server behind a login
//     were never read, so the checks of its tool descriptions never ran, and
//     the badge says so instead of a verdict that covers less than it seems.
//   - "verified" only when nothing above applies: never with findings. An
//     unsigned newest round does not take Verified away (the supply checks are
//     signed; the round observed nothing), but it does keep the badge from
//     saying "no risks found", which a signed round must back.
//   - Without a round, the supply run is what was checked (a package or a
//     repository is never probed, and a remote's supply run can come before its
//     first round), so the badge never says "not yet checked" for a server whose
//     parts have been checked.
//
// "verified" means that Probity's automated checks found nothing wrong in the
// public data about the entry (its repository, packages, dependencies, tool
// descriptions and endpoint). It does not mean that a person reviewed the
// code, and it is no guarantee that the server is safe: a server can pass
// every check and still do something its users do not want. "no risks found"
// is narrower still: the checks of the newest signed round found nothing. The
// pages that show a badge say so next to it.
//
// # Rendering
//
// SVG reproduces the "flat" style of shields.io's badge-maker 6.0.0 byte for
// byte for the same label, message and hex color (the tests hold
// badge-maker's own output as known answers): 20 px high, 5 px of padding on
// either side of each text, corners rounded by 3 px, a subtle vertical
// gradient and a one-pixel text shadow. Text widths come from an embedded
// table of Verdana 11 px advance widths (see verdana.go), so the badge is
// sized right without a font file. The SVG carries role="img", an aria-label
// and a <title> of "label: message" for screen readers.
package badge

import (
	"encoding/json"
	"strconv"
)

// Label is the left-hand text of every badge For returns.
const Label = "probity"

// The colors of the messages For returns, as hex so that both the SVG and
// shields.io's endpoint schema accept them. Each is far enough from the #555
// label that the halves stay apart.
const (
	ColorVerified      = "#4c1"    // green, shields.io's classic "brightgreen"
	ColorHealthy       = "#007ec6" // blue, shields.io's "blue": checked, nothing found
	ColorRisks         = "#e05d44" // red, shields.io's "red": findings
	ColorLoginNeeded   = "#5d7a91" // blue-grey: signed, but not everything could be seen
	ColorUnsigned      = "#777"    // grey, lighter than the #555 label
	ColorOffline       = "#333"    // dark grey, darker than the label: no answer
	ColorNotYetChecked = "#9f9f9f" // lightgrey, shields.io's classic "lightgrey"
)

// Coverage values of a round, as the store records them.
const (
	CoverageFull         = "full"
	CoverageAuthRequired = "auth_required"
)

// CacheControl is the Cache-Control value badges are served with.
//
// Badges are embedded in READMEs, so most requests for them come from
// GitHub's image proxy (camo) and from browsers rendering those READMEs, not
// from people on Probity's site. Five minutes of freshness keeps a new
// verdict from lagging far behind a round while sparing the server one
// request per README view; "public" lets shared caches such as camo and CDNs
// keep it; stale-while-revalidate lets them serve the old badge for up to a
// day while they fetch a new one in the background, so a slow or restarting
// server never shows a broken image in someone's README. max-age matches the
// cacheSeconds of ShieldsJSON (300 s is also the least shields.io accepts).
// A cache that revalidates sends the badge's ETag back and gets a 304 while
// the badge says the same.
const CacheControl = "public, max-age=300, stale-while-revalidate=86400"

// cacheSeconds is the cacheSeconds of ShieldsJSON; it equals CacheControl's
// max-age.
const cacheSeconds = 300

// Badge is one badge: a label on the left, a message on the right, a color
// for the message.
type Badge struct {
	Label   string
	Message string
	// Color is the message's background: "#" and 3 or 6 hex digits. Any
	// other value is drawn as ColorNotYetChecked.
	Color string
}

// State is what For needs to know about an entry. The caller loads it; a zero
// State is an entry that has never been checked.
type State struct {
	// Probed reports that the entry has at least one round. The round fields
	// below (Offline, Signed, Coverage, Findings) count only with it.
	Probed bool
	// Offline reports that the newest round got no answer from the endpoint
	// (the store's uptime class no_answer).
	Offline bool
	// Signed reports that the newest round's envelope was signed.
	Signed bool
	// Coverage is the newest round's coverage: CoverageFull or
	// CoverageAuthRequired for a signed round.
	Coverage string
	// Findings is the number of check results of the newest signed round
	// (which may be older than the newest round) with status FAILED or
	// OBSERVED_RISK; 0 when no round was signed.
	Findings int
	// HasSupply reports that a signed supply run of this entry counts for
	// the badge (an unsigned run is no verdict anyone can check: the caller
	// leaves HasSupply false for it and sets Checked); only then do Verified
	// and Score mean anything.
	HasSupply bool
	// Checked reports that a supply run of the entry ran, signed or not: an
	// entry without a round but with a supply run has been checked.
	Checked bool
	// Verified is the supply checks' Verified decision. It counts only
	// together with HasSupply: a Verified without supply checks is
	// contradictory and For ignores it.
	Verified bool
	// Score is the supply checks' score, 0 to 100. It is shown only for an
	// entry with HasSupply that is not Verified; a value outside 0..100 is
	// not shown at all.
	Score int
}

// Verdict is what an entry is, in a word: the package documentation's table.
type Verdict string

// The verdicts, in the order Decide tries them.
const (
	NotYetChecked Verdict = "not_yet_checked" // no round and no supply run
	Offline       Verdict = "offline"         // the newest round got no answer
	Risks         Verdict = "risks"           // the newest signed round has findings (State.Findings)
	LoginRequired Verdict = "login_required"  // the newest round is signed, behind a login
	Verified      Verdict = "verified"        // the signed supply run verified the entry
	SupplyScore   Verdict = "supply_score"    // no round; a signed supply run that did not verify it
	Unsigned      Verdict = "unsigned"        // the newest round, or without a round the supply run, is not signed
	NoRisksFound  Verdict = "no_risks_found"  // the newest round is signed, in full, without findings
	Checked       Verdict = "checked"         // the newest round is signed with a coverage not known here
)

// Decide returns the verdict of an entry in state s: the first row of the
// package documentation's table that applies. It is the one precedence of the
// badge, the entry's card and its directory row.
func Decide(s State) Verdict {
	switch {
	case !s.Probed && !s.HasSupply && !s.Checked:
		return NotYetChecked
	case s.Probed && s.Offline:
		return Offline
	case s.Probed && s.Findings > 0:
		return Risks
	case s.Probed && s.Signed && s.Coverage == CoverageAuthRequired:
		return LoginRequired
	case s.HasSupply && s.Verified:
		return Verified
	case !s.Probed && s.HasSupply:
		return SupplyScore
	case !s.Probed, !s.Signed:
		return Unsigned
	case s.Coverage == CoverageFull:
		return NoRisksFound
	}
	return Checked
}

// ShowsScore reports whether s has a supply score to show: a signed supply run
// that did not verify the entry, with a score in 0..100.
func ShowsScore(s State) bool {
	return s.HasSupply && !s.Verified && s.Score >= 0 && s.Score <= 100
}

// For returns the badge of an entry in state s, as the package documentation's
// table says.
func For(s State) Badge {
	score := ""
	if ShowsScore(s) {
		score = "score " + strconv.Itoa(s.Score)
	}
	var msg, color string
	switch Decide(s) {
	case NotYetChecked:
		msg, color = "not yet checked", ColorNotYetChecked
	case Offline:
		msg, color = "offline", ColorOffline
	case Risks:
		msg, color = strconv.Itoa(s.Findings)+" risks", ColorRisks
		if s.Findings == 1 {
			msg = "1 risk"
		}
	case LoginRequired:
		msg, color = "login required", ColorLoginNeeded
	case Verified:
		msg, color = "verified", ColorVerified
	case SupplyScore:
		msg, color = "checked", ColorHealthy
		if score != "" {
			msg, score = score, ""
		}
	case Unsigned:
		msg, color = "unsigned", ColorUnsigned
	case NoRisksFound:
		msg, color = "no risks found", ColorHealthy
	default:
		msg, color = "checked", ColorLoginNeeded
	}
	// The alarms (offline, risks) and verified carry no score: the message is what
	// they report.
	switch msg {
	case "login required", "unsigned", "no risks found", "checked":
		if score != "" {
			msg += " | " + score
		}
	}
	return Badge{Label: Label, Message: msg, Color: color}
}

// shieldsEndpoint is shields.io's endpoint badge schema, version 1, in the
// order the documentation lists its fields.
type shieldsEndpoint struct {
	SchemaVersion int    `json:"schemaVersion"`
	Label         string `json:"label"`
	Message       string `json:"message"`
	Color         string `json:"color"`
	CacheSeconds  int    `json:"cacheSeconds"`
}

// ShieldsJSON renders b in shields.io's endpoint schema:
//
//	{"schemaVersion":1,"label":"probity","message":"verified","color":"#4c1","cacheSeconds":300}
//
// The label and message are cleaned as SVG cleans them (invalid UTF-8 and
// control characters become U+FFFD, long texts are cut), and the color is
// normalized the same way, so that a badge drawn by shields.io from this JSON
// says what SVG(b) says. shields.io refuses an empty message; For never
// returns one.
func ShieldsJSON(b Badge) []byte {
	// Marshaling a struct of strings (valid UTF-8 after clean) and ints
	// cannot fail, so the error is not looked at.
	out, _ := json.Marshal(shieldsEndpoint{
		SchemaVersion: 1,
		Label:         clean(b.Label),
		Message:       clean(b.Message),
		Color:         svgColor(b.Color),
		CacheSeconds:  cacheSeconds,
	})
	return out
}
