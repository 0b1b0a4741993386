package main

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probity-dev/probity/rounds"
	"github.com/probity-dev/probity/store"
	"github.com/probity-dev/probity/web"
)

// TestOperatorsCommand: operators add, remove and list on the embedded store: an
// address without an account is refused with the hint to sign in first; add and
// remove change the role once each and are recorded in the audit log by "cli".
func TestOperatorsCommand(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	t.Setenv("PROBITY_KEY_DIR", "")
	dataDir := filepath.Join(t.TempDir(), "data")
	want := func(wantCode int, wantOut, wantErr string, args ...string) {
		t.Helper()
		code, out, errs := runCmd(t, append(args, "--data-dir", dataDir)...)
		if code != wantCode || !strings.Contains(out, wantOut) || !strings.Contains(errs, wantErr) {
			t.Errorf("%q: exit %d, want %d, %q and %q\n%s%s", args, code, wantCode, wantOut, wantErr, out, errs)
		}
	}
	want(0, "no operators", "", "operators", "list")
	want(1, "", "signs in to the site once", "operators", "add", "op@example.org")
	want(2, "", "not an e-mail address", "operators", "add", "not-an-address")
	want(2, "", "wants one EMAIL", "operators", "add")
	want(2, "", "takes no arguments", "operators", "list", "x")
	want(2, "", "unknown subcommand", "operators", "promote", "op@example.org")
	want(2, "", "wants add, remove or list", "operators")

	st, err := store.Open(t.Context(), store.Config{SQLitePath: filepath.Join(dataDir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acc, _, err := st.EmailAccount(t.Context(), "Op@Example.org", "op@example.org", time.Now())
	if err != nil {
		t.Fatal(err)
	}

	want(0, "is an operator now", "", "operators", "add", "op@example.org")
	want(0, "is an operator already", "", "operators", "--data-dir", dataDir, "add", "OP@example.org")
	want(0, "Op@Example.org", "", "operators", "list")
	if yes, err := st.IsOperator(t.Context(), acc.ID); err != nil || !yes {
		t.Fatalf("IsOperator after add = %v, %v", yes, err)
	}
	want(0, "no longer an operator", "", "operators", "remove", "op@example.org")
	want(0, "was not an operator", "", "operators", "remove", "op@example.org")
	want(0, "no operators", "", "operators", "list")

	rows, err := st.OperatorActions(t.Context(), 0, 0)
	if err != nil || len(rows) != 2 || rows[0].Action != "operator.remove" || rows[1].Action != "operator.add" ||
		rows[0].Actor != "cli" || rows[1].Actor != "cli" || rows[0].ActorID != 0 {
		t.Fatalf("audit log = %+v, %v", rows, err)
	}
}

// TestHistoryHideAudited: history hide and unhide, and targets remove, append their
// rows to the audit log.
func TestHistoryHideAudited(t *testing.T) {
	dataDir, slug := cliStore(t)
	for _, args := range [][]string{
		{"history", "hide", slug, "1", "--reason", "a wrong fetch"},
		{"history", "unhide", slug, "1"},
		{"targets", "remove", slug, "--yes", "--reason", "listed by mistake"},
	} {
		if code, out, errs := runCmd(t, append(args, "--data-dir", dataDir)...); code != 0 {
			t.Fatalf("%q: exit %d\n%s%s", args, code, out, errs)
		}
	}
	st, err := store.Open(t.Context(), store.Config{SQLitePath: filepath.Join(dataDir, "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.OperatorActions(t.Context(), 0, 0)
	if err != nil || len(rows) != 3 || rows[2].Action != "change.hide" || rows[1].Action != "change.unhide" || rows[0].Action != "entry.delete" ||
		rows[2].EntrySlug != slug || rows[2].Target != "change 1" || !strings.Contains(rows[2].Detail, "a wrong fetch") || rows[2].Actor != "cli" ||
		rows[0].EntrySlug != slug || !strings.Contains(rows[0].Detail, "listed by mistake") {
		t.Fatalf("audit log = %+v, %v", rows, err)
	}
}

// TestServeWiresOperators: serve's write paths give the site the operator role and
// the console, one service for both.
func TestServeWiresOperators(t *testing.T) {
	st, err := store.Open(t.Context(), store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var w writePaths
	if err := w.addOperators(st, rounds.Schedule{}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	var cfg web.Config
	w.site(&cfg)
	if cfg.Operators == nil || cfg.Console == nil || cfg.Operators != web.Operators(w.operators) {
		t.Fatalf("site config: Operators %v, Console %v", cfg.Operators, cfg.Console)
	}
}
