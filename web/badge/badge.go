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
// The label is always "probity". The message and its color are, in order:
//
//	message                    color      when
//	verified                   green      the supply checks ran and the entry passed them (State.Verified)
//	signed                     blue       the newest round was signed and the tools were fetched in full
//	signed: login required     blue-grey  the newest round was signed, but the server asked for a login
//	signed: coverage unknown   blue-grey  the newest round was signed with a coverage this package does not know
//	unsigned                   grey       the newest round was not signed
//	signed                     blue       there is no round, but a signed supply run (State.HasSupply)
//	unsigned                   grey       there is no round, and the supply run is not signed (State.Checked)
//	not yet probed             lightgrey  nothing has been checked yet: no round, no supply run
//
// A server is checked in parts: a remote's rounds, and the supply run over its
// repository and packages. A package or repository is never probed, and a remote's
// supply run can come before its first round, so without a round the supply run is
// what was checked: the badge never says "not yet probed" for a server whose parts
// have been checked.
//
// A package entry whose supply checks ran but did not verify it gets its
// score after the coverage: "signed | score 87". "verified" carries no score:
// the decision is what it reports.
//
// "verified" means that Probity's automated checks found nothing wrong in the
// public data about the entry (its repository, packages, dependencies, tool
// descriptions and endpoint). It does not mean that a person reviewed the
// code, and it is no guarantee that the server is safe: a server can pass
// every check and still do something its users do not want. The pages that
// show a badge say so next to it.
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
// shields.io's endpoint schema accept them.
const (
	ColorVerified     = "#4c1"    // green, shields.io's classic "brightgreen"
	ColorSigned       = "#007ec6" // blue, shields.io's "blue"
	ColorLoginNeeded  = "#5d7a91" // blue-grey: signed, but not everything could be seen
	ColorUnsigned     = "#777"    // grey, lighter than the #555 label so the halves stay apart
	ColorNotYetProbed = "#9f9f9f" // lightgrey, shields.io's classic "lightgrey"
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
	// other value is drawn as ColorNotYetProbed.
	Color string
}

// State is what For needs to know about an entry. The caller loads it; a zero
// State is an entry that has never been probed.
type State struct {
	// Verified is the supply checks' Verified decision. It counts only
	// together with HasSupply: a Verified without supply checks is
	// contradictory and For ignores it.
	Verified bool
	// HasSupply reports that a signed supply run of this entry counts for
	// the badge (an unsigned run is no verdict anyone can check: the caller
	// leaves HasSupply false for it and sets Checked); only then do Verified
	// and Score mean anything.
	HasSupply bool
	// Checked reports that a supply run of the entry ran, signed or not: an
	// entry without a round but with a supply run has been checked, and is
	// not "not yet probed".
	Checked bool
	// Score is the supply checks' score, 0 to 100. It is shown only for an
	// entry with HasSupply that is not Verified; a value outside 0..100 is
	// not shown at all.
	Score int
	// Coverage is the newest round's coverage: CoverageFull,
	// CoverageAuthRequired, or "" when there is no round.
	Coverage string
	// Signed reports that the newest round's envelope was signed.
	Signed bool
	// Probed reports that the entry has at least one round.
	Probed bool
}

// For returns the badge of an entry in state s. The cases, in the order they
// are tried:
//
//   - HasSupply and Verified: "verified", green. The supply checks' decision
//     outranks the newest round's coverage.
//   - not Probed, with HasSupply: "signed", blue: the signed supply run is
//     the entry's signed record (a package or repository, or a remote before
//     its first round). Coverage and Signed are ignored, since there is no
//     round for them to describe.
//   - not Probed, Checked without HasSupply: "unsigned", grey (an unsigned
//     supply run only).
//   - not Probed and nothing checked: "not yet probed", lightgrey.
//   - Probed but not Signed: "unsigned", grey.
//   - Signed with CoverageFull: "signed", blue.
//   - Signed with CoverageAuthRequired: "signed: login required", blue-grey.
//   - Signed with any other coverage (including ""): "signed: coverage
//     unknown", blue-grey; a signed round that claims full coverage is never
//     assumed.
//
// In every case but "verified", an entry with HasSupply and a Score in 0..100
// gets " | score N" after the message.
func For(s State) Badge {
	if s.HasSupply && s.Verified {
		return Badge{Label: Label, Message: "verified", Color: ColorVerified}
	}
	var b Badge
	switch {
	case !s.Probed && s.HasSupply:
		b = Badge{Label: Label, Message: "signed", Color: ColorSigned}
	case !s.Probed && s.Checked:
		b = Badge{Label: Label, Message: "unsigned", Color: ColorUnsigned}
	case !s.Probed:
		b = Badge{Label: Label, Message: "not yet probed", Color: ColorNotYetProbed}
	case !s.Signed:
		b = Badge{Label: Label, Message: "unsigned", Color: ColorUnsigned}
	case s.Coverage == CoverageFull:
		b = Badge{Label: Label, Message: "signed", Color: ColorSigned}
	case s.Coverage == CoverageAuthRequired:
		b = Badge{Label: Label, Message: "signed: login required", Color: ColorLoginNeeded}
	default:
		b = Badge{Label: Label, Message: "signed: coverage unknown", Color: ColorLoginNeeded}
	}
	if s.HasSupply && s.Score >= 0 && s.Score <= 100 {
		b.Message += " | score " + strconv.Itoa(s.Score)
	}
	return b
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
