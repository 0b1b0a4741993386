package targets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/probity-dev/probity/attest"
)

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,79}$`)

// parseString parses s and fails the test on an error of Parse itself.
func parseString(t *testing.T, s string) ([]Server, []*LineError) {
	t.Helper()
	ts, errs, err := Parse(strings.NewReader(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return ts, errs
}

// one parses a one-line input and returns its target or its line error.
func one(t *testing.T, line string) (Server, *LineError) {
	t.Helper()
	ts, errs := parseString(t, line+"\n")
	switch {
	case len(ts) == 1 && len(errs) == 0:
		return ts[0], nil
	case len(ts) == 0 && len(errs) == 1:
		return Server{}, errs[0]
	}
	t.Fatalf("%q: %d targets, %d errors: %v %v", line, len(ts), len(errs), ts, errs)
	return Server{}, nil
}

func TestAcceptedReferences(t *testing.T) {
	type want struct{ kind, locator, name string }
	remote := func(loc, name string) want { return want{kindRemote, loc, name} }
	npm := func(loc, name string) want { return want{kindNPM, loc, name} }
	pypi := func(loc, name string) want { return want{kindPyPI, loc, name} }
	gh := func(loc, name string) want { return want{kindGitHub, loc, name} }
	for _, tc := range []struct {
		in   string
		want want
	}{
		// Remote endpoints: locator.NormalizeURL, with host names in ASCII.
		{"https://mcp.example.com/v1/mcp", remote("https://mcp.example.com/v1/mcp", "mcp.example.com/v1/mcp")},
		{"HTTPS://MCP.Example.COM:443/v1/mcp", remote("https://mcp.example.com/v1/mcp", "mcp.example.com/v1/mcp")},
		{"https://mcp.example.com", remote("https://mcp.example.com/", "mcp.example.com")},
		{"http://127.0.0.1:8080/mcp", remote("http://127.0.0.1:8080/mcp", "127.0.0.1:8080/mcp")},
		{"http://mcp.example.com:80/sse", remote("http://mcp.example.com/sse", "mcp.example.com/sse")},
		{"https://[2001:db8::1]:8443/mcp", remote("https://[2001:db8::1]:8443/mcp", "[2001:db8::1]:8443/mcp")},
		{"https://mcp.example.com/mcp?region=eu&authuser=0", remote("https://mcp.example.com/mcp?region=eu&authuser=0", "mcp.example.com/mcp")},
		{"https://mcp.example.com/mcp?keyword=tides&monkey=1", remote("https://mcp.example.com/mcp?keyword=tides&monkey=1", "mcp.example.com/mcp")},
		{"https://bücher.example/mcp", remote("https://xn--bcher-kva.example/mcp", "xn--bcher-kva.example/mcp")},
		{"https://BÜCHER.example/mcp", remote("https://xn--bcher-kva.example/mcp", "xn--bcher-kva.example/mcp")},
		{"https://b%C3%BCcher.example/mcp", remote("https://xn--bcher-kva.example/mcp", "xn--bcher-kva.example/mcp")},
		{"https://ｍｃｐ．example.com/mcp", remote("https://mcp.example.com/mcp", "mcp.example.com/mcp")},
		{"https://例え.テスト/mcp", remote("https://xn--r8jz45g.xn--zckzah/mcp", "xn--r8jz45g.xn--zckzah/mcp")},
		{"https://mcp.example.com/a%20b", remote("https://mcp.example.com/a%20b", "mcp.example.com/a%20b")},
		{"https://api.github.com.example/mcp", remote("https://api.github.com.example/mcp", "api.github.com.example/mcp")},

		// GitHub repositories: always a github entry for github.com.
		{"https://github.com/Acme/Weather-MCP", gh("https://github.com/acme/weather-mcp", "Acme/Weather-MCP")},
		{"https://github.com/acme/weather-mcp.git", gh("https://github.com/acme/weather-mcp", "acme/weather-mcp")},
		{"https://github.com/acme/weather-mcp/", gh("https://github.com/acme/weather-mcp", "acme/weather-mcp")},
		{"https://github.com/acme/weather-mcp/tree/main/src/server", gh("https://github.com/acme/weather-mcp", "acme/weather-mcp")},
		{"https://github.com/acme/weather-mcp#readme", gh("https://github.com/acme/weather-mcp", "acme/weather-mcp")},
		{"https://github.com/acme/weather-mcp?tab=readme-ov-file", gh("https://github.com/acme/weather-mcp", "acme/weather-mcp")},
		{"http://www.github.com/acme/weather-mcp.GIT", gh("https://github.com/acme/weather-mcp", "acme/weather-mcp")},
		{"https://github.com/acme/.github", gh("https://github.com/acme/.github", "acme/.github")},
		{"github:Acme/Weather-MCP", gh("https://github.com/acme/weather-mcp", "Acme/Weather-MCP")},
		{"GitHub:acme/weather_mcp.js", gh("https://github.com/acme/weather_mcp.js", "acme/weather_mcp.js")},
		{"pkg:github/acme/weather-mcp@v1.2.0", gh("https://github.com/acme/weather-mcp", "acme/weather-mcp")},

		// npm packages: the purl without version.
		{"npm:weather-mcp", npm("pkg:npm/weather-mcp", "weather-mcp")},
		{"NPM:weather-mcp@latest", npm("pkg:npm/weather-mcp", "weather-mcp")},
		{"npm:@modelcontextprotocol/server-filesystem", npm("pkg:npm/%40modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-filesystem")},
		{"npm:@acme/weather.mcp_x@1.2.3", npm("pkg:npm/%40acme/weather.mcp_x", "@acme/weather.mcp_x")},
		{"https://www.npmjs.com/package/weather-mcp", npm("pkg:npm/weather-mcp", "weather-mcp")},
		{"https://npmjs.com/package/@acme/weather-mcp", npm("pkg:npm/%40acme/weather-mcp", "@acme/weather-mcp")},
		{"https://www.npmjs.com/package/%40acme/weather-mcp", npm("pkg:npm/%40acme/weather-mcp", "@acme/weather-mcp")},
		{"https://www.npmjs.com/package/@acme/weather-mcp/v/1.2.3", npm("pkg:npm/%40acme/weather-mcp", "@acme/weather-mcp")},
		{"https://www.npmjs.com/package/weather-mcp?activeTab=versions", npm("pkg:npm/weather-mcp", "weather-mcp")},
		{"pkg:npm/weather-mcp", npm("pkg:npm/weather-mcp", "weather-mcp")},
		{"pkg:npm/weather-mcp@2.0.0-beta.1", npm("pkg:npm/weather-mcp", "weather-mcp")},
		{"pkg:npm/%40acme/weather-mcp", npm("pkg:npm/%40acme/weather-mcp", "@acme/weather-mcp")},
		{"pkg:npm/%40acme/weather-mcp@1.2.3", npm("pkg:npm/%40acme/weather-mcp", "@acme/weather-mcp")},
		{"pkg:npm/@acme/weather-mcp@1.2.3", npm("pkg:npm/%40acme/weather-mcp", "@acme/weather-mcp")},
		{"PKG:NPM/weather-mcp", npm("pkg:npm/weather-mcp", "weather-mcp")},

		// PyPI projects: the purl of the PEP 503 normalized name.
		{"pypi:mcp-server-git", pypi("pkg:pypi/mcp-server-git", "mcp-server-git")},
		{"pypi:Mcp.Server__Git", pypi("pkg:pypi/mcp-server-git", "Mcp.Server__Git")},
		{"pip:mcp_server_git==1.2.0", pypi("pkg:pypi/mcp-server-git", "mcp_server_git")},
		{"pypi:a", pypi("pkg:pypi/a", "a")},
		{"https://pypi.org/project/mcp-server-git/", pypi("pkg:pypi/mcp-server-git", "mcp-server-git")},
		{"https://pypi.org/project/MCP_Server_Git/1.2.0/", pypi("pkg:pypi/mcp-server-git", "MCP_Server_Git")},
		{"https://www.pypi.org/project/mcp-server-git", pypi("pkg:pypi/mcp-server-git", "mcp-server-git")},
		{"pkg:pypi/mcp-server-git", pypi("pkg:pypi/mcp-server-git", "mcp-server-git")},
		{"pkg:pypi/mcp_server_git@1.2.0", pypi("pkg:pypi/mcp-server-git", "mcp_server_git")},
	} {
		got, le := one(t, tc.in)
		if le != nil {
			t.Errorf("%q: %v", tc.in, le)
			continue
		}
		if got.Kind != tc.want.kind || got.Locator != tc.want.locator || got.Name != tc.want.name {
			t.Errorf("%q: got %s %q %q, want %s %q %q", tc.in, got.Kind, got.Locator, got.Name, tc.want.kind, tc.want.locator, tc.want.name)
		}
		if got.Source != "import" || got.Line != 1 || got.SlugBase != Slug(got.Kind, got.Locator) {
			t.Errorf("%q: source %q line %d slug %q", tc.in, got.Source, got.Line, got.SlugBase)
		}
		// A locator is itself a reference to the same target.
		if again, le := one(t, got.Locator); le != nil || again.Kind != got.Kind || again.Locator != got.Locator {
			t.Errorf("%q: its locator %q reads as %s %q, %v", tc.in, got.Locator, again.Kind, again.Locator, le)
		}
	}
}

func TestRefusedReferences(t *testing.T) {
	long := strings.Repeat("a", npmMaxName+1)
	for _, tc := range []struct {
		in   string
		want error // nil: any reason
	}{
		{"bogus", errNotReference},
		{"example.com/mcp", errNotReference},
		{"acme/weather-mcp", errNotReference},
		{"ftp://example.com/mcp", errBadURL},
		{"wss://example.com/mcp", errBadURL},
		{"mailto:ops@example.com", errNotReference},
		{`{"name": "a/b"}`, nil},

		// Credentials: user information and credential-like query parameters.
		{"https://user:hunter2@mcp.example.com/mcp", errCredential},
		{"https://ghp_abc123@mcp.example.com/mcp", errCredential},
		{"https://@mcp.example.com/mcp", errCredential},
		{"https://mcp.example.com/mcp?key=k1", errCredential},
		{"https://mcp.example.com/mcp?KEY=k1", errCredential},
		{"https://mcp.example.com/mcp?api_key=sk-123", errCredential},
		{"https://mcp.example.com/mcp?region=eu&apikey=sk-123", errCredential},
		{"https://mcp.example.com/mcp?apiKey=sk-123", errCredential},
		{"https://mcp.example.com/mcp?x-api-key=sk-123", errCredential},
		{"https://mcp.example.com/mcp?api%5Fkey=sk-123", errCredential},
		{"https://mcp.example.com/mcp?token=t", errCredential},
		{"https://mcp.example.com/mcp?access_token=t", errCredential},
		{"https://mcp.example.com/mcp?accessToken=t", errCredential},
		{"https://mcp.example.com/mcp?authtoken=t", errCredential},
		{"https://mcp.example.com/mcp?secret=s", errCredential},
		{"https://mcp.example.com/mcp?client_secret=s", errCredential},
		{"https://mcp.example.com/mcp?password=p", errCredential},
		{"https://mcp.example.com/mcp?auth=a", errCredential},
		{"https://mcp.example.com/mcp?sig=a&se=2030", errCredential},
		{"https://mcp.example.com/mcp?a=1;token=t", errCredential},
		{"https://mcp.example.com/mcp?token", errCredential},

		// Fragments, templates and bad hosts or ports.
		{"https://mcp.example.com/mcp#tools", errFragment},
		{"https://mcp.example.com/mcp#", errFragment},
		{"https://mcp.example.com/{tenant}/mcp", errTemplated},
		{"https://{tenant}.mcp.example.com/mcp", errTemplated},
		{"https://mcp.example.com:99999/mcp", errBadURL},
		{"https://mcp.example.com:0/mcp", errBadURL},
		{"https://:443/mcp", errBadURL},
		{"https://", errBadURL},
		{"https://exa%ZZmple.com/", errBadURL},
		{"https://a☃b.example/mcp", errBadURL},
		{"https://evil.example／good.example/mcp", errBadURL},
		{"https://evil.example＠good.example/mcp", errBadURL},
		{"https://mcp.exämple.com：8443/mcp", errBadURL},
		{"https://" + strings.Repeat("ü", 64) + ".example/", errBadURL},

		// GitHub.
		{"https://github.com/acme", errBadRepo},
		{"https://github.com/", errBadRepo},
		{"https://github.com/settings/profile", errBadRepo},
		{"https://github.com/-acme/weather", errBadRepo},
		{"https://github.com/acme/..", errBadRepo},
		{"https://github.com/ac_me/weather", errBadRepo},
		{"https://github.com/acme/wea%21ther", errBadRepo},
		{"https://token@github.com/acme/weather", errCredential},
		{"github:acme", errBadRepo},
		{"github:acme/", errBadRepo},
		{"github:acme/weather/extra", errBadRepo},
		{"github:" + strings.Repeat("a", 40) + "/weather", errBadRepo},

		// npm.
		{"npm:", errBadName},
		{"npm:Weather", errBadName},
		{"npm:@Acme/weather", errBadName},
		{"npm:.hidden", errBadName},
		{"npm:_private", errBadName},
		{"npm:@acme", errBadName},
		{"npm:@acme/", errBadName},
		{"npm:@/weather", errBadName},
		{"npm:@acme/..", errBadName},
		{"npm:acme/weather", errBadName},
		{"npm:@acme/weather/extra", errBadName},
		{"npm:wea~ther", errBadName},
		{"npm:wea(ther)", errBadName},
		{"npm:wëather", errBadName},
		{"npm:" + long, errBadName},
		{"npm:node_modules", errBadName},
		{"npm:weather@", errBadName},
		{"npm:@acme/weather@", errBadName},
		{"https://www.npmjs.com/search?q=weather", errBadName},
		{"https://www.npmjs.com/package/@acme", errBadName},
		{"https://www.npmjs.com/package/weather/extra", errBadName},
		{"https://www.npmjs.com/package/Weather", errBadName},
		{"pkg:npm/Weather", errBadName},
		{"pkg:npm/weather?repository_url=https://npm.example.com", nil},
		{"pkg:npm/weather#lib", nil},
		{"pkg:npm/%ZZ", errBadName},
		{"pkg:npm", nil},
		{"pkg:maven/org.example/weather@1.0", nil},

		// PyPI.
		{"pypi:", errBadName},
		{"pypi:-bad", errBadName},
		{"pypi:bad-", errBadName},
		{"pypi:bad..", errBadName},
		{"pypi:wëather", errBadName},
		{"pypi:weather>=1.0", errBadName},
		{"pypi:weather[cli]", errBadName},
		{"pypi:weather==", errBadName},
		{"pypi:weather@1.0", errBadName},
		{"pypi:" + long, errBadName},
		{"https://pypi.org/user/someone/", errBadName},
		{"https://pypi.org/project/", errBadName},
		{"pkg:pypi/weather@", errBadName},
		{"pkg:pypi/acme/weather", errBadName},
	} {
		got, le := one(t, tc.in)
		if le == nil {
			t.Errorf("%q: accepted as %s %q", tc.in, got.Kind, got.Locator)
			continue
		}
		if tc.want != nil && !errors.Is(le, tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, le, tc.want)
		}
		if le.Line != 1 || le.Text == "" {
			t.Errorf("%q: line %d text %q", tc.in, le.Line, le.Text)
		}
		if strings.Contains(le.Error(), "hunter2") || strings.Contains(le.Text, "hunter2") || strings.Contains(le.Text, "sk-123") || strings.Contains(le.Text, "ghp_abc123") {
			t.Errorf("%q: the error repeats the credential: %v %s", tc.in, le, le.Text)
		}
	}
}

func TestCredentialErrorMessage(t *testing.T) {
	_, le := one(t, "https://mcp.example.com/mcp?region=eu&api_key=sk-live-123")
	const want = `line 1: the URL carries a credential in its query (parameter "api_key"); Probity never sends credentials`
	if le == nil || le.Error() != want {
		t.Fatalf("got %v\nwant %s", le, want)
	}
	if le.Text != `"https://mcp.example.com/mcp?region=eu&api_key=REDACTED"` {
		t.Errorf("text %s", le.Text)
	}
	_, le = one(t, "https://ops:hunter2@mcp.example.com/mcp")
	if le == nil || le.Text != `"https://REDACTED@mcp.example.com/mcp"` {
		t.Errorf("got %v %s", le, le.Text)
	}
}

// mixed is a text list with good and bad lines, CRLF line endings, a BOM, comments and
// duplicates. Its line numbers are those of the wants below.
const mixed = "\ufeff# Probity targets, exported 2026-01-12\r\n" + // 1
	"\r\n" + // 2
	"https://mcp.tidewater.example.com/v2/mcp\r\n" + // 3
	"   npm:@lumen-notes/mcp-server@0.9.4   \r\n" + // 4
	"this is not a reference\r\n" + // 5
	"pypi:Lumen_Notes.MCP  # the Python port\r\n" + // 6
	"\t# indented comment\r\n" + // 7
	"https://user:pw@mcp.example.com/mcp\r\n" + // 8
	"github:quillwork/pdf-tools\r\n" + // 9
	"npm:Bad_Name\r\n" + // 10
	"https://MCP.Tidewater.example.com:443/v2/mcp\r\n" + // 11: duplicate of 3
	"https://github.com/QuillWork/PDF-Tools.git\r\n" + // 12: duplicate of 9
	"https://mcp.example.com/mcp?token=abc\r\n" + // 13
	"https://{tenant}.example.com/mcp\r\n" + // 14
	"https://pypi.org/project/weather-mcp/" // 15, no final line ending

func TestMixedFile(t *testing.T) {
	ts, errs := parseString(t, mixed)
	want := []Server{
		{Kind: "remote", Locator: "https://mcp.tidewater.example.com/v2/mcp", Name: "mcp.tidewater.example.com/v2/mcp", SlugBase: "mcp-tidewater-example-com-v2-mcp", Source: "import", Line: 3},
		{Kind: "npm", Locator: "pkg:npm/%40lumen-notes/mcp-server", Name: "@lumen-notes/mcp-server", SlugBase: "npm-lumen-notes-mcp-server", Source: "import", Line: 4},
		{Kind: "pypi", Locator: "pkg:pypi/lumen-notes-mcp", Name: "Lumen_Notes.MCP", SlugBase: "pypi-lumen-notes-mcp", Source: "import", Line: 6},
		{Kind: "github", Locator: "https://github.com/quillwork/pdf-tools", Name: "quillwork/pdf-tools", SlugBase: "gh-quillwork-pdf-tools", Source: "import", Line: 9},
		{Kind: "pypi", Locator: "pkg:pypi/weather-mcp", Name: "weather-mcp", SlugBase: "pypi-weather-mcp", Source: "import", Line: 15},
	}
	// A bare reference is a one-part server: its part is its kind and locator.
	for i := range want {
		want[i].Parts = []Part{{Kind: want[i].Kind, Locator: want[i].Locator}}
	}
	if !reflect.DeepEqual(ts, want) {
		t.Errorf("targets:\n%s\nwant:\n%s", dump(ts), dump(want))
	}
	wantErrs := []struct {
		line int
		err  error
	}{{5, nil}, {8, errCredential}, {10, errBadName}, {13, errCredential}, {14, errTemplated}}
	if len(errs) != len(wantErrs) {
		t.Fatalf("errors: %v", errs)
	}
	for i, w := range wantErrs {
		if errs[i].Line != w.line || w.err != nil && !errors.Is(errs[i], w.err) {
			t.Errorf("error %d: %v, want line %d %v", i, errs[i], w.line, w.err)
		}
	}
	if errs[0].Text != `"this is not a reference"` {
		t.Errorf("text %s", errs[0].Text)
	}
}

func dump(ts []Server) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "\t%+v\n", t)
	}
	return b.String()
}

func TestDuplicatesFirstWins(t *testing.T) {
	ts, errs := parseString(t, strings.Join([]string{
		"npm:@acme/weather",
		"pkg:npm/%40acme/weather@2.0.0",
		"https://www.npmjs.com/package/@acme/weather",
		"pypi:Weather_MCP",
		"pip:weather.mcp==1",
		"https://mcp.example.com/mcp",
		"HTTPS://mcp.EXAMPLE.com:443/mcp",
		"https://mcp.example.com/mcp?x=1", // a different URL
	}, "\n"))
	var got []string
	for _, t := range ts {
		got = append(got, fmt.Sprintf("%d %s %s", t.Line, t.Locator, t.Name))
	}
	want := []string{
		"1 pkg:npm/%40acme/weather @acme/weather",
		"4 pkg:pypi/weather-mcp Weather_MCP",
		"6 https://mcp.example.com/mcp mcp.example.com/mcp",
		"8 https://mcp.example.com/mcp?x=1 mcp.example.com/mcp",
	}
	if len(errs) != 0 || !slices.Equal(got, want) {
		t.Errorf("got %q, %v; want %q", got, errs, want)
	}
}

func TestBlankAndCommentOnly(t *testing.T) {
	for _, in := range []string{"", "\n\n", "\ufeff", "\ufeff\r\n", "# only\n#comments\r\n   \n\t\n", "  \t "} {
		ts, errs := parseString(t, in)
		if len(ts) != 0 || len(errs) != 0 {
			t.Errorf("%q: %v %v", in, ts, errs)
		}
	}
}

func TestLineErrorsHaveLineNumbersAfterLeadingBlankLines(t *testing.T) {
	_, errs := parseString(t, "\ufeff\n\n  \r\nnope\n")
	if len(errs) != 1 || errs[0].Line != 4 {
		t.Errorf("%v", errs)
	}
}

func TestUTF16(t *testing.T) {
	_, errs := parseString(t, "\xff\xfen\x00p\x00m\x00:\x00a\x00\n\x00")
	if len(errs) != 1 || errs[0].Line != 1 || !strings.Contains(errs[0].Err.Error(), "UTF-16") {
		t.Errorf("%v", errs)
	}
}

func TestInlineWhiteSpace(t *testing.T) {
	_, le := one(t, "npm:a npm:b")
	if le == nil || le.Line != 1 {
		t.Errorf("%v", le)
	}
	// A '#' without white space before it is part of the reference.
	if _, le := one(t, "https://mcp.example.com/mcp#x"); !errors.Is(le, errFragment) {
		t.Errorf("%v", le)
	}
}

func TestLongLines(t *testing.T) {
	exact := "#" + strings.Repeat("x", MaxLineBytes-1)
	in := strings.Join([]string{
		"npm:first", // 1
		exact,       // 2: exactly MaxLineBytes, a comment
		exact + "y", // 3: one byte too long
		"npm:" + strings.Repeat("z", 3*MaxLineBytes), // 4: three buffers long
		"npm:last", // 5
	}, "\n") + "\n" + exact + "\r\n" + // 6: CRLF does not count
		"npm:" + strings.Repeat("w", MaxLineBytes) // 7: too long, at the end of the input
	ts, errs := parseString(t, in)
	if len(ts) != 2 || ts[0].Line != 1 || ts[1].Line != 5 {
		t.Errorf("targets %v", ts)
	}
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Line)
		if !errors.Is(e, errLineTooLong) {
			t.Errorf("%v", e)
		}
		if len(e.Text) > 130 || !strings.HasSuffix(e.Text, `"...`) {
			t.Errorf("text %d bytes: %.40s…", len(e.Text), e.Text)
		}
	}
	if !slices.Equal(lines, []int{3, 4, 7}) {
		t.Errorf("error lines %v", lines)
	}
}

// chunkReader returns its data a few bytes at a time, then err (io.EOF when nil).
type chunkReader struct {
	data []byte
	n    int
	err  error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// repeatReader yields n bytes of line, repeated.
type repeatReader struct {
	line []byte
	n    int64
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	i := 0
	for i < len(p) && r.n > 0 {
		c := copy(p[i:i+int(min(int64(len(p)-i), r.n))], r.line[r.off:])
		r.off = (r.off + c) % len(r.line)
		i += c
		r.n -= int64(c)
	}
	return i, nil
}

func TestInputTooLarge(t *testing.T) {
	comment := []byte("#" + strings.Repeat("-", 32<<10-2) + "\n")
	for _, tc := range []struct {
		n    int64
		fail bool
	}{{MaxInputBytes, false}, {MaxInputBytes + 1, true}} {
		ts, errs, err := Parse(&repeatReader{line: comment, n: tc.n})
		if tc.fail != (err != nil) || tc.fail && (!errors.Is(err, errTooLarge) || ts != nil || errs != nil) {
			t.Errorf("%d bytes: %d targets, %d errors, %v", tc.n, len(ts), len(errs), err)
		}
	}
	// JSON input too.
	big := `[` + strings.Repeat(`{"name":"a/b","remotes":[{"url":"https://mcp.example.com/mcp"}]},`, 1000)
	lim := defaultLimits
	lim.input = int64(len(big)) - 10
	if _, _, err := parse(strings.NewReader(big), lim); !errors.Is(err, errTooLarge) {
		t.Errorf("JSON: %v", err)
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	for _, in := range []string{"npm:a\nnpm:b\n", `[{"name":"a/b","packages":[{"registryType":"npm","identifier":"a"}]},`, "{\"name\":\"a/b\"}\n{"} {
		ts, errs, err := Parse(&chunkReader{data: []byte(in), n: 3, err: boom})
		if !errors.Is(err, boom) || ts != nil || errs != nil {
			t.Errorf("%q: %v %v %v", in, ts, errs, err)
		}
	}
}

func TestTooManyTargets(t *testing.T) {
	lim := defaultLimits
	lim.servers = 3
	// Duplicates do not count.
	if ts, _, err := parse(strings.NewReader("npm:a\nnpm:b\nnpm:a\nnpm:c\nnpm:b\n"), lim); err != nil || len(ts) != 3 {
		t.Errorf("%v %v", ts, err)
	}
	// A document is one server, however many parts it has.
	doc := `{"name":"a/b","packages":[{"registryType":"npm","identifier":"a"},{"registryType":"npm","identifier":"b"},{"registryType":"npm","identifier":"c"},{"registryType":"npm","identifier":"d"}]}`
	if ts, _, err := parse(strings.NewReader(doc), lim); err != nil || len(ts) != 1 || len(ts[0].Parts) != 4 {
		t.Errorf("%v %v", ts, err)
	}
	for _, in := range []string{"npm:a\nnpm:b\nnpm:c\nnpm:d\n", `[{"name":"a/b","packages":[{"registryType":"npm","identifier":"a"}]},{"name":"a/c","packages":[{"registryType":"npm","identifier":"b"}]},{"name":"a/d","packages":[{"registryType":"npm","identifier":"c"}]},{"name":"a/e","packages":[{"registryType":"npm","identifier":"d"}]}]`} {
		if ts, errs, err := parse(strings.NewReader(in), lim); !errors.Is(err, errTooMany) || ts != nil || errs != nil {
			t.Errorf("%q: %v %v %v", in, ts, errs, err)
		}
	}
}

func TestTooManyDocuments(t *testing.T) {
	lim := defaultLimits
	lim.documents = 4
	doc := `{"name":"a/b","packages":[{"registryType":"npm","identifier":"a"}]}`
	// Every JSON value counts: top-level ones, array elements and list items.
	for in, fail := range map[string]bool{
		strings.Repeat(doc+"\n", 4):                  false,
		strings.Repeat(doc+"\n", 5):                  true,
		"[" + strings.Repeat(doc+",", 2) + doc + "]": false,
		"[" + strings.Repeat(doc+",", 3) + doc + "]": true,
		"1 2 3 4":               false,
		"[1,2,3,4]":             true,
		`{"servers":[1,2,3]}`:   false,
		`{"servers":[1,2,3,4]}`: true,
		"{}\n]\n]\n]\n]\n":      true,
	} {
		ts, errs, err := parse(strings.NewReader(in), lim)
		if fail != errors.Is(err, errTooManyDocuments) || fail && (ts != nil || errs != nil) {
			t.Errorf("%q: %v %v %v", in, ts, errs, err)
		}
	}
}

func TestJSONInTextList(t *testing.T) {
	_, errs := parseString(t, "npm:a\n{\"name\": \"a/b\"}\n")
	if len(errs) != 1 || errs[0].Line != 2 || !strings.Contains(errs[0].Err.Error(), "JSON input must start with") {
		t.Errorf("%v", errs)
	}
}

func TestWhiteSpaceBetweenDocuments(t *testing.T) {
	lim := defaultLimits
	lim.document = 4 << 10
	doc := `{"name":"a/b","remotes":[{"url":"https://a.example.com/mcp"}]}`
	// White space counts against the document that follows it.
	ts, errs, err := parse(strings.NewReader(doc+strings.Repeat("\n", 1<<20)+doc), lim)
	if err != nil || len(ts) != 1 || len(errs) != 1 || !errors.Is(errs[0], errDocTooLarge) {
		t.Errorf("%v %v %v", ts, errs, err)
	}
	ts, errs, err = parse(strings.NewReader(doc+strings.Repeat("\n", 2<<10)+strings.NewReplacer("a.example", "b.example", "a/b", "a/c").Replace(doc)), lim)
	if err != nil || len(ts) != 2 || len(errs) != 0 || ts[1].Line != 2<<10+1 {
		t.Errorf("%v %v %v", ts, errs, err)
	}
}

func TestTooManyErrors(t *testing.T) {
	lim := defaultLimits
	lim.errors = 2
	ts, errs, err := parse(strings.NewReader("x1\nnpm:a\nx3\nx4\nnpm:b\nx6\nx7\n"), lim)
	if err != nil || len(ts) != 2 || len(errs) != 3 {
		t.Fatalf("%v %v %v", ts, errs, err)
	}
	if errs[0].Line != 1 || errs[1].Line != 3 || errs[2].Line != 4 || errs[2].Text != "" || !strings.Contains(errs[2].Error(), "3 more") {
		t.Errorf("%v", errs)
	}
}

func TestLineErrorText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                          `"plain"`,
		"tab\there \"q\"":                `"tab\there \"q\""`,
		"naïve ☃":                        `"na\u00efve \u2603"`,
		"bad \xff byte":                  `"bad \xff byte"`,
		strings.Repeat("é", 130):         strconv.QuoteToASCII(strings.Repeat("é", 120)) + "...",
		strings.Repeat("a", 120):         `"` + strings.Repeat("a", 120) + `"`,
		"https://a:b@h.example/?token=t": `"https://REDACTED@h.example/?token=REDACTED"`,
	} {
		if got := quoteText(in); got != want {
			t.Errorf("quoteText(%q) = %s, want %s", in, got, want)
		}
	}
	le := &LineError{Line: 12, Err: errNotReference}
	if got := le.Error(); got != "line 12: "+errNotReference.Error() || !errors.Is(le, errNotReference) {
		t.Errorf("%q", got)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://mcp.example.com/mcp":                       "https://mcp.example.com/mcp",
		"https://u:p@h.example/x":                           "https://REDACTED@h.example/x",
		"https://a@b@h.example/x":                           "https://REDACTED@h.example/x",
		"see https://u@h/ and http://v:w@i/":                "see https://REDACTED@h/ and http://REDACTED@i/",
		"https://h/p?region=eu&api_key=s3cr3t&x=1#f":        "https://h/p?region=eu&api_key=REDACTED&x=1#f",
		"https://h/p?accessToken=abc;sig=def":               "https://h/p?accessToken=REDACTED;sig=REDACTED",
		`{"url":"https://h/p?token=abc","x":"https://u@h"}`: `{"url":"https://h/p?token=REDACTED","x":"https://REDACTED@h"}`,
		"https://h/p?tokens":                                "https://h/p?tokens",
		"?key=":                                             "?key=REDACTED",
		"mailto:a@b":                                        "mailto:a@b",
		"https://h/p?keyword=tide&monkey=1":                 "https://h/p?keyword=tide&monkey=1",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsCredentialName(t *testing.T) {
	for _, name := range []string{"key", "KEY", "api_key", "apikey", "apiKey", "X-Api-Key", "token", "access_token", "accessToken", "AccessToken", "id_token", "refreshtoken", "secret", "client_secret", "clientSecret", "password", "passwd", "auth", "Authorization", "sig", "X-Amz-Signature", "X-Amz-Credential", "x-amz-security-token", "jwt", "private_key", "secretKey"} {
		if !isCredentialName(name) {
			t.Errorf("%q is not a credential", name)
		}
	}
	for _, name := range []string{"", "region", "keyword", "monkey", "authuser", "author", "q", "limit", "cursor", "tokens", "version", "session_id", "format"} {
		if isCredentialName(name) {
			t.Errorf("%q is a credential", name)
		}
	}
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// compact returns a fixture on one line.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

type wantTarget struct {
	line          int
	kind, locator string
	name          string
}

type wantError struct {
	line int
	err  error
}

func checkParse(t *testing.T, in string, wantTs []wantTarget, wantErrs []wantError) {
	t.Helper()
	ts, errs := parseString(t, in)
	var got, want []string
	// Each server reads as its parts, the primary one first, with the server's line
	// and name.
	for _, tg := range ts {
		if tg.Source != "registry" && strings.HasPrefix(strings.TrimSpace(in), "{") {
			t.Errorf("%+v: source %q", tg, tg.Source)
		}
		if tg.Kind != tg.Parts[0].Kind || tg.Locator != tg.Parts[0].Locator {
			t.Errorf("%+v: kind and locator are not the first part's", tg)
		}
		for _, pt := range tg.Parts {
			got = append(got, fmt.Sprintf("%d %s %s %q", tg.Line, pt.Kind, pt.Locator, tg.Name))
		}
	}
	for _, w := range wantTs {
		want = append(want, fmt.Sprintf("%d %s %s %q", w.line, w.kind, w.locator, w.name))
	}
	if !slices.Equal(got, want) {
		t.Errorf("targets:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if len(errs) != len(wantErrs) {
		t.Errorf("errors %v, want %v", errs, wantErrs)
		return
	}
	for i, w := range wantErrs {
		if errs[i].Line != w.line || w.err != nil && !errors.Is(errs[i], w.err) {
			t.Errorf("error %d: %v, want line %d: %v", i, errs[i], w.line, w.err)
		}
	}
}

var (
	remotesWant = []wantTarget{
		{1, "remote", "https://mcp.tidewater.example.com/v2/mcp", "Tidewater Forecast"},
		{1, "remote", "https://mcp.tidewater.example.com/v2/sse", "Tidewater Forecast"},
		{1, "github", "https://github.com/tidewater-labs/forecast-mcp", "Tidewater Forecast"},
	}
	remotesErrs  = []wantError{{1, errTemplated}}
	packagesWant = []wantTarget{
		{1, "npm", "pkg:npm/%40lumen-notes/mcp-server", "notes-server"},
		{1, "pypi", "pkg:pypi/lumen-notes-mcp", "notes-server"},
		{1, "oci", "ghcr.io/lumen-notes/mcp-server:0.9.4", "notes-server"}, // listed, not checked
		{1, "github", "https://github.com/lumen-notes/notes-server", "notes-server"},
	}
	packagesErrs = []wantError{{1, errBadName}} // the package on another registry
)

// targetsAt returns ws with every line moved to line.
func targetsAt(line int, ws []wantTarget) []wantTarget {
	out := slices.Clone(ws)
	for i := range out {
		out[i].line = line
	}
	return out
}

// errorsAt returns ws with every line moved to line.
func errorsAt(line int, ws []wantError) []wantError {
	out := slices.Clone(ws)
	for i := range out {
		out[i].line = line
	}
	return out
}

func TestServerJSONSingle(t *testing.T) {
	checkParse(t, readFixture(t, "good_server_remotes.json"), remotesWant, remotesErrs)
	checkParse(t, readFixture(t, "good_server_packages.json"), packagesWant, packagesErrs)
	// After a BOM and blank lines the document starts on line 3.
	checkParse(t, "\ufeff\r\n\n"+readFixture(t, "good_server_packages.json"), targetsAt(3, packagesWant), errorsAt(3, packagesErrs))
	// A registry API item for one server: {"server": {…}, "_meta": {…}}.
	item := `{"server":` + readFixture(t, "good_server_packages.json") + `,"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active"}}}`
	checkParse(t, item, packagesWant, packagesErrs)
}

func TestServerJSONArray(t *testing.T) {
	a, b := readFixture(t, "good_server_remotes.json"), readFixture(t, "good_server_packages.json")
	in := "[\n" + a + ",\n  " + b + "]\n"
	second := 2 + strings.Count(a, "\n") + 1
	checkParse(t, in,
		append(targetsAt(2, remotesWant), targetsAt(second, packagesWant)...),
		append(errorsAt(2, remotesErrs), errorsAt(second, packagesErrs)...))
}

func TestServerJSONList(t *testing.T) {
	checkParse(t, readFixture(t, "good_registry_list.json"), []wantTarget{
		{3, "remote", "https://mcp.ledgerline.example/mcp", "Ledgerline Books"},
		// Line 23 holds an older version of the same server: a duplicate.
		{43, "npm", "pkg:npm/quillwork-pdf-mcp", "pdf-tools"},
		{43, "github", "https://github.com/quillwork/pdf-tools", "pdf-tools"},
	}, []wantError{{68, errNothing}})
}

func TestServerJSONListOnOneLine(t *testing.T) {
	// A list response far longer than MaxLineBytes on one line, as the registry API
	// sends it.
	var items []string
	for i := range 3000 {
		items = append(items, fmt.Sprintf(`{"server":{"name":"com.example/s%d","description":"Server number %d of a long list","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://s%d.mcp.example.com/mcp"}]},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":true}}}`, i, i, i))
	}
	in := `{"servers":[` + strings.Join(items, ",") + `],"metadata":{"count":3000}}`
	if len(in) <= MaxLineBytes {
		t.Fatal("list too short")
	}
	ts, errs := parseString(t, in)
	if len(ts) != 3000 || len(errs) != 0 || ts[2999].Locator != "https://s2999.mcp.example.com/mcp" || ts[2999].Line != 1 || ts[2999].Name != "s2999" {
		t.Errorf("%d targets, errors %v", len(ts), errs)
	}
}

func TestServerJSONLines(t *testing.T) {
	a, b := compact(t, readFixture(t, "good_server_remotes.json")), compact(t, readFixture(t, "good_server_packages.json"))
	list := compact(t, readFixture(t, "good_registry_list.json"))
	in := strings.Join([]string{
		a,                             // 1
		"",                            // 2
		`{"name":"x/broken",`,         // 3: truncated; the error shows on line 4
		b,                             // 4
		`{"name":"x/y" "remotes":[]}`, // 5: syntax error on its own line
		`["not", "documents"]`,        // 6: an array of non-objects
		`42`,                          // 7
		list,                          // 8: a list response on one line
		`{"name":"io.github.acme/tide-mcp","remotes":[{"type":"sse","url":"https://tide.example.net/sse"}]}`, // 9
		`{"name":"x/z", }`, // 10
	}, "\n") + "\n"
	want := append(targetsAt(1, remotesWant), targetsAt(4, packagesWant)...)
	want = append(want,
		wantTarget{8, "remote", "https://mcp.ledgerline.example/mcp", "Ledgerline Books"},
		wantTarget{8, "npm", "pkg:npm/quillwork-pdf-mcp", "pdf-tools"},
		wantTarget{8, "github", "https://github.com/quillwork/pdf-tools", "pdf-tools"},
		wantTarget{9, "remote", "https://tide.example.net/sse", "tide-mcp"},
	)
	errs := append(errorsAt(1, remotesErrs), wantError{3, errInvalidJSON})
	errs = append(errs, errorsAt(4, packagesErrs)...)
	errs = append(errs,
		wantError{5, errInvalidJSON},
		wantError{6, errNotServerJSON}, wantError{6, errNotServerJSON},
		wantError{7, errNotServerJSON},
		wantError{8, errNothing},
		wantError{10, errInvalidJSON},
	)
	checkParse(t, in, want, errs)
}

func TestJSONErrorsEndArrays(t *testing.T) {
	doc := func(host string) string {
		return `{"name": "a/` + host + `", "remotes": [{"url": "https://` + host + `.example.com/mcp"}]}`
	}
	for _, tc := range []struct {
		name string
		in   string
		ts   []wantTarget
		errs []wantError
	}{
		{"syntax error in an array", "[\n" + doc("a") + ",\n" + doc("b") + ",\n{\"name\": nope},\n" + doc("c") + "\n]\n",
			[]wantTarget{{2, "remote", "https://a.example.com/mcp", "a"}, {3, "remote", "https://b.example.com/mcp", "b"}},
			[]wantError{{4, errInvalidJSON}}},
		{"syntax error in a list response", "{\"servers\": [\n" + doc("a") + ",\n\n" + doc("b") + "\n" + doc("c") + "]}",
			[]wantTarget{{2, "remote", "https://a.example.com/mcp", "a"}, {4, "remote", "https://b.example.com/mcp", "b"}},
			[]wantError{{5, errInvalidJSON}}},
		{"truncated array", "[\n" + doc("a") + ",\n" + doc("b")[:20],
			[]wantTarget{{2, "remote", "https://a.example.com/mcp", "a"}},
			[]wantError{{3, errInvalidJSON}}},
		{"truncated array after a document", "[\n" + doc("a") + ",\n" + doc("b") + "\n",
			[]wantTarget{{2, "remote", "https://a.example.com/mcp", "a"}, {3, "remote", "https://b.example.com/mcp", "b"}},
			[]wantError{{3, errInvalidJSON}}},
		{"pretty document with an error", "{\n  \"name\": \"a/b\",\n  \"remotes\": [\n    {\"url\": \"https://a.example.com/mcp\"}\n  ]\n  \"title\": \"x\"\n}\n" + doc("c") + "\n",
			nil,
			[]wantError{{6, errInvalidJSON}}},
		{"newline in a string", "[\n" + doc("a") + ",\n{\"name\": \"a\nb\"}]",
			[]wantTarget{{2, "remote", "https://a.example.com/mcp", "a"}},
			[]wantError{{3, errInvalidJSON}}},
		{"stray closing bracket", doc("a") + "\n]\n" + doc("b") + "\n",
			[]wantTarget{{1, "remote", "https://a.example.com/mcp", "a"}, {3, "remote", "https://b.example.com/mcp", "b"}},
			[]wantError{{2, errInvalidJSON}}},
		{"top-level literals", "[" + doc("a") + ", null, true, \"x\", 1.5, [" + doc("b") + "]]",
			[]wantTarget{{1, "remote", "https://a.example.com/mcp", "a"}},
			[]wantError{{1, errNotServerJSON}, {1, errNotServerJSON}, {1, errNotServerJSON}, {1, errNotServerJSON}, {1, errNotServerJSON}}},
		{"wrong field types", "[\n{\"name\": 5, \"remotes\": []},\n{\"remotes\": {\"url\": \"https://a.example.com/\"}},\n{\"server\": [1]}\n]",
			nil,
			[]wantError{{2, errNotServerJSON}, {3, errNotServerJSON}, {4, errNotServerJSON}}},
		{"servers that is not a list", `{"servers": {"a": [1, {"b": 2}]}, "name": "a/b", "remotes": [{"url": "https://a.example.com/mcp"}]}`,
			[]wantTarget{{1, "remote", "https://a.example.com/mcp", "b"}},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc.in, tc.ts, tc.errs) })
	}
}

func TestDocumentTooLarge(t *testing.T) {
	lim := defaultLimits
	lim.document = 4 << 10
	small := `{"name":"a/b","remotes":[{"url":"https://a.example.com/mcp"}]}`
	big := `{"name":"a/c","description":"` + strings.Repeat("x", 200<<10) + `","remotes":[{"url":"https://c.example.com/mcp"}]}`
	for _, in := range []string{"[\n" + small + ",\n" + big + "\n]", small + "\n" + big + "\n" + small} {
		ts, errs, err := parse(strings.NewReader(in), lim)
		if err != nil || len(ts) != 1 || len(errs) != 1 || !errors.Is(errs[0], errDocTooLarge) {
			t.Errorf("%v %v %v", ts, errs, err)
		}
	}
	// Many small documents pass however long the input.
	many := "[" + strings.Repeat(small+",\n", 10000) + small + "]"
	if ts, errs, err := parse(strings.NewReader(many), lim); err != nil || len(ts) != 1 || len(errs) != 0 {
		t.Errorf("%d %v %v", len(ts), errs, err)
	}
}

func TestRegistryDocuments(t *testing.T) {
	doc := func(body string) string { return `{"name":"io.github.acme/weather",` + body + `}` }
	for _, tc := range []struct {
		name string
		in   string
		ts   []wantTarget
		errs []wantError
	}{
		{"title wins", `{"name":"io.github.acme/weather","title":"  Acme\u202e Weather\n ","remotes":[{"url":"https://w.example.com/mcp"}]}`,
			[]wantTarget{{1, "remote", "https://w.example.com/mcp", "Acme Weather"}}, nil},
		{"no name", `{"remotes":[{"url":"https://w.example.com/mcp"}]}`,
			[]wantTarget{{1, "remote", "https://w.example.com/mcp", "w.example.com/mcp"}}, nil},
		{"remote with a credential", doc(`"remotes":[{"url":"https://w.example.com/mcp?api_key=sk-1"},{"url":"https://u:p@w.example.com/"}]`),
			nil, []wantError{{1, errCredential}, {1, errCredential}}},
		{"remote with a fragment", doc(`"remotes":[{"url":"https://w.example.com/mcp#x"}]`), nil, []wantError{{1, errFragment}}},
		{"remote without url", doc(`"remotes":[{"type":"sse"}]`), nil, []wantError{{1, errBadURL}}},
		{"remote on github", doc(`"remotes":[{"url":"https://github.com/acme/weather"}]`), nil, []wantError{{1, errBadURL}}},
		{"remote that is a variable", doc(`"remotes":[{"url":"{baseUrl}/mcp"}]`), nil, []wantError{{1, errTemplated}}},
		{"remote that is not http", doc(`"remotes":[{"url":"ws://w.example.com/mcp"}]`), nil, []wantError{{1, errBadURL}}},
		{"bad npm identifier", doc(`"packages":[{"registryType":"npm","identifier":"Weather"}]`), nil, []wantError{{1, errBadName}}},
		{"empty identifier", doc(`"packages":[{"registryType":"pypi"}]`), nil, []wantError{{1, errBadName}}},
		{"registry type in capitals, trailing slash", doc(`"packages":[{"registryType":"NPM","registryBaseUrl":"https://registry.npmjs.org/","identifier":"weather"}]`),
			[]wantTarget{{1, "npm", "pkg:npm/weather", "weather"}}, nil},
		{"other package types", doc(`"packages":[{"registryType":"oci","identifier":"ghcr.io/acme/weather:1"},{"registryType":"mcpb","identifier":"https://example.com/w.mcpb"},{"registryType":"nuget","identifier":"Acme.Weather"}]`),
			nil, []wantError{{1, errNothing}}},
		{"repository on gitlab", doc(`"repository":{"url":"https://gitlab.com/acme/weather","source":"gitlab"}`), nil, []wantError{{1, errNothing}}},
		{"repository not on github", doc(`"repository":{"url":"https://gitlab.com/acme/weather","source":"github"}`), nil, []wantError{{1, errBadRepo}}},
		{"empty repository", doc(`"repository":{"url":"","source":""}`), nil, []wantError{{1, errNothing}}},
		{"nothing", doc(`"description":"x"`), nil, []wantError{{1, errNothing}}},
		{"empty object", `{}`, nil, []wantError{{1, errNothing}}},
		{"duplicates across documents", doc(`"remotes":[{"url":"https://w.example.com/mcp"}]`) + "\n" + `{"name":"x/other","remotes":[{"url":"https://W.example.com:443/mcp"}],"packages":[{"registryType":"npm","identifier":"weather@1.0.0"}]}`,
			[]wantTarget{{1, "remote", "https://w.example.com/mcp", "weather"}, {2, "npm", "pkg:npm/weather", "other"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc.in, tc.ts, tc.errs) })
	}
}

func TestRegistryErrorTextIsRedacted(t *testing.T) {
	_, errs := parseString(t, `{"name":"a/b","remotes":[{"url":"https://w.example.com/mcp?token=sk-live-1"}],"_meta":{"x":"https://u:hunter2@h.example/"}}`)
	if len(errs) != 1 || strings.Contains(errs[0].Text, "sk-live-1") {
		t.Fatalf("%v", errs)
	}
	_, errs = parseString(t, `[{"name":"a/b","x":"https://u:hunter2@h.example/?password=pw1"}]`)
	if len(errs) != 1 || strings.Contains(errs[0].Text, "hunter2") || strings.Contains(errs[0].Text, "pw1") {
		t.Fatalf("%v %s", errs, errs[0].Text)
	}
}

func TestSlug(t *testing.T) {
	longPath := "https://mcp.example.com/" + strings.Repeat("segment/", 20) + "mcp"
	for _, tc := range []struct{ kind, locator, want string }{
		{"remote", "https://mcp.example.com/v1/mcp", "mcp-example-com-v1-mcp"},
		{"remote", "https://mcp.example.com/", "mcp-example-com"},
		{"remote", "https://www.example.com:8443/mcp/", "example-com-8443-mcp"},
		{"remote", "https://mcp.example.com/mcp?region=eu", "mcp-example-com-mcp"},
		{"remote", "http://127.0.0.1:8080/a_b/C.d", "127-0-0-1-8080-a-b-c-d"},
		{"remote", "https://[2001:db8::1]/mcp", "2001-db8-1-mcp"},
		{"remote", "https://xn--bcher-kva.example/mcp", "xn-bcher-kva-example-mcp"},
		{"remote", "https://mcp.example.com/%C3%A4/--x", "mcp-example-com-x"},
		{"npm", "pkg:npm/%40modelcontextprotocol/server-filesystem", "npm-modelcontextprotocol-server-filesystem"},
		{"npm", "pkg:npm/weather.mcp_x", "npm-weather-mcp-x"},
		{"pypi", "pkg:pypi/mcp-server-git", "pypi-mcp-server-git"},
		{"github", "https://github.com/acme/weather-mcp", "gh-acme-weather-mcp"},
		{"github", "https://github.com/acme/.github", "gh-acme-github"},
		{"other", "thing", "other-thing"},
		{"", "", "entry-e3b0c442"},
		{"remote", "https://☃/", "entry-" + locatorHash("https://☃/")},
		{"remote", longPath, "mcp-example-com-" + strings.Repeat("segment-", 7) + locatorHash(longPath)},
	} {
		got := Slug(tc.kind, tc.locator)
		if got != tc.want {
			t.Errorf("Slug(%q, %q) = %q, want %q", tc.kind, tc.locator, got, tc.want)
		}
		if !slugRE.MatchString(got) || strings.Contains(got, "--") || strings.HasSuffix(got, "-") {
			t.Errorf("Slug(%q, %q) = %q is not a slug", tc.kind, tc.locator, got)
		}
	}
	// A non-ASCII host name gets the slug of its punycode form.
	if got, le := one(t, "https://Bücher.example/mcp"); le != nil || got.SlugBase != "xn-bcher-kva-example-mcp" {
		t.Errorf("%+v %v", got, le)
	}
	// Long locators that share their first 80 slug characters get distinct slugs.
	a, b := Slug("remote", longPath+"/a"), Slug("remote", longPath+"/b")
	if a == b || len(a) != 80 || a[:71] != b[:71] {
		t.Errorf("%q %q", a, b)
	}
	// A cut that ends in a dash does not leave a double dash.
	cut := "npm-" + strings.Repeat("a", 66) + "-bbbbbbbbbbbbbbbbbbbbbbb"
	if got := Slug("npm", "pkg:npm/"+cut[4:]); strings.Contains(got, "--") || len(got) > 80 {
		t.Errorf("%q", got)
	}
	// The slug of a huge locator costs no more than that of a short one.
	huge := "pkg:npm/" + strings.Repeat("a", 1<<20)
	if got := Slug("npm", huge); len(got) != 80 {
		t.Errorf("%q", got)
	}
}

func TestPunycode(t *testing.T) {
	// RFC 3492, section 7.1, lower-cased, and common names.
	for in, want := range map[string]string{
		"ليهمابتكلموشعربي؟":            "egbpdaj6bu4bxfgehfvwxn",
		"他们为什么不说中文":                    "ihqwcrb4cv8a8dqg056pqjye",
		"почемужеонинеговорятпорусски": "b1abfaaepdrnnbgefbadotcwatmq2g4l",
		"3年b組金八先生":                     "3b-ww4c5e180e575a65lsy2b",
		"bücher":                       "bcher-kva",
		"münchen":                      "mnchen-3ya",
		"ü":                            "tda",
	} {
		if got := punycode(in); got != want {
			t.Errorf("punycode(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"example.com":      "example.com",
		"BÜCHER.example":   "xn--bcher-kva.example",
		"straße.de":        "xn--strae-oqa.de",
		"日本語。jp":           "xn--wgv71a119e.jp",
		"ｅｘａｍｐｌｅ．ｃｏｍ":      "example.com",
		"правительство.рф": "xn--80aealotwbjpid2k.xn--p1ai",
		"ελληνικά.gr":      "xn--hxargifdar.gr",
	} {
		if got, err := asciiHost(in); err != nil || got != want {
			t.Errorf("asciiHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a☃.example", "ü.example／x", "ü.example：443", "😀.example", "a\xffb.example", strings.Repeat("ü", 64) + ".example", strings.Repeat(strings.Repeat("ü", 30)+".", 12) + "example"} {
		if got, err := asciiHost(bad); err == nil {
			t.Errorf("asciiHost(%q) = %q", bad, got)
		}
	}
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"  Acme   Weather ":      "Acme Weather",
		"a\nb\tc\x00d":           "a b c d",
		"evil\u202egnp.exe":      "evilgnp.exe",
		"bad \xff":               "bad \uFFFD",
		strings.Repeat("ab", 80): strings.Repeat("ab", 50),
		"\u2028":                 "",
	} {
		if got := cleanName(in); got != want {
			t.Errorf("cleanName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestKinds checks the kinds against the statement's target kinds, which the store's
// Kind constants mirror.
func TestKinds(t *testing.T) {
	for _, k := range []string{kindRemote, kindNPM, kindPyPI, kindGitHub} {
		if !slices.Contains(attest.TargetKinds, k) {
			t.Errorf("kind %q is not in attest.TargetKinds %v", k, attest.TargetKinds)
		}
	}
}

// checkResult checks what Parse returned against its contract; the fuzz target runs it
// on every input.
func checkResult(t *testing.T, in []byte, ts []Server, errs []*LineError) {
	t.Helper()
	kinds := map[string]bool{kindRemote: true, kindNPM: true, kindPyPI: true, kindGitHub: true}
	seen := map[targetKey]bool{}
	lines := strings.Count(string(in), "\n") + 1
	prev := 0
	for _, tg := range ts {
		switch {
		case !kinds[tg.Kind], tg.Locator == "", tg.Source != "import" && tg.Source != "registry":
			t.Fatalf("bad target %+v", tg)
		case !slugRE.MatchString(tg.SlugBase), tg.SlugBase != Slug(tg.Kind, tg.Locator), strings.Contains(tg.SlugBase, "--"), strings.HasSuffix(tg.SlugBase, "-"):
			t.Fatalf("bad slug %+v", tg)
		case tg.Line < prev, tg.Line > lines:
			t.Fatalf("line %d after %d of %d: %+v", tg.Line, prev, lines, tg)
		case tg.Name == "", !utf8.ValidString(tg.Name), utf8.RuneCountInString(tg.Name) > maxNameRunes, cleanName(tg.Name) != tg.Name:
			t.Fatalf("bad name %+v", tg)
		case seen[targetKey{tg.Kind, tg.Locator}]:
			t.Fatalf("duplicate %+v", tg)
		}
		prev = tg.Line
		// Every part belongs to one server; the first is checked and is the server's.
		if len(tg.Parts) == 0 || tg.Parts[0].Kind != tg.Kind || tg.Parts[0].Locator != tg.Locator || len(tg.Parts) > 2*MaxParts+1 {
			t.Fatalf("bad parts %+v", tg)
		}
		for _, pt := range tg.Parts[1:] {
			if pt.Locator == "" || seen[targetKey{pt.Kind, pt.Locator}] {
				t.Fatalf("bad or shared part %+v of %+v", pt, tg)
			}
			seen[targetKey{pt.Kind, pt.Locator}] = true
		}
		seen[targetKey{tg.Kind, tg.Locator}] = true
		// The locator reads back as the same target.
		again, errs2, err := Parse(strings.NewReader(tg.Locator))
		if err != nil || len(errs2) != 0 || len(again) != 1 || again[0].Kind != tg.Kind || again[0].Locator != tg.Locator {
			t.Fatalf("locator %q of %+v reads as %+v, %v, %v", tg.Locator, tg, again, errs2, err)
		}
	}
	if len(errs) > MaxLineErrors+1 {
		t.Fatalf("%d errors", len(errs))
	}
	for _, e := range errs {
		if e.Line < 1 || e.Line > lines || e.Err == nil {
			t.Fatalf("bad error %+v (%d lines)", e, lines)
		}
		for i := 0; i < len(e.Text); i++ {
			if e.Text[i] < ' ' || e.Text[i] > '~' {
				t.Fatalf("text not printable ASCII: %q", e.Text)
			}
		}
	}
}

func TestFixturesContract(t *testing.T) {
	for _, name := range []string{"good_server_remotes.json", "good_server_packages.json", "good_registry_list.json"} {
		in := readFixture(t, name)
		ts, errs := parseString(t, in)
		checkResult(t, []byte(in), ts, errs)
	}
	ts, errs := parseString(t, mixed)
	checkResult(t, []byte(mixed), ts, errs)
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"good_server_remotes.json", "good_server_packages.json", "good_registry_list.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(mixed))
	f.Fuzz(func(t *testing.T, in []byte) {
		ts, errs, err := Parse(bytes.NewReader(in))
		if err != nil {
			if errors.Is(err, errTooMany) {
				return
			}
			t.Fatalf("Parse: %v", err)
		}
		checkResult(t, in, ts, errs)
	})
}
