package notify

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/probity-dev/probity/store"
)

// Unsubscribe tokens. Every e-mail links a page that works without signing in; the
// link carries a token that says who may do what:
//
//	token   = base64url(payload || HMAC-SHA256(key, payload))     (no padding)
//	payload = version (1 byte, 1) || account id (8, big-endian) || action (1)
//	          || entry id (8, big-endian; 0 for the mail actions) || issued day (4,
//	          big-endian, days since 1970-01-01 UTC)
//
// 22 + 32 = 54 bytes, 72 characters. A token is valid from its issued day for
// TokenValidity (60 days), and only with the key that made it: a token is verified by
// recomputing the HMAC and comparing in constant time, before anything is read from
// the payload. The tokens the page makes from a token (its undo button, the "turn
// e-mails off" button beside an unfollow) carry that token's issued day, never the day
// they are made: an e-mail's link, undone and redone any number of times, ends on the
// day its e-mail's token ends. The key is 32 random bytes (LoadOrCreateKey keeps it in the data
// directory as notify.key, mode 0600). Tokens are not stored: rotating the key ends
// every token issued.

// KeySize is the size of the token key.
const KeySize = 32

// KeyFile is the token key's file name in the data directory.
const KeyFile = "notify.key"

// TokenValidity is how long an unsubscribe token is valid after the day it was issued.
const TokenValidity = 60 * 24 * time.Hour

const (
	tokenVersion     = 1
	tokenPayloadSize = 1 + 8 + 1 + 8 + 4
	tokenSize        = tokenPayloadSize + sha256.Size
)

// Actions a token allows. The undo actions are those of the page after a button was
// pressed.
const (
	ActionUnfollow     = "unfollow"       // stop following the entry
	ActionMailOff      = "mail_off"       // turn change e-mails off
	ActionFollow       = "follow"         // follow the entry again (undo of unfollow)
	ActionMailOnHourly = "mail_on_hourly" // turn change e-mails back on, hourly (undo of mail off)
	ActionMailOnDaily  = "mail_on_daily"  // turn change e-mails back on, daily (undo of mail off)
)

var actionCodes = map[string]byte{ActionUnfollow: 1, ActionMailOff: 2, ActionFollow: 3, ActionMailOnHourly: 4, ActionMailOnDaily: 5}

func actionOf(code byte) (string, bool) {
	for a, c := range actionCodes {
		if c == code {
			return a, true
		}
	}
	return "", false
}

// entryAction reports whether an action names an entry.
func entryAction(a string) bool { return a == ActionUnfollow || a == ActionFollow }

// tokenKey is the HMAC key of the tokens.
type tokenKey []byte

// token is a decoded, verified token.
type token struct {
	Account int64
	Action  string
	Entry   int64
	Issued  time.Time // the day, 00:00 UTC
}

// issue returns the token of t.
func (k tokenKey) issue(t token) string {
	var p [tokenPayloadSize]byte
	p[0] = tokenVersion
	binary.BigEndian.PutUint64(p[1:9], uint64(t.Account))
	p[9] = actionCodes[t.Action]
	binary.BigEndian.PutUint64(p[10:18], uint64(t.Entry))
	binary.BigEndian.PutUint32(p[18:22], uint32(t.Issued.Unix()/86400))
	mac := hmac.New(sha256.New, k)
	mac.Write(p[:])
	return base64.RawURLEncoding.EncodeToString(mac.Sum(p[:]))
}

// verify decodes and verifies s at now: ErrBadToken for anything but a token this key
// issued within TokenValidity.
func (k tokenKey) verify(s string, now time.Time) (token, error) {
	if len(s) != base64.RawURLEncoding.EncodedLen(tokenSize) {
		return token{}, ErrBadToken
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(raw) != tokenSize {
		return token{}, ErrBadToken
	}
	p, sum := raw[:tokenPayloadSize], raw[tokenPayloadSize:]
	mac := hmac.New(sha256.New, k)
	mac.Write(p)
	if !hmac.Equal(mac.Sum(nil), sum) {
		return token{}, ErrBadToken
	}
	if p[0] != tokenVersion {
		return token{}, ErrBadToken
	}
	t := token{
		Account: int64(binary.BigEndian.Uint64(p[1:9])),
		Entry:   int64(binary.BigEndian.Uint64(p[10:18])),
		Issued:  time.Unix(int64(binary.BigEndian.Uint32(p[18:22]))*86400, 0).UTC(),
	}
	a, ok := actionOf(p[9])
	if !ok || t.Account <= 0 || (entryAction(a) != (t.Entry > 0)) || t.Entry < 0 {
		return token{}, ErrBadToken
	}
	t.Action = a
	if now.Before(t.Issued.Add(-24*time.Hour)) || !now.Before(t.Issued.Add(TokenValidity+24*time.Hour)) {
		return token{}, ErrBadToken
	}
	return t, nil
}

// day is the UTC day of t.
func day(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// LoadOrCreateKey returns the token key kept in dir/notify.key, creating it (32 bytes
// from crypto/rand, mode 0600) when there is none.
func LoadOrCreateKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if err == nil {
		if len(b) != KeySize {
			return nil, fmt.Errorf("couldn't load the unsubscribe key %q: it holds %d bytes, not %d (delete it to make a new one; links in e-mails sent stop working)", path, len(b), KeySize)
		}
		return b, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("couldn't load the unsubscribe key: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("couldn't make the unsubscribe key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("couldn't make the unsubscribe key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreateKey(dir) // another process made it first
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't make the unsubscribe key: %w", err)
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		return nil, fmt.Errorf("couldn't write the unsubscribe key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("couldn't write the unsubscribe key: %w", err)
	}
	return key, nil
}

// Action is one button of the unsubscribe page: what it does and the token its form
// posts.
type Action struct {
	Kind string // one of the Action* constants
	// EntrySlug and EntryName name the entry of ActionUnfollow and ActionFollow.
	EntrySlug, EntryName string
	// Label says what the button does, in words.
	Label string
	Token string
	// Unchanged says that doing the action changed nothing (Unsubscribe's done of
	// ActionMailOff when e-mails were off already, of ActionUnfollow when the
	// account did not follow the entry, of ActionFollow when it did); it has no undo.
	Unchanged bool
}

// UnsubscribePage returns the buttons the page of token shows: for a token of an
// e-mail about one entry, unfollow it or turn change e-mails off; for one about
// several, turn change e-mails off; for an undo token, its action. An unfollow token
// whose entry was deleted offers turning e-mails off alone. Opening the page changes
// nothing. ErrBadToken for a token that is not valid.
func (s *Service) UnsubscribePage(ctx context.Context, tok string) ([]Action, error) {
	t, err := s.tokens.verify(tok, s.now())
	if err != nil {
		return nil, err
	}
	var acts []Action
	first, err := s.action(ctx, t, tok)
	switch {
	case errors.Is(err, ErrNotFound) && t.Action == ActionUnfollow:
		// The entry is gone (nobody follows it any more): e-mails can still be turned off.
	case err != nil:
		return nil, err
	default:
		acts = append(acts, first)
	}
	if t.Action == ActionUnfollow {
		off, err := s.action(ctx, token{Account: t.Account, Action: ActionMailOff, Issued: t.Issued}, "")
		if err != nil {
			return nil, err
		}
		acts = append(acts, off)
	}
	return acts, nil
}

// action is the button of t (its token tok, or a new one when tok is "").
func (s *Service) action(ctx context.Context, t token, tok string) (Action, error) {
	if tok == "" {
		tok = s.tokens.issue(t)
	}
	a := Action{Kind: t.Action, Token: tok}
	if entryAction(t.Action) {
		e, err := s.st.EntryByID(ctx, t.Entry)
		if errors.Is(err, store.ErrNotFound) {
			return Action{}, ErrNotFound
		}
		if err != nil {
			return Action{}, err
		}
		a.EntrySlug, a.EntryName = e.Slug, entryName(e)
	}
	switch t.Action {
	case ActionUnfollow:
		a.Label = "Unfollow " + a.EntryName
	case ActionFollow:
		a.Label = "Follow " + a.EntryName + " again"
	case ActionMailOff:
		a.Label = "Turn off change e-mails (you keep following your entries)"
	case ActionMailOnHourly:
		a.Label = "Turn change e-mails back on (" + ModeLabel(store.MailHourly) + ")"
	case ActionMailOnDaily:
		a.Label = "Turn change e-mails back on (" + ModeLabel(store.MailDaily) + ")"
	}
	return a, nil
}

// Unsubscribe does what token allows (the page's POST) and returns what was done and
// the button that undoes it, whose token ends when token ends. Turning e-mails off
// when they were off already, unfollowing an entry not followed and following one
// followed already change nothing: done is Unchanged and there is no undo (a zero
// Action), since an undo would turn on e-mails that were never on, or follow or
// unfollow what the account had not. ErrBadToken
// for a token that is not valid; ErrNotFound when its entry is gone.
func (s *Service) Unsubscribe(ctx context.Context, tok string) (done, undo Action, err error) {
	now := s.now()
	t, err := s.tokens.verify(tok, now)
	if err != nil {
		return Action{}, Action{}, err
	}
	// The undo token carries the issued day of the token it undoes: undoing and redoing
	// never makes a token that outlives the e-mail's.
	inverse := token{Account: t.Account, Entry: t.Entry, Issued: t.Issued}
	switch t.Action {
	case ActionUnfollow:
		removed, err := s.st.Unfollow(ctx, t.Account, t.Entry)
		if err != nil {
			return Action{}, Action{}, err
		}
		if !removed {
			return s.unchanged(ctx, t, tok)
		}
		inverse.Action = ActionFollow
	case ActionFollow:
		created, err := s.follow(ctx, t.Account, t.Entry)
		if err != nil {
			return Action{}, Action{}, err
		}
		if !created {
			return s.unchanged(ctx, t, tok)
		}
		inverse.Action = ActionUnfollow
	case ActionMailOff:
		prev, err := s.st.SetNotifyMode(ctx, t.Account, store.MailOff, now)
		if err != nil {
			return Action{}, Action{}, err
		}
		if prev == store.MailOff {
			return s.unchanged(ctx, t, tok)
		}
		inverse.Action = ActionMailOnHourly
		if prev == store.MailDaily {
			inverse.Action = ActionMailOnDaily
		}
	case ActionMailOnHourly, ActionMailOnDaily:
		mode := store.MailHourly
		if t.Action == ActionMailOnDaily {
			mode = store.MailDaily
		}
		// The undo of turning e-mails off: the window stays where it was, so the
		// changes of the gap are told as if e-mails had never been off.
		if _, err := s.st.RestoreNotifyMode(ctx, t.Account, mode, now); err != nil {
			return Action{}, Action{}, err
		}
		inverse.Action = ActionMailOff
	}
	if done, err = s.action(ctx, t, tok); err != nil {
		return Action{}, Action{}, err
	}
	if undo, err = s.action(ctx, inverse, ""); err != nil {
		return Action{}, Action{}, err
	}
	return done, undo, nil
}

// OneClick is RFC 8058's one-click unsubscribe (List-Unsubscribe-Post): it turns the
// account's change e-mails off, whatever e-mail's token it is given (an unfollow
// token's account too), and the account keeps following its entries. ErrBadToken for a
// token that is not valid.
func (s *Service) OneClick(ctx context.Context, tok string) error {
	now := s.now()
	t, err := s.tokens.verify(tok, now)
	if err != nil {
		return err
	}
	if t.Action != ActionMailOff && t.Action != ActionUnfollow {
		return ErrBadToken // an undo token is not an e-mail's
	}
	_, err = s.st.SetNotifyMode(ctx, t.Account, store.MailOff, now)
	return err
}

// unchanged is Unsubscribe's answer when doing t changed nothing: done is Unchanged,
// and there is no undo.
func (s *Service) unchanged(ctx context.Context, t token, tok string) (done, undo Action, err error) {
	if done, err = s.action(ctx, t, tok); err != nil {
		return Action{}, Action{}, err
	}
	done.Unchanged = true
	return done, Action{}, nil
}
