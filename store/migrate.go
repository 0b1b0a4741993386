package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/probity-dev/probity/migrations"
)

// schemaMigrations is how a backend keeps the record of its applied migrations.
type schemaMigrations struct {
	backend string
	log     *slog.Logger
	// create creates the schema_migrations table when it is missing.
	create string
	// appliedAt is the applied_at value of a migration applied now.
	appliedAt any
	// conn reads the newest version applied.
	conn querier
	// inTx runs fn in a transaction of its own and commits when fn returns nil; fn gets
	// the transaction as a querier and a function that runs a migration's file of
	// several statements in it.
	inTx func(ctx context.Context, fn func(tx querier, script func(sql string) error) error) error
}

// apply applies the migrations of ms not applied yet, in order, each in its own
// transaction. ms are this binary's migrations (or, in tests, the first of them). It
// refuses a database with a newer migration than ms's last, or one applied under another
// name.
func (sm schemaMigrations) apply(ctx context.Context, ms []migrations.Migration) error {
	if _, err := sm.conn.Exec(ctx, sm.create); err != nil {
		return fmt.Errorf("couldn't create schema_migrations: %w", err)
	}
	var newest int64
	if err := sm.conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&newest); err != nil {
		return fmt.Errorf("couldn't read schema_migrations: %w", err)
	}
	if len(ms) > 0 && newest > int64(ms[len(ms)-1].Version) {
		return fmt.Errorf("the database has migration %d, newer than this binary's %d: upgrade probity",
			newest, ms[len(ms)-1].Version)
	}
	for _, m := range ms {
		applied := false
		err := sm.inTx(ctx, func(tx querier, script func(string) error) error {
			var name string
			err := tx.QueryRow(ctx, `SELECT name FROM schema_migrations WHERE version = ?`, m.Version).Scan(&name)
			switch {
			case err == nil && name != m.Name:
				return fmt.Errorf("migration %d was applied as %q, this binary has it as %q", m.Version, name, m.Name)
			case err == nil:
				return nil
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
			if err := script(m.SQL); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, sm.appliedAt); err != nil {
				return err
			}
			applied = true
			return nil
		})
		if err != nil {
			return fmt.Errorf("couldn't apply migration %s: %w", m.Name, err)
		}
		if applied {
			sm.log.Info("applied migration", "backend", sm.backend, "migration", m.Name)
		}
	}
	return nil
}

// migrateRiver applies River's migrations not applied yet, with driver.
func migrateRiver[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], backend string, log *slog.Logger) error {
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("couldn't prepare River's migrations: %w", err)
	}
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("couldn't apply River's migrations: %w", err)
	}
	for _, v := range res.Versions {
		log.Info("applied River migration", "backend", backend, "version", v.Version)
	}
	return nil
}
