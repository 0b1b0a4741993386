package attest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

//go:embed schema/probe-v1.schema.json
var probeSchemaJSON []byte

// ProbeSchemaJSON returns the JSON Schema (draft 2020-12 subset) of the probe predicate.
func ProbeSchemaJSON() []byte { return bytes.Clone(probeSchemaJSON) }

var probeSchema = sync.OnceValues(func() (*Schema, error) { return CompileSchema(probeSchemaJSON) })

// PredicateSchema returns the compiled schema of a known predicate type.
func PredicateSchema(predicateType string) (*Schema, bool) {
	switch predicateType {
	case ProbePredicateType:
		s, err := probeSchema()
		if err != nil {
			// The embedded schema is compiled by the tests; failing here is a build defect.
			panic("attest: embedded probe schema does not compile: " + err.Error())
		}
		return s, true
	case ChangePredicateType:
		s, err := changeSchema()
		if err != nil {
			panic("attest: embedded change schema does not compile: " + err.Error())
		}
		return s, true
	case SupplyPredicateType:
		s, err := supplySchema()
		if err != nil {
			panic("attest: embedded supply schema does not compile: " + err.Error())
		}
		return s, true
	case KeysPredicateType:
		s, err := keysSchema()
		if err != nil {
			panic("attest: embedded keys schema does not compile: " + err.Error())
		}
		return s, true
	case DisputePredicateType:
		s, err := disputeSchema()
		if err != nil {
			panic("attest: embedded dispute schema does not compile: " + err.Error())
		}
		return s, true
	case OutcomePredicateType:
		s, err := outcomeSchema()
		if err != nil {
			panic("attest: embedded outcome schema does not compile: " + err.Error())
		}
		return s, true
	case WithdrawalPredicateType:
		s, err := withdrawalSchema()
		if err != nil {
			panic("attest: embedded withdrawal schema does not compile: " + err.Error())
		}
		return s, true
	case BaselinePredicateType:
		s, err := baselineSchema()
		if err != nil {
			panic("attest: embedded baseline schema does not compile: " + err.Error())
		}
		return s, true
	}
	return nil, false
}

// A SchemaError reports where a document violates a schema, as a JSON Pointer.
type SchemaError struct {
	Path string
	Msg  string
}

func (e *SchemaError) Error() string {
	p := e.Path
	if p == "" {
		p = "/"
	}
	return fmt.Sprintf("schema violation at %s: %s", p, e.Msg)
}

// Schema is a compiled JSON Schema. Only the keywords Probity's schemas use are
// supported: type, enum, const, properties, required, additionalProperties,
// propertyNames, minProperties, maxProperties, items, minItems, maxItems, minLength,
// maxLength, pattern, minimum, maximum, and local $ref into $defs. Compiling a schema
// that uses any other keyword fails, so a schema can never silently mean less than it
// says.
type Schema struct {
	types         []string
	enum          []any
	constVal      *any
	properties    map[string]*Schema
	propNames     []string // the keys of properties, sorted
	required      []string
	additional    *Schema // nil: allowed; see noAdditional
	noAdditional  bool
	propertyNames *Schema
	minProps      *int
	maxProps      *int
	items         *Schema
	minItems      *int
	maxItems      *int
	minLength     *int
	maxLength     *int
	pattern       *pattern
	minimum       *float64
	maximum       *float64
	ref           string
	defs          map[string]*Schema // root only
	root          *Schema
}

// pattern is a compiled pattern with a bounded memo of short strings already matched.
// Signed statements repeat the same check ids, reason keys and tokens in every round, and
// regexp matching was the largest cost of schema validation on the verifier's hot path.
type pattern struct {
	re   *regexp.Regexp
	memo sync.Map // string → bool
	size atomic.Int32
}

const (
	memoMaxLen     = 64
	memoMaxEntries = 4096
)

func (p *pattern) match(s string) bool {
	if len(s) > memoMaxLen {
		return p.re.MatchString(s)
	}
	if v, ok := p.memo.Load(s); ok {
		return v.(bool)
	}
	m := p.re.MatchString(s)
	if p.size.Load() < memoMaxEntries {
		if _, loaded := p.memo.LoadOrStore(s, m); !loaded {
			p.size.Add(1)
		}
	}
	return m
}

// CompileSchema compiles a schema document.
func CompileSchema(doc []byte) (*Schema, error) {
	if err := CheckJSON(doc); err != nil {
		return nil, err
	}
	var raw map[string]any
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, err
	}
	root := &Schema{}
	root.root = root
	if defs, ok := raw["$defs"]; ok {
		m, ok := defs.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("schema: $defs is not an object")
		}
		root.defs = map[string]*Schema{}
		for name := range m {
			root.defs[name] = &Schema{root: root}
		}
		for name, v := range m {
			if err := compileInto(root.defs[name], v, "/$defs/"+name, root); err != nil {
				return nil, err
			}
		}
	}
	if err := compileInto(root, raw, "", root); err != nil {
		return nil, err
	}
	return root, nil
}

func compileInto(s *Schema, v any, path string, root *Schema) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("schema %s: not an object", path)
	}
	s.root = root
	intOf := func(k string) (*int, error) {
		n, ok := m[k].(json.Number)
		if !ok {
			return nil, fmt.Errorf("schema %s: %s is not a number", path, k)
		}
		i, err := strconv.Atoi(n.String())
		if err != nil || i < 0 {
			return nil, fmt.Errorf("schema %s: %s is not a non-negative integer", path, k)
		}
		return &i, nil
	}
	floatOf := func(k string) (*float64, error) {
		n, ok := m[k].(json.Number)
		if !ok {
			return nil, fmt.Errorf("schema %s: %s is not a number", path, k)
		}
		f, err := n.Float64()
		if err != nil {
			return nil, fmt.Errorf("schema %s: %s: %v", path, k, err)
		}
		return &f, nil
	}
	sub := func(k string, val any) (*Schema, error) {
		c := &Schema{}
		return c, compileInto(c, val, path+"/"+k, root)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var err error
	for _, k := range keys {
		val := m[k]
		switch k {
		case "$schema", "$id", "title", "description", "$comment":
		case "$defs":
			if path != "" {
				return fmt.Errorf("schema %s: $defs only at the root", path)
			}
		case "$ref":
			ref, _ := val.(string)
			name, ok := strings.CutPrefix(ref, "#/$defs/")
			if !ok || root.defs[name] == nil {
				return fmt.Errorf("schema %s: unresolvable $ref %q", path, ref)
			}
			s.ref = name
		case "type":
			switch t := val.(type) {
			case string:
				s.types = []string{t}
			case []any:
				for _, e := range t {
					str, ok := e.(string)
					if !ok {
						return fmt.Errorf("schema %s: type list holds a non-string", path)
					}
					s.types = append(s.types, str)
				}
			default:
				return fmt.Errorf("schema %s: type is neither a string nor a list", path)
			}
			for _, t := range s.types {
				switch t {
				case "object", "array", "string", "number", "integer", "boolean", "null":
				default:
					return fmt.Errorf("schema %s: unknown type %q", path, t)
				}
			}
		case "enum":
			l, ok := val.([]any)
			if !ok || len(l) == 0 {
				return fmt.Errorf("schema %s: enum is not a non-empty list", path)
			}
			s.enum = l
		case "const":
			c := val
			s.constVal = &c
		case "properties":
			pm, ok := val.(map[string]any)
			if !ok {
				return fmt.Errorf("schema %s: properties is not an object", path)
			}
			s.properties = map[string]*Schema{}
			for name, pv := range pm {
				if s.properties[name], err = sub("properties/"+name, pv); err != nil {
					return err
				}
				s.propNames = append(s.propNames, name)
			}
			sort.Strings(s.propNames)
		case "required":
			l, ok := val.([]any)
			if !ok {
				return fmt.Errorf("schema %s: required is not a list", path)
			}
			for _, e := range l {
				str, ok := e.(string)
				if !ok {
					return fmt.Errorf("schema %s: required holds a non-string", path)
				}
				s.required = append(s.required, str)
			}
		case "additionalProperties":
			switch a := val.(type) {
			case bool:
				s.noAdditional = !a
			default:
				if s.additional, err = sub(k, a); err != nil {
					return err
				}
			}
		case "propertyNames":
			if s.propertyNames, err = sub(k, val); err != nil {
				return err
			}
		case "items":
			if s.items, err = sub(k, val); err != nil {
				return err
			}
		case "minProperties":
			s.minProps, err = intOf(k)
		case "maxProperties":
			s.maxProps, err = intOf(k)
		case "minItems":
			s.minItems, err = intOf(k)
		case "maxItems":
			s.maxItems, err = intOf(k)
		case "minLength":
			s.minLength, err = intOf(k)
		case "maxLength":
			s.maxLength, err = intOf(k)
		case "minimum":
			s.minimum, err = floatOf(k)
		case "maximum":
			s.maximum, err = floatOf(k)
		case "pattern":
			p, ok := val.(string)
			if !ok {
				return fmt.Errorf("schema %s: pattern is not a string", path)
			}
			re, err := regexp.Compile(p)
			if err != nil {
				return fmt.Errorf("schema %s: pattern: %w", path, err)
			}
			s.pattern = &pattern{re: re}
		default:
			return fmt.Errorf("schema %s: unsupported keyword %q", path, k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ValidateJSON validates a JSON document, which must pass CheckJSON, against s.
func (s *Schema) ValidateJSON(doc []byte) error {
	if err := CheckJSON(doc); err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	return s.Validate(v)
}

// Validate validates a value decoded by encoding/json with UseNumber.
func (s *Schema) Validate(v any) error {
	return s.validate(v, newJSONPath(""))
}

// jsonPath is the JSON Pointer of the value being validated, kept as a stack of
// segments and rendered only when an error reports it: building the pointer string of
// every value visited was a tenth of checking a statement.
type jsonPath struct {
	root string // the escaped pointer validation starts at
	segs []pathSeg
}

type pathSeg struct {
	name  string
	index int
	isIdx bool
}

func newJSONPath(root string) *jsonPath {
	return &jsonPath{root: root, segs: make([]pathSeg, 0, 16)}
}

func (p *jsonPath) pushName(k string) { p.segs = append(p.segs, pathSeg{name: k}) }
func (p *jsonPath) pushIndex(i int)   { p.segs = append(p.segs, pathSeg{index: i, isIdx: true}) }
func (p *jsonPath) pop()              { p.segs = p.segs[:len(p.segs)-1] }

func (p *jsonPath) String() string {
	var sb strings.Builder
	sb.WriteString(p.root)
	for _, s := range p.segs {
		sb.WriteByte('/')
		if s.isIdx {
			sb.WriteString(strconv.Itoa(s.index))
		} else {
			sb.WriteString(pointerEscape(s.name))
		}
	}
	return sb.String()
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func (s *Schema) validate(v any, path *jsonPath) error {
	if s.ref != "" {
		if err := s.root.defs[s.ref].validate(v, path); err != nil {
			return err
		}
	}
	fail := func(format string, args ...any) error {
		return &SchemaError{Path: path.String(), Msg: fmt.Sprintf(format, args...)}
	}
	t := jsonType(v)
	if len(s.types) > 0 {
		ok := false
		for _, want := range s.types {
			if want == t || (want == "number" && t == "integer") {
				ok = true
			}
		}
		if !ok {
			return fail("%s is not of type %s", t, strings.Join(s.types, " or "))
		}
	}
	if s.enum != nil {
		ok := false
		for _, e := range s.enum {
			if jsonEqual(e, v) {
				ok = true
				break
			}
		}
		if !ok {
			return fail("value is not one of the allowed values")
		}
	}
	if s.constVal != nil && !jsonEqual(*s.constVal, v) {
		return fail("value is not the required constant")
	}
	switch x := v.(type) {
	case string:
		n := utf8.RuneCountInString(x)
		if s.minLength != nil && n < *s.minLength {
			return fail("string shorter than %d characters", *s.minLength)
		}
		if s.maxLength != nil && n > *s.maxLength {
			return fail("string longer than %d characters", *s.maxLength)
		}
		if s.pattern != nil && !s.pattern.match(x) {
			return fail("string does not match the pattern %s", s.pattern.re)
		}
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return fail("number out of range")
		}
		if s.minimum != nil && f < *s.minimum {
			return fail("number below the minimum %v", *s.minimum)
		}
		if s.maximum != nil && f > *s.maximum {
			return fail("number above the maximum %v", *s.maximum)
		}
	case []any:
		if s.minItems != nil && len(x) < *s.minItems {
			return fail("fewer than %d items", *s.minItems)
		}
		if s.maxItems != nil && len(x) > *s.maxItems {
			return fail("more than %d items", *s.maxItems)
		}
		if s.items != nil {
			for i, e := range x {
				path.pushIndex(i)
				if err := s.items.validate(e, path); err != nil {
					return err
				}
				path.pop()
			}
		}
	case map[string]any:
		if s.minProps != nil && len(x) < *s.minProps {
			return fail("fewer than %d members", *s.minProps)
		}
		if s.maxProps != nil && len(x) > *s.maxProps {
			return fail("more than %d members", *s.maxProps)
		}
		for _, r := range s.required {
			if _, ok := x[r]; !ok {
				return fail("required member %q is missing", r)
			}
		}
		// Known members in a fixed order, then the rest sorted, so that the same
		// document always reports the same first error.
		known := 0
		for _, k := range s.propNames {
			v, ok := x[k]
			if !ok {
				continue
			}
			known++
			path.pushName(k)
			if s.propertyNames != nil {
				if err := s.propertyNames.validate(k, path); err != nil {
					return err
				}
			}
			if err := s.properties[k].validate(v, path); err != nil {
				return err
			}
			path.pop()
		}
		if known == len(x) {
			break
		}
		extra := make([]string, 0, len(x)-known)
		for k := range x {
			if _, ok := s.properties[k]; !ok {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			path.pushName(k)
			if s.propertyNames != nil {
				if err := s.propertyNames.validate(k, path); err != nil {
					return err
				}
			}
			if s.noAdditional {
				return &SchemaError{Path: path.String(), Msg: "member is not allowed"}
			}
			if s.additional != nil {
				if err := s.additional.validate(x[k], path); err != nil {
					return err
				}
			}
			path.pop()
		}
	}
	return nil
}

// pointerEscape escapes a member name for a JSON Pointer in an error message, bounded
// and with non-ASCII and control characters quoted.
func pointerEscape(k string) string {
	k = strings.ReplaceAll(k, "~", "~0")
	k = strings.ReplaceAll(k, "/", "~1")
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] >= 0x7f || k[i] == '"' || k[i] == '\\' {
			q := quoteForError(k)
			return q[1 : len(q)-1]
		}
	}
	if len(k) > 64 {
		k = k[:64] + "…"
	}
	return k
}

func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false // enum/const of arrays or objects is not used by Probity's schemas
}
