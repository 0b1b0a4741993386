package notify

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/store"
)

// TestDisputeEmails: a dispute of a followed entry, and then its outcome, go to the
// entry's followers as changes do, on both backends: in Probity's words only ("a
// maintainer contested the check X of round R"), linked to the dispute on the Checks
// tab, never the maintainer's statement or evidence, nor the operator's reason; an
// account that follows another entry gets nothing; a dispute beside a change of the
// same entry is one e-mail naming both, linked to the change.
func TestDisputeEmails(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		e := newEnv(t, b)
		follower := e.account("follower@example.com")
		bystander := e.account("bystander@example.com")
		en := e.entry("weather", "Weather Server")
		other := e.entry("other", "Other")
		e.follow(follower, en)
		e.follow(bystander, other)
		e.clock.Add(time.Minute)
		round := e.round(en, "secret_tool_alpha")
		rs, err := b.st.Rounds(ctx, en.ID, 1)
		if err != nil || len(rs) != 1 {
			t.Fatal(rs, err)
		}
		const statement, reason, evidence = "STATEMENT-TEXT of the maintainer", "REASON-TEXT of the operator", "https://evidence.example/EVIDENCE"
		d, err := b.st.SaveDispute(ctx, store.NewDispute{EntryID: en.ID, Number: 1, RoundID: round, CheckID: "reachability",
			Status: attest.StatusVerified, Statement: statement, Evidence: evidence, OpenedAt: e.clock.Now(),
			Envelope: testEnvelope(`{"dispute":1}`), KeyID: "a050837d85070582"})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Add(2 * time.Minute)
		msgs := e.cycle()
		if len(msgs) != 1 || msgs[0].To != "follower@example.com" {
			t.Fatalf("%d e-mails: %+v", len(msgs), msgs)
		}
		m := msgs[0]
		link := fmt.Sprintf("%s/s/%s/checks#dispute-1", testBase, en.Slug)
		want := fmt.Sprintf("a maintainer contested the check reachability of round %s (dispute 1)", rs[0].RoundID)
		if !strings.Contains(m.Text, en.Slug+": "+want) || !strings.Contains(m.Text, link) || !strings.Contains(m.HTML, `href="`+link+`"`) {
			t.Errorf("dispute e-mail:\n%s\n%s", m.Text, m.HTML)
		}

		// The outcome, an hour later (the hourly gap), is told too.
		e.clock.Add(time.Hour)
		if _, err := b.st.SaveOutcome(ctx, store.NewOutcome{DisputeID: d.ID, Decision: attest.DecisionRejected, Reason: reason,
			DecidedAt: e.clock.Now(), Envelope: testEnvelope(`{"outcome":1}`), KeyID: "a050837d85070582"}); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(2 * time.Minute)
		msgs2 := e.cycle()
		if len(msgs2) != 1 || !strings.Contains(msgs2[0].Text, "an operator decided dispute 1 on the check reachability: rejected, the finding stands") ||
			strings.Contains(msgs2[0].Text, "contested") {
			t.Fatalf("outcome e-mails: %+v", msgs2)
		}

		// A dispute beside a change: one e-mail, linked to the change.
		e.clock.Add(time.Hour)
		n := e.tools(en, []string{"secret_tool_alpha"}, []string{"secret_tool_alpha", "secret_tool_beta"})
		if _, err := b.st.SaveDispute(ctx, store.NewDispute{EntryID: en.ID, Number: 2, RoundID: round, CheckID: "reachability",
			Status: attest.StatusVerified, Statement: statement, OpenedAt: e.clock.Now(),
			Envelope: testEnvelope(`{"dispute":2}`), KeyID: "a050837d85070582"}); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(2 * time.Minute)
		msgs3 := e.cycle()
		if len(msgs3) != 1 || !strings.Contains(msgs3[0].Text, "1 tool added; a maintainer contested the check reachability") ||
			!strings.Contains(msgs3[0].Text, fmt.Sprintf("/s/%s/history#ch-%d", en.Slug, n)) {
			t.Fatalf("change and dispute e-mails: %+v", msgs3)
		}
		all := append(append(msgs, msgs2...), msgs3...)
		checkNoServerText(t, all)
		for _, m := range all {
			for _, s := range []string{"STATEMENT-TEXT", "REASON-TEXT", "EVIDENCE", "Weather Server"} {
				if strings.Contains(m.Subject+m.Text+m.HTML, s) {
					t.Errorf("an e-mail holds %q", s)
				}
			}
		}
	})
}
