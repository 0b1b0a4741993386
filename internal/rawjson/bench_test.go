package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkUnquote reads strings as Walk and Members do: plain ASCII, plain text that
// is not ASCII, and text with escapes (as encoding/json writes <, > and &).
func BenchmarkUnquote(b *testing.B) {
	texts := map[string]string{
		"ascii":   strings.Repeat("Returns the stored record for the given key. ", 20),
		"unicode": strings.Repeat("Gibt den gespeicherten Datensatz zurück — 検索. ", 20),
		"escaped": strings.Repeat("<b>Returns</b> the \"record\" & more\n", 25),
	}
	for _, name := range []string{"ascii", "unicode", "escaped"} {
		q, err := json.Marshal(texts[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			b.ReportAllocs()
			for b.Loop() {
				if UnquoteView(q) == "" {
					b.Fatal("empty")
				}
			}
		})
	}
}
