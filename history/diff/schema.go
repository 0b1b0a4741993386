package diff

import (
	"slices"
	"strconv"
	"strings"
)

// typeSet is the declared type of a schema: sorted, distinct type names; declared is
// false when the schema declares none (it accepts anything).
type typeSet struct {
	names    []string
	declared bool
}

// declaredType returns the declared type of schema s (package doc, Potentially breaking).
func declaredType(s *value, depth int) typeSet {
	s = s.object()
	if s == nil || depth > MaxParamDepth {
		return typeSet{}
	}
	if t := s.get("type"); t != nil {
		switch t.kind {
		case '"':
			return typeSet{names: []string{t.str}, declared: true}
		case '[':
			names := make([]string, 0, len(t.elems))
			for _, e := range t.elems {
				names = append(names, typeName(e))
			}
			slices.Sort(names)
			return typeSet{names: slices.Compact(names), declared: true}
		}
		return typeSet{names: []string{t.raw}, declared: true}
	}
	branches := s.get("anyOf")
	if branches == nil {
		branches = s.get("oneOf")
	}
	if branches == nil || branches.kind != '[' || len(branches.elems) == 0 {
		return typeSet{}
	}
	var names []string
	for _, b := range branches.elems {
		bt := declaredType(b, depth+1)
		if !bt.declared {
			return typeSet{}
		}
		names = append(names, bt.names...)
	}
	slices.Sort(names)
	return typeSet{names: slices.Compact(names), declared: true}
}

// typeName is an element of a "type" array: a string's value, anything else its JSON.
func typeName(v *value) string {
	if v.kind == '"' {
		return v.str
	}
	return v.raw
}

func (t typeSet) equal(u typeSet) bool {
	return t.declared == u.declared && slices.Equal(t.names, u.names)
}

// within reports whether every value t accepts, u accepts too ("integer" is part of
// "number").
func (t typeSet) within(u typeSet) bool {
	if !u.declared {
		return true
	}
	if !t.declared {
		return false
	}
	for _, n := range t.names {
		if !slices.Contains(u.names, n) && !(n == "integer" && slices.Contains(u.names, "number")) {
			return false
		}
	}
	return true
}

// String renders the type names sorted, "null" last, joined with "|"; "" for no
// declared type.
func (t typeSet) String() string {
	if !t.declared {
		return ""
	}
	names := slices.Clone(t.names)
	if i := slices.Index(names, "null"); i >= 0 {
		names = append(slices.Delete(names, i, i+1), "null")
	}
	return strings.Join(names, "|")
}

// paramSource returns the schema a parameter's properties, required list and items are
// read from: s itself, or the one branch of its anyOf (or oneOf) other than
// {"type":"null"} when s has no "type", "properties" or "items" (package doc,
// Parameters).
func paramSource(s *value) *value {
	s = s.object()
	if s == nil || s.get("type") != nil || s.get("properties") != nil || s.get("items") != nil {
		return s
	}
	branches := s.get("anyOf")
	if branches == nil {
		branches = s.get("oneOf")
	}
	if branches == nil || branches.kind != '[' {
		return s
	}
	var only *value
	for _, b := range branches.elems {
		if isNullSchema(b) {
			continue
		}
		if only != nil {
			return s
		}
		only = b
	}
	if only.object() == nil {
		return s
	}
	return only
}

// isNullSchema reports whether s is exactly {"type":"null"}.
func isNullSchema(s *value) bool {
	return s.kind == '{' && len(s.mems) == 1 && s.mems[0].key == "type" && s.mems[0].val.kind == '"' && s.mems[0].val.str == "null"
}

// Schema keywords whose values are schemas, maps of schemas or arrays of schemas.
var (
	subschemaKeys = map[string]bool{
		"additionalProperties": true, "not": true, "if": true, "then": true, "else": true,
		"contains": true, "propertyNames": true, "unevaluatedItems": true,
		"unevaluatedProperties": true, "additionalItems": true, "contentSchema": true,
	}
	schemaMapKeys = map[string]bool{
		"properties": true, "patternProperties": true, "$defs": true, "definitions": true,
		"dependentSchemas": true,
	}
	// "items" is a schema, or in older drafts an array of schemas.
	schemaArrayKeys = map[string]bool{"anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true}
)

// schemaRole says how normalize treats a schema: a parameter's own description and title
// are left out (they are compared as parameter descriptions), and the schemas its
// parameters are read from pass that on.
type schemaRole uint8

const (
	roleOther schemaRole = iota
	roleRoot             // an inputSchema
	roleParam            // a parameter or an items schema in the parameter tree
)

// normalizer writes the form in which schemas are compared (package doc, What is
// compared): canonical JSON but for "type" and "required" arrays as sorted sets, dates
// masked in descriptions and titles, and parameter descriptions left out.
type normalizer struct {
	m       *masker
	classes classes
	buf     []byte
}

func (n *normalizer) schema(s *value, role schemaRole) {
	if s.kind != '{' {
		n.buf = append(n.buf, s.raw...)
		return
	}
	if role == roleOther {
		n.object(s, false, false, nil)
		return
	}
	// The schema the parameters are read from: s itself or the one non-null branch.
	if src := paramSource(s); src != s {
		n.object(s, role == roleParam, false, src)
	} else {
		n.object(s, role == roleParam, true, nil)
	}
}

// object writes schema s. paramText says its own description and title are a
// parameter's, left out here; params says its properties and items are parameters;
// branch is the element of its anyOf or oneOf whose properties and items are, if any.
func (n *normalizer) object(s *value, paramText, params bool, branch *value) {
	childRole := roleOther
	if params {
		childRole = roleParam
	}
	n.buf = append(n.buf, '{')
	first := true
	for _, mb := range s.mems {
		if paramText && (mb.key == "description" || mb.key == "title") {
			continue // compared apart, as a parameter description
		}
		if !first {
			n.buf = append(n.buf, ',')
		}
		first = false
		n.buf = strconv.AppendQuote(n.buf, mb.key)
		n.buf = append(n.buf, ':')
		v := mb.val
		switch {
		case (mb.key == "description" || mb.key == "title") && v.kind == '"':
			n.buf = strconv.AppendQuote(n.buf, n.m.mask(v.str, n.classes))
		case (mb.key == "type" || mb.key == "required") && v.kind == '[':
			n.stringSet(v)
		case schemaMapKeys[mb.key] && v.kind == '{':
			role := roleOther
			if mb.key == "properties" {
				role = childRole
			}
			n.buf = append(n.buf, '{')
			for j, pm := range v.mems {
				if j > 0 {
					n.buf = append(n.buf, ',')
				}
				n.buf = strconv.AppendQuote(n.buf, pm.key)
				n.buf = append(n.buf, ':')
				n.schema(pm.val, role)
			}
			n.buf = append(n.buf, '}')
		case mb.key == "items" && v.kind == '{':
			n.schema(v, childRole)
		case (schemaArrayKeys[mb.key] || mb.key == "items") && v.kind == '[':
			n.buf = append(n.buf, '[')
			for j, e := range v.elems {
				if j > 0 {
					n.buf = append(n.buf, ',')
				}
				if e == branch {
					// Its own texts are schema text; its properties are parameters.
					n.object(e, false, true, nil)
				} else {
					n.schema(e, roleOther)
				}
			}
			n.buf = append(n.buf, ']')
		case subschemaKeys[mb.key]:
			n.schema(v, roleOther)
		default:
			n.buf = append(n.buf, v.raw...)
		}
	}
	n.buf = append(n.buf, '}')
}

// stringSet writes an array of strings as a sorted set; an array holding anything else
// as it is.
func (n *normalizer) stringSet(v *value) {
	names := make([]string, 0, len(v.elems))
	for _, e := range v.elems {
		if e.kind != '"' {
			n.buf = append(n.buf, v.raw...)
			return
		}
		names = append(names, e.str)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	n.buf = append(n.buf, '[')
	for i, s := range names {
		if i > 0 {
			n.buf = append(n.buf, ',')
		}
		n.buf = strconv.AppendQuote(n.buf, s)
	}
	n.buf = append(n.buf, ']')
}
