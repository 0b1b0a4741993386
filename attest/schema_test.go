package attest

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// schemaNode resolves a local $ref and returns the schema object.
func schemaNode(t *testing.T, root, node map[string]any) map[string]any {
	t.Helper()
	if ref, ok := node["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		return root["$defs"].(map[string]any)[name].(map[string]any)
	}
	return node
}

// TestSchemaMatchesTypes proves the JSON Schema and the Go types agree: every object in
// the schema lists exactly the JSON members of its Go struct, requires exactly the
// members without omitempty, forbids additional members, and gives each a JSON type the
// Go type produces; the enums equal the Go constant lists.
func TestSchemaMatchesTypes(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(probeSchemaJSON, &root); err != nil {
		t.Fatal(err)
	}
	compare(t, root, root, reflect.TypeFor[ProbePredicate](), "")

	props := root["properties"].(map[string]any)
	enum := func(node map[string]any) []string {
		var out []string
		for _, v := range schemaNode(t, root, node)["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	var cov, st []string
	for _, c := range Coverages {
		cov = append(cov, string(c))
	}
	for _, s := range Statuses {
		st = append(st, string(s))
	}
	if got := enum(props["coverage"].(map[string]any)); !slices.Equal(got, cov) {
		t.Errorf("coverage enum %v, Go constants %v", got, cov)
	}
	checkItem := props["checks"].(map[string]any)["items"].(map[string]any)
	if got := enum(checkItem["properties"].(map[string]any)["status"].(map[string]any)); !slices.Equal(got, st) {
		t.Errorf("status enum %v, Go constants %v", got, st)
	}
	target := props["target"].(map[string]any)["properties"].(map[string]any)
	if got := enum(target["kind"].(map[string]any)); !slices.Equal(got, TargetKinds) {
		t.Errorf("target kind enum %v, Go constants %v", got, TargetKinds)
	}
	if got := props["toolCount"].(map[string]any)["maximum"].(float64); got != MaxTools {
		t.Errorf("toolCount maximum %v, MaxTools %d", got, MaxTools)
	}
}

func compare(t *testing.T, root, node map[string]any, typ reflect.Type, path string) {
	t.Helper()
	node = schemaNode(t, root, node)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.Struct:
		if node["type"] != "object" {
			t.Errorf("%s: Go struct %s, schema type %v", path, typ, node["type"])
			return
		}
		if node["additionalProperties"] != false {
			t.Errorf("%s: schema allows additional members", path)
		}
		props, _ := node["properties"].(map[string]any)
		var goNames, goRequired []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" || name == "" {
				t.Fatalf("%s.%s: every field needs a json name", typ, f.Name)
			}
			goNames = append(goNames, name)
			if !strings.Contains(opts, "omitempty") {
				goRequired = append(goRequired, name)
			}
			sub, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("%s/%s: Go field %s.%s has no schema property", path, name, typ, f.Name)
				continue
			}
			compare(t, root, sub, f.Type, path+"/"+name)
		}
		var schemaNames, schemaRequired []string
		for k := range props {
			schemaNames = append(schemaNames, k)
		}
		required, _ := node["required"].([]any) // absent: nothing required
		for _, r := range required {
			schemaRequired = append(schemaRequired, r.(string))
		}
		for _, l := range [][]string{goNames, goRequired, schemaNames, schemaRequired} {
			sort.Strings(l)
		}
		if !slices.Equal(goNames, schemaNames) {
			t.Errorf("%s: Go members %v, schema properties %v", path, goNames, schemaNames)
		}
		if !slices.Equal(goRequired, schemaRequired) {
			t.Errorf("%s: Go required (no omitempty) %v, schema required %v", path, goRequired, schemaRequired)
		}
	case reflect.Slice:
		if node["type"] != "array" {
			t.Errorf("%s: Go slice, schema type %v", path, node["type"])
			return
		}
		compare(t, root, node["items"].(map[string]any), typ.Elem(), path+"/items")
	case reflect.Map:
		if node["type"] != "object" || node["additionalProperties"] == nil || node["maxProperties"] == nil {
			t.Errorf("%s: Go map needs a bounded schema object with additionalProperties", path)
		}
	case reflect.String:
		if node["type"] != "string" && node["enum"] == nil {
			t.Errorf("%s: Go string, schema type %v", path, node["type"])
		}
	case reflect.Bool:
		if node["type"] != "boolean" {
			t.Errorf("%s: Go bool, schema type %v", path, node["type"])
		}
	case reflect.Int, reflect.Int64:
		if node["type"] != "integer" || node["minimum"] == nil || node["maximum"] == nil {
			t.Errorf("%s: Go integer needs a bounded schema integer, got %v", path, node)
		}
	default:
		t.Errorf("%s: Go kind %s has no schema mapping", path, typ.Kind())
	}
}

func TestCompileSchemaRejectsUnsupportedKeywords(t *testing.T) {
	for _, doc := range []string{
		`{"type":"object","if":{"type":"string"}}`,
		`{"oneOf":[{"type":"string"}]}`,
		`{"type":"strnig"}`,
		`{"$ref":"#/$defs/missing"}`,
		`{"pattern":"("}`,
		`{"maxLength":-1}`,
	} {
		if _, err := CompileSchema([]byte(doc)); err == nil {
			t.Errorf("CompileSchema(%s) succeeded", doc)
		}
	}
}

func TestSchemaValidate(t *testing.T) {
	s, err := CompileSchema([]byte(`{"type":"object","additionalProperties":false,"required":["n"],"properties":{
		"n":{"type":"integer","minimum":0,"maximum":10},
		"s":{"type":"string","maxLength":3,"pattern":"^[a-z]*$"},
		"e":{"enum":["a","b"]},
		"l":{"type":"array","maxItems":2,"items":{"type":"number"}},
		"p":{"type":"object","maxProperties":1,"propertyNames":{"pattern":"^[a-z]+$"},"additionalProperties":{"type":["number","string"],"maxLength":2}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for doc, wantPath := range map[string]string{
		`{"n":1}`:   "",
		`{"n":1.0}`: "",
		`{"n":1,"s":"abc","e":"b","l":[1.5,2],"p":{"x":"ab"}}`: "",
		`{}`:                        "",
		`{"n":1.5}`:                 "/n",
		`{"n":11}`:                  "/n",
		`{"n":-1}`:                  "/n",
		`{"n":"1"}`:                 "/n",
		`{"n":1,"s":"abcd"}`:        "/s",
		`{"n":1,"s":"ABC"}`:         "/s",
		`{"n":1,"e":"c"}`:           "/e",
		`{"n":1,"l":[1,2,3]}`:       "/l",
		`{"n":1,"l":["x"]}`:         "/l/0",
		`{"n":1,"x":true}`:          "/x",
		`{"n":1,"p":{"x":1,"y":2}}`: "/p",
		`{"n":1,"p":{"X":1}}`:       "/p/X",
		`{"n":1,"p":{"x":"abc"}}`:   "/p/x",
		`{"n":1,"p":{"x":true}}`:    "/p/x",
	} {
		err := s.ValidateJSON([]byte(doc))
		var se *SchemaError
		switch {
		case wantPath == "" && doc == `{}`:
			if !errors.As(err, &se) || se.Path != "" {
				t.Errorf("%s: want a violation at the root, got %v", doc, err)
			}
		case wantPath == "":
			if err != nil {
				t.Errorf("%s: %v", doc, err)
			}
		default:
			if !errors.As(err, &se) || se.Path != wantPath {
				t.Errorf("%s: want a violation at %s, got %v", doc, wantPath, err)
			}
		}
	}
}

// TestTypesDeclareCanonicalOrder checks that encoding/json already writes a realistic
// statement in canonical member order, which Marshal's speed relies on.
func TestTypesDeclareCanonicalOrder(t *testing.T) {
	st := realisticStatement(Fingerprints{Toolset: Digest(nil), Schema: Digest(nil), Surface: Digest(nil), Instructions: Digest(nil)})
	st.Predicate.(*ProbePredicate).Target.Package = "pkg:npm/x"
	st.Predicate.(*ProbePredicate).Target.Version = "1.0.0"
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(canon) {
		t.Errorf("encoding/json output is not in canonical order:\n%s\n%s", raw, canon)
	}
}
