package scan_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan/scantest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// fixtureFIO opens the warehouse of a fixture of shared/fixtures/paimon
// beside the repository root, or skips the test when they are absent.
func fixtureFIO(t testing.TB, fixture string) storage.FileIO {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test directory")
		}
		dir = parent
	}
	root := filepath.Join(dir, "..", "shared", "fixtures", "paimon", fixture, "warehouse")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("Paimon fixture not found at %s", root)
	}
	fio, err := storage.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	return fio
}

func tempFIO(t testing.TB) *storage.Local {
	t.Helper()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return fio
}

// newPartitioned builds an empty table p STRING, v BIGINT partitioned by p.
func newPartitioned(t testing.TB, fio storage.FileIO, options map[string]string) *scantest.Table {
	t.Helper()
	return scantest.New(t, fio, "db.db/t", []types.DataField{
		{Name: "p", Type: types.StringType()},
		{Name: "v", Type: types.BigIntType()},
	}, []string{"p"}, options)
}

// rowsOf builds n rows of partition p with values from..from+n-1.
func rowsOf(p string, from, n int) [][]any {
	out := make([][]any, n)
	for i := range out {
		out[i] = []any{p, int64(from + i)}
	}
	return out
}

// fileNames lists the files of a plan's splits in order.
func fileNames(p *scan.Plan) []string {
	var out []string
	for _, s := range p.Splits {
		for _, f := range s.Files {
			out = append(out, f.FileName)
		}
	}
	return out
}

var bg = context.Background()
