package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
)

// PlanReport says what one planning step did.
type PlanReport struct {
	Hourly, Daily int // outbox rows written for hourly and daily accounts
	Windows       int // entry windows found worth telling
	Pruned        int64
}

// Plan runs one planning step at the clock's now: the outbox rows of the hourly
// accounts due, and, once per day's summary time, those of the daily accounts. The
// periodic job calls it every minute; running it again at once plans nothing twice
// (planned accounts have moved their window and last e-mail).
func (s *Service) Plan(ctx context.Context) (PlanReport, error) {
	t := Times(s.now(), s.cfg.Settle, s.cfg.DailyHour)
	var rep PlanReport
	n, w, err := s.planMode(ctx, store.MailHourly, t.Through, t)
	if err != nil {
		return rep, err
	}
	rep.Hourly, rep.Windows = n, w
	s.mu.Lock()
	daily := s.lastDaily.Before(t.Daily)
	s.mu.Unlock()
	if daily {
		n, w, err := s.planMode(ctx, store.MailDaily, t.Daily, t)
		if err != nil {
			return rep, err
		}
		rep.Daily, rep.Windows = n, rep.Windows+w
		s.mu.Lock()
		s.lastDaily = t.Daily
		s.mu.Unlock()
	}
	s.mu.Lock()
	prune := t.Now.Sub(s.lastPrune) >= 24*time.Hour
	if prune {
		s.lastPrune = t.Now
	}
	s.mu.Unlock()
	if prune {
		if rep.Pruned, err = s.st.PruneNotify(ctx, t.Now.Add(-s.cfg.Keep), t.Now.Add(-KeepUntold)); err != nil {
			return rep, err
		}
	}
	s.log.InfoContext(ctx, "e-mails planned", "hourly", rep.Hourly, "daily", rep.Daily, "windows", rep.Windows, "pruned", rep.Pruned)
	return rep, nil
}

// planMode plans the e-mails of the accounts of one mode whose windows end at through.
func (s *Service) planMode(ctx context.Context, mode string, through time.Time, t PlanTimes) (planned, windows int, err error) {
	if through.Before(t.Oldest) {
		return 0, 0, nil
	}
	ws, err := s.windows(ctx, t.Oldest, through)
	if err != nil {
		return 0, 0, err
	}
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return 0, 0, fmt.Errorf("couldn't plan e-mails: %w", err)
	}
	n, err := s.st.PlanEmails(ctx, store.EmailPlan{
		Mode: mode, Now: t.Now, Through: through, Oldest: t.Oldest, HourlyBefore: t.HourlyBefore, Windows: ws,
		MessageIDPrefix: fmt.Sprintf("probity.%d.%s", t.Now.UnixMilli(), hex.EncodeToString(nonce[:])),
		MessageIDDomain: s.host,
	})
	return n, len(ws), err
}

// windows works out the windows of every entry with changes in (oldest, through].
func (s *Service) windows(ctx context.Context, oldest, through time.Time) ([]store.NotifyWindow, error) {
	changes, err := s.st.NotifyChanges(ctx, oldest, through)
	if err != nil {
		return nil, err
	}
	var ws []store.NotifyWindow
	cs := make([]Change, 0, 16)
	for i := 0; i < len(changes); {
		j := i
		hasVersion := false
		cs = cs[:0]
		for j < len(changes) && changes[j].EntryID == changes[i].EntryID {
			c := ChangeOf(&changes[j])
			hasVersion = hasVersion || c.Kind == attest.ChangeVersion
			cs = append(cs, c)
			j++
		}
		entry := changes[i].EntryID
		i = j
		current := ""
		if hasVersion {
			if current, err = s.currentVersion(ctx, entry); err != nil {
				return nil, err
			}
		}
		ws = append(ws, Windows(entry, cs, current)...)
	}
	return ws, nil
}
