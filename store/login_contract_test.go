package store

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRoundHandshakeLogin stores a round of every handshake path and login outcome and
// reads the same back through Rounds and WalkRounds; a round whose facts the schema
// (migration 0005) would refuse is refused before anything is written.
func TestRoundHandshakeLogin(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s Store) {
		ctx := t.Context()
		e := mustAddEntry(t, s, "login")
		cases := []struct {
			method, proposed string
			login            Login
		}{
			{"server/discover", "2026-07-28", Login{}},
			{"initialize", "2025-11-25", Login{Unauthorized: LoginAtToolsCall, Challenge: ChallengeWithMetadata, Metadata: "metadata_consistent"}},
			{"", "2025-11-25", Login{Unauthorized: LoginAtHandshake, Challenge: ChallengeWithMetadata, Metadata: "scope_contradiction"}},
			{"", "2025-11-25", Login{Unauthorized: LoginAtHandshake, Challenge: ChallengeWithoutMetadata, Metadata: "no_metadata"}},
			{"", "2025-11-25", Login{Unauthorized: LoginAtHandshake, Challenge: ChallengeNone, Metadata: "challenge_without_header"}},
			{"initialize", "2025-11-25", Login{Unauthorized: LoginAtToolsList, Challenge: ChallengeUnparseable, Metadata: "challenge_unparseable"}},
			{"initialize", "2025-11-25", Login{Unauthorized: LoginAtOther, Challenge: ChallengeWithMetadata, Metadata: "metadata_unreachable"}},
		}
		want := map[int64]RoundSummary{}
		for i, c := range cases {
			at := t0.Add(time.Duration(i) * time.Hour)
			r := unsignedRound(e.ID, at, at)
			r.HandshakeMethod, r.ProposedVersion, r.Login = c.method, c.proposed, c.login
			id := mustSave(t, s, r)
			l := c.login
			want[id] = RoundSummary{HandshakeMethod: c.method, ProposedVersion: c.proposed, Login: &l}
		}
		check := func(how string, r RoundSummary) {
			t.Helper()
			w, ok := want[r.ID]
			if !ok {
				t.Errorf("%s: unexpected round %d", how, r.ID)
				return
			}
			got := RoundSummary{HandshakeMethod: r.HandshakeMethod, ProposedVersion: r.ProposedVersion, Login: r.Login}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("%s: round %d = %+v (login %+v), want %+v (login %+v)", how, r.ID, got, got.Login, w, w.Login)
			}
		}
		rs, err := s.Rounds(ctx, e.ID, 0)
		if err != nil || len(rs) != len(cases) {
			t.Fatalf("Rounds = %d rounds, %v", len(rs), err)
		}
		for _, r := range rs {
			check("Rounds", r)
		}
		n := 0
		if err := s.WalkRounds(ctx, time.Time{}, func(r RoundSummary) error { n++; check("WalkRounds", r); return nil }); err != nil || n != len(cases) {
			t.Fatalf("WalkRounds = %d rounds, %v", n, err)
		}

		before := takeSnapshot(t, s)
		for name, mutate := range map[string]func(*Round){
			"method":            func(r *Round) { r.HandshakeMethod = "tools/list" },
			"proposed too long": func(r *Round) { r.ProposedVersion = strings.Repeat("2", 65) },
			"place":             func(r *Round) { r.Login = Login{Unauthorized: "login", Challenge: ChallengeNone} },
			"401 w/o challenge": func(r *Round) { r.Login = Login{Unauthorized: LoginAtHandshake} },
			"challenge w/o 401": func(r *Round) { r.Login = Login{Challenge: ChallengeNone} },
			"metadata w/o 401":  func(r *Round) { r.Login = Login{Metadata: "metadata_consistent"} },
			"challenge kind":    func(r *Round) { r.Login = Login{Unauthorized: LoginAtHandshake, Challenge: "bearer"} },
			"metadata not a key": func(r *Round) {
				r.Login = Login{Unauthorized: LoginAtHandshake, Challenge: ChallengeNone, Metadata: "Bad key"}
			},
		} {
			at := t0.Add(100 * time.Hour)
			r := unsignedRound(e.ID, at, at)
			mutate(r)
			if _, err := s.SaveRound(ctx, r); err == nil || errors.Is(err, ErrRoundDone) || errors.Is(err, ErrNotFound) {
				t.Errorf("%s: SaveRound = %v, want a validation error", name, err)
			}
		}
		checkUnchanged(t, s, before, "refused handshake and login facts")

		// The schema refuses what no method writes: some login facts without the others,
		// or values outside the lists.
		x := s.(testExecer)
		for _, q := range []string{
			`UPDATE rounds SET login_challenge = NULL`,
			`UPDATE rounds SET login_metadata = NULL`,
			`UPDATE rounds SET login_unauthorized = 'login'`,
			`UPDATE rounds SET login_unauthorized = '', login_challenge = 'none'`,
			`UPDATE rounds SET handshake_method = 'ping'`,
			`UPDATE rounds SET login_metadata = 'Not a key'`,
		} {
			if err := x.execForTest(ctx, q); err == nil {
				t.Errorf("the schema accepted %s", q)
			}
		}
		checkUnchanged(t, s, before, "refused updates")
	})
}

// TestMigrateRoundHandshakeLogin migrates a store of migration 0004 holding a round to
// 0005: the old round reads with no handshake method and no login facts (not recorded,
// Login nil), and new rounds store theirs.
func TestMigrateRoundHandshakeLogin(t *testing.T) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			s := b.openEmpty(t)
			if err := s.(testMigrator).migrateForTest(ctx, 4); err != nil {
				t.Fatalf("migrating through 0004: %v", err)
			}
			e, err := InsertEntryForTest(ctx, s, newTestEntry("old"))
			if err != nil {
				t.Fatal(err)
			}
			insertRound0004(t, s, e.ID, "old-1", t0)
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("migrating to the newest: %v", err)
			}
			later := t0.Add(time.Hour)
			r := unsignedRound(e.ID, later, later)
			r.HandshakeMethod, r.ProposedVersion = "initialize", "2025-11-25"
			mustSave(t, s, r)
			rs, err := s.Rounds(ctx, e.ID, 0)
			if err != nil || len(rs) != 2 {
				t.Fatalf("Rounds = %d rounds, %v", len(rs), err)
			}
			if n, old := rs[0], rs[1]; old.RoundID != "old-1" || old.ProtocolVersion != "2025-06-18" ||
				old.HandshakeMethod != "" || old.ProposedVersion != "" || old.Login != nil ||
				n.HandshakeMethod != "initialize" || n.ProposedVersion != "2025-11-25" || n.Login == nil || *n.Login != (Login{}) {
				t.Errorf("after 0005: old %+v (login %v), new %+v (login %v)", old, old.Login, n, n.Login)
			}
		})
	}
}

// insertRound0004 stores an unsigned round that completed the handshake with version
// 2025-06-18 but read no tool list, as SaveRound stored it from migration 0001 through
// 0004 (their observations table is the same); today's SaveRound writes 0005's columns.
func insertRound0004(t *testing.T, s Store, entryID int64, roundID string, at time.Time) {
	t.Helper()
	ts, signed := fmt.Sprint(at.UnixMilli()), "0"
	if s.Backend() == "postgres" {
		ts, signed = "'"+ms(at).Format(time.RFC3339Nano)+"'", "false"
	}
	insert := fmt.Sprintf(`INSERT INTO observations (entry_id, due_at, reason, round_id, started_at,
		finished_at, coverage, signed, unsigned_reason, reach, http_status, stop, uptime, retry_after_ms,
		protocol_version, server_name, server_version, tool_count, pages)
		VALUES (%d, %s, 'cadence', '%s', %s, %s, '', %s, 'no_tools', '', 200, '', 'answered', 0,
		'2025-06-18', 'old', '1.0', 0, 0)`, entryID, ts, roundID, ts, ts, signed)
	if err := s.(testExecer).execForTest(t.Context(), insert); err != nil {
		t.Fatalf("inserting a round of 0004: %v", err)
	}
}
