package web

import (
	"errors"
	"strings"
	"testing"
)

func TestMemo(t *testing.T) {
	// Each value costs its length plus memoOverhead: 100 bytes for 36 characters.
	m := newMemo[int, string](1000, func(s string) int { return len(s) })
	value := strings.Repeat("v", 100-memoOverhead)
	calls := 0
	f := func(v string) func() (string, error) { return func() (string, error) { calls++; return v, nil } }
	for range 3 {
		if v, err := m.get(1, f(value)); v != value || err != nil {
			t.Fatalf("get = %q, %v", v, err)
		}
	}
	if calls != 1 {
		t.Errorf("computed %d times, want once", calls)
	}
	// Errors are returned, not remembered.
	boom := errors.New("boom")
	if _, err := m.get(2, func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	if v, _ := m.get(2, f(value)); v != value {
		t.Errorf("after an error: %q", v)
	}
	// Bounded by bytes: 1000 bytes hold at most ten values of 100.
	for i := range 100 {
		m.get(100+i, f(value))
		if m.bytes > 1000 || m.stats().Entries > 10 {
			t.Fatalf("after %d values: %d bytes in %d values, bound 1000", i+3, m.bytes, m.stats().Entries)
		}
	}
	if m.stats().Entries < 9 {
		t.Errorf("%d values remembered, want 9 or 10 (a tenth is freed when full)", m.stats().Entries)
	}
	// A value larger than a tenth of the bound is returned, not remembered.
	big := strings.Repeat("b", 200)
	calls = 0
	for range 2 {
		if v, _ := m.get(-1, f(big)); v != big {
			t.Fatal("big value not returned")
		}
	}
	if calls != 2 {
		t.Errorf("big value computed %d times, want 2 (not remembered)", calls)
	}
}
