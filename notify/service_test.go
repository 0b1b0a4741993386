package notify

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/history"
	"github.com/probity-dev/probity/store"
)

// The e-mail rules of seed 000 through the store, planning and delivery, with a fake
// clock: each subtest is one rule.
func TestEmailRules(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		fresh := func(t *testing.T) (*env, int64, store.Entry) {
			// Each rule on its own accounts and entries of one store.
			e := newEnv(t, b)
			e.accounts = countAccounts(t, b)
			acct := e.account(fmt.Sprintf("follower%d@example.com", e.accounts+1))
			en := e.entry(fmt.Sprintf("srv-%d", e.accounts+1), "Weather Server")
			e.clock.t = start.Add(time.Duration(e.accounts) * 10 * 24 * time.Hour) // rules never see each other's changes
			return e, acct, en
		}

		t.Run("one entry: named, summed up, linked to its change", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			n := e.tools(en, []string{"secret_tool_alpha"}, []string{"secret_tool_alpha", "secret_tool_beta"})
			e.clock.Add(2 * time.Minute)
			msgs := e.cycle()
			if len(msgs) != 1 {
				t.Fatalf("%d e-mails, want 1", len(msgs))
			}
			m := msgs[0]
			link := fmt.Sprintf("%s/s/%s/history#ch-%d", testBase, en.Slug, n)
			if m.To != fmt.Sprintf("follower%d@example.com", acct) || !strings.Contains(m.Subject, en.Slug) ||
				!strings.Contains(m.Text, en.Slug+": 1 tool added") || !strings.Contains(m.Text, link) ||
				strings.Contains(m.Subject+m.Text+m.HTML, "Weather Server") ||
				!strings.Contains(m.HTML, `href="`+link+`"`) {
				t.Errorf("e-mail: %+v", m)
			}
			if !strings.HasPrefix(m.ListUnsubscribe, testBase+"/unsubscribe/") || !strings.HasSuffix(m.ListUnsubscribe, "/one-click") || !m.OneClick ||
				!regexp.MustCompile(`^<probity\.[0-9]+\.[0-9a-f]{16}\.[0-9]+@probity\.test>$`).MatchString(m.MessageID) ||
				m.ListID != "Probity change e-mails <changes.probity.test>" {
				t.Errorf("headers: %q %v %q %q", m.ListUnsubscribe, m.OneClick, m.MessageID, m.ListID)
			}
			checkNoServerText(t, msgs)
			if again := e.cycle(); len(again) != 0 {
				t.Errorf("a second cycle sent %d e-mails", len(again))
			}
		})

		t.Run("only changes recorded after the follow began", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.tools(en, []string{"secret_tool_alpha"}, nil)
			e.clock.Add(time.Minute)
			e.follow(acct, en)
			e.clock.Add(2 * time.Minute)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Errorf("%d e-mails about a change before the follow", len(msgs))
			}
		})

		t.Run("none older than 7 days", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, nil)
			e.clock.Add(7*24*time.Hour + time.Minute)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Errorf("%d e-mails about a change older than 7 days", len(msgs))
			}
		})

		t.Run("no hidden change, also when hidden after planning", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			n := e.tools(en, []string{"secret_tool_alpha"}, nil)
			if err := b.st.HideChange(ctx, en.ID, n, true, "a wrong read"); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(2 * time.Minute)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Errorf("%d e-mails about a hidden change", len(msgs))
			}
			e.clock.Add(time.Hour)
			n = e.tools(en, nil, []string{"secret_tool_beta"})
			e.clock.Add(2 * time.Minute)
			if _, err := e.svc.Plan(ctx); err != nil {
				t.Fatal(err)
			}
			if err := b.st.HideChange(ctx, en.ID, n, true, "a wrong read"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
			if msgs := e.sender.take(); len(msgs) != 0 {
				t.Errorf("%d e-mails about a change hidden after planning", len(msgs))
			}
			rows, err := b.st.OutboxEmails(ctx, acct, false, 10)
			if err != nil || len(rows) != 1 || rows[0].State != store.OutboxSkipped {
				t.Errorf("outbox: %+v, %v", rows, err)
			}
		})

		t.Run("no baseline", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.baseline(en)
			e.clock.Add(2 * time.Minute)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Errorf("%d e-mails about a baseline", len(msgs))
			}
		})

		t.Run("a version only when it increases", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			for _, tt := range []struct {
				from, to string
				sent     bool
			}{
				{"1.2.0", "1.2.0+build2", false},
				{"1.3.0", "1.2.0", false},
				{"1.2.0", "1.3.0", true},
			} {
				e.clock.Add(2 * time.Hour)
				e.version(en, tt.from, tt.to, tt.to)
				e.clock.Add(2 * time.Minute)
				msgs := e.cycle()
				if (len(msgs) == 1) != tt.sent {
					t.Errorf("%s → %s: %d e-mails", tt.from, tt.to, len(msgs))
				}
				if tt.sent && len(msgs) == 1 && !strings.Contains(msgs[0].Text, "version "+tt.from+" → "+tt.to) {
					t.Errorf("%s → %s: %q", tt.from, tt.to, msgs[0].Text)
				}
			}
		})

		t.Run("changes that cancel out are not sent", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, []string{"secret_tool_alpha", "secret_tool_beta"})
			e.clock.Add(10 * time.Minute)
			e.tools(en, []string{"secret_tool_alpha", "secret_tool_beta"}, []string{"secret_tool_alpha"})
			e.clock.Add(time.Minute)
			// A version that changed and went back: history followed it back silently.
			e.version(en, "1.0.0", "1.1.0", "1.0.0")
			e.clock.Add(2 * time.Minute)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Errorf("%d e-mails about changes that cancel out: %q", len(msgs), msgs[0].Text)
			}
		})

		t.Run("hourly: at most one e-mail an hour, each about what is new", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, []string{"secret_tool_alpha", "secret_tool_beta"})
			e.clock.Add(2 * time.Minute)
			if msgs := e.cycle(); len(msgs) != 1 {
				t.Fatalf("first change: %d e-mails", len(msgs))
			}
			e.clock.Add(5 * time.Minute)
			e.tools(en, []string{"secret_tool_alpha", "secret_tool_beta"}, []string{"secret_tool_beta"})
			for range 5 {
				e.clock.Add(10 * time.Minute)
				if msgs := e.cycle(); len(msgs) != 0 {
					t.Fatalf("a second e-mail within the hour at %v", e.clock.Now())
				}
			}
			e.clock.Add(10 * time.Minute)
			msgs := e.cycle()
			if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "1 tool removed") || strings.Contains(msgs[0].Text, "added") {
				t.Fatalf("after the hour: %d e-mails %v", len(msgs), msgs)
			}
		})

		t.Run("daily: one summary a day", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			if err := e.svc.SetMode(ctx, acct, store.MailDaily); err != nil {
				t.Fatal(err)
			}
			e.clock.t = time.Date(e.clock.t.Year(), e.clock.t.Month(), e.clock.t.Day(), 9, 0, 0, 0, time.UTC)
			e.tools(en, []string{"secret_tool_alpha"}, nil)
			for range 21 { // 10:00 … 06:00 the next day
				e.clock.Add(time.Hour)
				if msgs := e.cycle(); len(msgs) != 0 {
					t.Fatalf("a daily e-mail at %v", e.clock.Now())
				}
			}
			e.clock.Add(time.Hour) // 07:00: the summary time, planned Settle (1 min) after it
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Fatalf("a summary at its cut-off, before the settling time: %d e-mails", len(msgs))
			}
			// Recorded just before the cut-off, committed just after it: in today's
			// summary. Recorded after the cut-off: in tomorrow's.
			e.clock.Add(30 * time.Second)
			e.recordAt(e.clock.Now().Add(-time.Minute), en, attest.ChangeVersion,
				&history.ChangeDetails{VersionBefore: "1.0.0", VersionAfter: "1.1.0"}, 0, 0, "1.1.0")
			e.clock.Add(10 * time.Second)
			e.tools(en, nil, []string{"secret_tool_beta"})
			e.clock.Add(20 * time.Second) // 07:01
			msgs := e.cycle()
			if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "1 tool removed") || !strings.Contains(msgs[0].Text, "version 1.0.0 → 1.1.0") ||
				strings.Contains(msgs[0].Text, "added") || !strings.Contains(msgs[0].Text, "daily summary") {
				t.Fatalf("after the summary time: %d e-mails %v", len(msgs), msgs)
			}
			e.clock.Add(time.Hour)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Errorf("a second summary the same day")
			}
			e.clock.Add(23 * time.Hour) // 07:01 the next day
			if msgs := e.cycle(); len(msgs) != 1 || !strings.Contains(msgs[0].Text, "1 tool added") || strings.Contains(msgs[0].Text, "version") {
				t.Fatalf("the next day's summary: %d e-mails %v", len(msgs), msgs)
			}
		})

		t.Run("turned off after the e-mail was planned: not sent", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, nil)
			e.clock.Add(10 * time.Minute)
			if r, err := e.svc.Plan(ctx); err != nil || r.Hourly == 0 {
				t.Fatalf("Plan = %+v, %v; want an e-mail planned", r, err)
			}
			if err := e.svc.SetMode(ctx, acct, store.MailOff); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
			if msgs := e.sender.take(); len(msgs) != 0 {
				t.Errorf("%d e-mails sent after change e-mails were turned off", len(msgs))
			}
		})

		t.Run("off: none, and changes while off are not sent later", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			if err := e.svc.SetMode(ctx, acct, store.MailOff); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, nil)
			e.clock.Add(2 * time.Hour)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Fatalf("%d e-mails while off", len(msgs))
			}
			if err := e.svc.SetMode(ctx, acct, store.MailHourly); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(2 * time.Hour)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Fatalf("%d e-mails about a change made while off", len(msgs))
			}
		})

		t.Run("a change committed late is told by the next e-mail", func(t *testing.T) {
			e, acct, en := fresh(t)
			other := e.entry(en.Slug+"-late", "Late Server")
			e.follow(acct, en)
			e.follow(acct, other)
			e.clock.Add(time.Minute)
			lateAt := e.clock.Now() // the late change's recorded time
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, nil)
			e.clock.Add(10 * time.Minute)
			if msgs := e.cycle(); len(msgs) != 1 || !strings.Contains(msgs[0].Text, en.Slug+": 1 tool removed") {
				t.Fatalf("first e-mail: %d %v", len(msgs), msgs)
			}
			// A history step that failed at lateAt is retried now: its change is
			// recorded at lateAt, long covered by time, and committed after the e-mail.
			e.clock.Add(20 * time.Minute)
			e.recordAt(lateAt, other, attest.ChangeVersion, &history.ChangeDetails{VersionBefore: "1.0.0", VersionAfter: "2.0.0"}, 0, 0, "2.0.0")
			e.clock.Add(time.Hour)
			msgs := e.cycle()
			if len(msgs) != 1 || !strings.Contains(msgs[0].Text, other.Slug+": version 1.0.0 → 2.0.0") || strings.Contains(msgs[0].Text, en.Slug+":") {
				t.Fatalf("the late change: %d e-mails %v", len(msgs), msgs)
			}
			e.clock.Add(2 * time.Hour)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Errorf("told again: %d e-mails", len(msgs))
			}
		})

		t.Run("no new e-mail while one of the account is unfinished; its changes wait", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, nil)
			e.clock.Add(2 * time.Minute)
			if r, err := e.svc.Plan(ctx); err != nil || r.Hourly != 1 {
				t.Fatalf("Plan = %+v, %v", r, err)
			}
			// Not sent yet (the delivery job is behind); an hour later there is more.
			e.clock.Add(time.Hour)
			e.tools(en, nil, []string{"secret_tool_beta"})
			e.clock.Add(2 * time.Minute)
			if r, err := e.svc.Plan(ctx); err != nil || r.Hourly != 0 {
				t.Fatalf("Plan beside a pending e-mail = %+v, %v; want none", r, err)
			}
			if _, err := e.svc.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
			msgs := e.sender.take()
			if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "1 tool removed") || strings.Contains(msgs[0].Text, "added") {
				t.Fatalf("the pending e-mail: %d %v", len(msgs), msgs)
			}
			e.clock.Add(time.Minute)
			msgs = e.cycle()
			if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "1 tool added") || strings.Contains(msgs[0].Text, "removed") {
				t.Fatalf("the waiting change: %d %v", len(msgs), msgs)
			}
		})

		t.Run("7 days at sending: a change grown too old is not told", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, nil)
			e.clock.Add(2 * time.Minute)
			if r, err := e.svc.Plan(ctx); err != nil || r.Hourly != 1 {
				t.Fatalf("Plan = %+v, %v", r, err)
			}
			e.clock.Add(MaxAge) // the delivery job was stopped for a week
			if _, err := e.svc.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
			if msgs := e.sender.take(); len(msgs) != 0 {
				t.Fatalf("%d e-mails about a change older than 7 days", len(msgs))
			}
			rows, err := b.st.OutboxEmails(ctx, acct, false, 0)
			if err != nil || len(rows) != 1 || rows[0].State != store.OutboxSkipped {
				t.Fatalf("outbox = %+v, %v; want the e-mail skipped, not failed", rows, err)
			}
		})

		t.Run("undoing turn off tells the changes of the gap", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, nil)
			off := e.svc.tokens.issue(token{Account: acct, Action: ActionMailOff, Issued: day(e.clock.Now())})
			_, undo, err := e.svc.Unsubscribe(ctx, off)
			if err != nil || undo.Kind != ActionMailOnHourly {
				t.Fatalf("turn off: %+v %v", undo, err)
			}
			e.clock.Add(time.Minute)
			e.version(en, "1.0.0", "1.1.0", "1.1.0")
			e.clock.Add(time.Minute)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Fatalf("%d e-mails while off", len(msgs))
			}
			if _, _, err := e.svc.Unsubscribe(ctx, undo.Token); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(2 * time.Minute)
			msgs := e.cycle()
			if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "1 tool removed") || !strings.Contains(msgs[0].Text, "version 1.0.0 → 1.1.0") {
				t.Fatalf("after the undo: %d e-mails %v; want both changes, as if never off", len(msgs), msgs)
			}
		})

		t.Run("several entries: one e-mail, the Followed page", func(t *testing.T) {
			e, acct, en := fresh(t)
			other := e.entry(en.Slug+"-b", "Calendar Server")
			e.follow(acct, en)
			e.follow(acct, other)
			e.clock.Add(time.Minute)
			e.tools(en, []string{"secret_tool_alpha"}, []string{"secret_tool_alpha", "secret_tool_beta"})
			e.version(other, "1.0.0", "2.0.0", "2.0.0")
			e.clock.Add(2 * time.Minute)
			msgs := e.cycle()
			if len(msgs) != 1 {
				t.Fatalf("%d e-mails, want 1", len(msgs))
			}
			m := msgs[0]
			if !strings.Contains(m.Text, en.Slug+": 1 tool added") || !strings.Contains(m.Text, other.Slug+": version 1.0.0 → 2.0.0") ||
				!strings.Contains(m.Text, testBase+"/followed") || strings.Contains(m.Text, "#ch-") || !strings.Contains(m.Subject, "2 followed entries changed") {
				t.Errorf("e-mail: %s\n%s", m.Subject, m.Text)
			}
			checkNoServerText(t, msgs)
		})

		t.Run("an entry's listed name is the publisher's text: e-mails name it by slug", func(t *testing.T) {
			e, acct, _ := fresh(t)
			en := e.entry(fmt.Sprintf("hostile-%d", acct), "<script>alert(1)</script>\u202eevil\u200b\nname")
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.tools(en, nil, []string{"secret_tool_alpha"})
			e.clock.Add(2 * time.Minute)
			msgs := e.cycle()
			if len(msgs) != 1 {
				t.Fatalf("%d e-mails", len(msgs))
			}
			m := msgs[0]
			if strings.Contains(m.Subject+m.Text+m.HTML, "script") || strings.Contains(m.Subject+m.Text+m.HTML, "evil") ||
				strings.ContainsAny(m.Subject+m.Text+m.HTML, "\u202e\u200b") || strings.Contains(m.Subject, "\n") || !strings.Contains(m.Subject, en.Slug) {
				t.Errorf("hostile name: %q\n%s", m.Subject, m.HTML)
			}
		})

		t.Run("a deleted entry: told once, with the Followed page", func(t *testing.T) {
			e, acct, en := fresh(t)
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			if err := b.st.DeleteEntry(ctx, en.Slug, "removed by its operator"); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(2 * time.Minute)
			msgs := e.cycle()
			if len(msgs) != 1 || !strings.Contains(msgs[0].Subject, en.Slug+" was removed from the directory") ||
				!strings.Contains(msgs[0].Text, testBase+"/followed") || strings.Contains(msgs[0].Text, "#ch-") {
				t.Fatalf("e-mails: %+v", msgs)
			}
			e.clock.Add(2 * time.Hour)
			if msgs := e.cycle(); len(msgs) != 0 {
				t.Errorf("told again: %d e-mails", len(msgs))
			}
			f, err := e.svc.Followed(ctx, acct)
			if err != nil || len(f.Entries) != 0 || len(f.Gone) != 1 || !f.Gone[0].Told || f.Gone[0].Name != "Weather Server" {
				t.Errorf("Followed = %+v, %v", f, err)
			}
		})
	})
}

func countAccounts(t *testing.T, b backend) int64 {
	t.Helper()
	var n int64
	for ; ; n++ {
		if _, err := b.st.NotifySettings(context.Background(), n+1); errors.Is(err, store.ErrNotFound) {
			return n
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// TestDelivery: retries with backoff, permanent failures, giving up, and a claim whose
// worker died.
func TestDelivery(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		e := newEnv(t, b)
		mail := func(t *testing.T) int64 {
			acct := e.account(fmt.Sprintf("d%d@example.com", e.accounts+1))
			en := e.entry(fmt.Sprintf("d-%d", e.accounts), "Delivery Server")
			e.follow(acct, en)
			e.clock.Add(time.Minute)
			e.tools(en, nil, []string{"secret_tool_alpha"})
			e.clock.Add(2 * time.Minute)
			if _, err := e.svc.Plan(ctx); err != nil {
				t.Fatal(err)
			}
			return acct
		}
		row := func(t *testing.T, acct int64) store.OutboxEmail {
			rows, err := b.st.OutboxEmails(ctx, acct, false, 1)
			if err != nil || len(rows) != 1 {
				t.Fatalf("outbox: %v %v", rows, err)
			}
			return rows[0]
		}

		t.Run("transient failures back off, then it is sent once", func(t *testing.T) {
			acct := mail(t)
			fails := 2
			e.sender.fail = func(Message) error {
				if fails > 0 {
					fails--
					return errors.New("421 try again later")
				}
				return nil
			}
			defer func() { e.sender.fail = nil }()
			for i, wait := range []time.Duration{time.Minute, 5 * time.Minute} {
				if _, err := e.svc.Deliver(ctx); err != nil {
					t.Fatal(err)
				}
				r := row(t, acct)
				if r.State != store.OutboxPending || r.Attempts != i+1 || !r.NextAttemptAt.Equal(e.clock.Now().Add(wait)) || !strings.Contains(r.LastError, "421") {
					t.Fatalf("after failure %d: %+v", i+1, r)
				}
				e.clock.Add(wait - time.Second)
				if n, _ := e.svc.Deliver(ctx); n != 0 {
					t.Fatalf("retried before its time")
				}
				e.clock.Add(time.Second)
			}
			if _, err := e.svc.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
			if msgs := e.sender.take(); len(msgs) != 1 {
				t.Fatalf("%d e-mails sent", len(msgs))
			}
			if r := row(t, acct); r.State != store.OutboxSent || r.Attempts != 3 {
				t.Fatalf("after success: %+v", r)
			}
		})

		t.Run("a permanent refusal fails at once and shows on the Followed page", func(t *testing.T) {
			acct := mail(t)
			e.sender.fail = func(Message) error { return errPermanent }
			defer func() { e.sender.fail = nil }()
			if _, err := e.svc.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
			if r := row(t, acct); r.State != store.OutboxFailed || r.Attempts != 1 {
				t.Fatalf("%+v", r)
			}
			f, err := e.svc.Followed(ctx, acct)
			if err != nil || len(f.Failures) != 1 || !strings.Contains(f.Failures[0].Error, "550") {
				t.Fatalf("Followed = %+v, %v", f.Failures, err)
			}
		})

		t.Run("gives up after the last wait", func(t *testing.T) {
			acct := mail(t)
			e.sender.fail = func(Message) error { return errors.New("connection refused") }
			defer func() { e.sender.fail = nil }()
			for _, wait := range DefaultBackoff {
				if _, err := e.svc.Deliver(ctx); err != nil {
					t.Fatal(err)
				}
				e.clock.Add(wait)
			}
			if _, err := e.svc.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
			if r := row(t, acct); r.State != store.OutboxFailed || r.Attempts != 6 || !strings.Contains(r.LastError, "gave up after 6 attempts") {
				t.Fatalf("%+v", r)
			}
		})

		t.Run("a worker killed mid-send: the lease runs out and it is sent again", func(t *testing.T) {
			acct := mail(t)
			dead, ok, err := b.st.ClaimEmail(ctx, e.clock.Now(), DefaultLease)
			if err != nil || !ok || dead.AccountID != acct {
				t.Fatalf("claim: %+v %v %v", dead, ok, err)
			}
			if n, err := e.svc.Deliver(ctx); n != 0 || err != nil {
				t.Fatalf("a leased e-mail was taken: %d %v", n, err)
			}
			e.clock.Add(DefaultLease)
			if n, err := e.svc.Deliver(ctx); n != 1 || err != nil {
				t.Fatalf("after the lease: %d %v", n, err)
			}
			msgs := e.sender.take()
			if len(msgs) != 1 || msgs[0].MessageID != dead.MessageID {
				t.Fatalf("%d e-mails", len(msgs))
			}
			// The dead worker's late outcome changes nothing.
			err = b.st.FinishEmail(ctx, store.EmailOutcome{ID: dead.ID, Attempt: dead.Attempts, State: store.OutboxFailed, At: e.clock.Now()})
			if !errors.Is(err, store.ErrLeaseLost) {
				t.Fatalf("late outcome: %v", err)
			}
			if r := row(t, acct); r.State != store.OutboxSent || r.Attempts != 2 {
				t.Fatalf("%+v", r)
			}
		})
	})
}

// TestFollowing: the limit, the Followed page, and unsubscribing.
func TestFollowing(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		e := newEnv(t, b)
		acct := e.account("limit@example.com")
		var entries []store.Entry
		for i := range MaxFollows + 1 {
			entries = append(entries, e.entry(fmt.Sprintf("f-%03d", i), fmt.Sprintf("Server %03d", i)))
		}
		for _, en := range entries[:MaxFollows] {
			e.follow(acct, en)
		}
		if err := e.svc.Follow(ctx, acct, entries[MaxFollows].Slug); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "200") {
			t.Fatalf("201st follow: %v", err)
		}
		if err := e.svc.Follow(ctx, acct, entries[0].Slug); err != nil {
			t.Fatalf("following a followed entry at the limit: %v", err)
		}
		if err := e.svc.Follow(ctx, acct, "no-such-entry"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("following a missing entry: %v", err)
		}
		if err := e.svc.Unfollow(ctx, acct, entries[0].Slug); err != nil {
			t.Fatal(err)
		}
		e.follow(acct, entries[MaxFollows])
		f, err := e.svc.Followed(ctx, acct)
		if err != nil || f.Count != MaxFollows || f.Mode != store.MailHourly || !f.HasEmail || f.Entries[0].Name != "Server 001" {
			t.Fatalf("Followed: count %d mode %s, %v", f.Count, f.Mode, err)
		}

		// The Followed page lists the latest changes.
		e.clock.Add(time.Minute)
		e.baseline(entries[1])
		e.clock.Add(time.Minute)
		n := e.tools(entries[1], []string{"secret_tool_alpha"}, nil)
		f, err = e.svc.Followed(ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		cs := f.Entries[0].Changes
		if len(cs) != 2 || cs[0].Number != n || cs[0].Summary != "1 tool removed" || !cs[1].Baseline ||
			cs[0].Link != fmt.Sprintf("%s/s/%s/history#ch-%d", testBase, entries[1].Slug, n) {
			t.Fatalf("changes: %+v", cs)
		}

		// Unsubscribing from a one-entry e-mail: the page, the unfollow, its undo.
		e.clock.Add(2 * time.Minute)
		msgs := e.cycle()
		if len(msgs) != 1 {
			t.Fatalf("%d e-mails", len(msgs))
		}
		tok := regexp.MustCompile(`/unsubscribe/([A-Za-z0-9_-]+)`).FindStringSubmatch(msgs[0].Text)
		if tok == nil {
			t.Fatalf("no unsubscribe link in %q", msgs[0].Text)
		}
		acts, err := e.svc.UnsubscribePage(ctx, tok[1])
		if err != nil || len(acts) != 2 || acts[0].Kind != ActionUnfollow || acts[0].EntrySlug != entries[1].Slug || acts[1].Kind != ActionMailOff {
			t.Fatalf("page: %+v %v", acts, err)
		}
		if following, _ := e.svc.Following(ctx, acct, entries[1].ID); !following {
			t.Fatal("opening the page unfollowed")
		}
		done, undo, err := e.svc.Unsubscribe(ctx, tok[1])
		if err != nil || done.Kind != ActionUnfollow || undo.Kind != ActionFollow {
			t.Fatalf("unfollow: %+v %+v %v", done, undo, err)
		}
		if following, _ := e.svc.Following(ctx, acct, entries[1].ID); following {
			t.Fatal("still following")
		}
		if _, _, err := e.svc.Unsubscribe(ctx, undo.Token); err != nil {
			t.Fatal(err)
		}
		if following, _ := e.svc.Following(ctx, acct, entries[1].ID); !following {
			t.Fatal("undo did not follow again")
		}

		// Mail off from the page, undone to the previous mode; one click keeps follows.
		if err := e.svc.SetMode(ctx, acct, store.MailDaily); err != nil {
			t.Fatal(err)
		}
		off := strings.TrimSuffix(strings.TrimPrefix(msgs[0].ListUnsubscribe, testBase+"/unsubscribe/"), "/one-click")
		_, undo, err = e.svc.Unsubscribe(ctx, off)
		if err != nil || undo.Kind != ActionMailOnDaily {
			t.Fatalf("mail off: %+v %v", undo, err)
		}
		if st, _ := b.st.NotifySettings(ctx, acct); st.Mode != store.MailOff {
			t.Fatalf("mode %s", st.Mode)
		}
		if _, _, err := e.svc.Unsubscribe(ctx, undo.Token); err != nil {
			t.Fatal(err)
		}
		if st, _ := b.st.NotifySettings(ctx, acct); st.Mode != store.MailDaily {
			t.Fatalf("after undo, mode %s", st.Mode)
		}
		if err := e.svc.OneClick(ctx, off); err != nil {
			t.Fatal(err)
		}
		st, _ := b.st.NotifySettings(ctx, acct)
		if st.Mode != store.MailOff || st.Follows != MaxFollows {
			t.Fatalf("after one click: %+v", st)
		}
		if err := e.svc.OneClick(ctx, off[:60]+"AAAAAAAAAAAA"); !errors.Is(err, ErrBadToken) {
			t.Fatalf("a forged token: %v", err)
		}
	})
}

// TestConcurrentPlanners: two planning jobs at once (two processes, or a job retried
// beside a slow one) plan each account's e-mail once.
func TestConcurrentPlanners(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		e := newEnv(t, b)
		second, err := New(e.svc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		en := e.entry("busy-server", "Busy Server")
		var accounts []int64
		for i := range 30 {
			a := e.account(fmt.Sprintf("planner%d@example.com", i))
			e.follow(a, en)
			accounts = append(accounts, a)
		}
		tools := []string{"secret_tool_alpha"}
		for round := range 4 {
			e.clock.Add(time.Hour)
			next := append(slices.Clone(tools), fmt.Sprintf("tool_%d", round))
			e.tools(en, tools, next)
			tools = next
			e.clock.Add(2 * time.Minute)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, svc := range []*Service{e.svc, second} {
				wg.Go(func() { _, errs[i] = svc.Plan(ctx) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			for _, a := range accounts {
				rows, err := b.st.OutboxEmails(ctx, a, false, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != round+1 {
					t.Fatalf("round %d: account %d has %d e-mails, want %d", round, a, len(rows), round+1)
				}
			}
			if _, err := e.svc.Deliver(ctx); err != nil {
				t.Fatal(err)
			}
			if msgs := e.sender.take(); len(msgs) != len(accounts) {
				t.Fatalf("round %d: %d e-mails sent, want %d", round, len(msgs), len(accounts))
			}
		}
	})
}
