package supply

import (
	"strings"
	"testing"
)

const testPopular = `# test list
npm @modelcontextprotocol/sdk https://github.com/modelcontextprotocol/typescript-sdk
npm @modelcontextprotocol/server-filesystem https://github.com/modelcontextprotocol/servers
npm abc-toolkit -
npm express https://github.com/expressjs/express
npm lodash -
npm mcp-server-git -
npm mcp-server-slack -
npm npm -
npm openai https://github.com/openai/openai-node
npm preact -
npm react -
npm typescript https://github.com/microsoft/TypeScript
npm webpack -
pypi mcp https://github.com/modelcontextprotocol/python-sdk
pypi mcp-server-fetch https://github.com/modelcontextprotocol/servers
pypi requests https://github.com/psf/requests
`

func testPopularList(t testing.TB) *PopularList {
	t.Helper()
	l, err := ParsePopularList(strings.NewReader(testPopular))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestTyposquatSimilar(t *testing.T) {
	l := testPopularList(t)
	for _, tc := range []struct {
		note, eco, name string
		want            string // popular name matched, "" for none
		kind            string
		dist            int
	}{
		// Edits: one for 4–7 characters, two for 8+.
		{"1 deletion, 7 chars", "npm", "expres", "express", SquatEdits, 1},
		{"1 insertion, 7 chars", "npm", "expresss", "express", SquatEdits, 1},
		{"1 substitution, 5 chars", "npm", "reakt", "react", SquatEdits, 1},
		{"1 deletion down to 4 chars", "npm", "reac", "react", SquatEdits, 1},
		{"2 edits on 5 chars: no", "npm", "rxacx", "", "", 0},
		{"transposition", "npm", "lodahs", "lodash", SquatEdits, 1},
		{"transposition, 10 chars", "npm", "typescirpt", "typescript", SquatEdits, 1},
		{"2 deletions, 8+ chars", "npm", "typscrpt", "typescript", SquatEdits, 2},
		{"3 edits, 10 chars: no", "npm", "tpscrpt", "", "", 0},
		{"2 edits across an npm scope: no", "npm", "@t/ypscrpt", "", "", 0},
		{"1 edit across an npm scope", "npm", "@t/ypescrpt", "typescript", SquatEdits, 1},
		{"2 edits in the scope, same bare name", "npm", "@modelcontxtprotocal/sdk", "@modelcontextprotocol/sdk", SquatEdits, 2},
		{"true Damerau-Levenshtein: ca -> abc is 2", "npm", "ca-toolkit", "abc-toolkit", SquatEdits, 2},
		{"3-char name: no edits", "npm", "npx", "", "", 0},
		{"3-char name, confusable rn/m", "npm", "nprn", "npm", SquatConfusable, 0},
		// Separators and scopes.
		{"underscores", "npm", "mcp_server_git", "mcp-server-git", SquatSeparator, 0},
		{"no separators", "npm", "mcpservergit", "mcp-server-git", SquatSeparator, 0},
		{"dots", "npm", "mcp.server.git", "mcp-server-git", SquatSeparator, 0},
		{"scope flattened", "npm", "modelcontextprotocol-sdk", "@modelcontextprotocol/sdk", SquatSeparator, 0},
		{"scope with hyphens", "npm", "@model-context-protocol/sdk", "@modelcontextprotocol/sdk", SquatSeparator, 0},
		{"scope typo", "npm", "@modelcontextprotocal/sdk", "@modelcontextprotocol/sdk", SquatEdits, 1},
		{"scope dropped: not similar", "npm", "server-filesystem", "", "", 0},
		{"another scope: not similar", "npm", "@acme/server-filesystem", "", "", 0},
		{"popular name under a scope: not similar", "npm", "@acme/express", "", "", 0},
		{"PyPI: separators are the same project", "pypi", "mcp_server_fetch", "", "", 0},
		{"PyPI: case is the same project", "pypi", "Requests", "", "", 0},
		{"PyPI: no separators", "pypi", "mcpserverfetch", "mcp-server-fetch", SquatSeparator, 0},
		{"PyPI: 1 edit", "pypi", "requets", "requests", SquatEdits, 1},
		{"other ecosystem: not compared", "pypi", "expres", "", "", 0},
		// MCP affixes.
		{"reordered affix: not similar", "npm", "git-mcp-server", "", "", 0},
		{"short stem behind a shared affix", "npm", "mcp-server-gh", "", "", 0},
		{"1 edit in the stem", "npm", "mcp-server-slak", "mcp-server-slack", SquatEdits, 1},
		{"typo in the affix", "npm", "mcp-sever-slack", "mcp-server-slack", SquatEdits, 1},
		{"affix-only popular name", "pypi", "aa-mcp", "", "", 0},
		{"whole word added", "npm", "mcp-server-slack-kw", "", "", 0},
		{"whole word prepended", "npm", "my-express", "", "", 0},
		// Confusables.
		{"digit zero for o", "npm", "0penai", "openai", SquatConfusable, 0},
		{"digit one for l", "npm", "1odash", "lodash", SquatConfusable, 0},
		{"capital I for l", "npm", "Iodash", "lodash", SquatConfusable, 0},
		{"vv for w", "npm", "vvebpack", "webpack", SquatConfusable, 0},
		{"Cyrillic e", "npm", "\u0435xpress", "express", SquatConfusable, 0},
		{"Cyrillic s and o", "pypi", "reque\u0455t\u0455", "requests", SquatConfusable, 0},
		{"Greek omicron", "npm", "l\u03bfdash", "lodash", SquatConfusable, 0},
		{"fullwidth letters (NFKC)", "npm", "\uff45\uff58\uff50\uff52\uff45\uff53\uff53", "express", SquatConfusable, 0},
		{"accent", "npm", "expr\u00e9ss", "express", SquatConfusable, 0},
		// The popular names themselves.
		{"exact popular name", "npm", "express", "", "", 0},
		{"popular name 1 edit from another popular name", "npm", "preact", "", "", 0},
		{"exact, other case", "npm", "Express", "", "", 0},
		{"empty", "npm", "", "", "", 0},
		{"too long", "npm", strings.Repeat("a", 215), "", "", 0},
	} {
		got := l.Similar(tc.eco, tc.name)
		if tc.want == "" {
			if len(got) != 0 {
				t.Errorf("%s: Similar(%s, %q) = %+v, want none", tc.note, tc.eco, tc.name, got)
			}
			continue
		}
		if len(got) == 0 || got[0].Popular.Name != tc.want || got[0].Kind != tc.kind || got[0].Distance != tc.dist {
			t.Errorf("%s: Similar(%s, %q) = %+v, want %s (%s, %d)", tc.note, tc.eco, tc.name, got, tc.want, tc.kind, tc.dist)
		}
	}
}

func TestDamerauLevenshtein(t *testing.T) {
	var dl damerau
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "abc", 0},
		{"ca", "abc", 2}, // optimal string alignment gives 3
		{"ab", "ba", 1},
		{"abcdef", "abdcef", 1},
		{"kitten", "sitting", 3},
		{"express", "exprses", 1},
		{"a cat", "an act", 2},
		{"\u0435x", "ex", 1},
	} {
		if got := dl.distance([]rune(tc.a), []rune(tc.b)); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := dl.distance([]rune(tc.b), []rune(tc.a)); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestParsePopularList(t *testing.T) {
	for _, tc := range []struct{ note, text, err string }{
		{"good", "# c\nnpm a -\nnpm b https://github.com/o/r\npypi a -\n", ""},
		{"two spaces", "npm  a -\n", "3 fields"},
		{"tab", "npm\ta -\n", "3 fields"},
		{"unknown ecosystem", "cargo a -\n", "ecosystem"},
		{"bad npm name", "npm A -\n", "invalid"},
		{"bad pypi name", "pypi -a -\n", "invalid"},
		{"bad repository", "npm a https://gitlab.com/o/r\n", "repository"},
		{"unsorted", "npm b -\nnpm a -\n", "sorted"},
		{"duplicate", "npm a -\nnpm a -\n", "duplicate"},
		{"pypi duplicate after PEP 503", "pypi a-b -\npypi a_b -\n", "duplicate"},
		{"empty", "# only comments\n", "no packages"},
	} {
		_, err := ParsePopularList(strings.NewReader(tc.text))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: err %v, want %q", tc.note, err, tc.err)
		}
	}
	if _, err := ParsePopularList(strings.NewReader(strings.Repeat("#\n", maxPopularLines+1))); err == nil {
		t.Error("a list over the line bound parsed")
	}
}

func TestEmbeddedPopularList(t *testing.T) {
	l, err := EmbeddedPopularList()
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() < 1000 {
		t.Fatalf("%d names", l.Len())
	}
	for _, name := range []string{"@modelcontextprotocol/sdk", "express", "fastmcp", "@playwright/mcp"} {
		if !l.isListed("npm", name) {
			t.Errorf("npm %s is not on the list", name)
		}
	}
	for _, name := range []string{"mcp", "fastmcp", "requests", "anthropic", "openai", "pydantic"} {
		if !l.isListed("pypi", name) {
			t.Errorf("pypi %s is not on the list", name)
		}
	}
	if m := l.Similar("npm", "@modelcontextprotocol/sdc"); len(m) == 0 {
		t.Error("@modelcontextprotocol/sdc is not similar to anything")
	}
	if len(l.Comments) == 0 || !strings.Contains(strings.Join(l.Comments, " "), "generated") {
		t.Errorf("comments %q", l.Comments)
	}
}

// BenchmarkTyposquat compares names with the embedded list.
func BenchmarkTyposquat(b *testing.B) {
	l, err := EmbeddedPopularList()
	if err != nil {
		b.Fatal(err)
	}
	names := []string{"expresss", "mcp-server-slak", "@modelcontextprotocol/sdc", "fetch-weather-mcp", "lodahs", "my-unique-package-name", "0penai", "typescirpt"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l.Similar("npm", names[i%len(names)])
	}
}

func FuzzParsePopularList(f *testing.F) {
	f.Add(testPopular)
	f.Add("npm a -\nnpm a -\n")
	f.Add("pypi A_b https://github.com/o/r\n")
	f.Fuzz(func(t *testing.T, text string) {
		l, err := ParsePopularList(strings.NewReader(text))
		if err == nil && l.Len() == 0 {
			t.Fatal("an empty list parsed")
		}
	})
}

func FuzzSimilar(f *testing.F) {
	for _, s := range []string{"expresss", "@modelcontextprotocol/sdc", "\u0435xpress", "rnrnrn", "vvvv", "ca-toolkit", ""} {
		f.Add(s)
	}
	l := testPopularList(f)
	f.Fuzz(func(t *testing.T, name string) {
		for _, eco := range []string{"npm", "pypi"} {
			m := l.Similar(eco, name)
			if len(m) > maxSquatMatches {
				t.Fatalf("%d matches", len(m))
			}
			for _, x := range m {
				if x.Popular.Ecosystem != eco || canonicalName(eco, x.Popular.Name) == canonicalName(eco, name) {
					t.Fatalf("match %+v for %q", x, name)
				}
			}
		}
	})
}
