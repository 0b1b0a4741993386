package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// insertTestAccount makes an account with the address, as package accounts will, on
// the backend's own SQL (the accounts' methods are not this file's), and returns its id.
func insertTestAccount(t *testing.T, s Store, email string, at time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	created := fmt.Sprint(at.UnixMilli())
	if s.Backend() == "postgres" {
		created = "'" + ms(at).Format(time.RFC3339Nano) + "'"
	}
	if err := s.(testExecer).execForTest(ctx, `INSERT INTO accounts (email, email_key, created_at) VALUES ('`+email+`', '`+
		strings.ToLower(email)+`', `+created+`)`); err != nil {
		t.Fatal(err)
	}
	rows, err := QueryForTest(ctx, s, `SELECT id FROM accounts WHERE email_key = '`+strings.ToLower(email)+`'`, 1)
	if err != nil || len(rows) != 1 {
		t.Fatalf("account %s: %v %v", email, rows, err)
	}
	var id int64
	fmt.Sscan(rows[0][0], &id)
	return id
}

func TestFollowsContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := insertTestAccount(t, s, "A@example.com", t0)
		b := insertTestAccount(t, s, "b@example.com", t0)
		e1, e2 := mustAddEntry(t, s, "one"), mustAddEntry(t, s, "two")

		// The settings row comes with the account.
		st, err := s.NotifySettings(ctx, a)
		if err != nil || st.Mode != MailHourly || !st.ModeChangedAt.Equal(ms(t0)) || !st.LastEmailAt.IsZero() || st.Follows != 0 {
			t.Fatalf("NotifySettings = %+v, %v", st, err)
		}
		if addr, err := s.NotifyRecipient(ctx, a); err != nil || addr != "A@example.com" {
			t.Fatalf("NotifyRecipient = %q, %v", addr, err)
		}

		// Follow, twice, and the errors.
		if created, err := s.Follow(ctx, a, e1.ID, t0); err != nil || !created {
			t.Fatalf("Follow = %v, %v", created, err)
		}
		if created, err := s.Follow(ctx, a, e1.ID, t0.Add(time.Hour)); err != nil || created {
			t.Fatalf("second Follow = %v, %v", created, err)
		}
		if since, err := s.FollowSince(ctx, a, e1.ID); err != nil || !since.Equal(ms(t0)) {
			t.Fatalf("FollowSince = %v, %v (the first follow's time stays)", since, err)
		}
		if _, err := s.Follow(ctx, a, 9999, t0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("following a missing entry: %v", err)
		}
		if _, err := s.Follow(ctx, 9999, e1.ID, t0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a missing account following: %v", err)
		}
		if _, err := s.Follow(ctx, a, e2.ID, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, b, e1.ID, t0); err != nil {
			t.Fatal(err)
		}
		fs, err := s.Follows(ctx, a)
		if err != nil || len(fs) != 2 || fs[0].Entry.Slug != "one" || fs[1].Entry.Slug != "two" {
			t.Fatalf("Follows = %+v, %v", fs, err)
		}
		if fs, err := s.Followers(ctx, e1.ID); err != nil || len(fs) != 2 || fs[0].AccountID != min(a, b) ||
			fs[1].AccountID != max(a, b) || !fs[0].Since.Equal(ms(t0)) || !fs[1].Since.Equal(ms(t0)) {
			t.Fatalf("Followers(one) = %v, %v; want %d and %d since %v", fs, err, a, b, t0)
		}
		if fs, err := s.Followers(ctx, e2.ID); err != nil || len(fs) != 1 || fs[0].AccountID != a {
			t.Fatalf("Followers(two) = %v, %v; want %d", fs, err, a)
		}
		if st, _ := s.NotifySettings(ctx, a); st.Follows != 2 {
			t.Fatalf("follows counted %d", st.Follows)
		}

		// The limit: the schema's CHECK on the count.
		if err := s.(testExecer).execForTest(ctx, fmt.Sprintf(`UPDATE notify_settings SET follows = %d WHERE account_id = %d`, MaxFollows, b)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Follow(ctx, b, e2.ID, t0); !errors.Is(err, ErrFollowLimit) {
			t.Fatalf("past the limit: %v", err)
		}
		if created, err := s.Follow(ctx, b, e1.ID, t0); err != nil || created {
			t.Fatalf("following a followed entry at the limit: %v %v", created, err)
		}
		if removed, err := s.Unfollow(ctx, b, e1.ID); err != nil || !removed {
			t.Fatalf("Unfollow = %v, %v", removed, err)
		}
		if removed, err := s.Unfollow(ctx, b, e1.ID); err != nil || removed {
			t.Fatalf("second Unfollow = %v, %v", removed, err)
		}

		// Modes.
		if prev, err := s.SetNotifyMode(ctx, a, MailOff, t0.Add(time.Hour)); err != nil || prev != MailHourly {
			t.Fatalf("SetNotifyMode = %q, %v", prev, err)
		}
		if _, err := s.SetNotifyMode(ctx, a, MailDaily, t0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		st, _ = s.NotifySettings(ctx, a)
		if st.Mode != MailDaily || !st.CoveredThrough.Equal(ms(t0.Add(2*time.Hour))) {
			t.Fatalf("on again from off: %+v (the window starts when e-mails come back on)", st)
		}
		if _, err := s.SetNotifyMode(ctx, a, "weekly", t0); err == nil {
			t.Fatal("a mode that does not exist was set")
		}
		if _, err := s.SetNotifyMode(ctx, a, MailHourly, t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}

		// Deleting a followed entry tells its followers and drops the follows.
		if err := s.DeleteEntry(ctx, "one", "removed by its operator"); err != nil {
			t.Fatal(err)
		}
		gone, err := s.UntoldGone(ctx, a)
		if err != nil || len(gone) != 1 || gone[0].Slug != "one" || gone[0].Name != "Server one" || !gone[0].ToldAt.IsZero() {
			t.Fatalf("UntoldGone = %+v, %v", gone, err)
		}
		if st, _ := s.NotifySettings(ctx, a); st.Follows != 1 {
			t.Fatalf("follows after the deletion: %d", st.Follows)
		}

		// Planning: a window over e2 reaches a, and a's untold deletion too; b is not due
		// (no follow in a window, nothing untold).
		now := t0.Add(4 * time.Hour)
		plan := EmailPlan{Mode: MailHourly, Now: now, ThroughSeq: 10, Oldest: now.Add(-7 * 24 * time.Hour),
			DueBefore: now.Add(-time.Hour), Windows: []NotifyWindow{{EntryID: e2.ID, SeqTo: 5, To: now.Add(-2 * time.Minute)}},
			MessageIDPrefix: "p1", MessageIDDomain: "probity.test"}
		if n, err := s.PlanEmails(ctx, plan); err != nil || n != 1 {
			t.Fatalf("PlanEmails = %d, %v", n, err)
		}
		st, _ = s.NotifySettings(ctx, a)
		if !st.LastEmailAt.Equal(ms(now)) || !st.CoveredThrough.Equal(ms(now)) || st.CoveredSeq != 10 {
			t.Fatalf("after planning: %+v", st)
		}
		plan.MessageIDPrefix = "p2"
		if n, err := s.PlanEmails(ctx, plan); err != nil || n != 0 {
			t.Fatalf("planning again: %d, %v", n, err)
		}
		// An hour later a is due again and has something new, but its e-mail is still
		// pending: nothing is planned, and its cursor stays for the next plan.
		later := plan
		later.Now, later.DueBefore, later.ThroughSeq, later.MessageIDPrefix = now.Add(2*time.Hour), now.Add(time.Hour), 20, "p3"
		later.Windows = []NotifyWindow{{EntryID: e2.ID, SeqTo: 15, To: now.Add(time.Hour)}}
		if n, err := s.PlanEmails(ctx, later); err != nil || n != 0 {
			t.Fatalf("planning beside a pending e-mail: %d, %v", n, err)
		}
		if st, _ := s.NotifySettings(ctx, a); st.CoveredSeq != 10 {
			t.Fatalf("the cursor moved without an e-mail: %+v", st)
		}
		later.Windows = []NotifyWindow{{EntryID: e2.ID, SeqTo: 25, To: now.Add(time.Hour)}}
		if _, err := s.PlanEmails(ctx, later); err == nil {
			t.Fatal("a window beyond the plan's ThroughSeq was accepted")
		}
		plan.MessageIDPrefix = "bad<id"
		if _, err := s.PlanEmails(ctx, plan); err == nil {
			t.Fatal("a Message-ID prefix with < was accepted")
		}

		// Claim, a lost lease, and a finish that tells the deletion.
		o, ok, err := s.ClaimEmail(ctx, now, time.Minute)
		if err != nil || !ok || o.AccountID != a || o.Attempts != 1 || o.State != OutboxSending ||
			o.MessageID != fmt.Sprintf("<p1.%d@probity.test>", a) || !o.WindowFrom.Equal(ms(t0.Add(2*time.Hour))) ||
			o.SeqFrom != 0 || o.SeqThrough != 10 || !o.WindowThrough.Equal(ms(now)) {
			t.Fatalf("ClaimEmail = %+v %v %v", o, ok, err)
		}
		if _, ok, _ := s.ClaimEmail(ctx, now, time.Minute); ok {
			t.Fatal("a leased row was claimed")
		}
		o2, ok, err := s.ClaimEmail(ctx, now.Add(time.Minute), time.Minute)
		if err != nil || !ok || o2.ID != o.ID || o2.Attempts != 2 {
			t.Fatalf("after the lease: %+v %v %v", o2, ok, err)
		}
		if err := s.FinishEmail(ctx, EmailOutcome{ID: o.ID, Attempt: 1, State: OutboxSent, At: now}); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("the overtaken attempt: %v", err)
		}
		if err := s.FinishEmail(ctx, EmailOutcome{ID: o.ID, Attempt: 2, State: OutboxSent, At: now, ToldGone: []int64{gone[0].ID}}); err != nil {
			t.Fatal(err)
		}
		if gone, _ := s.UntoldGone(ctx, a); len(gone) != 0 {
			t.Fatalf("still untold: %+v", gone)
		}
		if all, _ := s.GoneFollows(ctx, a); len(all) != 1 || !all[0].ToldAt.Equal(ms(now)) {
			t.Fatalf("GoneFollows = %+v", all)
		}
		rows, err := s.OutboxEmails(ctx, a, false, 0)
		if err != nil || len(rows) != 1 || rows[0].State != OutboxSent || !rows[0].SentAt.Equal(ms(now)) {
			t.Fatalf("OutboxEmails = %+v, %v", rows, err)
		}

		// Changes for planning and composing.
		state := []byte(`{}`)
		before, err := s.LedgerNumbered(ctx) // the deletion's tombstone took a number
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SaveHistory(ctx, HistoryUpdate{EntryID: e2.ID, State: state, Changes: []ChangeRecord{
			{EntryID: e2.ID, Number: 1, RecordedAt: t0.Add(-time.Hour), Origin: "automatic", Kind: "baseline", Summary: "observation started", Details: []byte(`{}`), Badges: []string{},
				Envelope: testEnvelope(`{"n":1}`), KeyID: "a050837d85070582"},
			{EntryID: e2.ID, Number: 2, RecordedAt: t0.Add(time.Hour), Origin: "automatic", Kind: "version", Summary: "version 1.0.0 → 1.1.0", Details: []byte(`{"versionBefore":"1.0.0","versionAfter":"1.1.0"}`), Badges: []string{},
				Envelope: testEnvelope(`{"n":2}`), KeyID: "a050837d85070582"},
		}}); err != nil {
			t.Fatal(err)
		}
		numbered, err := s.LedgerNumbered(ctx)
		if err != nil || numbered != before+2 {
			t.Fatalf("LedgerNumbered = %d, %v; want %d", numbered, err, before+2)
		}
		read := func(r NotifyRange) []NotifyChange {
			t.Helper()
			var out []NotifyChange
			if err := s.NotifyChanges(ctx, r, func(entry []NotifyChange) error {
				out = append(out, entry...)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		cs := read(NotifyRange{Since: t0.Add(-2 * time.Hour), ThroughSeq: numbered})
		if len(cs) != 1 || cs[0].Number != 2 || cs[0].Slug != "two" || cs[0].Kind != "version" || cs[0].Seq != numbered {
			t.Fatalf("NotifyChanges = %+v (no baseline)", cs)
		}
		if cs := read(NotifyRange{Since: t0.Add(-2 * time.Hour), ThroughSeq: numbered - 1}); len(cs) != 0 {
			t.Fatalf("NotifyChanges through the baseline's number = %+v", cs)
		}
		if cs := read(NotifyRange{Since: t0.Add(time.Hour), ThroughSeq: numbered}); len(cs) != 0 {
			t.Fatalf("NotifyChanges since the change's recorded time = %+v", cs)
		}
		if cs := read(NotifyRange{AccountID: a, Since: t0.Add(-2 * time.Hour), ThroughSeq: numbered}); len(cs) != 1 {
			t.Fatalf("NotifyChanges of a = %+v", cs)
		}
		if cs := read(NotifyRange{AccountID: b, Since: t0.Add(-2 * time.Hour), ThroughSeq: numbered}); len(cs) != 0 {
			t.Fatalf("NotifyChanges of a non-follower = %+v", cs)
		}
		fc, err := s.FollowedChanges(ctx, a, 5)
		if err != nil || len(fc) != 2 || fc[0].Number != 2 || fc[1].Number != 1 {
			t.Fatalf("FollowedChanges = %+v, %v", fc, err)
		}

		// Deleting the account takes everything it had.
		if err := s.(testExecer).execForTest(ctx, fmt.Sprintf(`DELETE FROM accounts WHERE id = %d`, a)); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"follows", "followed_gone", "notify_settings", "outbox"} {
			rows, err := QueryForTest(ctx, s, fmt.Sprintf(`SELECT count(*) FROM %s WHERE account_id = %d`, table, a), 1)
			if err != nil || rows[0][0] != "0" {
				t.Errorf("%s after the account's deletion: %v %v", table, rows, err)
			}
		}
		if n, err := s.PruneNotify(ctx, now.Add(time.Hour), now); err != nil || n != 0 {
			t.Errorf("PruneNotify = %d, %v", n, err)
		}
	})
}

// TestMigrateFollows: a database at 0011 with accounts migrates to 0012, keeps them and
// gives each its e-mail settings.
func TestMigrateFollows(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.openEmpty(t)
			if err := s.(testMigrator).migrateForTest(ctx, 11); err != nil {
				t.Fatal(err)
			}
			a := insertTestAccount(t, s, "old@example.com", t0)
			e := mustAddEntry(t, s, "kept")
			before, err := QueryForTest(ctx, s, `SELECT id, email, email_key FROM accounts ORDER BY id`, 3)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			after, err := QueryForTest(ctx, s, `SELECT id, email, email_key FROM accounts ORDER BY id`, 3)
			if err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("accounts %v, were %v (%v)", after, before, err)
			}
			st, err := s.NotifySettings(ctx, a)
			if err != nil || st.Mode != MailHourly || !st.ModeChangedAt.Equal(ms(t0)) {
				t.Fatalf("settings of an account from before: %+v, %v", st, err)
			}
			if _, err := s.Follow(ctx, a, e.ID, t0); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// sqlTimeLiteral is t as a literal of s's time columns.
func sqlTimeLiteral(s Store, t time.Time) string {
	if s.Backend() == "postgres" {
		return "'" + ms(t).Format(time.RFC3339Nano) + "'"
	}
	return fmt.Sprint(t.UnixMilli())
}

// TestPlanEmailsWindows holds both of SQLite's ways of planning (and PostgreSQL's one)
// to the window rule: an account is planned when a follow's starts — its covered
// ledger number, and max(follow, oldest) — fall in a window, or something deleted is
// untold; never while an e-mail of it is pending.
func TestPlanEmailsWindows(t *testing.T) {
	for _, path := range []string{"entry", "account"} {
		t.Run(path, func(t *testing.T) {
			sqlitePlanPath = path
			defer func() { sqlitePlanPath = "" }()
			forEachBackend(t, func(t *testing.T, s Store) {
				ctx := context.Background()
				exec := func(q string) {
					t.Helper()
					if err := s.(testExecer).execForTest(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				acct := func(name string) int64 { return insertTestAccount(t, s, name+"@example.com", t0.Add(-30*24*time.Hour)) }
				open, bounded, timed := mustAddEntry(t, s, "open"), mustAddEntry(t, s, "bounded"), mustAddEntry(t, s, "timed")
				follow := func(a int64, e Entry, at time.Time) {
					t.Helper()
					if _, err := s.Follow(ctx, a, e.ID, at); err != nil {
						t.Fatal(err)
					}
				}
				cover := func(a, seq int64) {
					exec(fmt.Sprintf(`UPDATE notify_settings SET covered_seq = %d WHERE account_id = %d`, seq, a))
				}
				old := t0.Add(-48 * time.Hour)
				never, covered, late, inside, off, gone, early, mid, busy := acct("never"), acct("covered"), acct("late"), acct("inside"),
					acct("off"), acct("gone"), acct("early"), acct("mid"), acct("busy")
				follow(never, open, old)
				follow(never, bounded, old) // its cursor is before the bounded window
				follow(covered, open, old)
				cover(covered, 5)
				follow(late, open, t0.Add(time.Minute))
				follow(inside, bounded, old)
				cover(inside, 4)
				follow(off, open, old)
				if _, err := s.SetNotifyMode(ctx, off, MailOff, old); err != nil {
					t.Fatal(err)
				}
				exec(fmt.Sprintf(`INSERT INTO followed_gone (account_id, slug, name, deleted_at) VALUES (%d, 'was-here', 'Was Here', %s)`, gone, sqlTimeLiteral(s, old)))
				cover(gone, 20)                        // covered beyond the plan: its cursor never goes back
				follow(early, timed, old)              // its follow began before the timed window
				follow(mid, timed, t0.Add(-time.Hour)) // inside it
				follow(busy, open, old)                // in the open window, but its e-mail is pending
				exec(fmt.Sprintf(`INSERT INTO outbox (account_id, created_at, window_through, message_id, state, attempts, next_attempt_at)
					VALUES (%d, %s, %s, '<busy@probity.test>', 'pending', 0, %s)`, busy, sqlTimeLiteral(s, old), sqlTimeLiteral(s, old), sqlTimeLiteral(s, old)))

				now := t0.Add(time.Hour)
				n, err := s.PlanEmails(ctx, EmailPlan{Mode: MailHourly, Now: now, ThroughSeq: 9, Oldest: now.Add(-7 * 24 * time.Hour),
					DueBefore: now.Add(-time.Hour), MessageIDPrefix: "w", MessageIDDomain: "probity.test",
					Windows: []NotifyWindow{{EntryID: open.ID, SeqTo: 5, To: t0}, {EntryID: bounded.ID, SeqFrom: 3, SeqTo: 5, To: t0},
						{EntryID: timed.ID, SeqTo: 5, From: t0.Add(-2 * time.Hour), To: t0}}})
				if err != nil {
					t.Fatal(err)
				}
				rows, err := QueryForTest(ctx, s, `SELECT account_id FROM outbox WHERE message_id LIKE '<w.%' ORDER BY account_id`, 1)
				if err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprint([][]string{{fmt.Sprint(never)}, {fmt.Sprint(inside)}, {fmt.Sprint(gone)}, {fmt.Sprint(mid)}})
				if n != 4 || fmt.Sprint(rows) != want {
					t.Fatalf("planned %d: %v, want %s", n, rows, want)
				}
				for a, seq := range map[int64]int64{never: 9, mid: 9, gone: 20} {
					if st, err := s.NotifySettings(ctx, a); err != nil || st.CoveredSeq != seq || !st.LastEmailAt.Equal(ms(now)) {
						t.Errorf("account %d after planning: %+v, %v; want covered through %d", a, st, err, seq)
					}
				}
			})
		})
	}
}

// TestNotifyChangesPages: NotifyChanges reads page by page and hands over each
// entry's changes whole, however the pages cut them.
func TestNotifyChangesPages(t *testing.T) {
	defer func(n int) { notifyPage = n }(notifyPage)
	notifyPage = 2
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		var want []string
		for i, slug := range []string{"p-one", "p-two", "p-three"} {
			e := mustAddEntry(t, s, slug)
			var cs []ChangeRecord
			for n := int64(1); n <= int64(i+2); n++ {
				cs = append(cs, ChangeRecord{EntryID: e.ID, Number: n, RecordedAt: t0.Add(time.Duration(n) * time.Minute), Origin: "automatic",
					Kind: "version", Summary: "version changed", Details: []byte(`{}`), Badges: []string{},
					Envelope: testEnvelope(fmt.Sprintf(`{"%s":%d}`, slug, n)), KeyID: "a050837d85070582"})
				want = append(want, fmt.Sprintf("%s/%d", slug, n))
			}
			if err := s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, State: []byte(`{}`), Changes: cs}); err != nil {
				t.Fatal(err)
			}
		}
		through, err := s.LedgerNumbered(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = s.NotifyChanges(ctx, NotifyRange{Since: t0, ThroughSeq: through}, func(entry []NotifyChange) error {
			for _, c := range entry {
				if c.EntryID != entry[0].EntryID {
					t.Errorf("a group of entry %d holds a change of entry %d", entry[0].EntryID, c.EntryID)
				}
				got = append(got, fmt.Sprintf("%s/%d", c.Slug, c.Number))
			}
			return nil
		})
		slices.Sort(want)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("NotifyChanges in pages of 2: %v, %v; want %v", got, err, want)
		}
	})
}

// TestMigrateNotifyCursor: a database at 0014 migrates to 0015 with its time cursors
// carried over as ledger numbers: each the highest number of a change recorded at or
// before its time (the changes the time windows covered).
func TestMigrateNotifyCursor(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.openEmpty(t)
			if err := s.(testMigrator).migrateForTest(ctx, 14); err != nil {
				t.Fatal(err)
			}
			exec := func(q string) {
				t.Helper()
				if err := s.(testExecer).execForTest(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			a := insertTestAccount(t, s, "old@example.com", t0)
			fresh := insertTestAccount(t, s, "fresh@example.com", t0)
			e := mustAddEntry(t, s, "kept")
			var cs []ChangeRecord
			for n, at := range []time.Time{t0, t0.Add(2 * time.Hour)} {
				cs = append(cs, ChangeRecord{EntryID: e.ID, Number: int64(n + 1), RecordedAt: at, Origin: "automatic", Kind: "version",
					Summary: "version changed", Details: []byte(`{}`), Badges: []string{},
					Envelope: testEnvelope(fmt.Sprintf(`{"m":%d}`, n)), KeyID: "a050837d85070582"})
			}
			if err := s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, State: []byte(`{}`), Changes: cs}); err != nil {
				t.Fatal(err)
			}
			first, err := QueryForTest(ctx, s, `SELECT l.seq FROM changes c JOIN ledger l ON l.id = c.ledger_id WHERE c.number = 1`, 1)
			if err != nil {
				t.Fatal(err)
			}
			hour := sqlTimeLiteral(s, t0.Add(time.Hour))
			exec(fmt.Sprintf(`UPDATE notify_settings SET covered_through = %s WHERE account_id = %d`, hour, a))
			exec(fmt.Sprintf(`INSERT INTO outbox (account_id, created_at, window_from, window_through, message_id, state, attempts, next_attempt_at)
				VALUES (%d, %s, %s, %s, '<pending@x>', 'pending', 0, %s)`, a, hour, sqlTimeLiteral(s, t0.Add(-time.Hour)), hour, hour))
			exec(fmt.Sprintf(`INSERT INTO outbox (account_id, created_at, window_through, message_id, state, attempts, next_attempt_at, sent_at)
				VALUES (%d, %s, %s, '<sent@x>', 'sent', 1, %s, %s)`, a, hour, hour, hour, hour))
			exec(fmt.Sprintf(`INSERT INTO webhook_planner (id, planned_through) VALUES (%s, %s)`, map[bool]string{true: "true", false: "1"}[s.Backend() == "postgres"], hour))

			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			var want int64
			fmt.Sscan(first[0][0], &want)
			if st, err := s.NotifySettings(ctx, a); err != nil || st.CoveredSeq != want {
				t.Errorf("covered: %+v, %v; want %d", st, err, want)
			}
			if st, err := s.NotifySettings(ctx, fresh); err != nil || st.CoveredSeq != 0 {
				t.Errorf("never e-mailed: %+v, %v", st, err)
			}
			rows, err := s.OutboxEmails(ctx, a, false, 0)
			if err != nil || len(rows) != 2 {
				t.Fatalf("outbox: %+v, %v", rows, err)
			}
			for _, o := range rows {
				switch o.State {
				case OutboxPending:
					if o.SeqFrom != 0 || o.SeqThrough != want {
						t.Errorf("pending e-mail: %+v; want (0, %d]", o, want)
					}
				case OutboxSent:
					if o.SeqFrom != 0 || o.SeqThrough != 0 {
						t.Errorf("a finished e-mail got numbers: %+v", o)
					}
				}
			}
			if seq, started, err := s.WebhookCursor(ctx); err != nil || !started || seq != want {
				t.Errorf("webhook cursor = %d, %v, %v; want %d", seq, started, err, want)
			}
		})
	}
}

// TestWebhookChanges: the webhook planner reads changes by ledger number, a change
// stored late after one stored earlier with a later recorded time.
func TestWebhookChanges(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		e1, e2 := mustAddEntry(t, s, "w-one"), mustAddEntry(t, s, "w-two")
		save := func(e Entry, n int64, at time.Time, kind string) {
			t.Helper()
			if err := s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, ExpectProcessed: 0, State: []byte(`{}`), Changes: []ChangeRecord{{
				EntryID: e.ID, Number: n, RecordedAt: at, Origin: "automatic", Kind: kind, Summary: "changed", Details: []byte(`{}`),
				Badges: []string{}, Envelope: testEnvelope(fmt.Sprintf(`{"%s":%d}`, e.Slug, n)), KeyID: "a050837d85070582"}}}); err != nil {
				t.Fatal(err)
			}
		}
		before, err := s.LedgerNumbered(ctx)
		if err != nil {
			t.Fatal(err)
		}
		save(e1, 1, t0.Add(time.Hour), "baseline")
		save(e2, 1, t0, "version") // recorded first, stored (committed) second
		through, err := s.LedgerNumbered(ctx)
		if err != nil || through != before+2 {
			t.Fatalf("LedgerNumbered = %d, %v", through, err)
		}
		cs, err := s.WebhookChanges(ctx, before, through, 10)
		if err != nil || len(cs) != 2 || cs[0].EntrySlug != "w-one" || cs[1].EntrySlug != "w-two" ||
			cs[0].Seq != before+1 || cs[1].Seq != before+2 || cs[0].Kind != "baseline" || cs[1].Envelope != nil {
			t.Fatalf("WebhookChanges = %+v, %v", cs, err)
		}
		if cs, err := s.WebhookChanges(ctx, before, through, 1); err != nil || len(cs) != 1 || cs[0].Seq != before+1 {
			t.Fatalf("a page of one = %+v, %v", cs, err)
		}
		if cs, err := s.WebhookChanges(ctx, before+1, through, 10); err != nil || len(cs) != 1 || cs[0].Seq != before+2 {
			t.Fatalf("after the first = %+v, %v", cs, err)
		}
	})
}

// TestNotifyModeWindow: e-mails back on from off start the window at the highest
// ledger number (changes while off are not sent); the undo of turning them off
// (RestoreNotifyMode) keeps the window where it was.
func TestNotifyModeWindow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := insertTestAccount(t, s, "mode@example.com", t0)
		e := mustAddEntry(t, s, "mode-entry")
		if err := s.SaveHistory(ctx, HistoryUpdate{EntryID: e.ID, State: []byte(`{}`), Changes: []ChangeRecord{{EntryID: e.ID, Number: 1,
			RecordedAt: t0, Origin: "automatic", Kind: "version", Summary: "changed", Details: []byte(`{}`), Badges: []string{},
			Envelope: testEnvelope(`{"mode":1}`), KeyID: "a050837d85070582"}}}); err != nil {
			t.Fatal(err)
		}
		numbered, err := s.LedgerNumbered(ctx)
		if err != nil || numbered == 0 {
			t.Fatalf("LedgerNumbered = %d, %v", numbered, err)
		}
		if err := s.(testExecer).execForTest(ctx, fmt.Sprintf(`UPDATE notify_settings SET covered_seq = 0, covered_through = NULL WHERE account_id = %d`, a)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetNotifyMode(ctx, a, MailOff, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if prev, err := s.RestoreNotifyMode(ctx, a, MailDaily, t0.Add(2*time.Hour)); err != nil || prev != MailOff {
			t.Fatalf("RestoreNotifyMode = %q, %v", prev, err)
		}
		if st, _ := s.NotifySettings(ctx, a); st.Mode != MailDaily || st.CoveredSeq != 0 || !st.CoveredThrough.IsZero() {
			t.Fatalf("after the undo: %+v; want the window where it was", st)
		}
		if _, err := s.SetNotifyMode(ctx, a, MailOff, t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetNotifyMode(ctx, a, MailHourly, t0.Add(4*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if st, _ := s.NotifySettings(ctx, a); st.Mode != MailHourly || st.CoveredSeq != numbered || !st.CoveredThrough.Equal(ms(t0.Add(4*time.Hour))) {
			t.Fatalf("on again from off: %+v; want the window from %d", st, numbered)
		}
	})
}
