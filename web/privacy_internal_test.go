package web

import (
	"testing"
	"time"
)

// TestSpellDuration: the privacy page's durations in words, in the coarsest exact unit.
func TestSpellDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * 24 * time.Hour:  "30 days",
		180 * 24 * time.Hour: "180 days",
		24 * time.Hour:       "one day",
		time.Hour:            "one hour",
		36 * time.Hour:       "36 hours",
		10 * time.Minute:     "10 minutes",
		time.Minute:          "one minute",
	} {
		if got := spellDuration(d); got != want {
			t.Errorf("spellDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
