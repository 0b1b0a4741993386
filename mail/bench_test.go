package mail_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"strconv"
	"testing"

	"github.com/probity-dev/probity/mail"
	"github.com/probity-dev/probity/mail/sink"
)

// BenchmarkSend sends b.N messages one after another (one goroutine, so one
// connection) to a loopback sink over STARTTLS with AUTH, the sink writing each
// to its directory, and reports messages/s. The target is at least 200/s.
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
		name string
		dkim string
	}{
		{"starttls+auth", ""},
		{"starttls+auth+dkim-ed25519", edFile},
		{"starttls+auth+dkim-rsa2048", rsaFile},
	} {
		b.Run(bc.name, func(b *testing.B) {
			sk := secureSink(b, func(o *sink.Options) { o.MaxMessages = 1 << 20; o.MaxBytes = 4 << 30 })
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
}
