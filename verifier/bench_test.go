package verifier_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
	"github.com/probity-dev/probity/verifier/cli"
)

func BenchmarkVerify(b *testing.B) {
	vk := newVectorKeys()
	env := sign(fullStatement(inWindow), vk.active)
	for b.Loop() {
		if _, err := verifier.Verify(env, vk.doc, verifier.DefaultPolicy()); err != nil {
			b.Fatal(err)
		}
	}
}

// writeExport writes a JSONL export of n envelopes: 1,000 distinct signed statements
// (distinct round ids and observation times), repeated. The verifier caches nothing, so a
// repeated envelope costs what a new one does.
func writeExport(tb testing.TB, n int) (path string, doc *keys.Document) {
	vk := newVectorKeys()
	const distinct = 1000
	lines := make([][]byte, distinct)
	base := mustTime(inWindow)
	for i := range lines {
		st := fullStatement(attest.FormatTime(base.Add(time.Duration(i) * time.Minute)))
		st.Predicate.(*attest.ProbePredicate).RoundID = fmt.Sprintf("r-bench-%06d", i)
		lines[i] = sign(st, vk.active)
	}
	path = filepath.Join(tb.TempDir(), "export.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		w.Write(lines[i%distinct])
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path, vk.doc
}

// BenchmarkVerifyExport120k verifies a JSONL export of 120,000 envelopes on every core,
// as "probity verify" does (the streaming is verifier/cli's; the benchmark stays here,
// beside the vector generator it signs its envelopes with). Goal: under 10 s wall on a 2-core machine.
func BenchmarkVerifyExport120k(b *testing.B) {
	path, doc := writeExport(b, 120000)
	for b.Loop() {
		sum, err := cli.VerifyPaths(context.Background(), []string{path}, cli.StreamConfig{Keys: doc, Policy: verifier.DefaultPolicy()})
		if err != nil || sum.Verified != 120000 {
			b.Fatalf("%+v %v", sum, err)
		}
	}
}
