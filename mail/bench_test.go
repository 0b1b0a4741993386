package mail_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/probity-dev/probity/mail"
	"github.com/probity-dev/probity/mail/sink"
)

// BenchmarkSend sends b.N messages one after another (one goroutine, so one
// connection) to a loopback sink over STARTTLS with AUTH and reports messages/s;
// the target is at least 200/s. The sink keeps the messages in memory, so that the
// sender is measured rather than the disk; "eml-files" has it also write each
// message to its directory, as in the demo, and "4conns" sends from four
// goroutines over four connections.
//
//	go test ./mail -run '^$' -bench Send -count 5
func BenchmarkSend(b *testing.B) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(rsaKey)
	if err != nil {
		b.Fatal(err)
	}
	rsaFile := writeKey(b, "PRIVATE KEY", der)
	edFile := ed25519KeyFile(b)
	for _, bc := range []struct {
		name  string
		dkim  string
		files bool
	}{
		{"starttls+auth", "", false},
		{"starttls+auth+dkim-ed25519", edFile, false},
		{"starttls+auth+dkim-rsa2048", rsaFile, false},
		{"starttls+auth+eml-files", "", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			sk := benchSink(b, bc.files)
			cfg := config(sk)
			if bc.dkim != "" {
				cfg.DKIM = &mail.DKIMConfig{Domain: "probity.example", Selector: "s1", KeyFile: bc.dkim}
			}
			s := newSender(b, cfg)
			ctx := context.Background()
			m := sample()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				m.MessageID = "bench-" + strconv.Itoa(i) + "@probity.example"
				if err := s.Send(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			if got := len(sk.Messages()); got != b.N {
				b.Fatalf("the sink got %d messages, want %d", got, b.N)
			}
		})
	}

	// Four goroutines share one Sender with MaxConns 4, as concurrent delivery
	// jobs would: the round trips of one connection overlap the others'.
	b.Run("starttls+auth-4conns", func(b *testing.B) {
		sk := benchSink(b, false)
		cfg := config(sk)
		cfg.MaxConns = 4
		s := newSender(b, cfg)
		var n atomic.Int64
		b.ReportAllocs()
		b.SetParallelism((4 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			m := sample()
			for pb.Next() {
				m.MessageID = "bench-" + strconv.FormatInt(n.Add(1), 10) + "@probity.example"
				if err := s.Send(context.Background(), m); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
}

// benchSink is secureSink without bounds that a benchmark would reach, keeping
// messages in memory only unless files is set.
func benchSink(b *testing.B, files bool) *sink.Sink {
	dir := ""
	if files {
		dir = b.TempDir()
	}
	sk, err := sink.Start("127.0.0.1:0", dir, sink.Options{
		STARTTLS: true, Username: testUser, Password: testPass, MaxMessages: 1 << 20, MaxBytes: 4 << 30,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sk.Close() })
	return sk
}
