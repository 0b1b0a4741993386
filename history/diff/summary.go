package diff

import (
	"regexp"
	"strconv"
	"strings"
)

// Kinds are the kinds of a Change as booleans, for statistics. They are not exclusive:
// drift statistics that put each change in one column take ToolsAdded || ToolsRemoved
// first, then SchemaChangedNamesSame, then DescriptionOnly. Kinds depend only on the
// exported fields of a Change, so a stored Change gives the same Kinds.
type Kinds struct {
	// ToolsAdded and ToolsRemoved say tools were added or removed.
	ToolsAdded, ToolsRemoved bool
	// NamesChanged says the multiset of tool names changed, as the toolset fingerprint
	// would: ToolsAdded || ToolsRemoved.
	NamesChanged bool
	// SchemaChangedNamesSame says a remaining tool's inputSchema or outputSchema
	// changed.
	SchemaChangedNamesSame bool
	// DescriptionOnly says tools changed, and only in titles, descriptions and
	// parameter descriptions: none was added or removed and no parameter list, schema or
	// hint changed. Instructions and version do not count either way.
	DescriptionOnly bool
	// Breaking says the change has a potentially breaking finding.
	Breaking bool
}

// Kinds returns the kinds of the change.
func (c *Change) Kinds() Kinds {
	k := Kinds{
		ToolsAdded:   len(c.Added) > 0,
		ToolsRemoved: len(c.Removed) > 0,
		Breaking:     len(c.Breaking) > 0,
	}
	k.NamesChanged = k.ToolsAdded || k.ToolsRemoved
	textOnly := len(c.Changed) > 0 && !k.NamesChanged
	for i := range c.Changed {
		tc := &c.Changed[i]
		if tc.InputSchemaChanged || tc.OutputSchemaChanged {
			k.SchemaChangedNamesSame = true
		}
		if tc.InputSchemaChanged || tc.OutputSchemaChanged || len(tc.ParamsAdded) > 0 || len(tc.ParamsRemoved) > 0 ||
			len(tc.ParamsNewlyRequired) > 0 || len(tc.Hints) > 0 {
			textOnly = false
		}
	}
	k.DescriptionOnly = textOnly
	return k
}

// Summary returns the change in one line (package doc, Summary), "no change" when it is
// empty. It holds counts, fixed words and semantic version numbers only, never other
// server text, so it is safe in a plain-text email or a feed title; it is not
// HTML-escaped, though nothing in it needs escaping but the arrow "→".
func (c *Change) Summary() string {
	var parts []string
	switch added, removed := len(c.Added), len(c.Removed); {
	case added > 0 && removed > 0:
		parts = append(parts, count(added, "tool")+" added, "+strconv.Itoa(removed)+" removed")
	case added > 0:
		parts = append(parts, count(added, "tool")+" added")
	case removed > 0:
		parts = append(parts, count(removed, "tool")+" removed")
	}
	if len(c.Changed) > 0 {
		var what [8]bool
		for i := range c.Changed {
			tc := &c.Changed[i]
			params := len(tc.ParamsAdded) > 0 || len(tc.ParamsRemoved) > 0 || len(tc.ParamsNewlyRequired) > 0
			what[0] = what[0] || tc.TitleChanged
			what[1] = what[1] || tc.DescriptionChanged
			what[2] = what[2] || params
			what[3] = what[3] || len(tc.ParamDescriptionsChanged) > 0
			what[4] = what[4] || (tc.InputSchemaChanged && !params)
			what[5] = what[5] || tc.OutputSchemaChanged
			what[6] = what[6] || len(tc.Hints) > 0
			what[7] = what[7] || tc.InvisibleNew
		}
		words := [...]string{"title", "description", "parameters", "parameter descriptions", "input schema", "output schema", "hints", "invisible characters"}
		var list []string
		for i, w := range what {
			if w {
				list = append(list, words[i])
			}
		}
		parts = append(parts, count(len(c.Changed), "tool")+" changed: "+strings.Join(list, ", "))
	}
	if c.InstructionsChanged {
		switch {
		case c.InstructionsBefore == nil || *c.InstructionsBefore == "":
			parts = append(parts, "instructions added")
		case c.InstructionsAfter == nil || *c.InstructionsAfter == "":
			parts = append(parts, "instructions removed")
		default:
			parts = append(parts, "instructions changed")
		}
	}
	if c.VersionChanged {
		b, a := semver(c.VersionBefore), semver(c.VersionAfter)
		switch {
		case b != "" && a != "":
			parts = append(parts, "version "+b+" → "+a)
		case a != "":
			parts = append(parts, "version "+a)
		default:
			parts = append(parts, "version changed")
		}
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, "; ")
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// semverRe is a semantic version (semver.org 2.0.0) with an optional "v".
var semverRe = regexp.MustCompile(`^v?(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)` +
	`(?:-(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?` +
	`(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$`)

// semver returns v when it is a semantic version of at most 64 bytes, else "".
func semver(v string) string {
	if len(v) > 64 || !semverRe.MatchString(v) {
		return ""
	}
	return v
}
