package notify

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/probity-dev/probity/store"
)

var testKey = tokenKey(bytes.Repeat([]byte{7}, KeySize))

func TestTokenRoundTrip(t *testing.T) {
	now := time.Date(2026, 11, 30, 15, 4, 5, 0, time.UTC)
	for _, tok := range []token{
		{Account: 42, Action: ActionUnfollow, Entry: 9, Issued: day(now)},
		{Account: 42, Action: ActionMailOff, Issued: day(now)},
		{Account: 1, Action: ActionFollow, Entry: 1 << 40, Issued: day(now)},
		{Account: 1 << 50, Action: ActionMailOnDaily, Issued: day(now)},
		{Account: 3, Action: ActionMailOnHourly, Issued: day(now)},
	} {
		s := testKey.issue(tok)
		if len(s) != 72 {
			t.Errorf("token of %d characters", len(s))
		}
		got, err := testKey.verify(s, now)
		if err != nil || got != tok {
			t.Errorf("verify(issue(%+v)) = %+v, %v", tok, got, err)
		}
	}
}

func TestTokenRefused(t *testing.T) {
	now := time.Date(2026, 11, 30, 15, 4, 5, 0, time.UTC)
	good := testKey.issue(token{Account: 42, Action: ActionUnfollow, Entry: 9, Issued: day(now)})
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	other := tokenKey(bytes.Repeat([]byte{8}, KeySize))
	tests := map[string]struct {
		tok string
		at  time.Time
	}{
		"empty":                  {"", now},
		"truncated":              {good[:71], now},
		"padded":                 {good + "=", now},
		"another account":        {flip(8), now},
		"another action":         {flip(9), now},
		"another entry":          {flip(17), now},
		"another day":            {flip(21), now},
		"another mac":            {flip(40), now},
		"another key":            {other.issue(token{Account: 42, Action: ActionUnfollow, Entry: 9, Issued: day(now)}), now},
		"expired after 61 days":  {good, now.Add(61 * 24 * time.Hour)},
		"not base64url":          {good[:70] + "+/", now},
		"an entry for mail off":  {testKey.issue(token{Account: 42, Action: ActionMailOff, Entry: 9, Issued: day(now)}), now},
		"no entry for unfollow":  {testKey.issue(token{Account: 42, Action: ActionUnfollow, Issued: day(now)}), now},
		"no account":             {testKey.issue(token{Action: ActionMailOff, Issued: day(now)}), now},
		"issued in a week ahead": {testKey.issue(token{Account: 42, Action: ActionMailOff, Issued: day(now.Add(7 * 24 * time.Hour))}), now},
	}
	for name, tt := range tests {
		if _, err := testKey.verify(tt.tok, tt.at); !errors.Is(err, ErrBadToken) {
			t.Errorf("%s: verify = %v, want ErrBadToken", name, err)
		}
	}
	if _, err := testKey.verify(good, now.Add(59*24*time.Hour)); err != nil {
		t.Errorf("a token 59 days old: %v", err)
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadOrCreateKey(dir)
	if err != nil || len(k1) != KeySize {
		t.Fatalf("LoadOrCreateKey = %d bytes, %v", len(k1), err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	k2, err := LoadOrCreateKey(dir)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second load: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFile), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir); err == nil {
		t.Fatal("a short key file was accepted")
	}
}

// TestUndoTokensEndWithTheirEmail: the tokens the unsubscribe page makes (the undo
// button after a press, the undo of that undo, the "turn e-mails off" button beside an
// unfollow) carry the issued day of the e-mail's token, so pressing and undoing on the
// e-mail's last valid day does not give its link another 60 days.
func TestUndoTokensEndWithTheirEmail(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		e := newEnv(t, b)
		acct := e.account("undo@example.com")
		en := e.entry("undo-me", "Undo Me")
		e.follow(acct, en)
		issued := day(e.clock.Now())
		unfollow := e.svc.tokens.issue(token{Account: acct, Action: ActionUnfollow, Entry: en.ID, Issued: issued})
		mailOff := e.svc.tokens.issue(token{Account: acct, Action: ActionMailOff, Issued: issued})

		e.clock.Add(TokenValidity - 24*time.Hour) // the e-mail's last days
		issuedOf := func(what, tok string) time.Time {
			t.Helper()
			got, err := e.svc.tokens.verify(tok, e.clock.Now())
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return got.Issued
		}
		acts, err := e.svc.UnsubscribePage(ctx, unfollow)
		if err != nil || len(acts) != 2 || acts[1].Kind != ActionMailOff {
			t.Fatalf("page: %+v, %v", acts, err)
		}
		pageOff := acts[1].Token
		_, undo, err := e.svc.Unsubscribe(ctx, unfollow)
		if err != nil || undo.Kind != ActionFollow {
			t.Fatalf("unfollow: %+v, %v", undo, err)
		}
		_, redo, err := e.svc.Unsubscribe(ctx, undo.Token)
		if err != nil || redo.Kind != ActionUnfollow {
			t.Fatalf("undo: %+v, %v", redo, err)
		}
		_, mailOn, err := e.svc.Unsubscribe(ctx, mailOff)
		if err != nil || mailOn.Kind != ActionMailOnHourly {
			t.Fatalf("mail off: %+v, %v", mailOn, err)
		}
		_, mailOffAgain, err := e.svc.Unsubscribe(ctx, mailOn.Token)
		if err != nil || mailOffAgain.Kind != ActionMailOff {
			t.Fatalf("mail on: %+v, %v", mailOffAgain, err)
		}
		made := map[string]string{"the page's mail-off button": pageOff, "the undo of unfollow": undo.Token,
			"the undo of the undo": redo.Token, "the undo of mail off": mailOn.Token, "the undo of mail on": mailOffAgain.Token}
		for what, tok := range made {
			if got := issuedOf(what, tok); !got.Equal(issued) {
				t.Errorf("%s is issued %s, want the e-mail's day %s", what, got.Format(time.DateOnly), issued.Format(time.DateOnly))
			}
		}

		// A day after the e-mail's tokens end, none of them works.
		e.clock.Add(2 * 24 * time.Hour)
		made["the e-mail's unfollow"], made["the e-mail's mail off"] = unfollow, mailOff
		for what, tok := range made {
			if _, err := e.svc.UnsubscribePage(ctx, tok); !errors.Is(err, ErrBadToken) {
				t.Errorf("%s after the e-mail's tokens ended: page %v, want ErrBadToken", what, err)
			}
			if _, _, err := e.svc.Unsubscribe(ctx, tok); !errors.Is(err, ErrBadToken) {
				t.Errorf("%s after the e-mail's tokens ended: %v, want ErrBadToken", what, err)
			}
		}
	})
}

// TestMailOffWhenOffHasNoUndo: turning change e-mails off when they are off already
// changes nothing and offers no undo; an undo would turn on e-mails the account had
// turned off itself (and tell it the changes of the whole time they were off).
func TestMailOffWhenOffHasNoUndo(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		e := newEnv(t, b)
		acct := e.account("already-off@example.com")
		e.follow(acct, e.entry("already-off", "Already Off"))
		if err := e.svc.SetMode(ctx, acct, store.MailOff); err != nil {
			t.Fatal(err)
		}
		off := e.svc.tokens.issue(token{Account: acct, Action: ActionMailOff, Issued: day(e.clock.Now())})
		done, undo, err := e.svc.Unsubscribe(ctx, off)
		if err != nil || done.Kind != ActionMailOff || !done.Unchanged {
			t.Fatalf("mail off when off: done %+v, %v; want ActionMailOff, Unchanged", done, err)
		}
		if undo != (Action{}) {
			t.Fatalf("mail off when off: undo %+v, want none", undo)
		}
		if f, err := e.svc.Followed(ctx, acct); err != nil || f.Mode != store.MailOff {
			t.Fatalf("mode after: %q, %v; want off", f.Mode, err)
		}

		// From on, the same token turns e-mails off and offers the undo.
		if err := e.svc.SetMode(ctx, acct, store.MailDaily); err != nil {
			t.Fatal(err)
		}
		done, undo, err = e.svc.Unsubscribe(ctx, off)
		if err != nil || done.Unchanged || undo.Kind != ActionMailOnDaily || undo.Token == "" {
			t.Fatalf("mail off when daily: done %+v undo %+v, %v; want a daily undo", done, undo, err)
		}
	})
}

// TestUnfollowWhenNotFollowingHasNoUndo: an unfollow link of an entry the account no
// longer follows, and a "follow again" of one it follows, change nothing and offer no
// undo (which would follow, or unfollow, what the account had not).
func TestUnfollowWhenNotFollowingHasNoUndo(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		e := newEnv(t, b)
		acct := e.account("not-following@example.com")
		en := e.entry("not-followed", "Not Followed")
		unfollow := e.svc.tokens.issue(token{Account: acct, Entry: en.ID, Action: ActionUnfollow, Issued: day(e.clock.Now())})
		done, undo, err := e.svc.Unsubscribe(ctx, unfollow)
		if err != nil || done.Kind != ActionUnfollow || !done.Unchanged || undo != (Action{}) {
			t.Fatalf("unfollow when not following: done %+v undo %+v, %v; want Unchanged and no undo", done, undo, err)
		}
		if following, err := e.svc.Following(ctx, acct, en.ID); err != nil || following {
			t.Fatalf("following after: %v, %v", following, err)
		}
		e.follow(acct, en)
		again := e.svc.tokens.issue(token{Account: acct, Entry: en.ID, Action: ActionFollow, Issued: day(e.clock.Now())})
		done, undo, err = e.svc.Unsubscribe(ctx, again)
		if err != nil || done.Kind != ActionFollow || !done.Unchanged || undo != (Action{}) {
			t.Fatalf("follow again when following: done %+v undo %+v, %v; want Unchanged and no undo", done, undo, err)
		}
		// Following, the unfollow link unfollows and offers the undo.
		done, undo, err = e.svc.Unsubscribe(ctx, unfollow)
		if err != nil || done.Unchanged || undo.Kind != ActionFollow || undo.Token == "" {
			t.Fatalf("unfollow when following: done %+v undo %+v, %v; want an undo", done, undo, err)
		}
	})
}
