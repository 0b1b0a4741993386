package logaudit_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/probity-dev/probity/logaudit"
	"github.com/probity-dev/probity/logaudit/logaudittest"
)

// BenchmarkAudit200k audits a 200,000-leaf log from a local directory, every envelope
// verified (issue 15's target: under 60 s on two cores). The log is built once and
// cached under os.TempDir() (logaudittest.CachedLog); the first run spends most of its
// time signing it. Reproduce:
//
//	go test -run '^$' -bench Audit200k -benchtime 1x -count 5 ./logaudit/
func BenchmarkAudit200k(b *testing.B) {
	data, wkey, err := logaudittest.CachedLog(200000)
	if err != nil {
		b.Fatal(err)
	}
	cfg := logaudit.Config{Source: filepath.Join(data, "log"), WitnessKeys: []string{wkey}, MinWitnesses: 1}
	b.ResetTimer()
	for b.Loop() {
		rep, err := logaudit.Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if !rep.OK() || rep.Verified != 200000 {
			b.Fatalf("ok %v verified %d failures %+v", rep.OK(), rep.Verified, rep.Failures)
		}
	}
}
