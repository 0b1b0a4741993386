package regsync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/probity-dev/probity/checks/probe/egress"
	"github.com/probity-dev/probity/registry"
	"github.com/probity-dev/probity/store"
)

// countingStore is a real store that counts UpsertServer calls and their results and
// can fail the n-th call, as a crash would stop the sync there.
type countingStore struct {
	store.Store
	upserts, created, updated atomic.Int64
	failAt                    int64
}

var errCrash = errors.New("crash")

func (c *countingStore) UpsertServer(ctx context.Context, u store.ServerUpsert) (store.UpsertResult, error) {
	if n := c.upserts.Add(1); n == c.failAt {
		return store.UpsertResult{}, errCrash
	}
	res, err := c.Store.UpsertServer(ctx, u)
	if res.Created {
		c.created.Add(1)
	}
	if res.Updated {
		c.updated.Add(1)
	}
	return res, err
}

// openSQLite opens and migrates a store on a new SQLite file.
func openSQLite(t testing.TB) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{SQLitePath: filepath.Join(t.TempDir(), "probity.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// openPostgres opens and migrates a store on a new PostgreSQL database of the server
// PROBITY_TEST_DATABASE_URL names (under CI, the local one), dropped after the test;
// it skips the test when there is none.
func openPostgres(t *testing.T) store.Store {
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
	exec := func(ctx context.Context, sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
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
	return st
}

// TestSyncStore runs the sync against the real store, on SQLite and (when
// PROBITY_TEST_DATABASE_URL is set) on PostgreSQL: 500 servers as 500 entries with
// their parts after a crash and its resumption, an incremental sync that updates only
// the changed servers, and a deleted server unlisted and listed again.
func TestSyncStore(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { syncStoreScenario(t, openSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { syncStoreScenario(t, openPostgres(t)) })
}

func syncStoreScenario(t *testing.T, real store.Store) {
	ctx := context.Background()
	f := newFakeRegistry(t, synthRegistry(t, 500))
	st := &countingStore{Store: real, failAt: 333}
	if _, err := syncer(t, f, st, 0).Sync(ctx, SyncOptions{}); !errors.Is(err, errCrash) {
		t.Fatalf("crash: %v", err)
	}
	sum, err := syncer(t, f, st, 0).Sync(ctx, SyncOptions{})
	if err != nil || !sum.Resumed {
		t.Fatalf("resumed: %+v %v", sum, err)
	}
	all, err := st.Listings(ctx, store.ListingQuery{IncludeUnlisted: true})
	if err != nil || len(all) != 500 || st.created.Load() != 500 {
		t.Fatalf("%d listings, %d created, %v", len(all), st.created.Load(), err)
	}
	for _, sl := range all {
		if !sl.Entry.Listed || sl.Listing.Version != "1.0.0" || len(sl.Parts) == 0 || sl.Parts[0].Kind != sl.Entry.Kind || sl.Listing.Document == nil || sl.Entry.Source != "registry" {
			t.Fatalf("listing %+v", sl)
		}
	}

	// Three servers change; the next sync updates exactly those.
	later := t0.Add(10 * time.Hour)
	f.find("io.github.probity-test/s-0011", "1.0.0").server["description"] = "Changed"
	f.find("io.github.probity-test/s-0011", "1.0.0").updatedAt = later
	f.find("io.github.probity-test/s-0222", "1.0.0").status = "deprecated"
	f.find("io.github.probity-test/s-0222", "1.0.0").updatedAt = later
	del := f.find("io.github.probity-test/s-0333", "1.0.0")
	del.status, del.updatedAt = "deleted", later
	st.updated.Store(0)
	before := st.upserts.Load()
	sum, err = syncer(t, f, st, 0).Sync(ctx, SyncOptions{})
	if err != nil || sum.Updated != 3 || st.updated.Load() != 3 || sum.Unchanged != 5 || st.upserts.Load()-before != 8 {
		t.Fatalf("incremental: %+v, %d updated, %v", sum, st.updated.Load(), err)
	}
	listed, _ := st.Listings(ctx, store.ListingQuery{})
	gone, _ := st.Listings(ctx, store.ListingQuery{Name: del.name, IncludeUnlisted: true})
	if len(listed) != 498 || len(gone) != 1 || gone[0].Entry.Listed || gone[0].Listing.Status != store.StatusDeleted {
		t.Fatalf("%d listed, deleted %+v", len(listed), gone)
	}
	slug := gone[0].Entry.Slug
	del.status, del.updatedAt = "active", later.Add(time.Hour)
	if sum, err = syncer(t, f, st, 0).Sync(ctx, SyncOptions{}); err != nil || sum.Updated != 1 {
		t.Fatalf("relist: %+v %v", sum, err)
	}
	back, _ := st.Listings(ctx, store.ListingQuery{Name: del.name})
	if len(back) != 1 || !back[0].Entry.Listed || back[0].Entry.Slug != slug {
		t.Fatalf("relisted %+v", back)
	}
}

// BenchmarkRegistrySync500 times a first sync of 500 servers (550 items, 6 pages from
// a registry on loopback) into a new SQLite store: the bound is 10 s.
//
//	go test -run '^$' -bench BenchmarkRegistrySync500 -benchtime 1x -count 5 ./registry/regsync
func BenchmarkRegistrySync500(b *testing.B) {
	ctx := context.Background()
	f := newFakeRegistry(b, synthRegistry(b, 500))
	for b.Loop() {
		b.StopTimer()
		st := openSQLite(b)
		sy := syncer(b, f, st, 0)
		b.StartTimer()
		sum, err := sy.Sync(ctx, SyncOptions{})
		if err != nil || sum.Created != 500 {
			b.Fatalf("%+v %v", sum, err)
		}
	}
}

// TestPeriodicSyncUnderRiver: the periodic job and its worker on a River client of the
// SQLite store, as serve runs them: the job inserted on start syncs the registry.
func TestPeriodicSyncUnderRiver(t *testing.T) {
	f := newFakeRegistry(t, synthRegistry(t, 120))
	st := openSQLite(t)
	w, err := NewSyncWorker(WorkerConfig{Store: st, Client: registry.Config{HTTPClient: registry.GuardedHTTPClient(egress.Config{AllowLoopback: true})}})
	if err != nil {
		t.Fatal(err)
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, w); err != nil {
		t.Fatal(err)
	}
	q, err := st.NewQueue(&river.Config{Workers: workers, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		FetchPollInterval: 100 * time.Millisecond, FetchCooldown: 50 * time.Millisecond,
		PeriodicJobs: []*river.PeriodicJob{PeriodicSync(f.srv.URL, time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q.Stop(ctx)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ls, err := st.Listings(t.Context(), store.ListingQuery{})
		if err != nil {
			t.Fatal(err)
		}
		state, _ := st.RegistrySyncState(t.Context(), f.srv.URL)
		if len(ls) == 120 && !state.Finished.IsZero() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %d listings, state %+v", len(ls), state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
