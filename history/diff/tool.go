package diff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/checks"
)

// tool is one tool decoded from its canonical form.
type tool struct {
	name string
	v    *value // v.raw is the tool's canonical form
	// inv holds the invisible characters of each text field with any, by path;
	// computed once.
	inv     map[string]int
	invDone bool
}

func newTool(raw []byte, dec *decoder) (*tool, error) {
	canon, err := attest.Canonicalize(raw)
	if err != nil {
		return nil, err
	}
	v, err := dec.decode(string(canon))
	if err != nil {
		return nil, err
	}
	if v.kind != '{' {
		return nil, errNotObject
	}
	name := v.get("name")
	switch {
	case name == nil:
		return nil, errNoName
	case name.kind != '"':
		return nil, errNameNotString
	}
	return &tool{name: name.str, v: v}, nil
}

// text is the text of a title or description (package doc, What is compared).
func text(v *value) string {
	switch {
	case v == nil || v.kind == 'n':
		return ""
	case v.kind == '"':
		return v.str
	}
	return v.raw
}

func (t *tool) titleText() string {
	if v := t.v.get("title"); v != nil && v.kind != 'n' {
		return text(v)
	}
	return text(t.v.get("annotations").get("title"))
}

func (t *tool) descText() string { return text(t.v.get("description")) }

// hint returns an annotation hint, nil when absent or not a boolean.
func (t *tool) hint(name string) *bool {
	h := t.v.get("annotations").get(name)
	if h == nil || (h.kind != 't' && h.kind != 'f') {
		return nil
	}
	b := h.kind == 't'
	return &b
}

// maxRefTitle is the length of ToolRef.Title in runes.
const maxRefTitle = 120

func (t *tool) ref() ToolRef {
	title := strings.Join(strings.Fields(t.titleText()), " ")
	if title == "" {
		title = firstSentence(t.descText())
	}
	if utf8.RuneCountInString(title) > maxRefTitle {
		n := 0
		for i := range title {
			if n == maxRefTitle-1 {
				title = title[:i] + "…"
				break
			}
			n++
		}
	}
	return ToolRef{Name: t.name, Title: title}
}

// firstSentence returns the first sentence of s (ToolRef.Title), its spaces collapsed.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	end := len(s)
	for i, r := range s {
		if r == '\n' || r == '\r' {
			end = i
			break
		}
		if r == '.' || r == '!' || r == '?' {
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			if i+1 == len(s) || unicode.IsSpace(next) {
				end = i + 1
				break
			}
		}
	}
	return strings.Join(strings.Fields(s[:end]), " ")
}

// eachText calls f with every text field of the tool (package doc, Invisible
// characters): its path (the stack f must not keep), its text, and whether it is a
// parameter name.
func (t *tool) eachText(f func(path []string, s string, name bool)) {
	for _, k := range [...]string{"title", "description"} {
		if v := t.v.get(k); v != nil && v.kind == '"' {
			f([]string{k}, v.str, false)
		}
	}
	if v := t.v.get("annotations").get("title"); v != nil && v.kind == '"' {
		f([]string{"annotations", "title"}, v.str, false)
	}
	for _, k := range [...]string{"inputSchema", "outputSchema"} {
		if v := t.v.get(k); v != nil {
			path := make([]string, 1, 16)
			path[0] = k
			walkTexts(v, path, f, 0)
		}
	}
}

func walkTexts(v *value, path []string, f func([]string, string, bool), depth int) {
	if depth > attest.MaxDepth {
		return
	}
	switch v.kind {
	case '{':
		props := path[len(path)-1] == "properties"
		for _, m := range v.mems {
			path = append(path, m.key)
			if props {
				f(append(path, "(name)"), m.key, true)
			}
			if (m.key == "description" || m.key == "title") && m.val.kind == '"' {
				f(path, m.val.str, false)
			} else {
				walkTexts(m.val, path, f, depth+1)
			}
			path = path[:len(path)-1]
		}
	case '[':
		for i, e := range v.elems {
			walkTexts(e, append(path, "["+strconv.Itoa(i)+"]"), f, depth+1)
		}
	}
}

// invisible returns the count of invisible characters of each text field that has any.
func (t *tool) invisible() map[string]int {
	if !t.invDone {
		t.invDone = true
		t.eachText(func(path []string, s string, _ bool) {
			if n := invisibleCount(s); n > 0 {
				if t.inv == nil {
					t.inv = map[string]int{}
				}
				t.inv[strings.Join(path, "\x00")] += n
			}
		})
	}
	return t.inv
}

// invisibleCount is checks.InvisibleCount, answered at once for text that is printable
// ASCII, tabs and line breaks.
func invisibleCount(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x7F || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			return checks.InvisibleCount(s)
		}
	}
	return 0
}

// texts compares the texts of two versions of a tool other than in dates. The forms
// masked only when they name the current date are looked for in the later version's
// text only when a comparison needs them: when the texts still differ with their full
// dates masked.
type texts struct {
	m       *masker
	after   *tool
	cls     classes
	clsDone bool
}

func (x *texts) classes() classes {
	if !x.clsDone {
		x.clsDone = true
		if len(x.m.near) > 0 {
			x.after.eachText(func(_ []string, s string, name bool) {
				if !name {
					x.cls |= x.m.classesOf(s)
				}
			})
		}
	}
	return x.cls
}

// differ reports whether b and a differ other than in dates.
func (x *texts) differ(b, a string) bool {
	if b == a {
		return false
	}
	fb, fa := x.m.full(b), x.m.full(a)
	if fb == fa {
		return false
	}
	cls := x.classes()
	return cls == 0 || x.m.current(fb, cls) != x.m.current(fa, cls)
}

// compareTool compares two tools of one name and records how they differ.
func (c *comparer) compareTool(b, a *tool) error {
	tc := ToolChange{Name: a.name}
	x := &texts{m: c.m, after: a}
	if tb, ta := b.titleText(), a.titleText(); x.differ(tb, ta) {
		tc.TitleChanged, tc.TitleBefore, tc.TitleAfter = true, tb, ta
	}
	if db, da := b.descText(), a.descText(); x.differ(db, da) {
		tc.DescriptionChanged, tc.DescriptionBefore, tc.DescriptionAfter = true, db, da
	}
	bIn, aIn := b.v.get("inputSchema"), a.v.get("inputSchema")
	w := walker{c: c, tc: &tc, tool: a.name, toolSeg: segment(a.name), texts: x}
	if err := w.walk(bIn, aIn, false, 0); err != nil {
		return err
	}
	tc.InputSchemaChanged = schemaChanged(bIn, aIn, roleRoot, x)
	tc.OutputSchemaChanged = schemaChanged(b.v.get("outputSchema"), a.v.get("outputSchema"), roleOther, x)
	for _, h := range hintNames {
		if hb, ha := b.hint(h), a.hint(h); !sameHint(hb, ha) {
			tc.Hints = append(tc.Hints, HintChange{Hint: h, Before: hb, After: ha})
		}
	}
	ib := b.invisible()
	for k, n := range a.invisible() {
		if n > ib[k] {
			tc.InvisibleNew = true
			break
		}
	}
	if !tc.changed() {
		return nil
	}
	for _, l := range [...][]string{tc.ParamsAdded, tc.ParamsRemoved, tc.ParamsNewlyRequired, tc.ParamDescriptionsChanged} {
		slices.Sort(l)
	}
	c.ch.Changed = append(c.ch.Changed, tc)

	if hb, ha := b.hint("readOnlyHint"), a.hint("readOnlyHint"); isTrue(hb) && !isTrue(ha) {
		if err := c.badge(BadgeNoLongerReadOnly, a.name); err != nil {
			return err
		}
	}
	if hb, ha := b.hint("destructiveHint"), a.hint("destructiveHint"); !isTrue(hb) && isTrue(ha) {
		if err := c.badge(BadgeNewlyDestructive, a.name); err != nil {
			return err
		}
	}
	if len(tc.ParamsNewlyRequired) > 0 {
		if err := c.badge(BadgeNewlyRequiredParam, a.name); err != nil {
			return err
		}
	}
	if tc.InvisibleNew {
		return c.badge(BadgeInvisibleChars, a.name)
	}
	return nil
}

func (tc *ToolChange) changed() bool {
	return tc.TitleChanged || tc.DescriptionChanged || len(tc.ParamsAdded) > 0 || len(tc.ParamsRemoved) > 0 ||
		len(tc.ParamsNewlyRequired) > 0 || len(tc.ParamDescriptionsChanged) > 0 ||
		tc.InputSchemaChanged || tc.OutputSchemaChanged || len(tc.Hints) > 0 || tc.InvisibleNew
}

func sameHint(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func isTrue(b *bool) bool { return b != nil && *b }

// schemaChanged reports whether two schemas differ in their compared form; a missing
// schema is an empty one.
func schemaChanged(b, a *value, role schemaRole, x *texts) bool {
	if b != nil && a != nil && b.raw == a.raw {
		return false
	}
	n := normalizer{m: x.m}
	form := func(s *value) string {
		n.buf = n.buf[:0]
		if s == nil {
			return "{}"
		}
		n.schema(s, role)
		return string(n.buf)
	}
	if form(b) == form(a) {
		return false
	}
	if n.classes = x.classes(); n.classes == 0 {
		return true
	}
	return form(b) != form(a)
}

// walker walks the parameter trees of two versions of a tool's inputSchema together.
type walker struct {
	c       *comparer
	tc      *ToolChange
	tool    string
	toolSeg string
	texts   *texts
	// segs are the segments of the short path of the current schema: parameter names
	// (quoted when not plain) and "[]" for an items schema.
	segs []string
}

// short returns the short path of the current schema, with seg appended when not "".
func (w *walker) short(seg string) string {
	var b strings.Builder
	for i, s := range append(w.segs, seg) {
		if i > 0 && s != "[]" && s != "" {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// long returns the long path of the current schema, with the parameter seg appended
// when not "".
func (w *walker) long(seg string) string {
	var b strings.Builder
	b.WriteString(w.toolSeg)
	b.WriteString(".inputSchema")
	for _, s := range append(w.segs, seg) {
		switch s {
		case "":
		case "[]":
			b.WriteString(".items")
		default:
			b.WriteString(".properties.")
			b.WriteString(s)
		}
	}
	return b.String()
}

// list appends a short path to one of the tool's lists.
func (w *walker) list(l *[]string, seg string) error {
	p := w.short(seg)
	*l = append(*l, p)
	return w.c.report(len(p))
}

func (w *walker) breaking(kind, seg string, before, after typeSet) error {
	b := Breaking{Kind: kind, Tool: w.tool, Path: w.long(seg)}
	if kind == BreakingParamTypeChanged {
		b.Before, b.After, b.Narrowing = before.String(), after.String(), after.within(before)
	}
	return w.c.breaking(b)
}

// walk compares schema b with schema a (nil for none); param says they are a parameter
// or an items schema rather than the inputSchema itself.
func (w *walker) walk(b, a *value, param bool, depth int) error {
	if depth > MaxParamDepth {
		return fmt.Errorf("%w: tool %s: parameters nest deeper than %d", ErrTooLarge, clip(w.toolSeg), MaxParamDepth)
	}
	if param {
		tb, ta := declaredType(b, 0), declaredType(a, 0)
		if !tb.equal(ta) && !tb.within(ta) {
			if err := w.breaking(BreakingParamTypeChanged, "", tb, ta); err != nil {
				return err
			}
		}
		if w.textChanged(b, a, "description") || w.textChanged(b, a, "title") {
			if err := w.list(&w.tc.ParamDescriptionsChanged, ""); err != nil {
				return err
			}
		}
	}
	bs, as := paramSource(b), paramSource(a)
	bp, ap := bs.get("properties").object(), as.get("properties").object()
	var inBefore map[string]*value
	if bp != nil {
		inBefore = make(map[string]*value, len(bp.mems))
		for _, m := range bp.mems {
			inBefore[m.key] = m.val
		}
	}
	if ap != nil {
		for _, m := range ap.mems {
			seg := segment(m.key)
			bv, ok := inBefore[m.key]
			if !ok {
				if err := w.list(&w.tc.ParamsAdded, seg); err != nil {
					return err
				}
				continue
			}
			delete(inBefore, m.key)
			w.segs = append(w.segs, seg)
			err := w.walk(bv, m.val, true, depth+1)
			w.segs = w.segs[:len(w.segs)-1]
			if err != nil {
				return err
			}
		}
	}
	if bp != nil {
		for _, m := range bp.mems {
			if _, gone := inBefore[m.key]; !gone {
				continue
			}
			seg := segment(m.key)
			if err := w.list(&w.tc.ParamsRemoved, seg); err != nil {
				return err
			}
			if err := w.breaking(BreakingParamRemoved, seg, typeSet{}, typeSet{}); err != nil {
				return err
			}
		}
	}
	breq := stringsOf(bs.get("required"))
	for _, name := range stringsOf(as.get("required")) {
		if slices.Contains(breq, name) {
			continue
		}
		seg := segment(name)
		if err := w.list(&w.tc.ParamsNewlyRequired, seg); err != nil {
			return err
		}
		if err := w.breaking(BreakingParamNewlyRequired, seg, typeSet{}, typeSet{}); err != nil {
			return err
		}
	}
	bi, ai := bs.get("items").object(), as.get("items").object()
	if bi == nil && ai == nil {
		return nil
	}
	w.segs = append(w.segs, "[]")
	err := w.walk(bi, ai, true, depth+1)
	w.segs = w.segs[:len(w.segs)-1]
	return err
}

// textChanged reports whether a parameter's description or title changed other than in
// dates.
func (w *walker) textChanged(b, a *value, key string) bool {
	return w.texts.differ(text(b.object().get(key)), text(a.object().get(key)))
}

// stringsOf returns the distinct strings of a JSON array, sorted.
func stringsOf(v *value) []string {
	if v == nil || v.kind != '[' {
		return nil
	}
	var l []string
	for _, e := range v.elems {
		if e.kind == '"' {
			l = append(l, e.str)
		}
	}
	slices.Sort(l)
	return slices.Compact(l)
}

// segment writes a name as a path segment: as it is when plain, else as a Go string
// literal (package doc, Parameters).
func segment(name string) string {
	if name == "" {
		return `""`
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return strconv.Quote(name)
		}
	}
	return name
}

// clip bounds server text quoted in an error message.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	i := 64
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
