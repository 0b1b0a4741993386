package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkAllow is one request of 1,000 clients in turn, half of them over their
// limit: the cost the rate limit adds to every request.
func BenchmarkAllow(b *testing.B) {
	now := time.Unix(1e9, 0)
	l, err := New(Config{PerSecond: 10, Burst: 40, MaxClients: 10000, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	clients := make([]string, 1000)
	for i := range clients {
		clients[i] = "203.0.113." + strconv.Itoa(i)
	}
	for i := range 500 { // the first half is over its limit
		for range 40 {
			l.Allow(clients[i])
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		l.Allow(clients[i%len(clients)])
	}
}

// BenchmarkAllowNewClients is a flood of new addresses against a full table: every
// request evicts.
func BenchmarkAllowNewClients(b *testing.B) {
	now := time.Unix(1e9, 0)
	l, err := New(Config{PerSecond: 10, Burst: 40, MaxClients: 10000, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		l.Allow(strconv.Itoa(i))
	}
}
