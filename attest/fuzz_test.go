package attest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
	"golang.org/x/text/unicode/norm"
)

// The seed corpora are the files under testdata/fuzz/<FuzzName>/; go test runs them as
// ordinary tests.

// FuzzCanonicalize holds Canonicalize to the jcs reference on every document it accepts,
// checks that its output is a fixed point that IsCanonical accepts, and that what it
// rejects is rejected by CheckJSON too, with a *JSONError inside the input.
func FuzzCanonicalize(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := Canonicalize(doc)
		cerr := CheckJSON(doc)
		if (err == nil) != (cerr == nil) || (err != nil && err.Error() != cerr.Error()) {
			t.Fatalf("Canonicalize and CheckJSON disagree: %v, %v", err, cerr)
		}
		if err != nil {
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("error %v is a %T, not a *JSONError", err, err)
			}
			if je.Offset < 0 || je.Offset > len(doc) {
				t.Fatalf("offset %d outside the %d-byte input", je.Offset, len(doc))
			}
			if out != nil {
				t.Fatalf("output %q returned with an error", out)
			}
			if IsCanonical(doc) {
				t.Fatal("IsCanonical accepts a document Canonicalize rejects")
			}
			// Where both encoding/json and the reference accept the document, only
			// the profile's own rules may reject it.
			if json.Valid(doc) {
				if _, jerr := jcs.Transform(doc); jerr == nil &&
					!strings.Contains(je.Msg, "NFC") && !strings.Contains(je.Msg, "2^53") && !strings.Contains(je.Msg, "nesting") {
					t.Fatalf("rejected %q (%v) though encoding/json and jcs accept it", doc, err)
				}
			}
			return
		}
		if !json.Valid(doc) {
			t.Fatalf("accepted %q, which encoding/json rejects", doc)
		}
		checkCanonical(t, doc)
		checkSplit(t, doc)
		checkSplit(t, out)
		if IsCanonical(doc) != bytes.Equal(doc, out) {
			t.Fatalf("IsCanonical(%q) = %v, but Canonicalize returns %q", doc, IsCanonical(doc), out)
		}
	})
}

// FuzzFingerprint checks that the fingerprints never panic, are well formed, and do not
// change when every string and key is rewritten to NFD or NFC, the document is
// re-encoded, or the tools are reversed.
func FuzzFingerprint(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		oneScan, oneErr := FingerprintDocument(doc)
		tools, ins, err := ParseToolsDocument(doc)
		if err != nil {
			if oneErr == nil {
				t.Fatalf("FingerprintDocument accepted what ParseToolsDocument rejects: %v", err)
			}
			return
		}
		if CheckJSON(doc) != nil {
			t.Fatal("ParseToolsDocument accepted a document CheckJSON rejects")
		}
		fp, err := ComputeFingerprints(tools, ins)
		if (err == nil) != (oneErr == nil) || fp != oneScan {
			t.Fatalf("FingerprintDocument (%+v, %v) and ParseToolsDocument+ComputeFingerprints (%+v, %v) disagree", oneScan, oneErr, fp, err)
		}
		if err != nil {
			return
		}
		for _, d := range []string{fp.Toolset, fp.Schema, fp.Surface, fp.Instructions} {
			if !digestPattern.MatchString(d) {
				t.Fatalf("malformed fingerprint %q", d)
			}
		}
		slices.Reverse(tools)
		if fp2, err := ComputeFingerprints(tools, ins); err != nil || fp2 != fp {
			t.Fatalf("reversing the tools changed the fingerprints: %+v, %v", fp2, err)
		}
		for name, form := range map[string]norm.Form{"NFD": norm.NFD, "NFC": norm.NFC} {
			cp := rewriteStrings(t, doc, form.String)
			fp2, err := fingerprintDocument(cp)
			if err != nil {
				t.Fatalf("%s copy %q: %v", name, cp, err)
			}
			if fp2 != fp {
				t.Fatalf("%s copy %q changes the fingerprints:\n%+v\n%+v", name, cp, fp2, fp)
			}
		}
	})
}

// rewriteStrings decodes doc, applies f to every string and key, and encodes it again.
func rewriteStrings(t *testing.T, doc []byte, f func(string) string) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json rejects %q: %v", doc, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(mapStrings(v, f)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFuzzCorporaPresent(t *testing.T) {
	for _, name := range []string{"FuzzCanonicalize", "FuzzFingerprint"} {
		files, err := os.ReadDir(filepath.Join("testdata", "fuzz", name))
		if err != nil || len(files) < 10 {
			t.Errorf("seed corpus of %s: %d files, %v", name, len(files), err)
		}
	}
}

// randomJSON writes a random document to b: nested objects and arrays, strings and keys
// drawn from characters that NFC, escaping and UTF-16 ordering treat specially, written
// with random escapes and whitespace, and numbers in many notations.
type randomJSON struct {
	r *rand.Rand
	b []byte
}

var randomRunes = []rune{
	'a', 'b', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', 0, 0x1f, 0x7f, 0x80, 'e', 0x301, 'A', 0x30a, 0xc5, 0xe9,
	0x212b, 0x212a, 0xfb33, 0x5d3, 0x5bc, 0x1100, 0x1161, 0xac00, 0x1e9b, 0x323, 0x2028, 0xfffd, 0xe000, 0xff21,
	0xffff, 0x1f600, 0x10000, 0x10ffff, 0xd7ff, 0x0344, 0x0f73,
}

func (g *randomJSON) ws() {
	for g.r.IntN(4) == 0 {
		g.b = append(g.b, " \t\n\r"[g.r.IntN(4)])
	}
}

func (g *randomJSON) str(maxLen int) {
	g.b = append(g.b, '"')
	for range g.r.IntN(maxLen + 1) {
		c := randomRunes[g.r.IntN(len(randomRunes))]
		switch {
		case c == '"' || c == '\\':
			g.b = append(g.b, '\\', byte(c))
		case c < 0x20 || g.r.IntN(5) == 0:
			if c >= 0x10000 {
				hi, lo := utf16.EncodeRune(c)
				g.b = fmt.Appendf(g.b, `\u%04x\u%04X`, hi, lo)
			} else if c == '\n' && g.r.IntN(2) == 0 {
				g.b = append(g.b, `\n`...)
			} else {
				g.b = fmt.Appendf(g.b, `\u%04x`, c)
			}
		case c == '/' && g.r.IntN(2) == 0:
			g.b = append(g.b, `\/`...)
		default:
			g.b = utf8.AppendRune(g.b, c)
		}
	}
	g.b = append(g.b, '"')
}

func (g *randomJSON) number() {
	switch g.r.IntN(6) {
	case 0:
		g.b = strconv.AppendInt(g.b, g.r.Int64N(1<<54)-1<<53, 10)
	case 1:
		g.b = strconv.AppendInt(g.b, g.r.Int64N(2000)-1000, 10)
	case 2:
		g.b = strconv.AppendFloat(g.b, g.r.NormFloat64()*math.Pow(10, float64(g.r.IntN(60)-30)), 'e', -1, 64)
	case 3:
		g.b = strconv.AppendFloat(g.b, g.r.Float64()*1e6, 'f', g.r.IntN(8)+1, 64)
	case 4:
		g.b = strconv.AppendFloat(g.b, math.Float64frombits(g.r.Uint64()&^(1<<62)), 'g', -1, 64)
	default:
		g.b = append(g.b, []string{"0", "-0", "0.0", "1E2", "1e+21", "1e-7", "4.50", "-0e-5"}[g.r.IntN(8)]...)
	}
}

func (g *randomJSON) value(depth int) {
	g.ws()
	k := g.r.IntN(10)
	switch {
	case depth == 0:
		k = g.r.IntN(4) // a container at the top
	case depth > 4 && k < 5:
		k += 5
	}
	switch {
	case k < 2:
		g.b = append(g.b, '{')
		n := g.r.IntN(8)
		for i := range n {
			if i > 0 {
				g.b = append(g.b, ',')
			}
			g.ws()
			g.str(3)
			g.ws()
			g.b = append(g.b, ':')
			g.value(depth + 1)
		}
		g.ws()
		g.b = append(g.b, '}')
	case k < 4:
		g.b = append(g.b, '[')
		for i := range g.r.IntN(5) {
			if i > 0 {
				g.b = append(g.b, ',')
			}
			g.value(depth + 1)
		}
		g.ws()
		g.b = append(g.b, ']')
	case k < 7:
		g.str(8)
	case k < 9:
		g.number()
	default:
		g.b = append(g.b, []string{"true", "false", "null"}[g.r.IntN(3)]...)
	}
	g.ws()
}

// TestCanonicalizeRandomDocuments holds Canonicalize to the reference on generated
// documents, and checks each rejection against an independent reason: keys equal
// after NFC, or an integer beyond 2^53.
func TestCanonicalizeRandomDocuments(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	g := &randomJSON{r: rand.New(rand.NewPCG(7, 11))}
	accepted := 0
	for range n {
		g.b = g.b[:0]
		g.value(0)
		doc := g.b
		if _, err := Canonicalize(doc); err != nil {
			if !hasNFCDuplicateKeys(doc) && !hasUnsafeInteger(doc) {
				t.Fatalf("Canonicalize(%q): %v", doc, err)
			}
			continue
		}
		if hasNFCDuplicateKeys(doc) {
			t.Fatalf("Canonicalize accepts %q, which has keys equal after NFC", doc)
		}
		accepted++
		checkCanonical(t, doc)
		checkSplit(t, doc)
	}
	t.Logf("%d of %d accepted", accepted, n)
	if accepted < n/2 {
		t.Errorf("only %d of %d documents accepted", accepted, n)
	}
}

// hasNFCDuplicateKeys reports whether an object in doc has two keys equal after NFC.
func hasNFCDuplicateKeys(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var stack []map[string]bool
	expectKey := []bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, map[string]bool{})
				expectKey = append(expectKey, true)
				continue
			case '[':
				stack = append(stack, nil)
				expectKey = append(expectKey, false)
				continue
			default:
				stack, expectKey = stack[:len(stack)-1], expectKey[:len(expectKey)-1]
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1] != nil && expectKey[n-1] {
				k := norm.NFC.String(tok)
				if stack[n-1][k] {
					return true
				}
				stack[n-1][k] = true
				expectKey[n-1] = false
				continue
			}
		}
		if n := len(stack); n > 0 && stack[n-1] != nil {
			expectKey[n-1] = true
		}
	}
}

// hasUnsafeInteger reports whether doc holds an integer beyond ±2^53: an integer
// literal, or a number between 2^53 and 1e21 in magnitude.
func hasUnsafeInteger(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		n, ok := tok.(json.Number)
		if !ok {
			continue
		}
		if !strings.ContainsAny(string(n), ".eE") {
			if i, err := strconv.ParseInt(string(n), 10, 64); err != nil || i > 1<<53 || i < -(1<<53) {
				return true
			}
		} else if f, err := strconv.ParseFloat(string(n), 64); err == nil && math.Abs(f) > 1<<53 && math.Abs(f) < 1e21 {
			return true
		}
	}
}

// FuzzParseTombstoneDocument: a tombstone document from a log never panics the parser,
// and what it accepts is canonical and what Marshal writes of what it read.
func FuzzParseTombstoneDocument(f *testing.F) {
	doc, _ := TombstoneDocument{Entry: "e", Reason: "r", Removed: []RemovedRef{{Seq: 1, Kind: "probe", PayloadDigestHex: "d6709818060ec01433c73eb48ac52102d36baa1955b9f9db2ebd9bbaa5c2db42"}}}.Marshal()
	f.Add(doc)
	f.Add([]byte(`{"deletedAt":"2026-12-01T10:00:00.000Z","entry":"e","reason":"r","removed":[]}`))
	f.Add([]byte(`{"removed":[{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		td, err := ParseTombstoneDocument(b)
		if err != nil {
			return
		}
		if c, err := Canonicalize(b); err != nil || !bytes.Equal(c, b) {
			t.Fatalf("accepted a tombstone that is not canonical: %q", b)
		}
		if m, err := td.Marshal(); err != nil || !bytes.Equal(m, b) {
			t.Fatalf("accepted %q, which Marshal writes as %q (%v)", b, m, err)
		}
	})
}
