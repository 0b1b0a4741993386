package targets

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestOneServerPerDocument: one server.json that names a repository, remotes and
// packages is one server with all of them as parts, not one target each (issue 14).
func TestOneServerPerDocument(t *testing.T) {
	ts, errs := parseString(t, readFixture(t, "good_server_remotes.json"))
	if len(ts) != 1 || len(errs) != 1 || !errors.Is(errs[0], errTemplated) {
		t.Fatalf("%d servers, errors %v", len(ts), errs)
	}
	s := ts[0]
	want := []Part{
		{Kind: "remote", Locator: "https://mcp.tidewater.example.com/v2/mcp", Transport: "streamable-http"},
		{Kind: "remote", Locator: "https://mcp.tidewater.example.com/v2/sse", Transport: "sse"},
		{Kind: "github", Locator: "https://github.com/tidewater-labs/forecast-mcp"},
	}
	if !reflect.DeepEqual(s.Parts, want) {
		t.Errorf("parts %+v, want %+v", s.Parts, want)
	}
	if s.ServerName != "com.example.tidewater/forecast" || s.Title != "Tidewater Forecast" || s.Name != "Tidewater Forecast" ||
		s.Description != "Marine weather forecasts and tide tables for coastal stations" || s.Version != "2.3.0" ||
		s.Website != "https://tidewater.example.com/docs/mcp" || s.Source != "registry" || s.Line != 1 ||
		s.Kind != "remote" || s.Locator != want[0].Locator || s.SlugBase != "mcp-tidewater-example-com-v2-mcp" {
		t.Errorf("listing %+v", s)
	}
	// The document is kept whole (headers, variables, repository id), compact.
	var compacted bytes.Buffer
	if err := json.Compact(&compacted, []byte(readFixture(t, "good_server_remotes.json"))); err != nil {
		t.Fatal(err)
	}
	var got, orig any
	if err := json.Unmarshal(s.Document, &got); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(compacted.Bytes(), &orig)
	if !reflect.DeepEqual(got, orig) || bytes.ContainsAny(s.Document, "\n") {
		t.Errorf("document %s", s.Document)
	}
}

// TestPrimaryPart: a server's first streamable-http remote, else its first remote,
// else its first npm or PyPI package, else its repository; the others keep their order.
func TestPrimaryPart(t *testing.T) {
	repo := `"repository":{"url":"https://github.com/acme/w","source":"github"}`
	oci := `{"registryType":"oci","identifier":"ghcr.io/acme/w:1","version":"1"}`
	npm := `{"registryType":"npm","identifier":"w","version":"1.2.0"}`
	pypi := `{"registryType":"pypi","identifier":"w-mcp"}`
	mcpb := `{"registryType":"mcpb","identifier":"https://github.com/acme/w/releases/download/v1/w.mcpb","fileSha256":"ab"}`
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"sse listed first", `{"name":"a/w","remotes":[{"type":"sse","url":"https://w.example.com/sse"},{"type":"streamable-http","url":"https://w.example.com/mcp"}],` + repo + `}`,
			[]string{"remote https://w.example.com/mcp", "remote https://w.example.com/sse", "github https://github.com/acme/w"}},
		{"remote without a type", `{"name":"a/w","packages":[` + npm + `],"remotes":[{"url":"https://w.example.com/sse"}]}`,
			[]string{"remote https://w.example.com/sse", "npm pkg:npm/w"}},
		{"package before repository", `{"name":"a/w",` + repo + `,"packages":[` + oci + `,` + pypi + `,` + npm + `]}`,
			[]string{"pypi pkg:pypi/w-mcp", "oci ghcr.io/acme/w:1", "npm pkg:npm/w", "github https://github.com/acme/w"}},
		{"repository only checked part", `{"name":"a/w",` + repo + `,"packages":[` + oci + `,` + mcpb + `]}`,
			[]string{"github https://github.com/acme/w", "oci ghcr.io/acme/w:1", "mcpb https://github.com/acme/w/releases/download/v1/w.mcpb"}},
		{"a part listed twice", `{"name":"a/w","packages":[` + npm + `,` + npm + `]}`, []string{"npm pkg:npm/w"}},
	} {
		s, perrs, err := ParseServerJSON([]byte(tc.doc))
		if err != nil || len(perrs) != 0 {
			t.Errorf("%s: %v %v", tc.name, perrs, err)
			continue
		}
		var got []string
		for _, p := range s.Parts {
			got = append(got, p.Kind+" "+p.Locator)
		}
		if !reflect.DeepEqual(got, tc.want) || s.Kind+" "+s.Locator != tc.want[0] || s.SlugBase != Slug(s.Kind, s.Locator) {
			t.Errorf("%s: %q (%s %s), want %q", tc.name, got, s.Kind, s.Locator, tc.want)
		}
	}
	s, _, _ := ParseServerJSON([]byte(`{"name":"a/w","packages":[` + npm + `,` + oci + `]}`))
	if s.Parts[0].Version != "1.2.0" || s.Parts[1].Version != "1" {
		t.Errorf("versions %+v", s.Parts)
	}
}

// TestParseServerJSONRefusals: what ParseServerJSON refuses, and the parts it leaves
// out with their reasons.
func TestParseServerJSONRefusals(t *testing.T) {
	for _, tc := range []struct {
		doc string
		err error
	}{
		{`[]`, errNotServerJSON},
		{`{"name":"a/w","remotes":"x"}`, errNotServerJSON},
		{`{"name":"a/w","packages":[{"registryType":"oci","identifier":"x"}]}`, errNothing},
		{`{"name":"a/w","remotes":[{"url":"https://{h}/mcp"}]}`, errNothing},
		{`{"name":"a w","remotes":[{"url":"https://w.example.com/mcp"}]}`, errNotServerJSON},
		{`{"name":"a/w","remotes":[` + strings.Repeat(`{"url":"https://w.example.com/mcp"},`, MaxParts) + `{"url":"https://w.example.com/mcp"}]}`, errNotServerJSON},
	} {
		if s, _, err := ParseServerJSON([]byte(tc.doc)); !errors.Is(err, tc.err) || s.Parts != nil {
			t.Errorf("%.60s: %v, want %v", tc.doc, err, tc.err)
		}
	}
	s, perrs, err := ParseServerJSON([]byte(`{"name":"a/w","remotes":[{"url":"https://w.example.com/mcp?token=sk-1"},{"url":"https://w.example.com/mcp"}],` +
		`"packages":[{"registryType":"mcpb","identifier":"https://x.example/w.mcpb?sig=abc"},{"registryType":"npm","identifier":"W"}]}`))
	if err != nil || len(s.Parts) != 1 || len(perrs) != 3 || !errors.Is(perrs[0], errCredential) || !errors.Is(perrs[1], errCredential) || !errors.Is(perrs[2], errBadName) {
		t.Fatalf("%+v %v %v", s, perrs, err)
	}
	for _, pe := range perrs {
		if strings.Contains(pe.Error(), "sk-1") || strings.Contains(pe.Error(), "abc") {
			t.Errorf("not redacted: %v", pe)
		}
	}
}

// TestRegistryExamples: the registry's own valid examples each read as one server.
func TestRegistryExamples(t *testing.T) {
	for name, want := range map[string]string{
		"with-remote.json":  "github https://github.com/modelcontextprotocol/servers", // the remote is templated
		"with-package.json": "npm pkg:npm/%40modelcontextprotocol/server-weather",
	} {
		b, err := os.ReadFile(filepath.Join("..", "registry", "testdata", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := ParseServerJSON(b)
		if err != nil || s.Kind+" "+s.Locator != want {
			t.Errorf("%s: %+v %v", name, s, err)
		}
	}
}

// TestLatestVersionWins: in a list response, a name's isLatest version is the server
// read, wherever it stands; its status and the registry's metadata are kept.
func TestLatestVersionWins(t *testing.T) {
	item := func(version, url string, latest bool, status string) string {
		return `{"server":{"name":"com.example/w","version":"` + version + `","remotes":[{"url":"` + url + `"}]},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"` + status + `","isLatest":` + map[bool]string{true: "true", false: "false"}[latest] + `}}}`
	}
	in := `{"servers":[` + item("1.0.0", "https://old.example.com/mcp", false, "active") + ",\n" + item("2.0.0", "https://new.example.com/mcp", true, "deprecated") + `]}`
	ts, errs := parseString(t, in)
	if len(ts) != 1 || len(errs) != 0 {
		t.Fatalf("%+v %v", ts, errs)
	}
	s := ts[0]
	if s.Version != "2.0.0" || s.Locator != "https://new.example.com/mcp" || !s.Latest || s.Status != "deprecated" || s.Line != 2 ||
		string(s.RegistryMeta) != `{"status":"deprecated","isLatest":true}` {
		t.Errorf("%+v %s", s, s.RegistryMeta)
	}
	// The older version's part is free again for a later server.
	in = strings.TrimSuffix(in, "]}") + ",\n" + `{"server":{"name":"com.example/x","version":"1","remotes":[{"url":"https://old.example.com/mcp"}]}}]}`
	if ts, errs = parseString(t, in); len(ts) != 2 || len(errs) != 0 || ts[1].Locator != "https://old.example.com/mcp" {
		t.Errorf("%+v %v", ts, errs)
	}
}

// TestAllPartsTaken: a document whose every checked part an earlier server of the
// input has is reported, not merged into that server.
func TestAllPartsTaken(t *testing.T) {
	ts, errs := parseString(t, `{"name":"a/w","remotes":[{"url":"https://w.example.com/mcp"}]}`+"\n"+
		`{"name":"a/fork","remotes":[{"url":"https://w.example.com/mcp"}],"packages":[{"registryType":"oci","identifier":"x"}]}`)
	if len(ts) != 1 || len(errs) != 1 || errs[0].Line != 2 || !errors.Is(errs[0], errAllPartsTaken) {
		t.Errorf("%+v %v", ts, errs)
	}
}

// FuzzParseServerJSON holds ParseServerJSON to its contract on any input: a server with
// a checked primary part first, each part once, a slug of its primary part, a compact
// JSON document; or an error and the zero Server.
func FuzzParseServerJSON(f *testing.F) {
	for _, name := range []string{"good_server_remotes.json", "good_server_packages.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"name":"a/w","packages":[{"registryType":"oci","identifier":"x"},{"registryType":"npm","identifier":"w"}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, perrs, err := ParseServerJSON(in)
		for _, pe := range perrs {
			if pe.Err == nil || pe.Text == "" {
				t.Fatalf("bad part error %+v", pe)
			}
		}
		if err != nil {
			if s.Parts != nil || s.Document != nil {
				t.Fatalf("%v with %+v", err, s)
			}
			return
		}
		if len(s.Parts) == 0 || !checked(s.Parts[0].Kind) || s.Kind != s.Parts[0].Kind || s.Locator != s.Parts[0].Locator ||
			s.SlugBase != Slug(s.Kind, s.Locator) || !json.Valid(s.Document) || s.Source != "registry" || s.Name == "" {
			t.Fatalf("bad server %+v", s)
		}
		seen := map[targetKey]bool{}
		for _, p := range s.Parts {
			if p.Locator == "" || seen[targetKey{p.Kind, p.Locator}] {
				t.Fatalf("bad or repeated part %+v", p)
			}
			seen[targetKey{p.Kind, p.Locator}] = true
		}
	})
}
