package supply

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// The license check passes when the license is OSI-approved. It reads the package's
// declared license as an SPDX expression (SPDX 2.3 annex D): license ids, an optional
// "+" (or later), LicenseRef-/DocumentRef- references, "WITH" exceptions, "AND", "OR" and
// parentheses, WITH binding tighter than AND and AND tighter than OR; operators in any
// case, ids compared case-insensitively. An expression is OSI-approved when:
//
//   - an id is on the OSI list shipped in data/osi-licenses.json (the SPDX list's
//     osiApproved flag; deprecated ids such as GPL-2.0 are on it too); "id+" counts as
//     id; a WITH exception does not change the verdict of its license;
//   - LicenseRef-*, DocumentRef-* and ids not on the list are not OSI-approved;
//   - A AND B needs both; A OR B needs either.
//
// Expressions longer than 1,024 bytes, nested deeper than 32 parentheses, or that do not
// parse are refused.

//go:embed data/osi-licenses.json
var osiLicensesJSON []byte

// osiList is data/osi-licenses.json.
type osiList struct {
	Source    string   `json:"source"`
	Package   string   `json:"package"`
	Version   string   `json:"version"`
	Published string   `json:"published"`
	Retrieved string   `json:"retrieved"`
	Licenses  []string `json:"licenses"`
}

// osiSet returns the OSI-approved ids, lower-cased, parsed once from the embedded list.
var osiSet = sync.OnceValues(func() (map[string]bool, error) {
	var l osiList
	if err := json.Unmarshal(osiLicensesJSON, &l); err != nil {
		return nil, fmt.Errorf("couldn't parse osi-licenses.json: %w", err)
	}
	if len(l.Licenses) < 100 || len(l.Licenses) > 10_000 {
		return nil, fmt.Errorf("osi-licenses.json: %d licenses", len(l.Licenses))
	}
	set := make(map[string]bool, len(l.Licenses))
	for _, id := range l.Licenses {
		if !licenseIDChars(strings.TrimSuffix(id, "+")) {
			return nil, fmt.Errorf("osi-licenses.json: invalid id %q", id)
		}
		set[strings.ToLower(id)] = true
	}
	return set, nil
})

// Bounds of a license expression.
const (
	maxLicenseExprLen   = 1024
	maxLicenseExprDepth = 32
)

var errLicenseSyntax = errors.New("not an SPDX license expression")

// licenseVerdict is what judgeLicense found.
type licenseVerdict struct {
	// OSI says the expression as a whole is OSI-approved.
	OSI bool
	// NotOSI lists the license ids of the expression that are not OSI-approved, as
	// written (at most 8), which explain a failure.
	NotOSI []string
}

// judgeLicense parses an SPDX license expression and judges it against osi (lower-cased
// ids). It returns errLicenseSyntax (wrapped) when expr is not a well-formed expression.
func judgeLicense(expr string, osi map[string]bool) (licenseVerdict, error) {
	if len(expr) > maxLicenseExprLen {
		return licenseVerdict{}, fmt.Errorf("%w: longer than %d bytes", errLicenseSyntax, maxLicenseExprLen)
	}
	p := &licenseParser{toks: tokenizeLicense(expr), osi: osi}
	if len(p.toks) == 0 {
		return licenseVerdict{}, fmt.Errorf("%w: empty", errLicenseSyntax)
	}
	ok, err := p.or(0)
	if err != nil {
		return licenseVerdict{}, err
	}
	if p.pos != len(p.toks) {
		return licenseVerdict{}, fmt.Errorf("%w: unexpected %q", errLicenseSyntax, p.toks[p.pos])
	}
	return licenseVerdict{OSI: ok, NotOSI: p.notOSI}, nil
}

func tokenizeLicense(expr string) []string {
	var toks []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, c := range expr {
		switch {
		case c == '(' || c == ')':
			flush()
			toks = append(toks, string(c))
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
		default:
			cur.WriteRune(c)
		}
	}
	flush()
	return toks
}

type licenseParser struct {
	toks   []string
	pos    int
	osi    map[string]bool
	notOSI []string
}

func (p *licenseParser) peekOp(op string) bool {
	return p.pos < len(p.toks) && strings.EqualFold(p.toks[p.pos], op)
}

// or := and ("OR" and)*
func (p *licenseParser) or(depth int) (bool, error) {
	ok, err := p.and(depth)
	if err != nil {
		return false, err
	}
	for p.peekOp("OR") {
		p.pos++
		r, err := p.and(depth)
		if err != nil {
			return false, err
		}
		ok = ok || r
	}
	return ok, nil
}

// and := with ("AND" with)*
func (p *licenseParser) and(depth int) (bool, error) {
	ok, err := p.with(depth)
	if err != nil {
		return false, err
	}
	for p.peekOp("AND") {
		p.pos++
		r, err := p.with(depth)
		if err != nil {
			return false, err
		}
		ok = ok && r
	}
	return ok, nil
}

// with := primary ("WITH" exception-id)?
func (p *licenseParser) with(depth int) (bool, error) {
	ok, err := p.primary(depth)
	if err != nil {
		return false, err
	}
	if p.peekOp("WITH") {
		p.pos++
		if p.pos >= len(p.toks) || !licenseIDChars(p.toks[p.pos]) || isLicenseOperator(p.toks[p.pos]) {
			return false, fmt.Errorf("%w: WITH without an exception id", errLicenseSyntax)
		}
		p.pos++
	}
	return ok, nil
}

// primary := "(" or ")" | license-id ["+"] | LicenseRef-… | DocumentRef-…:LicenseRef-…
func (p *licenseParser) primary(depth int) (bool, error) {
	if p.pos >= len(p.toks) {
		return false, fmt.Errorf("%w: ends too early", errLicenseSyntax)
	}
	t := p.toks[p.pos]
	if t == "(" {
		if depth >= maxLicenseExprDepth {
			return false, fmt.Errorf("%w: nested deeper than %d", errLicenseSyntax, maxLicenseExprDepth)
		}
		p.pos++
		ok, err := p.or(depth + 1)
		if err != nil {
			return false, err
		}
		if p.pos >= len(p.toks) || p.toks[p.pos] != ")" {
			return false, fmt.Errorf("%w: unbalanced parentheses", errLicenseSyntax)
		}
		p.pos++
		return ok, nil
	}
	if t == ")" || isLicenseOperator(t) || !licenseIDChars(strings.TrimSuffix(t, "+")) {
		return false, fmt.Errorf("%w: unexpected %q", errLicenseSyntax, t)
	}
	p.pos++
	lower := strings.ToLower(t)
	ok := false
	switch {
	case strings.HasPrefix(lower, "licenseref-"), strings.HasPrefix(lower, "documentref-"):
	case p.osi[lower]:
		ok = true
	case strings.HasSuffix(lower, "+") && p.osi[strings.TrimSuffix(lower, "+")]:
		ok = true
	}
	if !ok && len(p.notOSI) < 8 {
		p.notOSI = append(p.notOSI, t)
	}
	return ok, nil
}

func isLicenseOperator(t string) bool {
	return strings.EqualFold(t, "AND") || strings.EqualFold(t, "OR") || strings.EqualFold(t, "WITH")
}

// licenseIDChars reports whether s is made of the characters of an SPDX id or reference
// (letters, digits, "-", "." and, for DocumentRef-…:LicenseRef-…, one ":"), at most 128.
func licenseIDChars(s string) bool {
	if s == "" || len(s) > 128 || strings.Count(s, ":") > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}
