package accounts

import (
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// FuzzSafeReturn: whatever SafeReturn accepts, resolved against the site's URL as a
// browser resolves a Location header, stays on the site; anything else is
// DefaultReturn.
func FuzzSafeReturn(f *testing.F) {
	for _, s := range []string{"/", "/followed", "//evil.com", "/\\evil.com", "https://evil.com", "/%2F%2Fevil.com",
		"/.//evil.com", "/\t/evil.com", "javascript:alert(1)", "/s/x?next=//evil.com#//evil.com", "///evil.com"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://probity.example/signin")
	f.Fuzz(func(t *testing.T, s string) {
		got := SafeReturn(s)
		if got == DefaultReturn {
			return
		}
		if got != s {
			t.Fatalf("SafeReturn(%q) = %q: neither the input nor the default", s, got)
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("accepted %q, which does not parse: %v", got, err)
		}
		r := base.ResolveReference(u)
		if r.Scheme != "https" || r.Host != "probity.example" || strings.HasPrefix(r.Path, "//") {
			t.Fatalf("accepted %q, which resolves to %s", got, r)
		}
		if len(got) > MaxReturnLength || strings.ContainsAny(got, "\\\x00\t\r\n ") {
			t.Fatalf("accepted %q", got)
		}
	})
}

// FuzzParseAddress: an accepted address is printable ASCII without spaces (nothing
// that could end a mail header), at most 254 bytes, with one @, and its key is its
// lower-cased self.
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"ada@example.org", " A@B.co ", "a@b", "a\r\n@b.org", "a@b.org\r\nBcc: c@d.org", "\"a b\"@c.org"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addr, key, err := parseAddress(s)
		if err != nil {
			return
		}
		if len(addr) > 254 || !printableASCII(addr, false) || strings.Count(addr, "@") != 1 || key != strings.ToLower(addr) {
			t.Fatalf("parseAddress(%q) = %q, %q", s, addr, key)
		}
	})
}

// FuzzGitHubState: any cookie value decodes without a panic, and what encode writes
// decodes to itself.
func FuzzGitHubState(f *testing.F) {
	st := githubState{state: randomToken(), verifier: randomToken(), returnTo: "/s/x"}
	f.Add(st.encode())
	f.Add("v1....")
	f.Add("v1." + strings.Repeat("A", 43) + "." + strings.Repeat("B", 43) + ".-1.Ly9ldmlsLmNvbQ")
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := decodeGitHubState(v)
		if !ok {
			return
		}
		if got.returnTo != SafeReturn(got.returnTo) {
			t.Fatalf("decoded an unsafe return address %q", got.returnTo)
		}
		again, ok := decodeGitHubState(got.encode())
		if !ok || again.state != got.state || again.verifier != got.verifier || again.returnTo != got.returnTo {
			t.Fatalf("%q does not round-trip: %+v", v, again)
		}
	})
}

// TestCodeUsedOnceConcurrently enters one right code from many goroutines at once:
// exactly one of them signs in.
func TestCodeUsedOnceConcurrently(t *testing.T) {
	forEachStore(t, func(t *testing.T, st testStore) {
		f := newFixture(t, st, nil)
		ctx := t.Context()
		if err := f.svc.RequestCode(ctx, "race@example.org", "c"); err != nil {
			t.Fatal(err)
		}
		code := f.mail.lastCode(t, "race@example.org")
		var ok atomic.Int64
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				_, err := f.svc.VerifyCode(ctx, "race@example.org", code, "client "+string(rune('a'+i)))
				if err == nil {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if n := ok.Load(); n != 1 {
			t.Errorf("%d concurrent checks of one code signed in, want 1", n)
		}
		if rows := st.rows(t, "sessions"); len(rows) != 1 {
			t.Errorf("%d sessions, want 1", len(rows))
		}
	})
}
