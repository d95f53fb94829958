package write_test

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// testTable is a table in a fresh local warehouse.
type testTable struct {
	t   testing.TB
	dir string
	fio *storage.Local
	tb  *lakecore.Table
}

func newTestTable(t testing.TB, fields []types.DataField, partitionKeys []string, options map[string]string) *testTable {
	t.Helper()
	dir := t.TempDir()
	fio, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := lakecore.NewCatalog(fio).CreateTable(context.Background(), "db", "t",
		lakecore.TableSpec{Fields: fields, PartitionKeys: partitionKeys, Options: options})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	return &testTable{t: t, dir: dir, fio: fio, tb: tb}
}

// writeCommit writes rows with a new writer and commits them under
// identifier; it returns the messages and the snapshot.
func (tt *testTable) writeCommit(identifier int64, rows [][]any) ([]commit.Message, *snapshot.Snapshot) {
	tt.t.Helper()
	ctx := context.Background()
	w, err := tt.tb.NewWriter(ctx)
	if err != nil {
		tt.t.Fatalf("new writer: %v", err)
	}
	for i, r := range rows {
		if err := w.Write(ctx, r); err != nil {
			tt.t.Fatalf("write row %d %v: %v", i, r, err)
		}
	}
	return tt.prepareCommit(w, identifier)
}

func (tt *testTable) prepareCommit(w *write.TableWriter, identifier int64) ([]commit.Message, *snapshot.Snapshot) {
	tt.t.Helper()
	ctx := context.Background()
	msgs, err := w.Prepare(ctx)
	if err != nil {
		tt.t.Fatalf("prepare: %v", err)
	}
	s, err := tt.tb.NewCommitter("test-user").Commit(ctx, identifier, msgs)
	if err != nil {
		tt.t.Fatalf("commit: %v", err)
	}
	return msgs, s
}

func (tt *testTable) readAll() [][]any {
	tt.t.Helper()
	rows, err := tt.tb.ReadAll(context.Background(), 0)
	if err != nil {
		tt.t.Fatalf("read all: %v", err)
	}
	return rows
}

// liveEntries returns the live manifest entries of the latest snapshot.
func (tt *testTable) liveEntries() []manifest.Entry {
	tt.t.Helper()
	ctx := context.Background()
	s, err := tt.tb.Snapshots().Latest(ctx)
	if err != nil {
		tt.t.Fatal(err)
	}
	e, err := tt.tb.Planner().LiveEntries(ctx, s, nil)
	if err != nil {
		tt.t.Fatal(err)
	}
	return e
}

// sortByID sorts rows by their first column, an int64 id.
func sortByID(rows [][]any) {
	sort.Slice(rows, func(i, j int) bool { return rows[i][0].(int64) < rows[j][0].(int64) })
}

// equalValue compares lakecore values, decimals by value and scale.
func equalValue(a, b any) bool {
	switch x := a.(type) {
	case types.Decimal:
		y, ok := b.(types.Decimal)
		return ok && x.Scale == y.Scale && x.Unscaled.Cmp(y.Unscaled) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case types.Map:
		y, ok := b.(types.Map)
		return ok && equalValue(x.Keys, y.Keys) && equalValue(x.Values, y.Values)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return reflect.DeepEqual(a, b)
}

func assertRows(t testing.TB, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if !equalValue(got[i], want[i]) {
			t.Fatalf("row %d:\n got %s\nwant %s", i, show(got[i]), show(want[i]))
		}
	}
}

func show(v any) string {
	switch x := v.(type) {
	case []any:
		s := "["
		for i, e := range x {
			if i > 0 {
				s += " "
			}
			s += show(e)
		}
		return s + "]"
	case types.Decimal:
		return x.String()
	case nil:
		return "<nil>"
	}
	return fmt.Sprintf("%v(%T)", v, v)
}

func dec(s string, p, scale int) types.Decimal {
	d, err := types.ParseDecimal(s, p, scale)
	if err != nil {
		panic(err)
	}
	return d
}

func bigDec(unscaled string, scale int) types.Decimal {
	u, ok := new(big.Int).SetString(unscaled, 10)
	if !ok {
		panic(unscaled)
	}
	return types.Decimal{Unscaled: u, Scale: scale}
}
