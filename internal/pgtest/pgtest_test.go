package pgtest

import (
	"os"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
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

// TestMissingBinariesSkipOrFail: without server binaries a test is
// skipped, or failed under REQUIRE_POSTGRES=1.
func TestMissingBinariesSkipOrFail(t *testing.T) {
	t.Setenv("BP_PG_BIN", t.TempDir())
	for _, require := range []string{"", "1"} {
		t.Setenv(EnvRequire, require)
		r := &testenv.Recorder{TB: t}
		if c := Get(r); c != nil {
			t.Fatalf("REQUIRE_POSTGRES=%q: got a cluster without binaries", require)
		}
		if (r.SkipMessage != "") != (require == "") || (r.FatalMessage != "") != (require == "1") {
			t.Fatalf("REQUIRE_POSTGRES=%q: skip %q, fatal %q", require, r.SkipMessage, r.FatalMessage)
		}
		if !strings.Contains(r.SkipMessage+r.FatalMessage, "apt-get install postgresql-15") {
			t.Fatalf("message %q does not say how to install", r.SkipMessage+r.FatalMessage)
		}
	}
}
