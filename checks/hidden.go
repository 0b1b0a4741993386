package checks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/internal/rawjson"
)

// hidden_instructions scans the text an agent's model reads: each tool's name, title,
// description and annotations.title, every "description" and "title" string at any
// depth of its inputSchema and outputSchema (and, for invisible characters only, the
// parameter names under their "properties"), and the server's instructions. Raw tools
// are walked string by string (a valid tool in place, a malformed one token by token as
// far as it parses), so duplicate members are all scanned; nesting deeper than maxWalkDepth is skipped (such a
// tool cannot be fingerprinted, so its round is not signed).
//
// Invisible characters: C0 and C1 controls other than tab, line feed and carriage return
// (ESC, the start of ANSI escapes, included); U+200B–U+200F; U+2060–U+2064; U+FEFF; the
// bidi embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069; the whole tag
// block U+E0000–U+E007F; private use (U+E000–U+F8FF, planes 15 and 16); the interlinear
// annotation controls U+FFF9–U+FFFB; U+180E; the soft hyphen U+00AD; U+034F; the Hangul
// fillers U+115F, U+1160, U+3164, U+FFA0; the deprecated format controls U+206A–U+206F;
// and generally every format (Cf) and Default_Ignorable_Code_Point character not allowed
// below; and variation selectors without a valid base (a run of them, or one after each
// letter, can smuggle bytes). Legitimate uses are not flagged:
//   - U+200D ZWJ between two emoji (skin tones and U+FE0F skipped), and U+200C/U+200D
//     between two characters of one script that uses joiners (Arabic, Indic, ...);
//   - U+200B between two characters of a script written without spaces (Thai, Khmer, ...);
//   - the bidi marks U+200E, U+200F and U+061C in text that contains right-to-left
//     letters (RTL letters themselves are never flagged);
//   - U+180E and the Mongolian free variation selectors in Mongolian text, and the
//     Egyptian hieroglyph format controls between hieroglyphs;
//   - the visible prepended concatenation marks (U+0600–U+0605, U+06DD, ...);
//   - one variation selector right after a base character: U+FE0E/U+FE0F after any,
//     U+FE00–U+FE0D after any but an ASCII letter, U+E0100–U+E01EF after a Han ideograph;
//   - the tag characters of the RGI emoji subdivision flags only: U+1F3F4, the tags of
//     "gbeng", "gbsct" or "gbwls", U+E007F.
//
// Consecutive flagged characters form one finding.
//
// Model-directed text (case-insensitive; any space, U+2028 and U+2029 included, separates
// words): override phrases ("ignore all previous instructions", "disregard ... prior
// rules", "ignore the system prompt", "from now on you must"; "you must now" followed by
// ignore/forget/obey/... anywhere, or by call/send/respond/... at the start of a
// sentence, so API-change prose such as "Since v2 you must now pass the project id" does
// not match), pseudo-system tags (<system>, </system>, <|im_start|> and kin, [INST],
// <<SYS>>; <IMPORTANT> in capitals, or <important> in other case only when an
// <important>...</important> block wraps text, not "an <important> element"),
// concealment from the user ("do not tell the user", "do not mention this to the user",
// "without telling the user", "hide this message", "hide ... from the user", "the user
// must not know"), and sensitive paths (~/.ssh, id_rsa, .aws/credentials, .env,
// /etc/passwd, ...; public keys *.pub excepted) within 160 bytes of an exfiltration
// directive (send, upload, post, transmit, forward, exfiltrate, pass as/into an argument,
// include in/append to the response or output, cat, ...): reading a sensitive file alone
// does not match. Words that merely mention systems or keys ("operating system", "system
// prompt library", "Ignore system rules", "rotate SSH keys", a tool named system_info) do
// not match.

const (
	maxWalkDepth = 64
	// directiveWindow is how far from a sensitive path a directive counts.
	directiveWindow = 160
	// maxMatchesPerPattern bounds the findings one pattern yields in one field.
	maxMatchesPerPattern = 16
)

// maxRegexBytes bounds the text run through the model-directed patterns in one round (a
// pattern runs only on text containing its keywords). Matching runs at tens of MB/s, so
// this bounds a round's scan to a few seconds whatever the server sends. A variable so
// tests can lower it.
var maxRegexBytes = 64 << 20

type findingKind uint8

const (
	kindInvisible findingKind = 1 << iota
	kindDirected
)

// hiddenScan accumulates the findings of one round.
type hiddenScan struct {
	findings     int
	kinds        findingKind
	tools        map[int]bool
	instructions bool
	textSeen     bool
	evidence     []Evidence
	// regexBytes is the text run through the model-directed patterns so far; past
	// maxRegexBytes the rest is not scanned for them and incomplete is set.
	regexBytes int
	incomplete bool
	// lower is the lower-cased text being scanned, a buffer reused from text to text.
	lower []byte
}

func (s *hiddenScan) add(tool int, kind findingKind, ev Evidence) {
	s.findings++
	s.kinds |= kind
	if tool < 0 {
		s.instructions = true
	} else {
		if s.tools == nil {
			s.tools = map[int]bool{}
		}
		s.tools[tool] = true
	}
	if len(s.evidence) < maxEvidence {
		s.evidence = append(s.evidence, ev)
	}
}

// checkHiddenInstructions relies on Tools (Unauthorized, Attempted, Complete, Tools) and
// Handshake.Instructions.
func checkHiddenInstructions(in *input) Result {
	o := in.obs
	t := o.Tools
	if t.Unauthorized {
		return unverified(credentialRequired.Key, nil)
	}
	s := &hiddenScan{}
	if ins := o.Handshake.Instructions; ins != nil && *ins != "" {
		s.textSeen = true
		s.scanText(-1, "instructions", *ins, true)
	}
	for i, raw := range t.Tools {
		s.scanTool(i, raw)
	}
	if s.findings > 0 {
		key := "invisible_characters"
		switch s.kinds {
		case kindDirected:
			key = "model_directed_text"
		case kindInvisible | kindDirected:
			key = "invisible_and_model_directed"
		}
		return observedRisk(key, params("tools", len(s.tools), "findings", s.findings, "instructions", s.instructions), s.evidence...)
	}
	switch {
	case !s.textSeen:
		return unverified("no_text_observed", nil)
	case s.incomplete:
		return unverified("scan_incomplete", params("tools", len(t.Tools)))
	case !t.Complete:
		return unverified("partial_list", params("tools", len(t.Tools)))
	case o.Handshake.DuplicateMember != "":
		// The instructions scanned are one parser's reading of the handshake.
		return unverified("duplicate_member", params("member", memberToken(o.Handshake.DuplicateMember)))
	}
	return verified("none_found", params("tools", len(t.Tools)))
}

// scanTool walks one raw tool and scans the strings described above. Evidence of the
// tool gets its name once the walk is over (the name may come after the description).
func (s *hiddenScan) scanTool(idx int, raw []byte) {
	s.textSeen = true
	first := len(s.evidence)
	name, hasName := "", false
	walkJSON(raw, func(path []string, v string, isKey bool) {
		if isKey {
			// path leads to the object whose member name v is.
			if len(path) >= 2 && isSchemaRoot(path[0]) && path[len(path)-1] == "properties" {
				s.scanText(idx, joinPath(append(path, v)), v, false)
			}
			return
		}
		switch {
		case len(path) == 1 && path[0] == "name":
			if !hasName {
				name, hasName = strings.Clone(v), true // v is read in place
			}
			s.scanText(idx, "name", v, true)
		case len(path) == 1 && (path[0] == "title" || path[0] == "description"):
			s.scanText(idx, path[0], v, true)
		case len(path) == 2 && path[0] == "annotations" && path[1] == "title":
			s.scanText(idx, "annotations.title", v, true)
		case len(path) >= 2 && isSchemaRoot(path[0]) && (path[len(path)-1] == "description" || path[len(path)-1] == "title"):
			s.scanText(idx, joinPath(path), v, true)
		}
	})
	label := toolLabel(idx, name, hasName)
	for i := first; i < len(s.evidence); i++ {
		s.evidence[i].Tool = label
	}
}

func isSchemaRoot(s string) bool { return s == "inputSchema" || s == "outputSchema" }

// joinPath renders a member path as dotted names with [i] indexes; a name that is not a
// plain identifier is escaped and quoted.
func joinPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		switch {
		case strings.HasPrefix(p, "[") && strings.HasSuffix(p, "]"):
			b.WriteString(p)
			continue
		case i > 0:
			b.WriteByte('.')
		}
		if plainName(p) {
			b.WriteString(p)
		} else {
			b.WriteString(`"` + escape(p, 40) + `"`)
		}
	}
	return b.String()
}

func plainName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// walkJSON calls visit for every string of a JSON document (member names with isKey),
// with the path of member names and "[i]" indexes leading to it. It stops at the first
// syntax error and skips what is nested deeper than maxWalkDepth. It never panics.
//
// A valid document (every tool a probe splits from a page is one) is walked in place by
// rawjson.Walk, which allocates nothing per string: path and v are valid only during the
// call. Only a malformed document goes through a json.Decoder, token by token, so that
// it is scanned as far as it parses.
func walkJSON(doc []byte, visit func(path []string, v string, isKey bool)) {
	if rawjson.Walk(doc, maxWalkDepth, visit) {
		return
	}
	walkTokens(doc, visit)
}

// walkTokens is walkJSON over a json.Decoder's tokens, up to the first syntax error.
func walkTokens(doc []byte, visit func(path []string, v string, isKey bool)) {
	type frame struct {
		obj       bool
		expectKey bool
		idx       int
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var stack []frame
	var path []string // one segment per frame: the current key or index
	skip := 0         // nesting below maxWalkDepth being skipped
	// advance moves the innermost frame past a value.
	advance := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.obj {
			f.expectKey = true
		} else {
			f.idx++
		}
	}
	// enter sets the path segment of the innermost frame for the value to come.
	enter := func() {
		if len(stack) > 0 && !stack[len(stack)-1].obj {
			path[len(path)-1] = "[" + itoa(stack[len(stack)-1].idx) + "]"
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		if skip > 0 {
			if d, ok := tok.(json.Delim); ok {
				if d == '{' || d == '[' {
					skip++
				} else if skip--; skip == 0 {
					advance()
				}
			}
			continue
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				enter()
				if len(stack) >= maxWalkDepth {
					skip = 1
					continue
				}
				stack = append(stack, frame{obj: v == '{', expectKey: v == '{'})
				path = append(path, "")
			default:
				if len(stack) == 0 {
					return
				}
				stack = stack[:len(stack)-1]
				path = path[:len(path)-1]
				advance()
			}
		case string:
			if len(stack) > 0 && stack[len(stack)-1].obj && stack[len(stack)-1].expectKey {
				stack[len(stack)-1].expectKey = false
				visit(path[:len(path)-1:len(path)-1], v, true)
				path[len(path)-1] = v
				continue
			}
			enter()
			visit(path, v, false)
			advance()
		default:
			advance()
		}
		if len(stack) == 0 {
			return
		}
	}
}

// scanText scans one field of text. tool is the tool index (-1 for the server's
// instructions); directed also looks for model-directed text.
func (s *hiddenScan) scanText(tool int, field, text string, directed bool) {
	for _, r := range invisibleRuns(text) {
		s.add(tool, kindInvisible, Evidence{Field: field, Offset: r.start, Sample: sampleAt(text, r.start), Note: r.note()})
	}
	if !directed {
		return
	}
	// The prefilters read strings.ToLower(text), written into a buffer the scan reuses:
	// a list of 10,000 tools is tens of MB of descriptions.
	s.lower = appendLower(s.lower[:0], text)
	pairs := map[*regexp.Regexp]bool{}
	for i := range directedPatterns {
		p := &directedPatterns[i]
		if !p.mayMatch(s.lower) {
			continue
		}
		if s.regexBytes+len(text) > maxRegexBytes {
			s.incomplete = true
			return
		}
		s.regexBytes += len(text)
		for _, m := range p.re.FindAllStringSubmatchIndex(text, maxMatchesPerPattern) {
			start, end := m[0], m[1]
			if len(m) >= 4 && m[2] >= 0 {
				start, end = m[2], m[3]
			}
			if p.upper != "" && !strings.Contains(text[start:end], p.upper) {
				seen, ok := pairs[p.pair]
				if !ok {
					seen = p.pair.MatchString(text)
					pairs[p.pair] = seen
				}
				if !seen {
					continue
				}
			}
			if p.sensitivePath && (publicKeyFile(text, end) || !directiveNear(text, start, end)) {
				continue
			}
			s.add(tool, kindDirected, Evidence{Field: field, Offset: start, Sample: sampleAt(text, start), Note: p.note})
		}
	}
}

// appendLower appends strings.ToLower(text) to b, without an allocation of its own
// when text is ASCII.
func appendLower(b []byte, text string) []byte {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return append(b, strings.ToLower(text)...)
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// sampleAt returns an escaped excerpt of text around offset: up to 24 bytes before it
// ("..." marks text left out at the start), cut at MaxSampleLen.
func sampleAt(text string, offset int) string {
	start := max(0, offset-24)
	for start < offset && !utf8.RuneStart(text[start]) {
		start++
	}
	if start == 0 {
		return escape(text, MaxSampleLen)
	}
	return "..." + escape(text[start:], MaxSampleLen-3)
}

// directiveNear reports whether an exfiltration directive (exfilRe) is within
// directiveWindow bytes of text[start:end].
func directiveNear(text string, start, end int) bool {
	lo := max(0, start-directiveWindow)
	hi := min(len(text), end+directiveWindow)
	return exfilRe.MatchString(text[lo:hi])
}

// publicKeyFile reports whether the path token that a sensitive-path match ending at end
// belongs to names a public key (*.pub), which is meant to be shared.
func publicKeyFile(text string, end int) bool {
	i := end
	for i < len(text) && !strings.ContainsRune(" \t\r\n\"'`()<>[]{},;", rune(text[i])) {
		i++
	}
	tok := strings.TrimRight(text[end:i], ".:!?")
	return strings.HasSuffix(strings.ToLower(tok), ".pub")
}

type directedPattern struct {
	re   *regexp.Regexp
	note string
	// need is a cheap prefilter: the lower-cased text must contain one word of every
	// group, or the pattern cannot match and is not run.
	need [][]string
	// sensitivePath: a match counts only with an exfiltration directive nearby and when
	// it is not a public key file.
	sensitivePath bool
	// upper, when set, is the spelling of a match that always counts; a match spelled
	// otherwise counts only when pair matches the field. So <IMPORTANT> is a directive
	// tag, and <important> only when an <important>...</important> block wraps text,
	// not where a description names an HTML element.
	upper string
	pair  *regexp.Regexp
}

func (p *directedPattern) mayMatch(lower []byte) bool {
	for _, group := range p.need {
		if !slices.ContainsFunc(group, func(w string) bool { return bytes.Contains(lower, []byte(w)) }) {
			return false
		}
	}
	return true
}

// ws is one or more spaces of any kind, line and paragraph separators included.
const ws = `[\s\p{Zs}\p{Zl}\p{Zp}]+`

// wso is optional space.
const wso = `[\s\p{Zs}\p{Zl}\p{Zp}]*`

func mustRe(expr string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)` + strings.NewReplacer("WSO", wso, "WS", ws).Replace(expr))
}

// notWords are the negations the concealment patterns start with.
var notWords = []string{"not", "n't", "n’t", "never"}

// strongOverrideVerbs follow "you must now" in an override wherever it stands.
const strongOverrideVerbs = `ignore|disregard|forget|override|bypass|obey|pretend|act|behave|role-?play|reveal|leak|exfiltrate`

// actionVerbs follow "you must now" at the start of a sentence in an order to the model
// ("You must now call delete_all."). API-change prose ("Since v2 you must now pass the
// project id", "You must now use the v2 endpoint") uses neither list.
const actionVerbs = `call|invoke|run|execute|send|upload|forward|transmit|e-?mail|post|share|include|append|output|print|say|respond|reply|answer|tell|delete|refuse|treat|follow|comply`

// sentenceStart is the start of the text or of a sentence, line, clause after a colon,
// or tagged block, with opening quotes or emphasis.
const sentenceStart = `(?:^|[.!?:;>\]\n])[\s\p{Zs}\p{Zl}\p{Zp}*_"'“‘]*`

var directedPatterns = []directedPattern{
	// "system" (or "developer") alone qualifies only instructions, prompts, directives
	// and messages: "Ignore system rules" is a linter option, "ignore all (system)
	// rules" and "ignore the system prompt" are overrides.
	{re: mustRe(`\b(?:ignore|disregard|forget)WS(?:(?:all|any)WS)?(?:(?:of|the|your|these|those)WS){0,2}(?:(?:previous|prior|above|earlier|preceding|all|any|your)WS(?:(?:system|developer)WS)?(?:instructions?|prompts?|directives|guidelines|rules)|(?:system|developer)WS(?:instructions?|prompts?|directives|messages?))\b`),
		note: "override phrase", need: [][]string{{"ignore", "disregard", "forget"}}},
	{re: mustRe(`\byouWSmustWSnowWS(?:(?:always|only|never|also|first|instead|immediately|strictly)WS)?(?:` + strongOverrideVerbs + `)\b`),
		note: "override phrase", need: [][]string{{"must"}, {"now"}}},
	{re: mustRe(sentenceStart + `(\byouWSmustWSnowWS(?:(?:always|only|never|also|first|instead|immediately|strictly)WS)?(?:` + actionVerbs + `))\b`),
		note: "override phrase", need: [][]string{{"must"}, {"now"}}},
	{re: mustRe(`\b(?:from|starting)WSnowWSon,?WSyouWS(?:must|will|shall|should|are)\b`), note: "override phrase", need: [][]string{{"now"}}},
	{re: mustRe(`<WSO/?WSO(?:system|system[_ -]?(?:prompt|message|instructions?)|instructions?)WSO>`),
		note: "pseudo-system tag", need: [][]string{{"<"}, {"system", "instruction"}}},
	{re: mustRe(`<WSO/?WSOimportantWSO>`), note: "pseudo-system tag", need: [][]string{{"<"}, {"important"}},
		upper: "IMPORTANT", pair: mustRe(`(?s)<WSOimportantWSO>.*?<WSO/WSOimportantWSO>`)},
	{re: mustRe(`<\|WSO(?:im_start|im_end|im_sep|system|endoftext|eot_id|begin_of_text|start_header_id|end_header_id)WSO\|>`),
		note: "pseudo-system tag", need: [][]string{{"<|"}}},
	{re: mustRe(`\[/?INST\]`), note: "pseudo-system tag", need: [][]string{{"inst]"}}},
	{re: mustRe(`<</?SYS>>`), note: "pseudo-system tag", need: [][]string{{"sys>>"}}},
	{re: mustRe(`\b(?:(?:do|does|must|should)WSnot|don['’]?t|never)WS(?:tell|inform|notify|alert|let)WS(?:(?:the|your|this)WS)?users?\b`),
		note: "concealment from the user", need: [][]string{{"user"}, notWords}},
	{re: mustRe(`\b(?:(?:do|does|must|should)WSnot|don['’]?t|never)WS(?:mention|reveal|disclose|show|say|report)\b[^.!?\n]{0,60}?\b(?:to|with)WS(?:the|your|this)WSusers?\b`),
		note: "concealment from the user", need: [][]string{{"user"}, notWords}},
	{re: mustRe(`\bwithoutWS(?:telling|informing|notifying|alerting|letting)WS(?:the|your)WSusers?\b`),
		note: "concealment from the user", need: [][]string{{"without"}, {"user"}}},
	{re: mustRe(`\bhideWSthisWS(?:instructions?|messages?|text|notes?|steps?|part|section)\b`),
		note: "concealment from the user", need: [][]string{{"hide"}}},
	{re: mustRe(`\b(?:hide|conceal)\b[^.!?\n]{0,40}?\bfromWS(?:the|your)WSusers?\b`),
		note: "concealment from the user", need: [][]string{{"hide", "conceal"}, {"user"}}},
	{re: mustRe(`\b(?:the|your)WSuserWS(?:must|should|shall)WS(?:not|never)WS(?:know|see|notice|find|learn|be)\b`),
		note: "concealment from the user", need: [][]string{{"user"}, {"not", "never"}}},
	{re: mustRe(`(~/\.ssh\b|\$HOME/\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials\b|/etc/(?:passwd|shadow)\b|~/\.netrc\b|\.git-credentials\b|~/\.kube/config\b|~/\.gnupg\b|~/\.docker/config\.json)`),
		note: "sensitive path next to an exfiltration directive", sensitivePath: true,
		need: [][]string{{".ssh", "id_", ".aws/", "/etc/", ".netrc", ".git-cred", ".kube/", ".gnupg", ".docker/"}}},
	{re: mustRe(`(?:^|[^\w./-])(\.env)\b`), note: "sensitive path next to an exfiltration directive", sensitivePath: true,
		need: [][]string{{".env"}}},
}

// exfilRe is a directive that moves data out of the user's machine: sending it, passing
// it as or into a tool argument, or putting it into the model's output or a message.
// cat counts: it writes a file into the output. Merely reading a file ("Reads
// ~/.ssh/config") does not.
var exfilRe = mustRe(`\b(?:send(?:s|ing)?|upload(?:s|ing)?|post(?:s|ing)?|transmit(?:s|ting)?|exfiltrat(?:e|es|ing)|forward(?:s|ing)?|leak(?:s|ing)?|e-?mail(?:s|ing)?|shar(?:e|es|ing)|attach(?:es|ing)?|cat` +
	`|pass(?:es|ing)?\b(?:[^.!?\n]|\.\S){0,60}?\b(?:as|in|into|to|here|along)` +
	`|(?:includ(?:e|es|ing)|append(?:s|ing)?|past(?:e|es|ing)|embed(?:s|ding)?|put(?:s|ting)?|insert(?:s|ing)?)\b(?:[^.!?\n]|\.\S){0,60}?\b(?:(?:in|into|to|as|with)WS(?:(?:the|this|your|its|a|an|our|that)WS)?(?:\w+WS)?(?:response|output|reply|answer|message|result|parameter|argument|field|notes?|context|request|body|payload|conversation|chat)|here))\b`)

// invisibleRun is a run of consecutive flagged characters.
type invisibleRun struct {
	start, end int
	labels     []string // distinct, in order of appearance
	codes      []rune   // the first few code points
	count      int
	tags       []byte // tag characters decoded to ASCII
}

func (r *invisibleRun) note() string {
	var b strings.Builder
	b.WriteString("invisible: ")
	b.WriteString(strings.Join(r.labels, ", "))
	fmt.Fprintf(&b, " (%d characters:", r.count)
	for _, c := range r.codes {
		fmt.Fprintf(&b, " U+%04X", c)
	}
	if r.count > len(r.codes) {
		b.WriteString(" ...")
	}
	b.WriteString(")")
	if len(r.tags) > 0 {
		b.WriteString("; the tag characters spell \"" + escape(string(r.tags), 60) + "\"")
	}
	return b.String()
}

const maxRunCodes = 4

// InvisibleCount returns how many characters of text the hidden_instructions check
// flags as invisible (controls, zero-width and bidi characters, tag characters, private
// use, variation selectors without a valid base, ...; joiners, marks and selectors used
// legitimately in their context are not counted), 0 for clean text. It lets other
// packages apply the check's definition without running the check.
func InvisibleCount(text string) int {
	n := 0
	for _, r := range invisibleRuns(text) {
		n += r.count
	}
	return n
}

// invisibleRuns returns the runs of flagged characters of text.
func invisibleRuns(text string) []invisibleRun {
	var runs []invisibleRun
	// rtl says whether text has right-to-left letters (-1: not computed yet).
	rtl := -1
	// prev is the previous rune, base the last one that is not a modifier.
	prev, base := rune(-1), rune(-1)
	prevIsBase := false // whether prev can carry a variation selector
	allowedUntil := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == 0x1F3F4 {
			if end := subdivisionFlagEnd(text, i+size); end > 0 {
				allowedUntil = end
			}
		}
		label := ""
		if i >= allowedUntil {
			next := rune(-1)
			if i+size < len(text) {
				next, _ = utf8.DecodeRuneInString(text[i+size:])
			}
			if (r == 0x200E || r == 0x200F || r == 0x061C) && rtl < 0 {
				rtl = 0
				if strings.ContainsFunc(text, isRTL) {
					rtl = 1
				}
			}
			label = invisibleLabel(r, prev, base, next, prevIsBase, rtl == 1)
		}
		if label != "" {
			if n := len(runs); n > 0 && runs[n-1].end == i {
				runs[n-1].extend(r, label, i+size)
			} else {
				runs = append(runs, invisibleRun{start: i})
				runs[len(runs)-1].extend(r, label, i+size)
			}
		}
		prevIsBase = label == "" && !isVariationSelector(r) && !unicode.IsSpace(r) && !unicode.IsControl(r) && !isIgnorable(r)
		prev = r
		if !isVariationSelector(r) && !isSkinTone(r) {
			base = r
		}
		i += size
	}
	return runs
}

func (r *invisibleRun) extend(c rune, label string, end int) {
	r.end = end
	r.count++
	if len(r.codes) < maxRunCodes {
		r.codes = append(r.codes, c)
	}
	found := false
	for _, l := range r.labels {
		if l == label {
			found = true
			break
		}
	}
	if !found {
		r.labels = append(r.labels, label)
	}
	if c >= 0xE0020 && c <= 0xE007E && len(r.tags) < 256 {
		r.tags = append(r.tags, byte(c-0xE0000))
	}
}

// invisibleLabel returns what kind of invisible character r is, or "" when r is not one
// or is used legitimately in its context.
func invisibleLabel(r, prev, base, next rune, prevIsBase, rtl bool) string {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return ""
	case r == 0x1B:
		return "escape (ANSI)"
	case r < 0x20 || r == 0x7F || (r >= 0x80 && r <= 0x9F):
		return "control character"
	case r == 0x200B:
		if sameScript(prev, next, noSpaceScripts) {
			return ""
		}
		return "zero-width space"
	case r == 0x200C:
		if sameScript(prev, next, joinerScripts) {
			return ""
		}
		return "zero-width non-joiner"
	case r == 0x200D:
		if (isEmoji(base) && isEmoji(next)) || sameScript(prev, next, joinerScripts) {
			return ""
		}
		return "zero-width joiner"
	case r == 0x200E || r == 0x200F || r == 0x061C:
		if rtl {
			return ""
		}
		return "bidi mark outside right-to-left text"
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return "bidi control"
	case r >= 0x2060 && r <= 0x2064:
		return "invisible word joiner or operator"
	case r == 0xFEFF:
		return "zero-width no-break space (BOM)"
	case r == 0x180E:
		if sameScript(prev, next, []*unicode.RangeTable{unicode.Mongolian}) {
			return ""
		}
		return "Mongolian vowel separator"
	case r >= 0xE0000 && r <= 0xE007F:
		return "tag character"
	case r >= 0xE000 && r <= 0xF8FF, r >= 0xF0000 && r <= 0xFFFFD, r >= 0x100000 && r <= 0x10FFFD:
		return "private use character"
	case r >= 0xFFF9 && r <= 0xFFFB:
		return "interlinear annotation control"
	case isVariationSelector(r):
		if prevIsBase && variationBase(r, prev) {
			return ""
		}
		return "variation selector without a valid base character"
	case r == 0x00AD:
		return "soft hyphen"
	case r == 0x034F:
		return "combining grapheme joiner"
	case r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0:
		return "Hangul filler"
	case r >= 0x206A && r <= 0x206F:
		return "deprecated format control"
	case r >= 0x13430 && r <= 0x1343F:
		if inScript(prev, unicode.Egyptian_Hieroglyphs) && inScript(next, unicode.Egyptian_Hieroglyphs) {
			return ""
		}
		return "Egyptian hieroglyph format control"
	case unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		return "" // visible number signs such as U+0600
	case unicode.Is(unicode.Cf, r):
		return "format character"
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return "default-ignorable character"
	}
	return ""
}

// isIgnorable reports whether r is a format (Cf) or default-ignorable character: even
// when allowed in its context it cannot carry a variation selector.
func isIgnorable(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

func isVariationSelector(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xE0100 && r <= 0xE01EF) || (r >= 0x180B && r <= 0x180D) || r == 0x180F
}

// variationBase reports whether variation selector vs can follow base: VS15/VS16
// (text/emoji presentation) follow any base; VS1–VS14 any base but an ASCII letter (no
// standardized variation sequence starts with one, and one selector per letter would
// smuggle four bits a letter); VS17–VS256 only a Han ideograph (ideographic variation
// sequences); the Mongolian free variation selectors only a Mongolian letter.
func variationBase(vs, base rune) bool {
	switch {
	case vs == 0xFE0E || vs == 0xFE0F:
		return true
	case vs >= 0xFE00 && vs <= 0xFE0D:
		return !(base >= 'a' && base <= 'z' || base >= 'A' && base <= 'Z')
	case vs >= 0xE0100:
		return unicode.Is(unicode.Han, base)
	}
	return inScript(base, unicode.Mongolian)
}

func inScript(r rune, script *unicode.RangeTable) bool { return r >= 0 && unicode.Is(script, r) }

func isSkinTone(r rune) bool { return r >= 0x1F3FB && r <= 0x1F3FF }

// isEmoji is a generous test for characters that take part in emoji ZWJ sequences.
func isEmoji(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2300 && r <= 0x23FF,
		r >= 0x2B00 && r <= 0x2BFF, r >= 0x2190 && r <= 0x21FF:
		return true
	}
	switch r {
	case 0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D, 0x3297, 0x3299:
		return true
	}
	return false
}

// rgiSubdivisionFlags are the tag sequences of the only emoji subdivision flags
// recommended for general interchange (England, Scotland, Wales). Any other tag
// sequence, even one shaped like a flag, can spell arbitrary ASCII, so it is flagged.
var rgiSubdivisionFlags = []string{"gbeng", "gbsct", "gbwls"}

// subdivisionFlagEnd returns the end of an RGI emoji subdivision flag's tag sequence that
// starts at i (after U+1F3F4): the tags of one of rgiSubdivisionFlags and the cancel tag
// U+E007F; or 0.
func subdivisionFlagEnd(text string, i int) int {
	for _, f := range rgiSubdivisionFlags {
		j := i
		for _, c := range f + "\x7f" {
			r, size := utf8.DecodeRuneInString(text[j:])
			if r != 0xE0000+c {
				j = -1
				break
			}
			j += size
		}
		if j > 0 {
			return j
		}
	}
	return 0
}

var (
	rtlScripts     = []*unicode.RangeTable{unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko, unicode.Samaritan, unicode.Mandaic, unicode.Adlam}
	joinerScripts  = []*unicode.RangeTable{unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian, unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya, unicode.Tamil, unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala}
	noSpaceScripts = []*unicode.RangeTable{unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar, unicode.Tibetan, unicode.Javanese, unicode.Balinese}
)

func isRTL(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsMark(r)) && unicode.In(r, rtlScripts...)
}

// sameScript reports whether a and b are letters or marks of one script in scripts.
func sameScript(a, b rune, scripts []*unicode.RangeTable) bool {
	if a < 0 || b < 0 {
		return false
	}
	for _, s := range scripts {
		if unicode.Is(s, a) && unicode.Is(s, b) &&
			(unicode.IsLetter(a) || unicode.IsMark(a)) && (unicode.IsLetter(b) || unicode.IsMark(b)) {
			return true
		}
	}
	return false
}
