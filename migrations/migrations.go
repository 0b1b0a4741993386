// Package migrations embeds Probity's SQL migrations, one directory per backend.
//
// A migration is a file named NNNN_name.sql: a version of four to nine digits, at
// least 1, an underscore, a name of lowercase letters, digits and underscores, and the
// extension. Migrations are applied in version order, each once; a released file is
// never edited, a change is a new file.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
)

// Postgres holds the PostgreSQL migrations, in the directory "postgres".
//
//go:embed postgres/*.sql
var Postgres embed.FS

// SQLite holds the SQLite migrations, in the directory "sqlite".
//
//go:embed sqlite/*.sql
var SQLite embed.FS

// Migration is one migration file.
type Migration struct {
	Version int    // the file name's numeric prefix, ≥ 1
	Name    string // the file name, e.g. "0001_init.sql"
	SQL     string
}

var fileName = regexp.MustCompile(`^([0-9]{4,9})_[a-z0-9_]+\.sql$`)

// List returns the migrations in the directory dir of fsys, ordered by version. Every
// entry of dir must be a migration file: a malformed name, a version 0 or two files with
// one version are errors.
func List(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("couldn't list migrations in %q: %w", dir, err)
	}
	var ms []Migration
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			return nil, fmt.Errorf("migration %q in %q: not a file named NNNN_name.sql", e.Name(), dir)
		}
		version, err := strconv.Atoi(m[1])
		if err != nil || version == 0 {
			return nil, fmt.Errorf("migration %q in %q: version must be 1 or more", e.Name(), dir)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("couldn't read migration %q: %w", e.Name(), err)
		}
		ms = append(ms, Migration{Version: version, Name: e.Name(), SQL: string(b)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %q and %q in %q have the same version %d",
				ms[i-1].Name, ms[i].Name, dir, ms[i].Version)
		}
	}
	return ms, nil
}
