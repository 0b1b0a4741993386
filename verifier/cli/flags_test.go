package cli

import (
	"errors"
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		positional []string
		reason     string
		asJSON     bool
		limit      int
	}{
		{args: []string{"show", "slug", "3"}, positional: []string{"show", "slug", "3"}, limit: 1},
		{args: []string{"--limit", "5", "show", "slug"}, positional: []string{"show", "slug"}, limit: 5},
		{args: []string{"show", "--limit", "5", "slug", "--json"}, positional: []string{"show", "slug"}, limit: 5, asJSON: true},
		{args: []string{"hide", "slug", "2", "--reason", "hide"}, positional: []string{"hide", "slug", "2"}, reason: "hide", limit: 1},
		// A value that looks like a flag is still the value of the flag before it.
		{args: []string{"--reason", "--json", "x"}, positional: []string{"x"}, reason: "--json", limit: 1},
		{args: []string{"--reason=a b", "x", "-limit=7"}, positional: []string{"x"}, reason: "a b", limit: 7},
		// A boolean flag takes no separate value.
		{args: []string{"--json", "show", "x"}, positional: []string{"show", "x"}, asJSON: true, limit: 1},
		{args: []string{"--json=false", "x"}, positional: []string{"x"}, limit: 1},
		// "--" ends the flags; "-" is positional.
		{args: []string{"x", "--", "--json", "-"}, positional: []string{"x", "--json", "-"}, limit: 1},
		{args: []string{"-", "--json"}, positional: []string{"-"}, asJSON: true, limit: 1},
		{args: nil, positional: []string{}, limit: 1},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		reason := fs.String("reason", "", "")
		asJSON := fs.Bool("json", false, "")
		limit := fs.Int("limit", 1, "")
		if err := ParseFlags(fs, tc.args); err != nil {
			t.Errorf("ParseFlags(%q): %v", tc.args, err)
			continue
		}
		if got := fs.Args(); !slices.Equal(got, tc.positional) || *reason != tc.reason || *asJSON != tc.asJSON || *limit != tc.limit {
			t.Errorf("ParseFlags(%q): positional %q reason %q json %t limit %d, want %q %q %t %d",
				tc.args, got, *reason, *asJSON, *limit, tc.positional, tc.reason, tc.asJSON, tc.limit)
		}
	}
	for _, tc := range []struct {
		args []string
		want error
	}{
		{[]string{"x", "-h"}, flag.ErrHelp},
		{[]string{"x", "--bogus", "y"}, nil},
		{[]string{"x", "--limit", "many"}, nil},
		{[]string{"x", "--limit"}, nil},
		{[]string{"--limit"}, nil},
		{[]string{"x", "--reason"}, nil}, // not "--" as its value
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Int("limit", 1, "")
		fs.String("reason", "", "")
		err := ParseFlags(fs, tc.args)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("ParseFlags(%q) = %v, want an error (%v)", tc.args, err, tc.want)
		}
	}
}
