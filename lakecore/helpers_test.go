package lakecore_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan/scantest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// fixtureFIO opens the warehouse of a fixture; the tests never write
// through it.
func fixtureFIO(t testing.TB, fixture string) storage.FileIO {
	t.Helper()
	return scantest.FixtureFIO(t, fixture)
}

func openFixture(t testing.TB, fixture, table string) *lakecore.Table {
	t.Helper()
	tb, err := lakecore.NewCatalog(fixtureFIO(t, fixture)).OpenTable(context.Background(), "default", table)
	if err != nil {
		t.Fatalf("open %s: %v", fixture, err)
	}
	return tb
}

func renderRows(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fixturetest.Render([]any(r))
	}
	return out
}

// assertRows compares rows as multisets.
func assertRows(t testing.TB, got, want [][]any) {
	t.Helper()
	g, w := renderRows(got), renderRows(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("rows differ:\n got  %d:\n  %s\n want %d:\n  %s", len(g), strings.Join(g, "\n  "), len(w), strings.Join(w, "\n  "))
	}
}

// ts parses a wall-clock timestamp ("2033-05-18T03:33:20.000001001" or
// with a space) as a TIMESTAMP value.
func ts(t testing.TB, s string) types.Timestamp {
	t.Helper()
	s = strings.Replace(s, " ", "T", 1)
	tm, err := time.Parse("2006-01-02T15:04:05.999999999", s)
	if err != nil {
		t.Fatal(err)
	}
	return types.TimestampOf(tm)
}

func dec(t testing.TB, s string, p, sc int) types.Decimal {
	t.Helper()
	d, err := types.ParseDecimal(s, p, sc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustLatest(t testing.TB, tb *lakecore.Table) *snapshot.Snapshot {
	t.Helper()
	s, err := tb.Snapshots().Latest(context.Background())
	if err != nil || s == nil {
		t.Fatalf("latest snapshot: %v", err)
	}
	return s
}

// drain reads an iterator to the end, checking that positions are
// consecutive within each file.
func drain(t testing.TB, it read.SplitReader) [][]any {
	t.Helper()
	var out [][]any
	ends := map[string]int64{}
	for {
		next, err := it.Next(context.Background())
		rows, pos := next.Rows, next.Pos
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			t.Fatal("empty batch")
		}
		if pos.Row < ends[pos.File] {
			t.Fatalf("batch at %s:%d overlaps the previous one ending at %d", pos.File, pos.Row, ends[pos.File])
		}
		ends[pos.File] = pos.Row + int64(len(rows))
		out = append(out, rows...)
	}
}

// streamFromFirst streams tbl from snapshot 1 to the latest (bounded) and
// calls fn with the changes of each plan, failing the test on an error.
func streamFromFirst(t testing.TB, tbl *lakecore.Table, fn func(plan *scan.StreamPlan, kinds []kv.RowKind, rows [][]any) error) {
	t.Helper()
	ctx := context.Background()
	ss := tbl.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1, Bounded: true})
	for {
		plan, err := ss.Next(ctx)
		if errors.Is(err, scan.ErrEndOfScan) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.ReadChanges(ctx, plan, func(kinds []kv.RowKind, rows [][]any) error { return fn(plan, kinds, rows) }); err != nil {
			t.Fatal(err)
		}
	}
}

// newKATable creates the primary-key table (k BIGINT NOT NULL, a STRING,
// b BIGINT), primary key k, with options opts, in a new local warehouse.
func newKATable(t testing.TB, opts map[string]string) *lakecore.Table {
	t.Helper()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := lakecore.NewCatalog(fio).CreateTable(context.Background(), "db", "t", lakecore.TableSpec{
		Fields: []types.DataField{
			{Name: "k", Type: types.BigIntType().NotNull()}, {Name: "a", Type: types.StringType()}, {Name: "b", Type: types.BigIntType()},
		},
		PrimaryKeys: []string{"k"}, Options: opts,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
