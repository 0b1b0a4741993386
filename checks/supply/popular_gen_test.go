package supply

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGeneratePopular regenerates data/popular-packages.txt when run with
// -update-popular (see data/README.md):
//
//	go test ./checks/supply -run TestGeneratePopular -update-popular \
//	    -popular.npm=npm.tsv -popular.pypi=pypi.tsv [-popular.date=YYYY-MM-DD]
//
// Without the flag it only checks that the committed list parses and is large enough.
var (
	updatePopular = flag.Bool("update-popular", false, "rewrite data/popular-packages.txt from -popular.npm, -popular.pypi and data/popular-curated.txt")
	popularNPM    = flag.String("popular.npm", "", "TSV of npm packages: name, version, downloads a month, summary (header line first)")
	popularPyPI   = flag.String("popular.pypi", "", "TSV of PyPI packages: name, version, month, rank among the most downloaded, summary (header line first)")
	popularDate   = flag.String("popular.date", "", "the snapshot's date, YYYY-MM-DD (default today)")
)

// How many names each part of the list takes (see data/README.md).
const (
	genNPMMCPMinDownloads = 5000 // npm packages about MCP with at least this many downloads a month
	genNPMMCPMax          = 500
	genNPMAIMax           = 300 // the most downloaded npm packages about AI, LLMs and agents
	genNPMTopMax          = 700 // the most downloaded npm packages
	genPyPIMCPMax         = 300 // ranked PyPI packages about MCP
	genPyPIAIMax          = 300
	genPyPITopMax         = 500
)

var (
	genMCPRe   = regexp.MustCompile(`(?i)(^|[^a-z])mcp([^a-z]|$)|modelcontextprotocol|model context protocol`)
	genAIRe    = regexp.MustCompile(`(?i)openai|anthropic|claude|\bllms?\b|langchain|llama|ai-sdk|\bagents?\b|\bgpt|gemini|ollama|mistral|hugging ?face|embeddings?\b|\brag\b|\bai\b|transformers|tokeniz`)
	genNoiseRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}`) // generated per-build packages
)

type genRow struct {
	name    string
	score   int // npm: downloads a month; PyPI: minus the rank
	summary string
}

func TestGeneratePopular(t *testing.T) {
	if !*updatePopular {
		l, err := EmbeddedPopularList()
		if err != nil {
			t.Fatal(err)
		}
		if l.Len() < 1000 || l.LenEcosystem("npm") < 500 || l.LenEcosystem("pypi") < 300 {
			t.Fatalf("popular list: %d names (npm %d, pypi %d)", l.Len(), l.LenEcosystem("npm"), l.LenEcosystem("pypi"))
		}
		return
	}
	if *popularNPM == "" || *popularPyPI == "" {
		t.Fatal("-update-popular needs -popular.npm and -popular.pypi")
	}
	date := *popularDate
	if date == "" {
		date = time.Now().UTC().Format(time.DateOnly)
	}
	npmRows := readGenTSV(t, *popularNPM, func(f []string) (genRow, bool) {
		n, err := strconv.Atoi(f[2])
		return genRow{name: f[0], score: n, summary: genField(f, 3)}, err == nil
	})
	pypiRows := readGenTSV(t, *popularPyPI, func(f []string) (genRow, bool) {
		n, err := strconv.Atoi(f[3])
		return genRow{name: f[0], score: -n, summary: genField(f, 4)}, err == nil && n > 0
	})
	names := map[string]string{} // "eco name" → repository or "-"
	pick := func(eco string, rows []genRow, keep func(genRow) bool, limit int) int {
		n := 0
		for _, r := range rows {
			if n >= limit {
				break
			}
			if genNoiseRe.MatchString(r.name) || !validPackageName(eco, r.name) || !keep(r) {
				continue
			}
			names[eco+" "+r.name] = "-"
			n++
		}
		return n
	}
	isMCP := func(r genRow) bool { return genMCPRe.MatchString(r.name) || genMCPRe.MatchString(r.summary) }
	isAI := func(r genRow) bool { return genAIRe.MatchString(r.name) || genAIRe.MatchString(r.summary) }
	counts := []int{
		pick("npm", npmRows, func(r genRow) bool { return isMCP(r) && r.score >= genNPMMCPMinDownloads }, genNPMMCPMax),
		pick("npm", npmRows, func(r genRow) bool { return !isMCP(r) && isAI(r) }, genNPMAIMax),
		pick("npm", npmRows, func(genRow) bool { return true }, genNPMTopMax),
		pick("pypi", pypiRows, isMCP, genPyPIMCPMax),
		pick("pypi", pypiRows, func(r genRow) bool { return !isMCP(r) && isAI(r) }, genPyPIAIMax),
		pick("pypi", pypiRows, func(genRow) bool { return true }, genPyPITopMax),
	}
	curated := 0
	for _, line := range readGenLines(t, "data/popular-curated.txt") {
		f := strings.Split(line, " ")
		if len(f) != 3 || !validPackageName(f[0], f[1]) {
			t.Fatalf("popular-curated.txt: bad line %q", line)
		}
		names[f[0]+" "+f[1]] = f[2]
		curated++
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, `# Popular npm and PyPI packages relevant to MCP servers. The package_name check
# (typosquatting) compares package names with this list; see README.md for its sources
# and how to refresh it.
# generated: %s by TestGeneratePopular (-update-popular)
# npm: download snapshot of %d packages: %d about MCP with >= %d downloads a month, the
#   %d most downloaded about AI, LLMs or agents, and the %d most downloaded of all
# pypi: snapshot of the %d most downloaded projects: %d about MCP, the %d first about AI,
#   LLMs or agents, and the %d first of all
# curated: %d lines of popular-curated.txt (names and repositories)
# format: ecosystem name repository ("-" when the list records none); sorted
`, date, len(npmRows), counts[0], genNPMMCPMinDownloads, counts[1], counts[2], len(pypiRows), counts[3], counts[4], counts[5], curated)
	for _, k := range keys {
		b.WriteString(k + " " + names[k] + "\n")
	}
	if _, err := ParsePopularList(strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("data/popular-packages.txt", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d names", len(keys))
}

func genField(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// readGenTSV reads a TSV with a header line, keeps the rows parse accepts and sorts them
// by score, best first (name breaks ties).
func readGenTSV(t *testing.T, path string, parse func([]string) (genRow, bool)) []genRow {
	t.Helper()
	var rows []genRow
	for i, line := range readGenLines(t, path) {
		if i == 0 {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 4 {
			continue
		}
		if r, ok := parse(f); ok {
			rows = append(rows, r)
		}
	}
	slices.SortFunc(rows, func(a, b genRow) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return strings.Compare(a.name, b.name)
	})
	return rows
}

func readGenLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
