package supply

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/probity-dev/probity/locator"
)

// The package_name check (typosquatting) compares a package's name with a list of popular
// npm and PyPI packages relevant to MCP (data/popular-packages.txt, see data/README.md).
//
// A name is similar to a popular one of the same ecosystem when any of these holds:
//
//   - variant: both names have the same skeleton. The skeleton of a name is its NFKD
//     form (compatibility characters such as fullwidth letters and ligatures folded),
//     lower-cased, with combining marks dropped, confusable characters mapped to
//     one prototype (Cyrillic and Greek homoglyphs of Latin letters such as а е о р с
//     у х і ο ν ρ; 0→o; 1, i and | → l; then rn→m and vv→w) and every character that
//     is not a letter or digit removed, so separators (- _ . and none), the npm scope
//     markers (@ and /) and case do not count: "mcp_server_x", "mcpserverx" and
//     "mcp-server-x" are variants of one another, and so are "modelcontextprotocol-sdk"
//     and "@modelcontextprotocol/sdk";
//   - edits (seed 004: "ein oder zwei Buchstaben"): the Damerau–Levenshtein distance
//     between the skeletons (insertions, deletions, substitutions and transpositions of
//     adjacent characters, where a transposed pair may be edited again, so the
//     unrestricted distance, not the optimal-string-alignment one) is at most 1 for
//     names of 4 to 7 characters and at most 2 for names of 8 or more, except that two
//     names under different npm scopes (or one scoped and one not) are allowed 1 edit
//     only, unless their bare names are the same (then every edit is in the scope, the
//     typo of an owner's name: "@modelcontxtprotocal/sdk"). The length is that of the
//     shorter skeleton after removing an MCP affix that both names share ("mcpserver" or
//     "mcp" at the start, the same at the end): the affix says nothing about who made
//     the package, so "mcp-server-gh" is not a squat of "mcp-server-git" (stems of 2 and
//     3 characters) but "mcp-server-stack" is 1 edit from "mcp-server-slack". Names
//     shorter than 4 characters match only as variants: one edit is a third of such a
//     name, and most three-letter names are one edit from a popular one.
//
// The budget was chosen by measuring the false positives against the popular list
// itself (TestTyposquatFalsePositives: every popular name checked against the others of
// its ecosystem, owners told apart by npm scope and recorded GitHub owner): on the list
// of 2026-11-30 (2,197 names) the rule flags 56 names, 2.55 % (npm 34 of 1,324, 2.57 %;
// PyPI 22 of 873, 2.52 %), against 2.96 % without the scope rule, 4.23 % with 2 edits from 6 characters,
// 7.83 % with 2 edits from 4, and 1.73 % with never more than 1 edit. What remains are
// real neighbours such as "call-bind"/"call-bound", "toml"/"tomli" and
// "http-proxy-agent"/"https-proxy-agent", which a new package with such a name should
// be flagged for.
//
// Deliberately not similar, because independent authors choose such names for their own
// packages and a match is a serious finding:
//
//   - a popular scoped name reused under another scope, or without one ("@acme/express",
//     "@acme/server-filesystem", "playwright-mcp-server" next to
//     "@executeautomation/playwright-mcp-server"): the scope is the namespace that tells
//     them apart, and forks of MCP servers are published that way. A scope that only
//     lost its markers ("modelcontextprotocol-sdk") or has a typo ("@modeIcontextprotocol/sdk")
//     is similar, by the rules above;
//   - a name that adds or removes whole words, separated by "-", "_", "." or "/", at its
//     start or end ("mcp-atlassian-kw", "ff-mcp-atlassian" next to "mcp-atlassian"):
//     that is combosquatting, not a typing mistake, and the way plugins and forks are
//     named;
//   - reordered MCP affixes ("slack-mcp-server" and "mcp-server-slack": independent
//     servers for one product follow either convention).
//
// A name that is itself on the list (the same ecosystem's canonical name: npm names
// compared lower-cased, PyPI names normalized per PEP 503) is never flagged. Matches with
// the same owner are dropped by the check (see checkPackageName).
//
// Matching is indexed: variants by a map of skeletons; edits only against the popular
// names whose skeleton length is within 2, after a histogram lower bound (each edit
// changes the character counts by at most 2) rules most of them out, so one name costs
// tens of microseconds against a few thousand popular ones (BenchmarkTyposquat).

//go:embed data/popular-packages.txt
var popularPackagesTxt string

// PopularPackage is one line of a popular-package list.
type PopularPackage struct {
	// Ecosystem is "npm" or "pypi".
	Ecosystem string
	// Name is the name as the registry spells it (npm: with scope).
	Name string
	// Repository is the package's source, https://github.com/OWNER/REPO, or "" when the
	// list records none.
	Repository string
}

// PopularList is a parsed list of popular packages, indexed for the package_name check.
// It is safe for concurrent use.
type PopularList struct {
	pkgs []PopularPackage
	// Comments are the list's leading comment lines (its source and date), without "#".
	Comments []string
	eco      map[string]*squatIndex
}

// squatIndex indexes one ecosystem's popular names.
type squatIndex struct {
	canonical map[string]bool  // canonical names
	skeleton  map[string][]int // skeleton → entries
	byLen     map[int][]int    // skeleton length in runes → entries
	entries   []squatEntry     // parallel to pkgs
	pkgs      []PopularPackage // this ecosystem's packages
}

type squatEntry struct {
	skel  []rune
	histo squatHisto
}

// squatHisto counts a skeleton's characters in 37 buckets (a–z, 0–9, other): each edit
// changes the L1 distance of two histograms by at most 2, so half of it is a lower
// bound of the Damerau–Levenshtein distance, computed in a few dozen operations.
type squatHisto [37]uint8

// Bounds of a popular-package list.
const (
	maxPopularLines = 100_000
	maxNameLen      = 214 // npm's limit; PyPI names are shorter in practice
)

// ParsePopularList reads a popular-package list: lines "ecosystem name repository"
// separated by single spaces, ecosystem "npm" or "pypi", repository
// https://github.com/OWNER/REPO or "-", sorted by ecosystem then name, no duplicates;
// lines starting with "#" are comments, blank lines are ignored. It refuses anything
// else, and lists of more than 100,000 lines.
func ParsePopularList(r io.Reader) (*PopularList, error) {
	l := &PopularList{eco: map[string]*squatIndex{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 4096)
	lines := 0
	var prev PopularPackage
	seen := map[string]bool{}
	for sc.Scan() {
		lines++
		if lines > maxPopularLines {
			return nil, fmt.Errorf("popular list: more than %d lines", maxPopularLines)
		}
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if len(l.pkgs) == 0 {
				l.Comments = append(l.Comments, strings.TrimSpace(strings.TrimPrefix(line, "#")))
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) != 3 {
			return nil, fmt.Errorf("popular list: line %d: want 3 fields separated by single spaces", lines)
		}
		p := PopularPackage{Ecosystem: f[0], Name: f[1], Repository: f[2]}
		if p.Ecosystem != "npm" && p.Ecosystem != "pypi" {
			return nil, fmt.Errorf("popular list: line %d: unknown ecosystem %q", lines, p.Ecosystem)
		}
		if !validPackageName(p.Ecosystem, p.Name) {
			return nil, fmt.Errorf("popular list: line %d: invalid %s name %q", lines, p.Ecosystem, p.Name)
		}
		if p.Repository == "-" {
			p.Repository = ""
		} else if _, _, ok := ParseGitHubURL(p.Repository); !ok || !strings.HasPrefix(p.Repository, "https://github.com/") {
			return nil, fmt.Errorf("popular list: line %d: repository %q is not https://github.com/OWNER/REPO", lines, p.Repository)
		} else {
			p.Repository = NormalizeRepositoryURL(p.Repository)
		}
		key := p.Ecosystem + " " + canonicalName(p.Ecosystem, p.Name)
		if seen[key] {
			return nil, fmt.Errorf("popular list: line %d: duplicate %s", lines, key)
		}
		seen[key] = true
		if len(l.pkgs) > 0 && (p.Ecosystem < prev.Ecosystem || p.Ecosystem == prev.Ecosystem && p.Name <= prev.Name) {
			return nil, fmt.Errorf("popular list: line %d: not sorted", lines)
		}
		prev = p
		l.pkgs = append(l.pkgs, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("popular list: %w", err)
	}
	if len(l.pkgs) == 0 {
		return nil, fmt.Errorf("popular list: no packages")
	}
	for _, p := range l.pkgs {
		l.index(p)
	}
	return l, nil
}

func (l *PopularList) index(p PopularPackage) {
	ix := l.eco[p.Ecosystem]
	if ix == nil {
		ix = &squatIndex{canonical: map[string]bool{}, skeleton: map[string][]int{}, byLen: map[int][]int{}}
		l.eco[p.Ecosystem] = ix
	}
	i := len(ix.pkgs)
	ix.pkgs = append(ix.pkgs, p)
	ix.canonical[canonicalName(p.Ecosystem, p.Name)] = true
	s := skeleton(p.Name)
	ix.skeleton[s] = append(ix.skeleton[s], i)
	r := []rune(s)
	ix.entries = append(ix.entries, squatEntry{skel: r, histo: histogram(r)})
	ix.byLen[len(r)] = append(ix.byLen[len(r)], i)
}

// Len returns the number of packages on the list.
func (l *PopularList) Len() int { return len(l.pkgs) }

// LenEcosystem returns the number of packages of one ecosystem on the list.
func (l *PopularList) LenEcosystem(ecosystem string) int {
	if ix := l.eco[ecosystem]; ix != nil {
		return len(ix.pkgs)
	}
	return 0
}

var embeddedPopular = sync.OnceValues(func() (*PopularList, error) {
	return ParsePopularList(strings.NewReader(popularPackagesTxt))
})

// EmbeddedPopularList returns the list shipped in data/popular-packages.txt, parsed once.
func EmbeddedPopularList() (*PopularList, error) { return embeddedPopular() }

// The kinds of similarity a SquatMatch reports.
const (
	SquatEdits      = "edits"      // within the Damerau–Levenshtein budget
	SquatSeparator  = "separator"  // the same but for separators, scope markers and case
	SquatConfusable = "confusable" // the same but for confusable characters (and separators)
)

// SquatMatch is a popular package a name is similar to.
type SquatMatch struct {
	Popular PopularPackage
	// Kind is SquatEdits, SquatSeparator or SquatConfusable.
	Kind string
	// Distance is the Damerau–Levenshtein distance of the skeletons (0 for the other
	// kinds).
	Distance int
}

// maxSquatMatches bounds the matches Similar returns.
const maxSquatMatches = 16

// Similar returns the popular packages of ecosystem that name is similar to, as
// documented above, at most 16, without any owner exclusion. It returns none when name
// is itself on the list, and none for an ecosystem the list does not cover or a name
// longer than 214 bytes.
func (l *PopularList) Similar(ecosystem, name string) []SquatMatch {
	ix := l.eco[ecosystem]
	if ix == nil || name == "" || len(name) > maxNameLen {
		return nil
	}
	if ix.canonical[canonicalName(ecosystem, name)] {
		return nil
	}
	return ix.similar(name, -1, editBudget)
}

// similar returns the popular packages name is similar to under the edit budget rule
// budget, leaving out entry self (-1: none).
func (ix *squatIndex) similar(name string, self int, budget budgetFunc) []SquatMatch {
	var out []SquatMatch
	seen := map[int]bool{self: true}
	add := func(i int, kind string, d int) {
		if !seen[i] && len(out) < maxSquatMatches {
			seen[i] = true
			out = append(out, SquatMatch{Popular: ix.pkgs[i], Kind: kind, Distance: d})
		}
	}
	skel := skeleton(name)
	for _, i := range ix.skeleton[skel] {
		kind := SquatConfusable
		if separatorKey(name) == separatorKey(ix.pkgs[i].Name) {
			kind = SquatSeparator
		}
		add(i, kind, 0)
	}
	r := []rune(skel)
	if len(r) < 2 {
		return out
	}
	h := histogram(r)
	var dl damerau
	for n := len(r) - maxEdits; n <= len(r)+maxEdits; n++ {
		for _, i := range ix.byLen[n] {
			if seen[i] {
				continue
			}
			e := &ix.entries[i]
			b := budget(name, ix.pkgs[i].Name, r, e.skel)
			if b == 0 || absInt(len(r)-len(e.skel)) > b || histoBound(&h, &e.histo) > b {
				continue
			}
			if d := dl.distance(r, e.skel); d > 0 && d <= b && !wordsAdded(name, ix.pkgs[i].Name) {
				add(i, SquatEdits, d)
			}
		}
	}
	return out
}

// The edit budget of the package_name check (see the rules above and
// TestTyposquatFalsePositives, which measures it against the popular list itself).
const (
	minEditLen = 4 // shorter stems match only as variants
	twoEditLen = 8 // stems this long or longer allow 2 edits
	maxEdits   = 2
)

// budgetFunc gives the edits allowed between a name and a popular name, with their
// skeletons.
type budgetFunc func(name, popular string, a, b []rune) int

// editBudget is the number of edits allowed between two names: 1 from minEditLen
// characters, 2 from twoEditLen, counted on the shorter skeleton after removing a
// shared MCP affix; at most 1 when the names differ in npm scope (one scoped and the
// other not, or two scopes).
func editBudget(name, popular string, a, b []rune) int {
	n := min(stemLen(a, b), len(a), len(b))
	e := 0
	switch {
	case n >= twoEditLen:
		e = 2
	case n >= minEditLen:
		e = 1
	}
	if e > 1 && scopesDiffer(name, popular) {
		e = 1
	}
	return e
}

// scopesDiffer reports whether two npm names are under different scopes, or one under a
// scope and the other under none, except two scoped names whose bare names are the same
// (skeletons): their edits are all in the scope, the typo of an owner's name.
func scopesDiffer(a, b string) bool {
	sa, ba := splitScope(a)
	sb, bb := splitScope(b)
	if sa == sb {
		return false
	}
	return sa == "" || sb == "" || skeleton(ba) != skeleton(bb)
}

// mcpAffixes are the skeletons of the affixes that say a package is an MCP server or
// library, longest first.
var mcpAffixes = []string{"mcpserver", "mcp"}

// stemLen returns the length of the shorter skeleton once an MCP affix that both share
// (at the start, and at the end) is removed. A name that is only the affix ("mcp-server")
// has a stem of 0: "aa-mcp-server" is not a typo of it.
func stemLen(a, b []rune) int {
	la, lb := len(a), len(b)
	for _, f := range mcpAffixes {
		if hasRunePrefix(a, f) && hasRunePrefix(b, f) {
			la -= len(f)
			lb -= len(f)
			break
		}
	}
	for _, f := range mcpAffixes {
		if hasRuneSuffix(a, f) && hasRuneSuffix(b, f) && la >= len(f) && lb >= len(f) {
			la -= len(f)
			lb -= len(f)
			break
		}
	}
	return min(la, lb)
}

func hasRunePrefix(r []rune, s string) bool {
	if len(r) < len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if r[i] != rune(s[i]) {
			return false
		}
	}
	return true
}

func hasRuneSuffix(r []rune, s string) bool {
	if len(r) < len(s) {
		return false
	}
	off := len(r) - len(s)
	for i := 0; i < len(s); i++ {
		if r[off+i] != rune(s[i]) {
			return false
		}
	}
	return true
}

func absInt(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func histogram(r []rune) squatHisto {
	var h squatHisto
	for _, c := range r {
		b := 36
		switch {
		case c >= 'a' && c <= 'z':
			b = int(c - 'a')
		case c >= '0' && c <= '9':
			b = 26 + int(c-'0')
		}
		if h[b] < 255 {
			h[b]++
		}
	}
	return h
}

// histoBound is a lower bound of the edit distance of two skeletons: half the L1
// distance of their histograms, rounded up.
func histoBound(a, b *squatHisto) int {
	d := 0
	for i := range a {
		d += absInt(int(a[i]) - int(b[i]))
	}
	return (d + 1) / 2
}

// damerau computes the unrestricted Damerau–Levenshtein distance (Lowrance and Wagner's
// algorithm), reusing its buffers between calls. Not safe for concurrent use.
type damerau struct {
	d    []int
	last map[rune]int
}

// distance returns the Damerau–Levenshtein distance of a and b: the least number of
// insertions, deletions, substitutions and transpositions of two adjacent characters
// turning a into b, where characters between a transposed pair may be inserted or
// deleted too (so "ca" to "abc" is 2, where optimal string alignment gives 3).
func (dl *damerau) distance(a, b []rune) int {
	la, lb := len(a), len(b)
	w := lb + 2
	size := (la + 2) * w
	if cap(dl.d) < size {
		dl.d = make([]int, size)
	}
	d := dl.d[:size]
	if dl.last == nil {
		dl.last = map[rune]int{}
	}
	clear(dl.last)
	maxDist := la + lb
	at := func(i, j int) *int { return &d[(i+1)*w+(j+1)] }
	*at(-1, -1) = maxDist
	for i := 0; i <= la; i++ {
		*at(i, -1) = maxDist
		*at(i, 0) = i
	}
	for j := 0; j <= lb; j++ {
		*at(-1, j) = maxDist
		*at(0, j) = j
	}
	for i := 1; i <= la; i++ {
		db := 0
		for j := 1; j <= lb; j++ {
			i1 := dl.last[b[j-1]]
			j1 := db
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
				db = j
			}
			v := min(
				*at(i-1, j-1)+cost,
				*at(i, j-1)+1,
				*at(i-1, j)+1,
				*at(i1-1, j1-1)+(i-i1-1)+1+(j-j1-1),
			)
			*at(i, j) = v
		}
		dl.last[a[i-1]] = i
	}
	return *at(la, lb)
}

// canonicalName is the name under which the ecosystem's registry identifies a package:
// npm names lower-cased, PyPI names normalized per PEP 503 (lower-cased, runs of "-",
// "_" and "." replaced by one "-").
func canonicalName(ecosystem, name string) string {
	if ecosystem == "pypi" {
		return locator.PEP503(name)
	}
	return strings.ToLower(name)
}

// wordsAdded reports whether one name is the other with whole words added at its start
// or end: both split at "-", "_", ".", "/" and "@" into lower-case words, the shorter
// list is a prefix or a suffix of the longer.
func wordsAdded(a, b string) bool {
	wa, wb := nameWords(a), nameWords(b)
	if len(wa) == len(wb) {
		return false
	}
	if len(wa) > len(wb) {
		wa, wb = wb, wa
	}
	if len(wa) == 0 {
		return false
	}
	return slices.Equal(wa, wb[:len(wa)]) || slices.Equal(wa, wb[len(wb)-len(wa):])
}

func nameWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(c rune) bool { return strings.ContainsRune("-_./@", c) })
}

// splitScope splits an npm name "@scope/name" into scope and name; an unscoped name has
// scope "".
func splitScope(name string) (scope, bare string) {
	if strings.HasPrefix(name, "@") {
		if i := strings.IndexByte(name, '/'); i > 1 {
			return strings.ToLower(name[1:i]), name[i+1:]
		}
	}
	return "", name
}

// separatorKey is a name lower-cased with everything but letters and digits removed:
// two names with one key differ only in separators, scope markers and case.
func separatorKey(name string) string {
	var b strings.Builder
	for _, c := range name {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			b.WriteRune(unicode.ToLower(c))
		}
	}
	return b.String()
}

// confusables maps characters to the Latin letter they are mistaken for: the digits and
// letters named in the package_name rules, and the Cyrillic and Greek lower-case letters
// drawn like a Latin one. Applied after NFKD (so accented forms such as ё and ї arrive
// without their marks) and lower-casing.
var confusables = map[rune]rune{
	'0': 'o', '1': 'l', 'i': 'l', '|': 'l', 'ı': 'l', 'ȷ': 'j', 'ɡ': 'g', 'ɩ': 'l',
	// Cyrillic
	'а': 'a', 'е': 'e', 'һ': 'h', 'і': 'l', 'ј': 'j', 'о': 'o', 'р': 'p', 'с': 'c',
	'у': 'y', 'х': 'x', 'ѕ': 's', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'ү': 'y',
	// Greek
	'α': 'a', 'ι': 'l', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'υ': 'u', 'χ': 'x',
}

// skeleton returns the form of name in which separators, case, scope markers, combining
// marks and confusable characters no longer differ (see the package_name rules above).
func skeleton(name string) string {
	var b []rune
	for _, c := range norm.NFKD.String(name) {
		c = unicode.ToLower(c)
		if p, ok := confusables[c]; ok {
			c = p
		}
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			b = append(b, c)
		}
	}
	// Multi-character confusables, on the mapped letters.
	out := b[:0]
	for i := 0; i < len(b); i++ {
		if i+1 < len(b) && (b[i] == 'r' && b[i+1] == 'n') {
			out = append(out, 'm')
			i++
			continue
		}
		if i+1 < len(b) && (b[i] == 'v' && b[i+1] == 'v') {
			out = append(out, 'w')
			i++
			continue
		}
		out = append(out, b[i])
	}
	return string(out)
}

// validPackageName reports whether name is a well-formed name of the ecosystem: npm,
// at most 214 characters of lower-case letters, digits and - . _ ~ with an optional
// @scope/; PyPI, letters, digits and - . _ starting and ending with a letter or digit.
func validPackageName(ecosystem, name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	okChar := func(c byte, extra string) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0
	}
	switch ecosystem {
	case "npm":
		bare := name
		if strings.HasPrefix(name, "@") {
			i := strings.IndexByte(name, '/')
			if i < 2 || i == len(name)-1 {
				return false
			}
			for j := 1; j < i; j++ {
				if !okChar(name[j], "-._~") {
					return false
				}
			}
			bare = name[i+1:]
		}
		if bare[0] == '.' || bare[0] == '_' {
			return false
		}
		for j := 0; j < len(bare); j++ {
			if !okChar(bare[j], "-._~") {
				return false
			}
		}
		return true
	case "pypi":
		alnum := func(c byte) bool { return okChar(c, "") || c >= 'A' && c <= 'Z' }
		for j := 0; j < len(name); j++ {
			if !alnum(name[j]) && !strings.ContainsRune("-._", rune(name[j])) {
				return false
			}
		}
		return alnum(name[0]) && alnum(name[len(name)-1])
	}
	return false
}
