package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// DefaultSQLitePath is where the embedded store lives when no DATABASE_URL is given.
const DefaultSQLitePath = "probity-data/probity.db"

// Config configures Open.
type Config struct {
	// DatabaseURL selects PostgreSQL when it is a postgres:// or postgresql:// URL.
	// Empty selects the embedded SQLite store at SQLitePath.
	DatabaseURL string
	// SQLitePath is the SQLite database file; DefaultSQLitePath when empty. Its
	// directory is created (0700) when missing.
	SQLitePath string
	// MaxConns bounds the PostgreSQL pool (default 16) and SQLite's reader pool
	// (default 4; SQLite has one writer connection).
	MaxConns int
	// Logger receives migration and queue events; nil discards them.
	Logger *slog.Logger
}

// IsPostgresURL reports whether u selects the PostgreSQL backend.
func IsPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// Open opens the store cfg selects. It does not migrate: call Migrate.
func Open(ctx context.Context, cfg Config) (Store, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.DatabaseURL == "":
		if cfg.SQLitePath == "" {
			cfg.SQLitePath = DefaultSQLitePath
		}
		return openSQLite(ctx, cfg)
	case IsPostgresURL(cfg.DatabaseURL):
		return openPostgres(ctx, cfg)
	default:
		return nil, fmt.Errorf("DATABASE_URL must be a postgres:// or postgresql:// URL")
	}
}
