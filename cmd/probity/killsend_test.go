package main

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/probity-dev/probity/mail/sink"
	"github.com/probity-dev/probity/notify"
	"github.com/probity-dev/probity/store"
)

// TestKillDuringSend kills `probity serve --accounts` with SIGKILL while its SMTP
// server (mail/sink) holds two change e-mails inside DATA (Options.Hold: the whole
// message, final "." included, has arrived, and the client waits for the reply), then
// starts serve again on the same data directory and database. Of the two held
// messages:
//
//   - the SMTP server keeps nothing of the first: it never answered, as a server that
//     commits a message only with its 250 does. The e-mail is sent again by the
//     restarted serve and arrives exactly once.
//   - the SMTP server keeps the second: it had the whole message when the sender died,
//     as a server that commits before it answers does (or one whose 250 was on its way
//     when the sender died before storing the outcome). That is the window in which an
//     e-mail goes twice (package mail's doc: from the server receiving the final "."
//     until the caller stored the success): the restarted serve sends it again, with
//     the same Message-ID. Nothing is lost.
//
// Between the kill and the restart the test does what the next three minutes would
// (passTime): the killed claims' lease (2 min) ends, and River's rescuer discards the
// killed delivery job. The restarted process then sends at its first delivery job,
// once it is River's leader (a killed leader's term lapses within 15 s). It runs on
// SQLite and on PostgreSQL, side by side.
func TestKillDuringSend(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, kills and restarts the binary")
	}
	probityBinary(t) // built once, before the subtests run side by side
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var dbURL string
			if backend == "postgres" {
				dbURL = testDatabase(t)
			}
			testKillDuringSend(t, dbURL)
		})
	}
}

func testKillDuringSend(t *testing.T, dbURL string) {
	began := time.Now()
	const (
		refusedTo  = "refused@example.org"  // its held message is never accepted
		acceptedTo = "accepted@example.org" // its held message is kept by the server
	)
	// 1. Two accounts follow the entry; a drift is confirmed; the planner puts one
	// e-mail for each into the outbox. All of it on the test's clock, an hour ago, so
	// that the e-mails are due when serve starts.
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	r := newFollowerRig(t, dbURL, start)
	r.round(t, 0)
	planner := r.notifyService(t, "http://127.0.0.1:8080", nil)
	r.clock.Set(start.Add(time.Minute))
	accounts := map[string]int64{}
	for _, to := range []string{refusedTo, acceptedTo} {
		a, _, err := r.st.EmailAccount(r.ctx, to, to, r.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := planner.Follow(r.ctx, a.ID, r.entry.Slug); err != nil {
			t.Fatal(err)
		}
		accounts[to] = a.ID
	}
	change := r.driftConfirmed(t, 2*time.Minute)
	r.clock.Set(change.RecordedAt.Add(notify.DefaultSettle + time.Minute))
	if rep, err := planner.Plan(r.ctx); err != nil || rep.Hourly != 2 {
		t.Fatalf("planning: %+v, %v; want two e-mails", rep, err)
	}
	outbox := func(to string) store.OutboxEmail {
		t.Helper()
		rows, err := r.st.OutboxEmails(r.ctx, accounts[to], false, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("%d outbox rows for %s, want 1: %+v", len(rows), to, rows)
		}
		return rows[0]
	}
	messageID := map[string]string{refusedTo: outbox(refusedTo).MessageID, acceptedTo: outbox(acceptedTo).MessageID}

	// 2. The SMTP server holds every message inside DATA until released; then it
	// refuses the one to refusedTo and keeps the one to acceptedTo. After the restart
	// it keeps everything at once.
	var (
		passThrough atomic.Bool
		release     = make(chan struct{})
		held        = make(chan sink.Message, 4)
		decided     sync.WaitGroup
	)
	mails, err := sink.Start("127.0.0.1:0", filepath.Join(t.TempDir(), "mail"), sink.Options{
		Hold: func(ctx context.Context, m sink.Message) error {
			if passThrough.Load() {
				return nil
			}
			decided.Add(1)
			defer decided.Done()
			held <- m
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
			if len(m.To) == 1 && m.To[0] == acceptedTo {
				return nil
			}
			return &sink.Refusal{Code: 451, Message: "not kept: the client went away before the reply"}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer mails.Close()

	env := []string{"DATABASE_URL=" + dbURL, "PROBITY_KEY_DIR="}
	serve := func() (*exec.Cmd, *syncBuffer, chan error) {
		t.Helper()
		cmd := exec.Command(probityBinary(t), "serve", "--allow-loopback", "--data-dir", r.dataDir, "--key-dir", r.keyDir,
			"--listen", freeAddr(t), "--tick", "1s", "--poll", "100ms",
			"--accounts", "--smtp-host", mails.Host(), "--smtp-port", strconv.Itoa(mails.Port()), "--smtp-security", "none",
			"--smtp-from", "Probity test <notify@probity.test>")
		cmd.Env = append(os.Environ(), env...)
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, stderr, done
	}

	// 3. serve claims both e-mails and sends them; both are held; serve is killed.
	cmd, stderr, done := serve()
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	for range 2 {
		select {
		case <-held:
		case err := <-done:
			t.Fatalf("serve exited (%v) before sending\n%s", err, tail(stderr.String(), 3000))
		case <-timeout.C:
			cmd.Process.Kill()
			<-done
			t.Fatalf("serve did not send both e-mails within 60 s\n%s", tail(stderr.String(), 3000))
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("serve exited cleanly instead of being killed")
	}
	killed := time.Now()
	close(release)
	decided.Wait()
	if got := mails.Messages(); len(got) != 1 || got[0].To[0] != acceptedTo {
		t.Fatalf("after the kill the SMTP server kept %d messages, want only the one to %s", len(got), acceptedTo)
	}
	// The killed process left both e-mails claimed: sending, first attempt.
	for _, to := range []string{refusedTo, acceptedTo} {
		if o := outbox(to); o.State != store.OutboxSending || o.Attempts != 1 {
			t.Fatalf("after the kill the e-mail to %s is %s after %d attempts, want sending after 1\n%s", to, o.State, o.Attempts, tail(stderr.String(), 3000))
		}
	}
	passTime(t, dbURL, filepath.Join(r.dataDir, "probity.db"), time.Now().Add(-time.Second))

	// 4. serve again: it claims both e-mails once more and sends them.
	passThrough.Store(true)
	restarted := time.Now()
	cmd, stderr, done = serve()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v\n%s", err, tail(stderr.String(), 2000))
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("serve did not stop within 30 s")
		}
	}()
	const bound = 45 * time.Second // leader election (≤ 15 s) and the delivery job, with room
	for {
		if outbox(refusedTo).State == store.OutboxSent && outbox(acceptedTo).State == store.OutboxSent {
			break
		}
		if time.Since(restarted) > bound {
			t.Fatalf("%s after the restart: %+v, %+v\n%s", bound, outbox(refusedTo), outbox(acceptedTo), tail(stderr.String(), 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	sentAfter := time.Since(restarted)

	// 5. What arrived: the refused e-mail once, the accepted one twice, each copy
	// with its outbox row's Message-ID; both rows sent at their second attempt.
	byTo := map[string][]string{}
	idRE := regexp.MustCompile(`(?m)^Message-ID: (<[^>\r\n]+>)\r?$`)
	for _, m := range mails.Messages() {
		id := idRE.FindSubmatch(m.Data)
		if len(m.To) != 1 || id == nil {
			t.Fatalf("a message to %v without one Message-ID:\n%s", m.To, m.Data)
		}
		byTo[m.To[0]] = append(byTo[m.To[0]], string(id[1]))
	}
	if got := byTo[refusedTo]; len(got) != 1 || got[0] != messageID[refusedTo] {
		t.Errorf("the e-mail held and never accepted arrived as %q, want exactly once as %s", got, messageID[refusedTo])
	}
	if got := byTo[acceptedTo]; len(got) != 2 || got[0] != messageID[acceptedTo] || got[1] != messageID[acceptedTo] {
		t.Errorf("the e-mail accepted as its sender died arrived as %q, want twice (the one duplicate window) as %s", got, messageID[acceptedTo])
	}
	for _, to := range []string{refusedTo, acceptedTo} {
		if o := outbox(to); o.Attempts != 2 || o.LastError != "" {
			t.Errorf("the e-mail to %s: sent after %d attempts (%q), want 2", to, o.Attempts, o.LastError)
		}
	}
	t.Logf("%s: killed during the send; the restarted serve sent both e-mails %.1f s after it started (%.1f s after the kill); %.1f s in all",
		backendName(dbURL), sentAfter.Seconds(), time.Since(killed).Seconds(), time.Since(began).Seconds())
}

// passTime does to the store what the minutes after a kill do, which the test does
// not wait: the killed claims' lease (notify.DefaultLease, 2 min) ends at at, so that
// the claim query (store's claimEmailSQL) takes the rows again, and River's rescuer
// (after --rescue-after, 3 min) discards the killed process's delivery job (one
// attempt, MaxAttempts 1), which otherwise, still "running", keeps the restarted
// process from starting a delivery job in the same minute (the job is unique per
// minute). It wants two claimed rows and one killed delivery job.
func passTime(t *testing.T, dbURL, sqlitePath string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	const discard = `UPDATE river_job SET state = 'discarded', finalized_at = attempted_at
		WHERE kind = 'probity_notify_deliver' AND state = 'running'`
	var leases, jobs int64
	if dbURL != "" {
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tag, err := conn.Exec(ctx, `UPDATE outbox SET lease_until = $1, next_attempt_at = $1 WHERE state = 'sending'`, at.UTC())
		if err != nil {
			t.Fatalf("couldn't end the leases: %v", err)
		}
		leases = tag.RowsAffected()
		if tag, err = conn.Exec(ctx, discard); err != nil {
			t.Fatalf("couldn't discard the killed job: %v", err)
		}
		jobs = tag.RowsAffected()
	} else {
		db, err := sql.Open("sqlite", sqlitePath+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		res, err := db.ExecContext(ctx, `UPDATE outbox SET lease_until = ?, next_attempt_at = ? WHERE state = 'sending'`, at.UnixMilli(), at.UnixMilli())
		if err != nil {
			t.Fatalf("couldn't end the leases: %v", err)
		}
		leases, _ = res.RowsAffected()
		if res, err = db.ExecContext(ctx, discard); err != nil {
			t.Fatalf("couldn't discard the killed job: %v", err)
		}
		jobs, _ = res.RowsAffected()
	}
	if leases != 2 || jobs != 1 {
		t.Fatalf("ended %d leases and discarded %d delivery jobs, want 2 and 1", leases, jobs)
	}
}

func backendName(dbURL string) string {
	if dbURL != "" {
		return "postgres"
	}
	return "sqlite"
}
