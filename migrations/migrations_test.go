package migrations

import (
	"io/fs"
	"testing"
	"testing/fstest"
)

func TestList(t *testing.T) {
	fsys := fstest.MapFS{
		"d/0002_more.sql":   {Data: []byte("SELECT 2;")},
		"d/0001_init.sql":   {Data: []byte("SELECT 1;")},
		"d/0010_later.sql":  {Data: []byte("SELECT 10;")},
		"other/0001_x.sql":  {Data: []byte("x")},
		"other/README.md":   {Data: []byte("x")},
		"dup/0001_a.sql":    {Data: []byte("a")},
		"dup/00001_b.sql":   {Data: []byte("b")},
		"zero/0000_a.sql":   {Data: []byte("a")},
		"upper/0001_A.sql":  {Data: []byte("a")},
		"short/001_a.sql":   {Data: []byte("a")},
		"noname/0001_.sql":  {Data: []byte("a")},
		"nested/0001_a.sql": {Mode: fs.ModeDir | 0o755}, // a directory named like a migration
	}
	ms, err := List(fsys, "d")
	if err != nil {
		t.Fatal(err)
	}
	want := []Migration{{1, "0001_init.sql", "SELECT 1;"}, {2, "0002_more.sql", "SELECT 2;"}, {10, "0010_later.sql", "SELECT 10;"}}
	if len(ms) != len(want) {
		t.Fatalf("List = %+v", ms)
	}
	for i := range want {
		if ms[i] != want[i] {
			t.Errorf("migration %d = %+v, want %+v", i, ms[i], want[i])
		}
	}
	for _, dir := range []string{"other", "dup", "zero", "upper", "short", "noname", "nested", "missing"} {
		if ms, err := List(fsys, dir); err == nil {
			t.Errorf("List(%s) = %+v, want an error", dir, ms)
		}
	}
}

func TestEmbedded(t *testing.T) {
	if ms, err := List(SQLite, "sqlite"); err != nil || len(ms) == 0 || ms[0].Version != 1 {
		t.Errorf("SQLite migrations: %+v, %v", ms, err)
	}
	if ms, err := List(Postgres, "postgres"); err != nil || len(ms) == 0 || ms[0].Version != 1 {
		t.Errorf("Postgres migrations: %+v, %v", ms, err)
	}
}

// TestBackendsPaired: every migration has one file per backend, with one name, so that
// a version means the same change on either.
func TestBackendsPaired(t *testing.T) {
	lite, err := List(SQLite, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := List(Postgres, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) != len(pg) {
		t.Fatalf("%d SQLite migrations, %d PostgreSQL ones", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].Version != pg[i].Version || lite[i].Name != pg[i].Name {
			t.Errorf("migration %d: SQLite %s, PostgreSQL %s", i, lite[i].Name, pg[i].Name)
		}
	}
}
