package supply

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestNormalizeRepositoryURL(t *testing.T) {
	tests := []struct{ in, want string }{
		// GitHub, every form npm's repository field takes.
		{"github:Owner/Repo", "https://github.com/owner/repo"},
		{"github:owner/repo#main", "https://github.com/owner/repo"},
		{"owner/repo", "https://github.com/owner/repo"},
		{"expressjs/express", "https://github.com/expressjs/express"},
		{"git+https://github.com/o/r.git", "https://github.com/o/r"},
		{"git://github.com/o/r", "https://github.com/o/r"},
		{"git://github.com/hapijs/hoek", "https://github.com/hapijs/hoek"},
		{"git+ssh://git@github.com/o/r.git", "https://github.com/o/r"},
		{"ssh://git@github.com:22/o/r.git", "https://github.com/o/r"},
		{"git@github.com:o/r.git", "https://github.com/o/r"},
		{"git@github.com:stevemao/left-pad.git", "https://github.com/stevemao/left-pad"},
		{"https://github.com/o/r/tree/main/packages/x", "https://github.com/o/r"},
		{"https://github.com/modelcontextprotocol/servers/tree/main/src/fetch", "https://github.com/modelcontextprotocol/servers"},
		{"http://github.com/Marak/colors.js.git", "https://github.com/marak/colors.js"},
		{"https://www.github.com/O/R/", "https://github.com/o/r"},
		{"https://user:secret@github.com/o/r.git", "https://github.com/o/r"},
		{"github.com/o/r", "https://github.com/o/r"},
		{"https://github.com/o/r?tab=readme", "https://github.com/o/r"},
		{"GIT+HTTPS://GITHUB.COM/O/R.GIT", "https://github.com/o/r"},
		// Elsewhere: left as an https URL.
		{"gitlab:group/repo", "https://gitlab.com/group/repo"},
		{"gitlab:probity-group/sub-group/mcp-server", "https://gitlab.com/probity-group/sub-group/mcp-server"},
		{"bitbucket:team/repo", "https://bitbucket.org/team/repo"},
		{"gist:11081aaa281", "https://gist.github.com/11081aaa281"},
		{"git+https://gitlab.com/group/sub/repo.git", "https://gitlab.com/group/sub/repo"},
		{"git@gitlab.com:group/repo.git", "https://gitlab.com/group/repo"},
		{"https://git.example.org:8443/team/repo.git", "https://git.example.org:8443/team/repo"},
		{"ssh://git@git.example.org:2222/team/repo.git", "https://git.example.org/team/repo"},
		// Not a repository.
		{"", ""},
		{"UNKNOWN", ""},
		{".", ""},
		{"https://github.com/owner", ""},
		{"https://github.com/orgs/modelcontextprotocol", ""},
		{"https://github.com/-bad/repo", ""},
		{"https://github.com/o/..", ""},
		{"file:../local", ""},
		{"javascript:alert(1)", ""},
		{"ftp://github.com/o/r", ""},
		{"https://example.com", ""},
		{"C:\\code\\repo", ""},
		{"some text with spaces", ""},
	}
	for _, tt := range tests {
		if got := NormalizeRepositoryURL(tt.in); got != tt.want {
			t.Errorf("NormalizeRepositoryURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if o, r, ok := ParseGitHubURL("git@github.com:Owner/Repo.git"); !ok || o != "owner" || r != "repo" {
		t.Errorf("ParseGitHubURL = %q, %q, %v", o, r, ok)
	}
	if _, _, ok := ParseGitHubURL("gitlab:a/b"); ok {
		t.Error("ParseGitHubURL accepted GitLab")
	}
}

func TestNPMRecordedPackages(t *testing.T) {
	srv := startFixtureServer(t)
	c, _ := testClient(t, ClientConfig{})
	n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
	tests := []struct {
		name        string
		latest      string
		license     string
		repo        string
		maintainers []string
		published   string
	}{
		{"@modelcontextprotocol/server-filesystem", "2026.8.31", "SEE LICENSE IN LICENSE", "https://github.com/modelcontextprotocol/servers", nil, "2026-09-01T01:08:17.648Z"},
		{"@modelcontextprotocol/sdk", "1.32.2", "MIT", "https://github.com/modelcontextprotocol/typescript-sdk", nil, "2026-10-23T18:11:38Z"},
		{"express", "5.3.0", "MIT", "https://github.com/expressjs/express", nil, "2026-10-09T12:56:54Z"},
		{"left-pad", "1.3.0", "WTFPL", "https://github.com/stevemao/left-pad", []string{"Cameron Westland"}, "2024-09-05T00:40:51.026Z"},
		{"node-uuid", "1.4.8", "MIT", "https://github.com/broofa/node-uuid", []string{"broofa"}, "2024-09-24T02:01:54.181Z"},
		{"zlib", "1.0.5", "BSD", "https://github.com/kkaefer/node-zlib", nil, "2024-11-23T04:03:52.221Z"},
		{"sax", "0.5.1", "MIT", "https://github.com/isaacs/sax-js", nil, "2025-10-05T16:10:22.892Z"},
		{"hoek", "6.1.3", "BSD-3-Clause", "https://github.com/hapijs/hoek", nil, "2024-12-02T18:35:47.322Z"},
		{"json-schema", "0.4.0", "(AFL-2.1 OR BSD-3-Clause)", "https://github.com/kriszyp/json-schema", []string{"Kris Zyp"}, "2024-02-23T22:25:27.268Z"},
		{"colors", "1.4.0", "MIT", "https://github.com/marak/colors.js", nil, "2024-03-19T21:57:03.743Z"},
		{"tunnel-agent", "0.6.0", "Apache-2.0", "https://github.com/mikeal/tunnel-agent", nil, "2024-02-23T22:24:41.277Z"},
		{"@probity-fixtures/attested", "1.2.0", "MIT", "https://github.com/probity-fixtures/attested-server", []string{"probity-bot", "alice-fixture"}, "2026-10-14T16:42:31.517Z"},
		{"probity-fixture-gitlab", "2.0.0", "MPL-2.0", "https://gitlab.com/probity-group/sub-group/mcp-server", []string{"gitlab-fixture"}, "2026-02-02T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := n.Package(context.Background(), tt.name)
			f := got.Facts
			if f.Source.Outcome != SourceOK {
				t.Fatalf("source %+v", f.Source)
			}
			want, _ := time.Parse(time.RFC3339Nano, tt.published)
			if f.Latest != tt.latest || f.License != tt.license || f.RepositoryURL != tt.repo || !slices.Equal(f.Maintainers, tt.maintainers) || !f.PublishedAt.Equal(want) {
				t.Errorf("got latest %q license %q repo %q maintainers %q published %v", f.Latest, f.License, f.RepositoryURL, f.Maintainers, f.PublishedAt)
			}
			if f.Ecosystem != "npm" || f.Name != tt.name || !strings.HasPrefix(got.Integrity, "sha512-") {
				t.Errorf("ecosystem %q name %q integrity %q", f.Ecosystem, f.Name, got.Integrity)
			}
			if !strings.HasPrefix(f.Source.URL, srv.base("npm")+"/") || f.Source.FetchedAt.IsZero() {
				t.Errorf("source %+v", f.Source)
			}
		})
	}
	if misses := srv.misses(); len(misses) > 0 {
		t.Errorf("unmatched requests: %q", misses)
	}
}

func TestNPMNoData(t *testing.T) {
	srv := startFixtureServer(t)
	c, _ := testClient(t, ClientConfig{})
	n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
	notFound := n.Package(context.Background(), "this-package-does-not-exist-probity-xyz").Facts
	if notFound.Source.Outcome != SourceNoData || notFound.Unpublished {
		t.Errorf("404: %+v", notFound)
	}
	gone := n.Package(context.Background(), "probity-fixture-unpublished").Facts
	if gone.Source.Outcome != SourceNoData || !gone.Unpublished || !strings.Contains(gone.Source.Error, "unpublished at 2025-02-11T09:30:00.000Z") || gone.Latest != "" {
		t.Errorf("unpublished: %+v", gone)
	}
}

func TestNPMAttestations(t *testing.T) {
	srv := startFixtureServer(t)
	c, _ := testClient(t, ClientConfig{})
	n := NewNPM(NPMConfig{BaseURL: srv.base("npm"), Client: c})
	raw, src := n.Attestations(context.Background(), "@probity-fixtures/attested", "1.2.0")
	if src.Outcome != SourceOK || !json.Valid(raw) || !strings.Contains(string(raw), "https://slsa.dev/provenance/v1") {
		t.Errorf("attested: %+v, %d bytes", src, len(raw))
	}
	raw, src = n.Attestations(context.Background(), "@modelcontextprotocol/server-filesystem", "2026.8.31")
	if src.Outcome != SourceNoData || raw != nil {
		t.Errorf("none: %+v", src)
	}
	if misses := srv.misses(); len(misses) > 0 {
		t.Errorf("unmatched requests: %q", misses)
	}
}

func TestNPMPackumentEdges(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		outcome SourceOutcome
		check   func(t *testing.T, p NPMPackage)
	}{
		{"no versions", `{"name":"x","versions":{}}`, SourceNoData, func(t *testing.T, p NPMPackage) {
			if !p.Facts.Unpublished {
				t.Error("not unpublished")
			}
		}},
		{"latest names no version", `{"name":"x","dist-tags":{"latest":"2.0.0"},"versions":{"1.0.0":{}}}`, SourceFailed, nil},
		{"another package", `{"name":"y","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{}}}`, SourceFailed, nil},
		{"version not an object", `{"name":"x","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":"oops"}}`, SourceFailed, nil},
		{"null", `null`, SourceFailed, nil},
		{"license array in license", `{"name":"x","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"license":["MIT","Apache 2.0"]}}}`, SourceOK, func(t *testing.T, p NPMPackage) {
			if p.Facts.License != "MIT OR (Apache 2.0)" {
				t.Errorf("license %q", p.Facts.License)
			}
		}},
		{"licenses of strings and objects", `{"name":"x","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"licenses":[{"type":"MIT"},"Apache-2.0",{"url":"x"},42]}}}`, SourceOK, func(t *testing.T, p NPMPackage) {
			if p.Facts.License != "MIT OR Apache-2.0" {
				t.Errorf("license %q", p.Facts.License)
			}
		}},
		{"top-level fallbacks", `{"name":"x","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"license":7,"repository":7}},
			"license":{"type":"ISC"},"repository":{"type":"git","url":"github:A/B","directory":"pkg"},"maintainers":["Ann <ann@example.org>",{"name":"bob","email":"b@example.org"},5]}`, SourceOK,
			func(t *testing.T, p NPMPackage) {
				f := p.Facts
				if f.License != "ISC" || f.RepositoryURL != "https://github.com/a/b" || !slices.Equal(f.Maintainers, []string{"Ann", "bob"}) {
					t.Errorf("%+v", f)
				}
			}},
		{"time not a string", `{"name":"x","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{}},"time":{"1.0.0":5}}`, SourceOK, func(t *testing.T, p NPMPackage) {
			if !p.Facts.PublishedAt.IsZero() {
				t.Error("published at from a number")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NPMPackage{Facts: PackageFacts{Name: "x", Source: Source{Outcome: SourceOK}}}
			parsePackument("x", []byte(tt.body), &p)
			if p.Facts.Source.Outcome != tt.outcome {
				t.Fatalf("outcome %s (%s), want %s", p.Facts.Source.Outcome, p.Facts.Source.Error, tt.outcome)
			}
			if tt.check != nil {
				tt.check(t, p)
			}
		})
	}
}

func TestREADMECut(t *testing.T) {
	long := strings.Repeat("a", MaxREADME-1) + "é" + "tail"
	got := cutUTF8(long, MaxREADME)
	if len(got) != MaxREADME-1 || !utf8.ValidString(got) {
		t.Errorf("cut to %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	body := `{"name":"x","dist-tags":{"latest":"1"},"versions":{"1":{}},"readme":` + mustJSON(strings.Repeat("ü", MaxREADME)) + `}`
	p := NPMPackage{Facts: PackageFacts{Source: Source{Outcome: SourceOK}}}
	parsePackument("x", []byte(body), &p)
	if len(p.Facts.README) > MaxREADME || !utf8.ValidString(p.Facts.README) || len(p.Facts.README) < MaxREADME-4 {
		t.Errorf("README %d bytes", len(p.Facts.README))
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func FuzzNormalizeRepositoryURL(f *testing.F) {
	for _, s := range []string{"github:o/r", "o/r", "git@github.com:o/r.git", "git+ssh://git@github.com/o/r.git", "https://github.com/o/r/tree/x", "gitlab:a/b/c", "::", "@:", "a@b:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeRepositoryURL(s)
		if got == "" {
			return
		}
		if !strings.HasPrefix(got, "https://") {
			t.Fatalf("%q → %q", s, got)
		}
		if NormalizeRepositoryURL(got) != got {
			t.Fatalf("not idempotent: %q → %q → %q", s, got, NormalizeRepositoryURL(got))
		}
	})
}

func FuzzParsePackument(f *testing.F) {
	f.Add([]byte(`{"name":"x","dist-tags":{"latest":"1"},"versions":{"1":{"license":{"type":"MIT"},"repository":"github:a/b"}},"time":{"1":"2020-01-01T00:00:00Z"}}`))
	f.Add([]byte(`{"name":"x","time":{"unpublished":{"time":"2020"}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p := NPMPackage{Facts: PackageFacts{Source: Source{Outcome: SourceOK}}}
		parsePackument("x", body, &p)
		if p.Facts.Source.Outcome == SourceOK && p.Facts.Latest == "" {
			t.Fatal("OK without a latest version")
		}
	})
}
