package checks

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/probity-dev/probity/internal/rawjson"
)

// toolMeta is what destructive_annotations reads of one raw tool.
type toolMeta struct {
	name    string
	hasName bool
	// readOnly and destructive are the hints as sent: nil when absent or not a boolean.
	readOnly, destructive *bool
}

// parseToolMeta reads a tool's name and hints as json.Unmarshal into a
// map[string]json.RawMessage would (the last of repeated members wins), from views of
// raw rather than copies of every member.
func parseToolMeta(raw json.RawMessage) toolMeta {
	var tm toolMeta
	ms, ok := rawjson.Members(raw)
	if !ok {
		return tm
	}
	if n := lastMember(ms, "name"); n != nil && json.Unmarshal(n, &tm.name) == nil && bytes.HasPrefix(bytes.TrimSpace(n), []byte(`"`)) {
		tm.hasName = true
	}
	if a := lastMember(ms, "annotations"); a != nil {
		if ann, ok := rawjson.Members(a); ok {
			tm.readOnly = jsonBool(lastMember(ann, "readOnlyHint"))
			tm.destructive = jsonBool(lastMember(ann, "destructiveHint"))
		}
	}
	return tm
}

// lastMember is the value of the last member named name, nil when there is none.
func lastMember(ms []rawjson.Member, name string) json.RawMessage {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Name == name {
			return ms[i].Value
		}
	}
	return nil
}

func jsonBool(raw json.RawMessage) *bool {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		t := true
		return &t
	case "false":
		f := false
		return &f
	}
	return nil
}

// toolLabel is the escaped name of tool i for evidence, or "tools[i]".
func toolLabel(i int, name string, hasName bool) string {
	if !hasName {
		return "tools[" + itoa(i) + "]"
	}
	return escape(name, MaxSampleLen)
}

// destructiveVerbs are the name segments that mark a tool as a destructive operation.
// A segment must equal one of them exactly: "deleted", "undelete", "execution" and
// "dropdown" are not destructive verbs.
var destructiveVerbs = map[string]bool{
	"delete": true, "remove": true, "rm": true, "drop": true, "destroy": true,
	"purge": true, "wipe": true, "erase": true, "truncate": true, "kill": true,
	"terminate": true, "exec": true, "execute": true, "eval": true, "shell": true, "bash": true,
}

// runObjects are the segments that, right after "run", make "run_<x>" a command runner.
var runObjects = map[string]bool{"command": true, "cmd": true, "commands": true, "shell": true, "script": true, "code": true}

// destructiveSegment returns the segment that makes name destructive, or "".
func destructiveSegment(name string) string {
	segs := nameSegments(name)
	for i, s := range segs {
		if destructiveVerbs[s] {
			return s
		}
		if s == "run" && i+1 < len(segs) && runObjects[segs[i+1]] {
			return s + "_" + segs[i+1]
		}
	}
	return ""
}

// nameSegments splits a tool name into lower-case words: at every character that is not
// a letter or digit (snake_case, kebab-case, dotted, slashed), at lower-to-upper case
// changes (camelCase), before the last capital of a run of capitals followed by a
// lower-case letter (HTTPServer → http, server), and between letters and digits.
func nameSegments(name string) []string {
	var segs []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			segs = append(segs, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	runes := []rune(name)
	for i, r := range runes {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r):
				flush()
			case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(runes) && unicode.IsLower(runes[i+1]):
				flush()
			case unicode.IsDigit(prev) != unicode.IsDigit(r):
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return segs
}

// checkDestructive relies on Tools (Attempted, Unauthorized, Complete, Tools). It reads
// each raw tool leniently: a tool that is not an object or has no string name is skipped
// here (the fingerprint checks report it). The MCP default of destructiveHint is true,
// but only an explicit true counts as declared: clients differ in how they treat an
// absent hint, and a destructive-named tool that says nothing, says false, or says
// readOnlyHint true is worth a closer look.
func checkDestructive(in *input) Result {
	t := in.obs.Tools
	if t.Unauthorized {
		return unverified(credentialRequired.Key, nil)
	}
	if !listAttempted(t) || len(t.Tools) == 0 {
		if listAttempted(t) && !t.Complete {
			return unverified("partial_list", nil)
		}
		return unverified("no_tools", nil)
	}
	var missing, contradictory []Evidence
	destructive := 0
	for i, raw := range t.Tools {
		tm := parseToolMeta(raw)
		if !tm.hasName {
			continue
		}
		label := toolLabel(i, tm.name, true)
		isTrue := func(b *bool) bool { return b != nil && *b }
		if isTrue(tm.readOnly) && isTrue(tm.destructive) {
			contradictory = append(contradictory, Evidence{Tool: label, Field: "annotations", Note: "readOnlyHint and destructiveHint are both true"})
		}
		seg := destructiveSegment(tm.name)
		if seg == "" {
			continue
		}
		destructive++
		if isTrue(tm.destructive) {
			continue
		}
		note := "named like a destructive operation (" + seg + ") but destructiveHint is "
		switch {
		case tm.destructive == nil:
			note += "absent"
		default:
			note += "false"
		}
		if isTrue(tm.readOnly) {
			note += " and readOnlyHint is true"
		}
		missing = append(missing, Evidence{Tool: label, Field: "annotations.destructiveHint", Note: note})
	}
	switch {
	case len(missing) > 0:
		return observedRisk("missing_destructive_hint", params("tools", len(missing), "contradictory", len(contradictory)), capEvidence(append(missing, contradictory...))...)
	case len(contradictory) > 0:
		return observedRisk("contradictory_hints", params("tools", len(contradictory)), capEvidence(contradictory)...)
	case !t.Complete:
		return unverified("partial_list", nil)
	case destructive == 0:
		// Nothing was named like a destructive operation: only the hints' consistency
		// was judged.
		return verified("no_contradictory_hints", params("tools", len(t.Tools)))
	}
	return verified("consistent", params("destructiveTools", destructive))
}

// maxEvidence bounds the evidence of one result.
const maxEvidence = 64

func capEvidence(ev []Evidence) []Evidence {
	if len(ev) > maxEvidence {
		return ev[:maxEvidence]
	}
	return ev
}
