package feed

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/history/diff"
	"github.com/probity-dev/probity/store"
)

// mode is how textWriter.write shows a string.
type mode uint8

const (
	// modeBlock keeps line breaks (CR LF and CR become LF) and tabs, and writes the
	// prefix after each line break.
	modeBlock mode = iota
	// modeLine keeps the text on one line: line feed, CR and tab become \n, \r and \t.
	modeLine
	// modeQuoted is modeLine in double quotes, with " and \ escaped as \" and \\.
	modeQuoted
)

// textWriter builds plain text up to limit bytes. Every write is cut at a unit (a
// character or one of its escapes), never inside one; once a unit does not fit, full
// is set and every later write is dropped, so the work stays bounded too.
type textWriter struct {
	b     strings.Builder
	limit int
	full  bool
}

// put writes s, which must be Probity's own clean text, as one unit.
func (w *textWriter) put(s string) {
	if w.full {
		return
	}
	if w.b.Len()+len(s) > w.limit {
		w.full = true
		return
	}
	w.b.WriteString(s)
}

// write writes s, which may be anything a server sent, made safe and visible (package
// doc, Plain text only) as m says; prefix follows each line break in modeBlock.
func (w *textWriter) write(s string, m mode, prefix string) {
	if m == modeQuoted {
		w.put(`"`)
	}
	plainBefore := false // the previous character was written as itself and can carry VS15/VS16
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s) && !w.full; {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		unit, plain := "", false
		switch {
		case r == utf8.RuneError && size == 1:
			unit = "\uFFFD"
		case r == '\r' && m == modeBlock && i < len(s) && s[i] == '\n':
			continue // CR LF: the LF follows
		case r == '\n' || r == '\r':
			switch {
			case m == modeBlock:
				unit = "\n" + prefix
			case r == '\n':
				unit = `\n`
			default:
				unit = `\r`
			}
		case r == '\t':
			unit = "\t"
			if m != modeBlock {
				unit = `\t`
			}
		case m == modeQuoted && (r == '"' || r == '\\'):
			unit = `\` + string(r)
		case hidden(r, plainBefore):
			unit = escape(r)
		default:
			unit = string(buf[:utf8.EncodeRune(buf[:], r)])
			plain = !unicode.IsSpace(r) && !unicode.Is(unicode.Variation_Selector, r)
		}
		w.put(unit)
		plainBefore = plain
	}
	if m == modeQuoted {
		w.put(`"`)
	}
}

// hidden reports whether r must be shown as an escape: it is not allowed in XML 1.0, or
// it is invisible or changes how the text around it is shown. plainBefore says the
// character before r was shown as itself and can carry a presentation selector.
func hidden(r rune, plainBefore bool) bool {
	switch {
	case r < 0x20 || r >= 0x7F && r <= 0x9F: // C0 (tab, LF, CR handled by the caller), DEL, C1
		return true
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE: // noncharacters, U+FFFE and U+FFFF included
		return true
	case r == 0xFE0E || r == 0xFE0F: // text and emoji presentation: shown as-is after a visible character
		return !plainBefore
	}
	return unicode.In(r, unicode.Cf, unicode.Co, unicode.Zl, unicode.Zp,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// escape writes r as \uXXXX, or \UXXXXXXXX above the BMP, in lower-case hex.
func escape(r rune) string {
	if r > 0xFFFF {
		return fmt.Sprintf(`\U%08x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// line returns s made safe and visible on one line (modeLine), cut to max runes with
// "…" when longer.
func line(s string, maxRunes int) string {
	w := textWriter{limit: 4 * maxRunes}
	w.write(s, modeLine, "")
	out := w.b.String()
	if !w.full && utf8.RuneCountInString(out) <= maxRunes {
		return out
	}
	n := 0
	for i := range out {
		if n == maxRunes-1 {
			return out[:i] + "…"
		}
		n++
	}
	return out + "…"
}

// badgeLabels are the words for the badges (history/diff's Badge* kinds).
var badgeLabels = map[string]string{
	diff.BadgeNoLongerReadOnly:       "no longer read-only",
	diff.BadgeNewlyDestructive:       "newly destructive",
	diff.BadgeNewDestructiveTool:     "new destructive tool",
	diff.BadgeNewlyRequiredParam:     "newly required parameter",
	diff.BadgeInvisibleChars:         "invisible characters",
	diff.BadgeNewInstructions:        "new instructions",
	history.BadgeDiffersFromApproved: "differs from the approved baseline",
}

// breakingLabels are the words for the potentially breaking findings.
var breakingLabels = map[string]string{
	diff.BreakingToolRemoved:        "tool removed",
	diff.BreakingParamRemoved:       "parameter removed",
	diff.BreakingParamTypeChanged:   "parameter type changed",
	diff.BreakingParamNewlyRequired: "parameter newly required",
}

// content renders change c of the entry slug as the plain text of its feed entry.
func content(s site, slug string, c *store.ChangeRecord) string {
	w := &textWriter{limit: MaxContentBytes}
	w.put("Change " + strconv.FormatInt(c.Number, 10) + " of " + slug + ", recorded " +
		c.RecordedAt.UTC().Format("2006-01-02 15:04:05") + " UTC by ")
	switch c.Origin {
	case attest.OriginAutomatic:
		w.put("an automatic check")
	case attest.OriginOperator:
		w.put("the server's operator")
	default:
		w.put("origin ")
		w.write(line(c.Origin, 40), modeQuoted, "")
	}
	w.put(".\n")
	if c.Summary != "" {
		w.write(c.Summary, modeLine, "")
		w.put("\n")
	}
	if len(c.Badges) > 0 {
		w.put("Badges: ")
		for i, b := range c.Badges {
			if i == maxBadges {
				break
			}
			if i > 0 {
				w.put(", ")
			}
			if l, ok := badgeLabels[b]; ok {
				w.put(l)
			} else {
				w.write(b, modeQuoted, "")
			}
		}
		w.put("\n")
	}
	if s.base != "" { // ChangeText leaves it out when the address is not known
		w.put("Page: " + s.changeURL(slug, c.Number) + "\n")
	}
	w.put("\n")
	w.details(c.Kind, c.Details)
	out := strings.TrimRight(w.b.String(), "\n")
	if w.full {
		out += "\n\n[Cut here: the details are longer than " + strconv.Itoa(MaxContentBytes>>10) +
			" KiB. The page shows all of them.]"
	}
	return out
}

// details writes the details of a change of kind, from its Details JSON
// (history.ChangeDetails).
func (w *textWriter) details(kind string, raw []byte) {
	if len(raw) > MaxDetailsBytes {
		w.put("The details are too large for the feed; the page shows them.\n")
		return
	}
	d, err := history.DecodeChangeDetails(raw)
	if err != nil {
		w.put("The details are not available in the feed; the page shows them.\n")
		return
	}
	shown := false
	if kind == attest.ChangeBaseline {
		shown = true
		w.put("Observation began")
		if d.ToolCount != nil {
			w.put(" with " + plural(*d.ToolCount, "tool", "tools"))
		} else if d.VersionBefore == "" && d.VersionAfter != "" {
			// A package's baseline: the version its observation started at.
			w.put(" at version ")
			w.quotedOrNone(d.VersionAfter)
			d.VersionAfter = ""
		}
		w.put(". Nothing before it counts as a change.\n")
	}
	if d.Diff != nil {
		shown = true
		w.change(d.Diff)
	}
	if d.VersionBefore != "" || d.VersionAfter != "" {
		shown = true
		w.version(d.VersionBefore, d.VersionAfter)
	}
	if d.Field != "" {
		shown = true
		w.edit(d.Field, d.Before, d.After)
	}
	if !shown {
		w.put("The details are not available in the feed; the page shows them.\n")
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// change writes a tools change.
func (w *textWriter) change(c *diff.Change) {
	if len(c.Added) > 0 {
		w.put("Tools added:\n")
		for _, t := range c.Added {
			w.put("  + ")
			w.write(t.Name, modeLine, "")
			if t.Title != "" {
				w.put(": ")
				w.write(t.Title, modeQuoted, "")
			}
			w.put("\n")
		}
	}
	if len(c.Removed) > 0 {
		w.put("Tools removed:\n")
		for _, t := range c.Removed {
			w.put("  - ")
			w.write(t.Name, modeLine, "")
			w.put("\n")
		}
	}
	if len(c.Changed) > 0 {
		w.put("Tools changed:\n")
		for i := range c.Changed {
			w.tool(&c.Changed[i])
		}
	}
	if c.InstructionsChanged {
		w.block("", "Instructions before", c.InstructionsBefore)
		w.block("", "Instructions after", c.InstructionsAfter)
	}
	if c.VersionChanged {
		w.version(c.VersionBefore, c.VersionAfter)
	}
	if len(c.Breaking) > 0 {
		w.put("Potentially breaking:\n")
		for _, b := range c.Breaking {
			w.put("  - ")
			if l, ok := breakingLabels[b.Kind]; ok {
				w.put(l)
			} else {
				w.write(b.Kind, modeQuoted, "")
			}
			w.put(": tool ")
			w.write(b.Tool, modeLine, "")
			if b.Kind != diff.BreakingToolRemoved && b.Path != "" {
				w.put(", parameter ")
				w.write(b.Path, modeLine, "")
			}
			if b.Kind == diff.BreakingParamTypeChanged {
				w.put(", from ")
				w.write(orNone(b.Before), modeLine, "")
				w.put(" to ")
				w.write(orNone(b.After), modeLine, "")
				if b.Narrowing {
					w.put(" (narrowing)")
				}
			}
			w.put("\n")
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "no declared type"
	}
	return s
}

// tool writes how a remaining tool changed.
func (w *textWriter) tool(t *diff.ToolChange) {
	w.put("  * ")
	w.write(t.Name, modeLine, "")
	w.put("\n")
	if t.TitleChanged {
		w.put("    title before: ")
		w.write(t.TitleBefore, modeQuoted, "")
		w.put("\n    title after: ")
		w.write(t.TitleAfter, modeQuoted, "")
		w.put("\n")
	}
	if t.DescriptionChanged {
		w.block("    ", "description before", &t.DescriptionBefore)
		w.block("    ", "description after", &t.DescriptionAfter)
	}
	w.list("parameters added", t.ParamsAdded)
	w.list("parameters removed", t.ParamsRemoved)
	w.list("parameters newly required", t.ParamsNewlyRequired)
	w.list("parameter descriptions changed", t.ParamDescriptionsChanged)
	if t.InputSchemaChanged {
		w.put("    input schema changed\n")
	}
	if t.OutputSchemaChanged {
		w.put("    output schema changed\n")
	}
	for _, h := range t.Hints {
		w.put("    ")
		w.write(h.Hint, modeLine, "")
		w.put(": " + hint(h.Before) + " → " + hint(h.After) + "\n")
	}
	if t.InvisibleNew {
		w.put("    new invisible characters in its text\n")
	}
}

func hint(b *bool) string {
	if b == nil {
		return "not set"
	}
	return strconv.FormatBool(*b)
}

// list writes a labeled list of parameter paths on one line.
func (w *textWriter) list(label string, paths []string) {
	if len(paths) == 0 {
		return
	}
	w.put("    " + label + ": ")
	for i, p := range paths {
		if i > 0 {
			w.put(", ")
		}
		w.write(p, modeLine, "")
		if w.full {
			return
		}
	}
	w.put("\n")
}

// block writes a labeled multi-line server text, each line after "| "; nil or "" is
// "none".
func (w *textWriter) block(indent, label string, s *string) {
	if s == nil || *s == "" {
		w.put(indent + label + ": none\n")
		return
	}
	prefix := indent + "  | "
	w.put(indent + label + ":\n" + prefix)
	w.write(*s, modeBlock, prefix)
	w.put("\n")
}

// version writes a version change.
func (w *textWriter) version(before, after string) {
	w.put("Version: ")
	w.quotedOrNone(before)
	w.put(" → ")
	w.quotedOrNone(after)
	w.put("\n")
}

func (w *textWriter) quotedOrNone(s string) {
	if s == "" {
		w.put("none")
		return
	}
	w.write(s, modeQuoted, "")
}

// edit writes an operator edit.
func (w *textWriter) edit(field string, before, after *string) {
	label := strings.ReplaceAll(field, "_", " ")
	w.put("The server's operator edited the entry's ")
	w.write(label, modeLine, "")
	w.put(".\n")
	if !history.RecordsEditText(field) {
		w.put("Only that it changed is recorded, not its text.\n")
		return
	}
	w.block("", "Before", before)
	w.block("", "After", after)
}
