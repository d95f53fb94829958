package scan_test

import (
	"context"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan/scantest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func fixtureFIO(t testing.TB, fixture string) storage.FileIO {
	t.Helper()
	return scantest.FixtureFIO(t, fixture)
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

// partitionIn returns partition.In over the partition keys of the latest
// schema of the table at tablePath.
func partitionIn(t testing.TB, fio storage.FileIO, tablePath string, allowed map[string][]any) *partition.Predicate {
	t.Helper()
	s, err := schema.NewManager(fio, tablePath).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := partition.In(s.PartitionFields(), allowed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
