package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Webhooks (issue 17): the tables of migration 0013 (webhooks, webhook_deliveries,
// webhook_planner), written once for both backends. Package notify/webhook decides what
// is stored (it validates URLs, plans, signs and delivers); the store keeps the limits
// that must hold whatever the caller does: five webhooks per account (a slot each), one
// delivery per message id, a delivery log of at most MaxWebhookLog rows per webhook.

// Bounds of the webhook tables.
const (
	// MaxWebhooksPerAccount is how many webhooks an account may register (the schema's
	// slots 1 to 5).
	MaxWebhooksPerAccount = 5
	// MaxWebhookURL is the longest webhook URL, in bytes.
	MaxWebhookURL = 2048
	// MaxWebhookLog is how many deliveries the store keeps per webhook: the newest,
	// pending ones always among them.
	MaxWebhookLog = 100
	// MaxWebhookPayload is the largest delivery body, in bytes.
	MaxWebhookPayload = 16 << 10
	// maxWebhookText is the longest error or disabling reason kept, in bytes.
	maxWebhookText = 500
	// maxWebhookBatch bounds the rows one call reads or writes.
	maxWebhookBatch = 1000
)

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Errors of the webhook methods that callers branch on.
var (
	// ErrWebhookLimit is returned by AddWebhook when the account has
	// MaxWebhooksPerAccount webhooks already.
	ErrWebhookLimit = errors.New("the account has the most webhooks allowed")
	// ErrWebhookExists is returned by AddWebhook when the account registered the URL
	// already.
	ErrWebhookExists = errors.New("the account has a webhook with this URL already")
	// ErrWebhookCursorMoved is returned by PlanWebhookDeliveries when the planner's
	// cursor is not where the caller read it: another planner moved it.
	ErrWebhookCursorMoved = errors.New("the webhook planner's cursor moved meanwhile")
)

// Webhook is a URL an account registered.
type Webhook struct {
	ID        int64
	AccountID int64
	URL       string
	CreatedAt time.Time
	// ConsecutiveFailures counts the failed delivery attempts since the last success.
	ConsecutiveFailures int
	// DisabledAt is when the webhook was disabled (zero: enabled), DisabledReason why,
	// in words its owner is shown.
	DisabledAt     time.Time
	DisabledReason string
}

// Enabled reports whether deliveries are made to w.
func (w Webhook) Enabled() bool { return w.DisabledAt.IsZero() }

// WebhookDelivery is one change to be POSTed, or POSTed, to one webhook: a row of the
// delivery log.
type WebhookDelivery struct {
	ID        int64
	WebhookID int64
	// MessageID is the webhook-id header, the same on every attempt; unique.
	MessageID    string
	EntryID      int64
	ChangeNumber int64
	// Payload is the exact body sent.
	Payload   []byte
	CreatedAt time.Time
	// State is DeliveryPending, DeliveryDelivered or DeliveryFailed.
	State         string
	Attempts      int
	NextAttemptAt time.Time
	LastAttemptAt time.Time // zero before the first attempt
	LastStatus    int       // HTTP status of the last attempt; 0: none (no response)
	LastError     string    // what went wrong in the last attempt; "" after a success
	FinishedAt    time.Time // zero while pending
}

// WebhookClaim is a due delivery a worker holds until its lease ends, with the URL to
// deliver it to.
type WebhookClaim struct {
	Delivery WebhookDelivery
	URL      string
}

// WebhookAttempt is the outcome of one delivery attempt, for FinishWebhookAttempt.
type WebhookAttempt struct {
	DeliveryID int64
	At         time.Time
	Status     int    // HTTP status; 0 when there was no response
	Error      string // "" for a success; clipped to 500 bytes
	// Delivered is a success. Otherwise NextAttemptAt (zero: give up, the delivery
	// failed) is when to try again.
	Delivered     bool
	NextAttemptAt time.Time
	// DisableAfter disables the webhook, with DisableReason, once its consecutive
	// failures reach it (0: never); Disable disables it now (a 410 Gone).
	DisableAfter  int
	Disable       bool
	DisableReason string
}

const webhookColumns = `id, account_id, url, created_at, consecutive_failures, disabled_at, disabled_reason`

func scanWebhook(row rowScanner) (Webhook, error) {
	var w Webhook
	err := row.Scan(&w.ID, &w.AccountID, &w.URL, timeCol(&w.CreatedAt), &w.ConsecutiveFailures,
		timeCol(&w.DisabledAt), nullStringCol{&w.DisabledReason})
	return w, err
}

const deliveryColumns = `id, webhook_id, message_id, entry_id, change_number, payload, created_at, state,
	attempts, next_attempt_at, last_attempt_at, last_status, last_error, finished_at`

func scanDelivery(row rowScanner) (WebhookDelivery, error) {
	var d WebhookDelivery
	err := row.Scan(&d.ID, &d.WebhookID, &d.MessageID, &d.EntryID, &d.ChangeNumber, &d.Payload,
		timeCol(&d.CreatedAt), &d.State, &d.Attempts, timeCol(&d.NextAttemptAt), timeCol(&d.LastAttemptAt),
		&d.LastStatus, &d.LastError, timeCol(&d.FinishedAt))
	return d, err
}

// clipText clips s to at most n bytes on a rune boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// AddWebhook registers url for the account, in the lowest free slot. It fails with
// ErrWebhookExists if the account has the URL already, ErrWebhookLimit if it has
// MaxWebhooksPerAccount webhooks, ErrNotFound if there is no such account.
func (s *sqlStore) AddWebhook(ctx context.Context, accountID int64, url string, now time.Time) (Webhook, error) {
	if url == "" || len(url) > MaxWebhookURL {
		return Webhook{}, fmt.Errorf("couldn't add the webhook: its URL is %d bytes long; 1 to %d are allowed", len(url), MaxWebhookURL)
	}
	w := Webhook{AccountID: accountID, URL: url, CreatedAt: now.UTC().Truncate(time.Millisecond)}
	// The slots are the schema's limit: no slot is free for a sixth (NULL, which the
	// schema refuses), and two racing inserts that pick the same slot collide on
	// webhooks_account_slot. A missing account breaks the reference.
	err := s.write.QueryRow(ctx, `INSERT INTO webhooks (account_id, slot, url, created_at) VALUES (?,
		(SELECT min(column1) FROM (VALUES (1), (2), (3), (4), (5)) AS slots
		 WHERE column1 NOT IN (SELECT slot FROM webhooks WHERE account_id = ?)), ?, ?)
		RETURNING id`, accountID, accountID, url, s.d.time(w.CreatedAt)).Scan(&w.ID)
	if err == nil {
		return w, nil
	}
	// Say why, from what is stored now.
	existing, rerr := s.Webhooks(ctx, accountID)
	if rerr != nil {
		return Webhook{}, fmt.Errorf("couldn't add the webhook: %w", err)
	}
	for _, e := range existing {
		if e.URL == url {
			return Webhook{}, ErrWebhookExists
		}
	}
	if len(existing) >= MaxWebhooksPerAccount {
		return Webhook{}, ErrWebhookLimit
	}
	var n int
	if s.read.QueryRow(ctx, `SELECT count(*) FROM accounts WHERE id = ?`, accountID).Scan(&n) == nil && n == 0 {
		return Webhook{}, ErrNotFound
	}
	return Webhook{}, fmt.Errorf("couldn't add the webhook: %w", err)
}

// Webhooks returns the account's webhooks, oldest first.
func (s *sqlStore) Webhooks(ctx context.Context, accountID int64) ([]Webhook, error) {
	return queryAll(ctx, s.read, scanWebhook,
		`SELECT `+webhookColumns+` FROM webhooks WHERE account_id = ? ORDER BY id`, accountID)
}

// Webhook returns the account's webhook id; ErrNotFound if the account has none such.
func (s *sqlStore) Webhook(ctx context.Context, accountID, id int64) (Webhook, error) {
	w, err := scanWebhook(s.read.QueryRow(ctx,
		`SELECT `+webhookColumns+` FROM webhooks WHERE id = ? AND account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return Webhook{}, ErrNotFound
	}
	return w, err
}

// DeleteWebhook deletes the account's webhook id with its deliveries; ErrNotFound if
// the account has none such.
func (s *sqlStore) DeleteWebhook(ctx context.Context, accountID, id int64) error {
	n, err := s.write.Exec(ctx, `DELETE FROM webhooks WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// EnableWebhook enables the account's disabled webhook id again, with no failures
// counted; ErrNotFound if the account has none such. Deliveries that failed while it was
// disabled are not retried.
func (s *sqlStore) EnableWebhook(ctx context.Context, accountID, id int64) error {
	n, err := s.write.Exec(ctx, `UPDATE webhooks SET disabled_at = NULL, disabled_reason = NULL, consecutive_failures = 0
		WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// EnabledWebhooks returns the enabled webhooks with an id above afterID, by id, at most
// limit (≤ 0 or above 1000: 1000): the planner pages through them.
func (s *sqlStore) EnabledWebhooks(ctx context.Context, afterID int64, limit int) ([]Webhook, error) {
	if limit <= 0 || limit > maxWebhookBatch {
		limit = maxWebhookBatch
	}
	return queryAll(ctx, s.read, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks
		WHERE id > ? AND disabled_at IS NULL ORDER BY id LIMIT ?`, afterID, limit)
}

// AddWebhookDeliveries stores new pending deliveries (at most 1000 at once), due at
// their NextAttemptAt; one whose MessageID is stored already, or whose webhook is gone,
// is skipped. It returns how many were added.
func (s *sqlStore) AddWebhookDeliveries(ctx context.Context, ds []WebhookDelivery) (int, error) {
	if len(ds) > maxWebhookBatch {
		return 0, fmt.Errorf("couldn't add %d webhook deliveries: at most %d at once", len(ds), maxWebhookBatch)
	}
	added := 0
	for _, d := range ds {
		if len(d.Payload) < 2 || len(d.Payload) > MaxWebhookPayload {
			return added, fmt.Errorf("couldn't add webhook delivery %s: its payload is %d bytes; 2 to %d are allowed", d.MessageID, len(d.Payload), MaxWebhookPayload)
		}
		n, err := s.write.Exec(ctx, `INSERT INTO webhook_deliveries
			(webhook_id, message_id, entry_id, change_number, payload, created_at, next_attempt_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (message_id) DO NOTHING`,
			d.WebhookID, d.MessageID, d.EntryID, d.ChangeNumber, d.Payload, s.d.time(d.CreatedAt), s.d.time(d.NextAttemptAt))
		if err != nil {
			var left int
			if s.read.QueryRow(ctx, `SELECT count(*) FROM webhooks WHERE id = ?`, d.WebhookID).Scan(&left) == nil && left == 0 {
				continue // deleted since it was read
			}
			return added, fmt.Errorf("couldn't add webhook delivery %s: %w", d.MessageID, err)
		}
		added += int(n)
	}
	return added, nil
}

// ClaimWebhookDeliveries claims up to limit (≤ 0 or above 1000: 1000) pending
// deliveries due at now, of enabled webhooks and not held by another worker, holding
// each until now+lease, oldest due first. A delivery is held by one worker at a time:
// the claim re-checks the lease on the row it takes (on PostgreSQL, under the row lock
// the UPDATE takes).
func (s *sqlStore) ClaimWebhookDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]WebhookClaim, error) {
	if limit <= 0 || limit > maxWebhookBatch {
		limit = maxWebhookBatch
	}
	type cand struct {
		id  int64
		url string
	}
	at := s.d.time(now)
	cands, err := queryAll(ctx, s.read, func(row rowScanner) (cand, error) {
		var c cand
		return c, row.Scan(&c.id, &c.url)
	}, `SELECT d.id, w.url FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
		WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
		  AND w.disabled_at IS NULL
		ORDER BY d.next_attempt_at, d.id LIMIT ?`, at, at, limit)
	if err != nil {
		return nil, err
	}
	until := s.d.time(now.Add(lease))
	var out []WebhookClaim
	for _, c := range cands {
		d, err := scanDelivery(s.write.QueryRow(ctx, `UPDATE webhook_deliveries SET lease_until = ?
			WHERE id = ? AND state = 'pending' AND (lease_until IS NULL OR lease_until <= ?)
			RETURNING `+deliveryColumns, until, c.id, at))
		if errors.Is(err, sql.ErrNoRows) {
			continue // another worker took it, or it finished
		}
		if err != nil {
			return out, err
		}
		out = append(out, WebhookClaim{Delivery: d, URL: c.url})
	}
	return out, nil
}

// FinishWebhookAttempt records one attempt of a claimed delivery: delivered, due again
// at a.NextAttemptAt, or failed for good; the webhook's consecutive failures are reset
// by a success and counted up by a failure, and reaching a.DisableAfter (or a.Disable)
// disables it with a.DisableReason. A disabled webhook's pending deliveries fail with
// it. Then the webhook's delivery log is cut to its newest MaxWebhookLog rows (pending
// ones are kept). It returns the webhook as it is afterwards.
func (s *sqlStore) FinishWebhookAttempt(ctx context.Context, a WebhookAttempt) (Webhook, error) {
	if !a.Delivered && a.Error == "" {
		return Webhook{}, errors.New("couldn't record the webhook attempt: a failed attempt needs its error")
	}
	at := s.d.time(a.At)
	errText := clipText(a.Error, maxWebhookText)
	var w Webhook
	err := s.writeTx(ctx, func(tx querier) error {
		var webhookID int64
		var err error
		switch {
		case a.Delivered:
			err = tx.QueryRow(ctx, `UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1,
				last_attempt_at = ?, last_status = ?, last_error = '', lease_until = NULL, finished_at = ?
				WHERE id = ? AND state = 'pending' RETURNING webhook_id`, at, a.Status, at, a.DeliveryID).Scan(&webhookID)
		case a.NextAttemptAt.IsZero():
			err = tx.QueryRow(ctx, `UPDATE webhook_deliveries SET state = 'failed', attempts = attempts + 1,
				last_attempt_at = ?, last_status = ?, last_error = ?, lease_until = NULL, finished_at = ?
				WHERE id = ? AND state = 'pending' RETURNING webhook_id`, at, a.Status, errText, at, a.DeliveryID).Scan(&webhookID)
		default:
			err = tx.QueryRow(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = ?,
				last_attempt_at = ?, last_status = ?, last_error = ?, lease_until = NULL
				WHERE id = ? AND state = 'pending' RETURNING webhook_id`, s.d.time(a.NextAttemptAt), at, a.Status, errText, a.DeliveryID).Scan(&webhookID)
		}
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if a.Delivered {
			_, err = tx.Exec(ctx, `UPDATE webhooks SET consecutive_failures = 0 WHERE id = ?`, webhookID)
		} else {
			_, err = tx.Exec(ctx, `UPDATE webhooks SET consecutive_failures = consecutive_failures + 1 WHERE id = ?`, webhookID)
		}
		if err != nil {
			return err
		}
		if w, err = scanWebhook(tx.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = ?`, webhookID)); err != nil {
			return err
		}
		if w.Enabled() && !a.Delivered && (a.Disable || (a.DisableAfter > 0 && w.ConsecutiveFailures >= a.DisableAfter)) {
			reason := clipText(strings.TrimSpace(a.DisableReason), maxWebhookText)
			if reason == "" {
				reason = "disabled after failed deliveries"
			}
			if _, err := tx.Exec(ctx, `UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE id = ?`, at, reason, webhookID); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET state = 'failed', lease_until = NULL, finished_at = ?,
				last_error = CASE WHEN last_error = '' THEN 'not sent: the webhook was disabled' ELSE last_error END
				WHERE webhook_id = ? AND state = 'pending'`, at, webhookID); err != nil {
				return err
			}
			w.DisabledAt, w.DisabledReason = a.At.UTC().Truncate(time.Millisecond), reason
		}
		// The delivery log: the newest MaxWebhookLog rows, pending ones kept.
		_, err = tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE webhook_id = ? AND state <> 'pending' AND id < (
			SELECT min(id) FROM (SELECT id FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT ?) AS newest)`,
			webhookID, webhookID, MaxWebhookLog)
		return err
	})
	if err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// WebhookDeliveries returns the delivery log of the account's webhook id, newest
// first (at most MaxWebhookLog rows); ErrNotFound if the account has no such webhook.
func (s *sqlStore) WebhookDeliveries(ctx context.Context, accountID, id int64) ([]WebhookDelivery, error) {
	if _, err := s.Webhook(ctx, accountID, id); err != nil {
		return nil, err
	}
	return queryAll(ctx, s.read, scanDelivery, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE webhook_id = ? ORDER BY id DESC LIMIT ?`, id, MaxWebhookLog)
}

// The webhook planner walks the changes in commit order: its cursor is the ledger
// number it has planned deliveries through (webhook_planner.planned_seq, migration
// 0015), moved in the transaction that stores the deliveries of the changes it passed,
// so each change is planned once, however late it was committed and whatever the
// delivery log has pruned since.

// WebhookChange is a change as the webhook planner reads it: with its ledger number.
type WebhookChange struct {
	ChangeRecord
	Seq int64
}

// WebhookCursor returns the ledger number the webhook planner has planned through;
// started false before its first run.
func (s *sqlStore) WebhookCursor(ctx context.Context) (int64, bool, error) {
	var seq *int64
	err := s.read.QueryRow(ctx, `SELECT planned_seq FROM webhook_planner`).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && seq == nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("couldn't read the webhook planner's cursor: %w", err)
	}
	return *seq, true, nil
}

// WebhookChanges returns the changes whose ledger number is in (afterSeq, throughSeq],
// by number, at most limit (≤ 0 or above 1000: 1000), hidden ones and baselines
// included (the planner skips them, and moves past them), without envelopes.
func (s *sqlStore) WebhookChanges(ctx context.Context, afterSeq, throughSeq int64, limit int) ([]WebhookChange, error) {
	if limit <= 0 || limit > maxWebhookBatch {
		limit = maxWebhookBatch
	}
	cs, err := queryAll(ctx, s.read, func(row rowScanner) (WebhookChange, error) {
		var seq int64
		c, err := scanChange(extraColumns{row, []any{&seq}})
		return WebhookChange{ChangeRecord: c, Seq: seq}, err
	}, `SELECT `+changeColumnsWithoutEnvelope+`, l.seq FROM `+changeFrom+`
		WHERE l.seq > ? AND l.seq <= ? ORDER BY l.seq LIMIT ?`, afterSeq, throughSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("couldn't list the changes to deliver: %w", err)
	}
	return cs, nil
}

// PlanWebhookDeliveries moves the planner's cursor from from (0 with no cursor yet) to
// to and stores the deliveries planned for the changes numbered between, in one
// transaction: a delivery whose message id is stored already, or whose webhook is
// gone, is skipped. ErrWebhookCursorMoved, storing nothing, when the cursor is not at
// from. It returns how many deliveries it added.
func (s *sqlStore) PlanWebhookDeliveries(ctx context.Context, from, to int64, at time.Time, ds []WebhookDelivery) (int, error) {
	if to < from {
		return 0, fmt.Errorf("couldn't plan webhook deliveries: the cursor goes back from %d to %d", from, to)
	}
	for _, d := range ds {
		if len(d.Payload) < 2 || len(d.Payload) > MaxWebhookPayload {
			return 0, fmt.Errorf("couldn't add webhook delivery %s: its payload is %d bytes; 2 to %d are allowed", d.MessageID, len(d.Payload), MaxWebhookPayload)
		}
	}
	added := 0
	err := s.writeTx(ctx, func(tx querier) error {
		added = 0
		var cur *int64
		err := tx.QueryRow(ctx, `SELECT planned_seq FROM webhook_planner`).Scan(&cur)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		}
		if (cur == nil && from != 0) || (cur != nil && *cur != from) {
			return ErrWebhookCursorMoved
		}
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_planner (id, planned_through, planned_seq) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET planned_through = excluded.planned_through, planned_seq = excluded.planned_seq`,
			true, s.d.time(at), to); err != nil {
			return err
		}
		for _, d := range ds {
			// The webhook's existence is checked in the statement, so a webhook deleted
			// since the planner read it is skipped without failing the transaction.
			n, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries
				(webhook_id, message_id, entry_id, change_number, payload, created_at, next_attempt_at)
				SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?)
				ON CONFLICT (message_id) DO NOTHING`,
				d.WebhookID, d.MessageID, d.EntryID, d.ChangeNumber, d.Payload, s.d.time(d.CreatedAt), s.d.time(d.NextAttemptAt), d.WebhookID)
			if err != nil {
				return fmt.Errorf("delivery %s: %w", d.MessageID, err)
			}
			added += int(n)
		}
		return nil
	})
	if errors.Is(err, ErrWebhookCursorMoved) {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't plan webhook deliveries: %w", err)
	}
	return added, nil
}
