package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// addTestAccount inserts an account with the columns of migration 0011 and returns its
// id (the accounts methods are another branch's; the webhook tests need only rows).
func addTestAccount(t testing.TB, s Store, email string) int64 {
	t.Helper()
	ctx := context.Background()
	created := "0"
	if s.Backend() != "sqlite" {
		created = "now()"
	}
	if err := s.(testExecer).execForTest(ctx, fmt.Sprintf(
		`INSERT INTO accounts (email, email_key, created_at) VALUES ('%s', '%s', %s)`, email, email, created)); err != nil {
		t.Fatalf("adding account %s: %v", email, err)
	}
	rows, err := QueryForTest(ctx, s, fmt.Sprintf(`SELECT id FROM accounts WHERE email_key = '%s'`, email), 1)
	if err != nil || len(rows) != 1 {
		t.Fatalf("reading account %s: %v %v", email, rows, err)
	}
	var id int64
	fmt.Sscan(rows[0][0], &id)
	return id
}

func TestWebhooksRegister(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a := addTestAccount(t, s, "a@example.org")
		b := addTestAccount(t, s, "b@example.org")
		var ids []int64
		for i := range MaxWebhooksPerAccount {
			w, err := s.AddWebhook(ctx, a, fmt.Sprintf("https://hooks.example.com/%d", i), t0)
			if err != nil {
				t.Fatalf("webhook %d: %v", i, err)
			}
			if w.ID == 0 || w.AccountID != a || !w.CreatedAt.Equal(t0.Truncate(time.Millisecond)) || !w.Enabled() {
				t.Errorf("webhook %d = %+v", i, w)
			}
			ids = append(ids, w.ID)
		}
		if _, err := s.AddWebhook(ctx, a, "https://hooks.example.com/0", t0); !errors.Is(err, ErrWebhookExists) {
			t.Errorf("a registered URL again: %v, want ErrWebhookExists", err)
		}
		if _, err := s.AddWebhook(ctx, a, "https://hooks.example.com/six", t0); !errors.Is(err, ErrWebhookLimit) {
			t.Errorf("a sixth webhook: %v, want ErrWebhookLimit", err)
		}
		if _, err := s.AddWebhook(ctx, 999999, "https://hooks.example.com/x", t0); !errors.Is(err, ErrNotFound) {
			t.Errorf("no account: %v, want ErrNotFound", err)
		}
		// The schema itself refuses a sixth slot.
		if err := s.(testExecer).execForTest(ctx, fmt.Sprintf(`INSERT INTO webhooks (account_id, slot, url, created_at)
			VALUES (%d, 6, 'https://x.example.com/', %s)`, a, map[bool]string{true: "0", false: "now()"}[s.Backend() == "sqlite"])); err == nil {
			t.Error("the schema accepted slot 6")
		}
		// Another account sees, deletes and enables none of them.
		if ws, err := s.Webhooks(ctx, b); err != nil || len(ws) != 0 {
			t.Errorf("b's webhooks = %v, %v", ws, err)
		}
		if err := s.DeleteWebhook(ctx, b, ids[0]); !errors.Is(err, ErrNotFound) {
			t.Errorf("b deleting a's webhook: %v", err)
		}
		if _, err := s.Webhook(ctx, b, ids[0]); !errors.Is(err, ErrNotFound) {
			t.Errorf("b reading a's webhook: %v", err)
		}
		if _, err := s.WebhookDeliveries(ctx, b, ids[0]); !errors.Is(err, ErrNotFound) {
			t.Errorf("b reading a's delivery log: %v", err)
		}
		// A deleted webhook frees its slot.
		if err := s.DeleteWebhook(ctx, a, ids[2]); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddWebhook(ctx, a, "https://hooks.example.com/again", t0); err != nil {
			t.Errorf("after a deletion: %v", err)
		}
		ws, err := s.Webhooks(ctx, a)
		if err != nil || len(ws) != MaxWebhooksPerAccount {
			t.Fatalf("a's webhooks = %d, %v", len(ws), err)
		}
		// Deleting the account deletes its webhooks and their deliveries.
		if _, err := s.AddWebhookDeliveries(ctx, []WebhookDelivery{{WebhookID: ws[0].ID, MessageID: "msg_x", EntryID: 1,
			ChangeNumber: 1, Payload: []byte(`{}`), CreatedAt: t0, NextAttemptAt: t0}}); err != nil {
			t.Fatal(err)
		}
		if err := s.(testExecer).execForTest(ctx, fmt.Sprintf(`DELETE FROM accounts WHERE id = %d`, a)); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`SELECT count(*) FROM webhooks`, `SELECT count(*) FROM webhook_deliveries`} {
			if rows, err := QueryForTest(ctx, s, q, 1); err != nil || rows[0][0] != "0" {
				t.Errorf("%s after deleting the account = %v, %v", q, rows, err)
			}
		}
	})
}

func TestWebhookDeliveries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a := addTestAccount(t, s, "a@example.org")
		w, err := s.AddWebhook(ctx, a, "https://hooks.example.com/", t0)
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.AddWebhook(ctx, a, "https://other.example.com/", t0)
		if err != nil {
			t.Fatal(err)
		}
		d := func(wh int64, n int64) WebhookDelivery {
			return WebhookDelivery{WebhookID: wh, MessageID: fmt.Sprintf("msg_%d_1_%d", wh, n), EntryID: 1, ChangeNumber: n,
				Payload: []byte(`{"n":1}`), CreatedAt: t0, NextAttemptAt: t0}
		}
		n, err := s.AddWebhookDeliveries(ctx, []WebhookDelivery{d(w.ID, 1), d(w.ID, 2), d(w.ID, 1), d(other.ID, 1), d(424242, 1)})
		if err != nil || n != 3 {
			t.Fatalf("AddWebhookDeliveries = %d, %v; want 3 (a repeated message id and a missing webhook skipped)", n, err)
		}
		// A claim holds what it took until the lease ends.
		claims, err := s.ClaimWebhookDeliveries(ctx, t0, time.Minute, 0)
		if err != nil || len(claims) != 3 {
			t.Fatalf("claim = %d, %v", len(claims), err)
		}
		if claims[0].URL == "" || claims[0].Delivery.State != DeliveryPending || string(claims[0].Delivery.Payload) != `{"n":1}` {
			t.Errorf("claim = %+v", claims[0])
		}
		if again, err := s.ClaimWebhookDeliveries(ctx, t0.Add(30*time.Second), time.Minute, 0); err != nil || len(again) != 0 {
			t.Errorf("claim during the lease = %d, %v", len(again), err)
		}
		if early, err := s.ClaimWebhookDeliveries(ctx, t0.Add(-time.Second), time.Minute, 0); err != nil || len(early) != 0 {
			t.Errorf("claim before they are due = %d, %v", len(early), err)
		}
		byMsg := map[string]WebhookDelivery{}
		for _, c := range claims {
			byMsg[c.Delivery.MessageID] = c.Delivery
		}
		one, two := byMsg[fmt.Sprintf("msg_%d_1_1", w.ID)], byMsg[fmt.Sprintf("msg_%d_1_2", w.ID)]
		if _, err := s.FinishWebhookAttempt(ctx, WebhookAttempt{DeliveryID: byMsg[fmt.Sprintf("msg_%d_1_1", other.ID)].ID, At: t0, Status: 200, Delivered: true}); err != nil {
			t.Fatal(err)
		}
		// One delivered, one retried later.
		if got, err := s.FinishWebhookAttempt(ctx, WebhookAttempt{DeliveryID: one.ID, At: t0, Status: 204, Delivered: true}); err != nil || got.ConsecutiveFailures != 0 {
			t.Fatalf("delivered: %+v, %v", got, err)
		}
		if _, err := s.FinishWebhookAttempt(ctx, WebhookAttempt{DeliveryID: one.ID, At: t0, Status: 204, Delivered: true}); !errors.Is(err, ErrNotFound) {
			t.Errorf("finishing a finished delivery: %v, want ErrNotFound", err)
		}
		got, err := s.FinishWebhookAttempt(ctx, WebhookAttempt{DeliveryID: two.ID, At: t0, Status: 500, Error: "HTTP 500",
			NextAttemptAt: t0.Add(time.Minute), DisableAfter: 3})
		if err != nil || got.ConsecutiveFailures != 1 || !got.Enabled() {
			t.Fatalf("retry: %+v, %v", got, err)
		}
		if c, err := s.ClaimWebhookDeliveries(ctx, t0.Add(59*time.Second), time.Minute, 0); err != nil || len(c) != 0 {
			t.Errorf("claim before the retry is due = %d, %v", len(c), err)
		}
		c, err := s.ClaimWebhookDeliveries(ctx, t0.Add(time.Minute), time.Minute, 0)
		if err != nil || len(c) != 1 || c[0].Delivery.ID != two.ID || c[0].Delivery.Attempts != 1 || c[0].Delivery.LastError != "HTTP 500" {
			t.Fatalf("claim of the retry = %+v, %v", c, err)
		}
		// Failures count across deliveries; the third disables the webhook, and its
		// pending deliveries fail with it.
		if _, err := s.AddWebhookDeliveries(ctx, []WebhookDelivery{d(w.ID, 3)}); err != nil {
			t.Fatal(err)
		}
		at := t0.Add(time.Minute)
		if got, err = s.FinishWebhookAttempt(ctx, WebhookAttempt{DeliveryID: two.ID, At: at, Error: "no answer within 10s", DisableAfter: 3}); err != nil || got.ConsecutiveFailures != 2 {
			t.Fatalf("second failure (given up): %+v, %v", got, err)
		}
		c, err = s.ClaimWebhookDeliveries(ctx, at, time.Minute, 0)
		if err != nil || len(c) != 1 {
			t.Fatalf("claim = %+v, %v", c, err)
		}
		if _, err := s.AddWebhookDeliveries(ctx, []WebhookDelivery{d(w.ID, 4)}); err != nil {
			t.Fatal(err)
		}
		got, err = s.FinishWebhookAttempt(ctx, WebhookAttempt{DeliveryID: c[0].Delivery.ID, At: at, Status: 502, Error: "HTTP 502",
			NextAttemptAt: at.Add(time.Minute), DisableAfter: 3, DisableReason: "disabled after 3 failures"})
		if err != nil || got.Enabled() || got.DisabledReason != "disabled after 3 failures" || got.ConsecutiveFailures != 3 {
			t.Fatalf("third failure: %+v, %v", got, err)
		}
		log, err := s.WebhookDeliveries(ctx, a, w.ID)
		if err != nil || len(log) != 4 {
			t.Fatalf("log = %d, %v", len(log), err)
		}
		for _, l := range log {
			if l.State == DeliveryPending || l.FinishedAt.IsZero() {
				t.Errorf("after disabling, delivery %s is %s", l.MessageID, l.State)
			}
		}
		if log[0].ChangeNumber != 4 || log[0].LastError != "not sent: the webhook was disabled" {
			t.Errorf("newest log row = %+v", log[0])
		}
		if en, err := s.EnabledWebhooks(ctx, 0, 0); err != nil || len(en) != 1 || en[0].ID != other.ID {
			t.Errorf("enabled webhooks = %+v, %v", en, err)
		}
		if err := s.EnableWebhook(ctx, a, w.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Webhook(ctx, a, w.ID); err != nil || !got.Enabled() || got.ConsecutiveFailures != 0 {
			t.Errorf("enabled again: %+v, %v", got, err)
		}

		// The planner's cursor: none before the first run; moved only from where it is,
		// with the deliveries of the changes it passed, in one transaction.
		if seq, started, err := s.WebhookCursor(ctx); err != nil || started || seq != 0 {
			t.Errorf("cursor = %d, %v, %v; want none", seq, started, err)
		}
		if _, err := s.PlanWebhookDeliveries(ctx, 3, 7, t0, nil); !errors.Is(err, ErrWebhookCursorMoved) {
			t.Errorf("moving a cursor that is not there: %v", err)
		}
		if n, err := s.PlanWebhookDeliveries(ctx, 0, 7, t0, nil); err != nil || n != 0 {
			t.Fatalf("first cursor: %d, %v", n, err)
		}
		planned := []WebhookDelivery{d(w.ID, 5), d(w.ID, 6), d(424242, 6)}
		if _, err := s.PlanWebhookDeliveries(ctx, 0, 9, t0, planned); !errors.Is(err, ErrWebhookCursorMoved) {
			t.Errorf("a planner behind the cursor: %v", err)
		}
		if rows, _ := QueryForTest(ctx, s, `SELECT count(*) FROM webhook_deliveries WHERE change_number IN (5, 6)`, 1); rows[0][0] != "0" {
			t.Errorf("a refused plan stored deliveries: %v", rows)
		}
		if n, err := s.PlanWebhookDeliveries(ctx, 7, 9, t0.Add(time.Hour), planned); err != nil || n != 2 {
			t.Errorf("PlanWebhookDeliveries = %d, %v; want 2 (a missing webhook skipped)", n, err)
		}
		if seq, started, err := s.WebhookCursor(ctx); err != nil || !started || seq != 9 {
			t.Errorf("cursor = %d, %v, %v; want 9", seq, started, err)
		}
		if n, err := s.PlanWebhookDeliveries(ctx, 9, 9, t0.Add(time.Hour), planned[:1]); err != nil || n != 0 {
			t.Errorf("a stored message id again: %d, %v", n, err)
		}
	})
}

// TestWebhookLogBounded: a webhook keeps its newest MaxWebhookLog deliveries, and a
// pending one is never cut.
func TestWebhookLogBounded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a := addTestAccount(t, s, "a@example.org")
		w, err := s.AddWebhook(ctx, a, "https://hooks.example.com/", t0)
		if err != nil {
			t.Fatal(err)
		}
		const total = MaxWebhookLog + 20
		var ds []WebhookDelivery
		for i := 1; i <= total; i++ {
			ds = append(ds, WebhookDelivery{WebhookID: w.ID, MessageID: fmt.Sprintf("msg_%d", i), EntryID: 1, ChangeNumber: int64(i),
				Payload: []byte(`{}`), CreatedAt: t0, NextAttemptAt: t0.Add(time.Duration(i) * time.Millisecond)})
		}
		if n, err := s.AddWebhookDeliveries(ctx, ds); err != nil || n != total {
			t.Fatalf("added %d, %v", n, err)
		}
		// Deliver all but the oldest, which stays pending.
		claims, err := s.ClaimWebhookDeliveries(ctx, t0.Add(time.Hour), time.Minute, 0)
		if err != nil || len(claims) != total {
			t.Fatalf("claimed %d, %v", len(claims), err)
		}
		for _, c := range claims[1:] {
			if _, err := s.FinishWebhookAttempt(ctx, WebhookAttempt{DeliveryID: c.Delivery.ID, At: t0, Status: 200, Delivered: true}); err != nil {
				t.Fatal(err)
			}
		}
		log, err := s.WebhookDeliveries(ctx, a, w.ID)
		if err != nil || len(log) != MaxWebhookLog {
			t.Fatalf("log = %d rows, %v; want %d", len(log), err, MaxWebhookLog)
		}
		if log[0].ChangeNumber != total || log[MaxWebhookLog-1].ChangeNumber != total-MaxWebhookLog+1 {
			t.Errorf("log runs from %d to %d", log[0].ChangeNumber, log[len(log)-1].ChangeNumber)
		}
		rows, err := QueryForTest(ctx, s, `SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'`, 1)
		if err != nil || rows[0][0] != "1" {
			t.Errorf("pending rows = %v, %v; the pending oldest must be kept", rows, err)
		}
		rows, err = QueryForTest(ctx, s, `SELECT count(*) FROM webhook_deliveries`, 1)
		if err != nil || rows[0][0] != fmt.Sprint(MaxWebhookLog+1) {
			t.Errorf("rows kept = %v, %v; want %d", rows, err, MaxWebhookLog+1)
		}
	})
}

// TestWebhookClaimOnce: workers claiming at the same time never hold one delivery
// twice.
func TestWebhookClaimOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		a := addTestAccount(t, s, "a@example.org")
		w, err := s.AddWebhook(ctx, a, "https://hooks.example.com/", t0)
		if err != nil {
			t.Fatal(err)
		}
		const total = 60
		var ds []WebhookDelivery
		for i := 1; i <= total; i++ {
			ds = append(ds, WebhookDelivery{WebhookID: w.ID, MessageID: fmt.Sprintf("msg_%d", i), EntryID: 1, ChangeNumber: int64(i),
				Payload: []byte(`{}`), CreatedAt: t0, NextAttemptAt: t0})
		}
		if _, err := s.AddWebhookDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		results := make(chan []WebhookClaim, 4)
		errs := make(chan error, 4)
		for range 4 {
			go func() {
				c, err := s.ClaimWebhookDeliveries(ctx, t0, time.Minute, 20)
				results <- c
				errs <- err
			}()
		}
		seen := map[int64]bool{}
		for range 4 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			for _, c := range <-results {
				if seen[c.Delivery.ID] {
					t.Errorf("delivery %d claimed twice", c.Delivery.ID)
				}
				seen[c.Delivery.ID] = true
			}
		}
		if len(seen) == 0 || len(seen) > total {
			t.Errorf("%d deliveries claimed", len(seen))
		}
	})
}
