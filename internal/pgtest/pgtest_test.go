package pgtest

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// TestNewDatabaseIsLogical: the cluster runs with wal_level=logical and a
// test gets its own database.
func TestNewDatabaseIsLogical(t *testing.T) {
	d := New(t)
	if got := d.QueryString("SHOW wal_level"); got != "logical" {
		t.Fatalf("wal_level = %q", got)
	}
	if got := d.QueryString("SELECT current_database()"); got != d.Name {
		t.Fatalf("database %q, want %q", got, d.Name)
	}
	d.Exec("CREATE TABLE x(id int primary key); INSERT INTO x VALUES (1),(2)")
	if got := d.QueryStrings("SELECT id FROM x ORDER BY id"); len(got) != 2 || got[1] != "2" {
		t.Fatalf("rows %v", got)
	}
}
