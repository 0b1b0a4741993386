package web

import (
	"errors"
	"testing"
)

func TestMemo(t *testing.T) {
	m := newMemo[int, int](10)
	calls := 0
	f := func(v int) func() (int, error) { return func() (int, error) { calls++; return v, nil } }
	for range 3 {
		if v, err := m.get(1, f(7)); v != 7 || err != nil {
			t.Fatalf("get = %d, %v", v, err)
		}
	}
	if calls != 1 {
		t.Errorf("computed %d times, want once", calls)
	}
	// Errors are returned, not remembered.
	boom := errors.New("boom")
	if _, err := m.get(2, func() (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	if v, _ := m.get(2, f(9)); v != 9 {
		t.Errorf("after an error: %d", v)
	}
	// Bounded.
	for i := range 100 {
		m.get(100+i, f(i))
	}
	if len(m.m) > 10 {
		t.Errorf("%d entries, bound 10", len(m.m))
	}
}
