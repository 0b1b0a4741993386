package diff

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"time"

	"github.com/probity-dev/probity/attest"
)

const (
	// MaxTools bounds the tools of one Surface; it is attest.MaxTools, the probe's cap.
	MaxTools = attest.MaxTools
	// MaxSurfaceBytes bounds the bytes of one Surface: its tools, instructions and
	// version together. It matches the probe's cap on the bytes of one read.
	MaxSurfaceBytes = 32 << 20
	// MaxParamDepth bounds how deep parameters nest (package doc, Parameters).
	MaxParamDepth = 32
	// maxReportBytes bounds the paths and findings of one Change.
	maxReportBytes = 16 << 20
)

// ErrTooLarge is wrapped by the error Compare and Parse return when their input is past
// one of the package's limits (package doc, Limits).
var ErrTooLarge = errors.New("surface too large to compare")

// Surface is one read of a server: its tools (raw tool objects, e.g. the elements of
// attest.SurfaceDocument's array), instructions (nil when it sent none) and
// server-reported version.
type Surface struct {
	Tools        []json.RawMessage
	Instructions *string
	Version      string
}

// Parse returns the Surface of a stored surface document (the JSON array
// attest.SurfaceDocument produces, or any JSON array of tools that attest.CheckJSON
// accepts), its instructions and version. Every element must be an object whose "name"
// is a string. The Surface does not share memory with its arguments.
func Parse(surfaceDoc []byte, instructions *string, version string) (Surface, error) {
	if len(surfaceDoc) > MaxSurfaceBytes {
		return Surface{}, fmt.Errorf("%w: surface document of %d bytes exceeds %d", ErrTooLarge, len(surfaceDoc), MaxSurfaceBytes)
	}
	doc := bytes.TrimLeft(surfaceDoc, " \t\r\n")
	if len(doc) == 0 || doc[0] != '[' {
		return Surface{}, errors.New("surface document is not a JSON array")
	}
	tools, _, err := attest.ParseToolsDocument(doc)
	if err != nil {
		return Surface{}, fmt.Errorf("couldn't parse surface document: %w", err)
	}
	if len(tools) > MaxTools {
		return Surface{}, fmt.Errorf("%w: %d tools exceed the cap of %d", ErrTooLarge, len(tools), MaxTools)
	}
	for i, t := range tools {
		if _, err := rawToolName(t); err != nil {
			return Surface{}, fmt.Errorf("tools[%d]: %w", i, err)
		}
	}
	s := Surface{Tools: tools, Version: version}
	if instructions != nil {
		ins := *instructions
		s.Instructions = &ins
	}
	if err := s.check(); err != nil {
		return Surface{}, err
	}
	return s, nil
}

// check applies the limits on the size of a Surface.
func (s *Surface) check() error {
	if len(s.Tools) > MaxTools {
		return fmt.Errorf("%w: %d tools exceed the cap of %d", ErrTooLarge, len(s.Tools), MaxTools)
	}
	n := len(s.Version)
	if s.Instructions != nil {
		n += len(*s.Instructions)
	}
	for _, t := range s.Tools {
		n += len(t)
	}
	if n > MaxSurfaceBytes {
		return fmt.Errorf("%w: %d bytes exceed %d", ErrTooLarge, n, MaxSurfaceBytes)
	}
	return nil
}

// Options are the settings of Compare.
type Options struct {
	// Now is the current date used for masking dates (package doc, Dates): the dates
	// of the observation days. The zero time masks only dates with a year.
	Now time.Time
}

// Change is what differs between two reads of a server. Its text fields hold the
// server's text as it is, unmasked and unescaped: show it as plain text.
type Change struct {
	// Added and Removed are the tools added and removed, sorted by name; a renamed tool
	// is one of each.
	Added, Removed []ToolRef
	// Changed holds one entry per remaining tool that changed, sorted by name.
	Changed []ToolChange

	// InstructionsChanged says the instructions changed; InstructionsBefore and
	// InstructionsAfter are then the text before and after (nil for none).
	InstructionsChanged                   bool
	InstructionsBefore, InstructionsAfter *string

	// VersionChanged says the reported version changed, from VersionBefore to
	// VersionAfter (either may be "").
	VersionChanged              bool
	VersionBefore, VersionAfter string

	// Breaking holds the potentially breaking findings, sorted by tool, path and kind.
	Breaking []Breaking
	// Badges holds the badges, in the order of the Badge* constants, then by tool.
	Badges []Badge
}

// ToolRef names an added or removed tool.
type ToolRef struct {
	// Name is the tool's name.
	Name string
	// Title is the tool's title (package doc, What is compared) or, when that is empty,
	// the first sentence of its description: the text up to and including the first
	// '.', '!' or '?' followed by a space or the end, or up to the first line break. Runs
	// of spaces are collapsed to one, and a title longer than 120 runes is cut to 119
	// and "…".
	Title string
}

// ToolChange is how one remaining tool changed. Paths are short parameter paths
// (package doc, Parameters), each list sorted.
type ToolChange struct {
	// Name is the tool's name.
	Name string

	// TitleChanged and DescriptionChanged say the text changed other than in dates; the
	// texts before and after are set when it did.
	TitleChanged, DescriptionChanged    bool
	TitleBefore, TitleAfter             string
	DescriptionBefore, DescriptionAfter string

	// ParamsAdded, ParamsRemoved and ParamsNewlyRequired list the parameters added,
	// removed and newly required, at any depth.
	ParamsAdded, ParamsRemoved, ParamsNewlyRequired []string
	// ParamDescriptionsChanged lists the parameters and items schemas whose description
	// or title changed other than in dates.
	ParamDescriptionsChanged []string
	// InputSchemaChanged and OutputSchemaChanged say the schemas differ other than in
	// texts (package doc, What is compared).
	InputSchemaChanged, OutputSchemaChanged bool
	// Hints holds the hints that changed, in the order readOnlyHint, destructiveHint,
	// idempotentHint, openWorldHint.
	Hints []HintChange
	// InvisibleNew says invisible characters are newly present in a text field of the
	// tool (package doc, Invisible characters).
	InvisibleNew bool
}

// HintChange is a changed annotation hint.
type HintChange struct {
	// Hint is the hint's name, e.g. "readOnlyHint".
	Hint string
	// Before and After are its values; nil is an absent hint (or one that is not a
	// boolean).
	Before, After *bool
}

// The hints compared, in order.
var hintNames = [...]string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// Breaking is one potentially breaking finding.
type Breaking struct {
	// Kind is one of the Breaking* constants.
	Kind string
	// Tool is the name of the tool concerned.
	Tool string
	// Path is the long path of the parameter (package doc, Parameters); for
	// tool_removed, the tool name as a path segment.
	Path string
	// Before and After are the declared types of a param_type_changed finding.
	Before, After string
	// Narrowing says the new type accepts only values the old one accepted, as
	// number → integer.
	Narrowing bool
}

// Kinds of Breaking findings.
const (
	BreakingToolRemoved        = "tool_removed"
	BreakingParamRemoved       = "param_removed"
	BreakingParamTypeChanged   = "param_type_changed"
	BreakingParamNewlyRequired = "param_newly_required"
)

// Badge marks a change worth a closer look.
type Badge struct {
	// Kind is one of the Badge* constants.
	Kind string
	// Tool is the tool it concerns; "" for the server's instructions.
	Tool string
}

// Kinds of badges, in the order Change.Badges lists them.
const (
	BadgeNoLongerReadOnly   = "no_longer_read_only"
	BadgeNewlyDestructive   = "newly_destructive"
	BadgeNewDestructiveTool = "new_destructive_tool"
	BadgeNewlyRequiredParam = "newly_required_param"
	BadgeInvisibleChars     = "invisible_characters"
	BadgeNewInstructions    = "new_instructions"
)

var badgeOrder = map[string]int{
	BadgeNoLongerReadOnly: 0, BadgeNewlyDestructive: 1, BadgeNewDestructiveTool: 2,
	BadgeNewlyRequiredParam: 3, BadgeInvisibleChars: 4, BadgeNewInstructions: 5,
}

// Empty reports whether nothing changed.
func (c *Change) Empty() bool {
	return len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Changed) == 0 &&
		!c.InstructionsChanged && !c.VersionChanged
}

// entry is one tool of a Surface as Compare sees it.
type entry struct {
	raw     []byte
	name    string
	t       *tool // decoded, when not equal byte for byte to a tool of the other read
	matched bool
}

// Compare returns what changed from before to after (package doc). It returns an error
// when a tool is not a JSON object with a string name under the nfc-jcs/v1 profile, or,
// wrapping ErrTooLarge, when the input is past the package's limits.
func Compare(before, after Surface, opt Options) (*Change, error) {
	if err := before.check(); err != nil {
		return nil, fmt.Errorf("before: %w", err)
	}
	if err := after.check(); err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	c := &comparer{m: newMasker(opt.Now), ch: &Change{}}
	bs, as := entries(before.Tools), entries(after.Tools)

	// Tools equal byte for byte cancel out, each once validated.
	seed := maphash.MakeSeed()
	buckets := make(map[uint64][]int32, len(bs))
	for i := range bs {
		h := maphash.Bytes(seed, bs[i].raw)
		buckets[h] = append(buckets[h], int32(i))
	}
	for j := range as {
		h := maphash.Bytes(seed, as[j].raw)
		bucket := buckets[h]
		for k, i := range bucket {
			if !bytes.Equal(bs[i].raw, as[j].raw) {
				continue
			}
			if err := attest.CheckJSON(as[j].raw); err != nil {
				return nil, fmt.Errorf("after: tools[%d]: %w", j, err)
			}
			name, err := rawToolName(as[j].raw)
			if err != nil {
				return nil, fmt.Errorf("after: tools[%d]: %w", j, err)
			}
			bs[i].name, bs[i].matched = name, true
			as[j].name, as[j].matched = name, true
			if k == 0 {
				buckets[h] = bucket[1:]
			} else {
				buckets[h] = slices.Delete(bucket, k, k+1)
			}
			break
		}
	}
	// The others are decoded from their canonical form; equal canonical forms cancel.
	dec := &decoder{}
	if err := decodeUnmatched(bs, dec); err != nil {
		return nil, fmt.Errorf("before: %w", err)
	}
	if err := decodeUnmatched(as, dec); err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	canon := map[string][]int32{}
	for i := range bs {
		if !bs[i].matched {
			k := bs[i].t.v.raw
			canon[k] = append(canon[k], int32(i))
		}
	}
	for j := range as {
		if as[j].matched {
			continue
		}
		if l := canon[as[j].t.v.raw]; len(l) > 0 {
			bs[l[0]].matched, as[j].matched = true, true
			canon[as[j].t.v.raw] = l[1:]
		}
	}

	// What is left is paired by name, in canonical order.
	byName := map[string]*[2][]*tool{}
	var names []string
	group := func(es []entry, side int) {
		for i := range es {
			if es[i].matched {
				continue
			}
			g := byName[es[i].t.name]
			if g == nil {
				g = &[2][]*tool{}
				byName[es[i].t.name] = g
				names = append(names, es[i].t.name)
			}
			g[side] = append(g[side], es[i].t)
		}
	}
	group(bs, 0)
	group(as, 1)
	afterNames := make(map[string]bool, len(as))
	for i := range as {
		afterNames[as[i].name] = true
	}
	slices.Sort(names)
	for _, name := range names {
		g := byName[name]
		byCanon := func(a, b *tool) int { return strings.Compare(a.v.raw, b.v.raw) }
		slices.SortFunc(g[0], byCanon)
		slices.SortFunc(g[1], byCanon)
		n := min(len(g[0]), len(g[1]))
		for k := range n {
			if err := c.compareTool(g[0][k], g[1][k]); err != nil {
				return nil, err
			}
		}
		for _, t := range g[0][n:] {
			if err := c.removed(t, afterNames[name]); err != nil {
				return nil, err
			}
		}
		for _, t := range g[1][n:] {
			if err := c.added(t); err != nil {
				return nil, err
			}
		}
	}
	c.instructions(before.Instructions, after.Instructions)
	if before.Version != after.Version {
		c.ch.VersionChanged = true
		c.ch.VersionBefore, c.ch.VersionAfter = before.Version, after.Version
	}
	c.sort()
	return c.ch, nil
}

func entries(tools []json.RawMessage) []entry {
	es := make([]entry, len(tools))
	for i, raw := range tools {
		es[i].raw = raw
	}
	return es
}

// decodeUnmatched canonicalizes and decodes the tools not matched byte for byte.
func decodeUnmatched(es []entry, dec *decoder) error {
	for i := range es {
		if es[i].matched {
			continue
		}
		t, err := newTool(es[i].raw, dec)
		if err != nil {
			return fmt.Errorf("tools[%d]: %w", i, err)
		}
		es[i].t, es[i].name = t, t.name
	}
	return nil
}

// comparer builds one Change.
type comparer struct {
	m  *masker
	ch *Change
	// reported counts the bytes of paths and findings reported, against maxReportBytes.
	reported int
}

// report accounts for n bytes of report.
func (c *comparer) report(n int) error {
	c.reported += n + 16
	if c.reported > maxReportBytes {
		return fmt.Errorf("%w: the change would report more than %d bytes", ErrTooLarge, maxReportBytes)
	}
	return nil
}

func (c *comparer) breaking(b Breaking) error {
	c.ch.Breaking = append(c.ch.Breaking, b)
	return c.report(len(b.Tool) + len(b.Path) + len(b.Before) + len(b.After))
}

func (c *comparer) badge(kind, tool string) error {
	c.ch.Badges = append(c.ch.Badges, Badge{Kind: kind, Tool: tool})
	return c.report(len(tool))
}

func (c *comparer) removed(t *tool, nameRemains bool) error {
	ref := t.ref()
	c.ch.Removed = append(c.ch.Removed, ref)
	if err := c.report(len(ref.Name) + len(ref.Title)); err != nil {
		return err
	}
	if nameRemains {
		return nil
	}
	// Several tools of one name give one finding: sort drops the copies.
	return c.breaking(Breaking{Kind: BreakingToolRemoved, Tool: t.name, Path: segment(t.name)})
}

func (c *comparer) added(t *tool) error {
	ref := t.ref()
	c.ch.Added = append(c.ch.Added, ref)
	if err := c.report(len(ref.Name) + len(ref.Title)); err != nil {
		return err
	}
	if h := t.hint("destructiveHint"); h != nil && *h {
		if err := c.badge(BadgeNewDestructiveTool, t.name); err != nil {
			return err
		}
	}
	if len(t.invisible()) > 0 {
		return c.badge(BadgeInvisibleChars, t.name)
	}
	return nil
}

func (c *comparer) instructions(before, after *string) {
	var b, a string
	if before != nil {
		b = *before
	}
	if after != nil {
		a = *after
	}
	if b == a {
		return
	}
	cls := c.m.classesOf(a)
	if c.m.mask(b, cls) == c.m.mask(a, cls) {
		return
	}
	ch := c.ch
	ch.InstructionsChanged = true
	if before != nil {
		ch.InstructionsBefore = &b
	}
	if after != nil {
		ch.InstructionsAfter = &a
	}
	if invisibleCount(a) > invisibleCount(b) {
		ch.Badges = append(ch.Badges, Badge{Kind: BadgeInvisibleChars})
	}
	if a != "" {
		ch.Badges = append(ch.Badges, Badge{Kind: BadgeNewInstructions})
	}
}

// sort puts the lists of the Change in their documented order.
func (c *comparer) sort() {
	ch := c.ch
	byRef := func(a, b ToolRef) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Title, b.Title)) }
	slices.SortFunc(ch.Added, byRef)
	slices.SortFunc(ch.Removed, byRef)
	slices.SortStableFunc(ch.Changed, func(a, b ToolChange) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(ch.Breaking, func(a, b Breaking) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Before, b.Before), cmp.Compare(a.After, b.After))
	})
	ch.Breaking = slices.Compact(ch.Breaking)
	slices.SortFunc(ch.Badges, func(a, b Badge) int {
		return cmp.Or(cmp.Compare(badgeOrder[a.Kind], badgeOrder[b.Kind]), cmp.Compare(a.Tool, b.Tool))
	})
	ch.Badges = slices.Compact(ch.Badges)
}
