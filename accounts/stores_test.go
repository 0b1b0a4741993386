package accounts

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/probity-dev/probity/store"
)

// The test harness: real stores (SQLite, and PostgreSQL when
// PROBITY_TEST_DATABASE_URL is set or under CI), a raw view of their tables, a fake
// clock and a mailbox.

// testStore is a migrated store and a raw view of its database.
type testStore struct {
	store.Store
	// rows returns every row of a table, each column rendered as text; a bytes
	// column as its hex and its bytes as they are, so that a secret stored in any
	// form shows up.
	rows func(t *testing.T, table string) []string
	// exec runs a statement on the database outside the store.
	exec func(t *testing.T, query string)
}

// forEachStore runs fn on a fresh store of each backend.
func forEachStore(t *testing.T, fn func(t *testing.T, st testStore)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, openSQLiteStore(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, openPostgresStore(t)) })
}

func openSQLiteStore(t *testing.T) testStore {
	t.Helper()
	path := filepath.Join(t.TempDir(), "probity.db")
	st, err := store.Open(t.Context(), store.Config{SQLitePath: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The raw view: a connection of its own (the store registered the driver).
	db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return testStore{
		Store: st,
		rows: func(t *testing.T, table string) []string {
			t.Helper()
			rows, err := db.QueryContext(t.Context(), `SELECT * FROM `+table)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			var out []string
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				out = append(out, renderRow(vals))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		},
		exec: func(t *testing.T, query string) {
			t.Helper()
			if _, err := db.ExecContext(t.Context(), query); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		},
	}
}

func openPostgresStore(t *testing.T) testStore {
	t.Helper()
	admin := os.Getenv("PROBITY_TEST_DATABASE_URL")
	if admin == "" && os.Getenv("CI") == "true" {
		admin = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	if admin == "" {
		t.Skip("set PROBITY_TEST_DATABASE_URL to run against PostgreSQL")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "probity_t_" + hex.EncodeToString(b[:])
	adminExec := func(ctx context.Context, q string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	adminExec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		adminExec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	st, err := store.Open(t.Context(), store.Config{DatabaseURL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	var mu sync.Mutex // a pgx.Conn is not for concurrent use
	return testStore{
		Store: st,
		rows: func(t *testing.T, table string) []string {
			t.Helper()
			mu.Lock()
			defer mu.Unlock()
			rows, err := conn.Query(t.Context(), `SELECT * FROM `+table)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				vals, err := rows.Values()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, renderRow(vals))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		},
		exec: func(t *testing.T, query string) {
			t.Helper()
			mu.Lock()
			defer mu.Unlock()
			if _, err := conn.Exec(t.Context(), query); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		},
	}
}

// renderRow renders a row's values: bytes as hex and as they are.
func renderRow(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if b, ok := v.([]byte); ok {
			parts[i] = hex.EncodeToString(b) + "|" + string(b)
		} else {
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, " ")
}

// accountTables are every table the accounts package writes.
var accountTables = []string{"accounts", "sessions", "signin_codes", "signin_throttles"}

// dump is every row of every accounts table, as one text.
func (st testStore) dump(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, table := range accountTables {
		for _, r := range st.rows(t, table) {
			b.WriteString(table + ": " + r + "\n")
		}
	}
	return b.String()
}

// clock is a fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// mailbox is a CodeMailer that keeps what it is given.
type mailbox struct {
	mu    sync.Mutex
	mails []CodeMail
	fail  error
}

func (m *mailbox) SendCode(_ context.Context, cm CodeMail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.mails = append(m.mails, cm)
	return nil
}

func (m *mailbox) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mails)
}

var codePattern = regexp.MustCompile(`(?m)^    ([0-9]{8})$`)

// lastCode returns the code of the newest mail, which must be to addr.
func (m *mailbox) lastCode(t *testing.T, addr string) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.mails) == 0 {
		t.Fatal("no mail was sent")
	}
	cm := m.mails[len(m.mails)-1]
	if cm.To != addr {
		t.Fatalf("the newest mail is to %q, want %q", cm.To, addr)
	}
	match := codePattern.FindStringSubmatch(cm.Text)
	if match == nil {
		t.Fatalf("no code in the mail:\n%s", cm.Text)
	}
	return match[1]
}

// testSecret is the fixture's server secret (Config.Secret).
var testSecret = []byte("0123456789abcdef0123456789abcdef")

// fixture is a Service on a store, with its clock and mailbox.
type fixture struct {
	st    testStore
	svc   *Service
	clock *clock
	mail  *mailbox
}

func newFixture(t *testing.T, st testStore, gh *GitHubConfig) fixture {
	t.Helper()
	f := fixture{st: st, clock: newClock(), mail: &mailbox{}}
	svc, err := New(Config{Store: st.Store, Mailer: f.mail, GitHub: gh, Secret: testSecret, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

// signIn signs addr in by e-mail code from client and returns the session.
func (f fixture) signIn(t *testing.T, addr, client string) Session {
	t.Helper()
	if err := f.svc.RequestCode(t.Context(), addr, client); err != nil {
		t.Fatalf("RequestCode(%q): %v", addr, err)
	}
	s, err := f.svc.VerifyCode(t.Context(), addr, f.mail.lastCode(t, strings.TrimSpace(addr)), client)
	if err != nil {
		t.Fatalf("VerifyCode(%q): %v", addr, err)
	}
	return s
}
