package web

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/probity-dev/probity/attest"
)

// BenchmarkScanSurface reads every tool's texts and cost from a canonical surface of
// 2,000 tools whose texts hold escapes, invisible characters and text that is not
// ASCII (hostileTexts): the scan the first view of a big entry's tools pays.
func BenchmarkScanSurface(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	raws := make([]json.RawMessage, 2000)
	for i := range raws {
		m := map[string]any{"name": fmt.Sprintf("tool_%04d", i), "title": randomText(r), "description": randomText(r) + randomText(r),
			"inputSchema": map[string]any{"type": "object", "description": randomText(r)}}
		raw, err := json.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		raws[i] = raw
	}
	doc, err := attest.SurfaceDocument(raws)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := scanSurface(doc, func(t *scannedTool) {
			name, title, desc := t.texts()
			n += len(name) + len(title) + len(desc) + t.cost()
		}); err != nil || n == 0 {
			b.Fatal(err, n)
		}
	}
}
