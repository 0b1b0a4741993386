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
// accounts due, and, once per day's summary time (Settle after it), those of the daily
// accounts. It walks the changes in commit order: it covers those numbered up to the
// ledger's highest number when it starts, so a change committed after that, however
// old its recorded time, is in the next step's e-mails. The periodic job calls it
// every minute; running it again at once plans nothing twice (planned accounts have
// moved their cursor and last e-mail, and have an e-mail pending).
func (s *Service) Plan(ctx context.Context) (PlanReport, error) {
	t := Times(s.now(), s.cfg.Settle, s.cfg.DailyHour)
	var rep PlanReport
	through, err := s.st.LedgerNumbered(ctx)
	if err != nil {
		return rep, err
	}
	ws, firstAfterDaily, err := s.windows(ctx, t.Oldest, through, t.Daily)
	if err != nil {
		return rep, err
	}
	rep.Windows = len(ws)
	if rep.Hourly, err = s.planMode(ctx, store.MailHourly, t.HourlyBefore, through, ws, t); err != nil {
		return rep, err
	}
	s.mu.Lock()
	daily := s.lastDaily.Before(t.Daily) && !t.Now.Before(t.DailyReady)
	s.mu.Unlock()
	if daily {
		// A summary covers the changes recorded up to its time, and is planned Settle
		// after it, so that those committed a little later are in it. Its cursor stops
		// before the first change (in commit order) recorded after its time: that one,
		// and every one committed after it, wait for the next summary.
		dailyThrough, dws := through, ws
		if firstAfterDaily > 0 {
			dailyThrough = firstAfterDaily - 1
			if dws, _, err = s.windows(ctx, t.Oldest, dailyThrough, t.Daily); err != nil {
				return rep, err
			}
		}
		if rep.Daily, err = s.planMode(ctx, store.MailDaily, t.Daily, dailyThrough, dws, t); err != nil {
			return rep, err
		}
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
	s.log.InfoContext(ctx, "e-mails planned", "hourly", rep.Hourly, "daily", rep.Daily, "windows", rep.Windows, "pruned", rep.Pruned,
		"through", through)
	return rep, nil
}

// planMode plans the e-mails of the due accounts of one mode (due: see
// store.EmailPlan.DueBefore) with the windows ws, through the ledger number through.
func (s *Service) planMode(ctx context.Context, mode string, dueBefore time.Time, through int64, ws []store.NotifyWindow, t PlanTimes) (int, error) {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return 0, fmt.Errorf("couldn't plan e-mails: %w", err)
	}
	return s.st.PlanEmails(ctx, store.EmailPlan{
		Mode: mode, Now: t.Now, ThroughSeq: through, Oldest: t.Oldest, DueBefore: dueBefore, Windows: ws,
		MessageIDPrefix: fmt.Sprintf("probity.%d.%s", t.Now.UnixMilli(), hex.EncodeToString(nonce[:])),
		MessageIDDomain: s.host,
	})
}

// windows works out the windows of every entry with changes recorded after oldest and
// numbered at or below through, and returns with them the lowest number of those
// changes recorded after cut (0: none).
func (s *Service) windows(ctx context.Context, oldest time.Time, through int64, cut time.Time) ([]store.NotifyWindow, int64, error) {
	var (
		ws         []store.NotifyWindow
		firstAfter int64
	)
	cs := make([]Change, 0, 16)
	err := s.st.NotifyChanges(ctx, store.NotifyRange{Since: oldest, ThroughSeq: through}, func(entry []store.NotifyChange) error {
		hasVersion := false
		cs = cs[:0]
		for i := range entry {
			c := ChangeOf(&entry[i])
			hasVersion = hasVersion || c.Kind == attest.ChangeVersion
			cs = append(cs, c)
			if c.RecordedAt.After(cut) && (firstAfter == 0 || c.Seq < firstAfter) {
				firstAfter = c.Seq
			}
		}
		current := ""
		if hasVersion {
			var err error
			if current, err = s.currentVersion(ctx, entry[0].EntryID); err != nil {
				return err
			}
		}
		ws = append(ws, Windows(entry[0].EntryID, cs, current)...)
		return nil
	})
	return ws, firstAfter, err
}
