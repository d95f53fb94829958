package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// canonicalLine renders a row as the golden files do, with an optional
// row kind, so that rows compare as strings.
func canonicalLine(names []string, row []any, kind string) string {
	vals := fixturetest.CanonicalRow(names, row)
	parts := make([]string, 0, len(names)+1)
	if kind != "" {
		parts = append(parts, kind)
	}
	for _, n := range names {
		if v := vals[n]; v != nil {
			parts = append(parts, n+"="+strconv.Quote(*v))
		} else {
			parts = append(parts, n+"=null")
		}
	}
	return strings.Join(parts, " ")
}

func goldenLine(names []string, r fixturetest.CppPKRow, withKind bool) string {
	parts := make([]string, 0, len(names)+1)
	if withKind && r.HasKind {
		parts = append(parts, r.Kind.String())
	}
	for _, n := range names {
		if v := r.Values[n]; v != nil {
			parts = append(parts, n+"="+strconv.Quote(*v))
		} else {
			parts = append(parts, n+"=null")
		}
	}
	return strings.Join(parts, " ")
}

func sameMultiset(t *testing.T, what string, got, want []string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: rows differ:\n got  %d:\n  %s\n want %d:\n  %s", what, len(got), strings.Join(got, "\n  "), len(want), strings.Join(want, "\n  "))
	}
}

// TestCppPrimaryKeyFixtures reads the Java-written primary-key tables of
// paimon-cpp's test data (internal/fixturetest/testdata/cpp, PROVENANCE.md)
// and compares every golden file: batch reads of a snapshot (optionally one
// partition and bucket) by value, and streaming reads from a scan mode
// plan by plan, with the row kind of every delta record.
func TestCppPrimaryKeyFixtures(t *testing.T) {
	ctx := context.Background()
	for _, table := range fixturetest.CppPKTables {
		t.Run(table, func(t *testing.T) {
			fio, err := storage.NewLocal(fixturetest.CppPKWarehouse(t, table))
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := lakecore.NewCatalog(fio).OpenTable(ctx, "default", table)
			if err != nil {
				t.Fatal(err)
			}
			names := tbl.Schema().FieldNames()
			entries, err := os.ReadDir(filepath.Join(fixturetest.CppPK(t, table), "..", "..", "..", "expected"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				name := strings.TrimSuffix(e.Name(), ".jsonl")
				t.Run(name, func(t *testing.T) {
					want := fixturetest.CppPKExpected(t, table, name)
					if strings.HasPrefix(name, "batch-") {
						checkBatchGolden(t, tbl, names, name, want)
					} else {
						checkStreamGolden(t, tbl, names, name, want)
					}
				})
			}
		})
	}
}

func checkBatchGolden(t *testing.T, tbl *lakecore.Table, names []string, name string, want []fixturetest.CppPKRow) {
	ctx := context.Background()
	spec := strings.SplitN(strings.TrimPrefix(name, "batch-"), ".", 2)
	id, err := strconv.ParseInt(spec[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshots().Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tbl.Planner().Full(ctx, snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec) == 2 { // "f1=10.bucket-1": one partition and bucket
		part, bucket, _ := strings.Cut(spec[1], ".bucket-")
		b, _ := strconv.Atoi(bucket)
		var keep []scan.Split
		for _, sp := range plan.Splits {
			pp, err := binrow.PartitionPath(tbl.Schema().PartitionFields(), sp.PartitionValues, binrow.PartitionOptions{DefaultName: "__DEFAULT_PARTITION__"})
			if err != nil {
				t.Fatal(err)
			}
			if pp == part && sp.Bucket == int32(b) {
				keep = append(keep, sp)
			}
		}
		plan.Splits = keep
	}
	var got []string
	if err := tbl.ReadPlan(ctx, plan, func(rows [][]any) error {
		for _, r := range rows {
			got = append(got, canonicalLine(names, r, ""))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var w []string
	for _, r := range want {
		w = append(w, goldenLine(names, r, false))
	}
	sameMultiset(t, name, got, w)
}

func checkStreamGolden(t *testing.T, tbl *lakecore.Table, names []string, name string, want []fixturetest.CppPKRow) {
	ctx := context.Background()
	mode := strings.TrimPrefix(name, "stream.")
	o := scan.StreamOptions{Bounded: true}
	switch {
	case mode == "latest-full":
		o.Mode = scan.ModeLatestFull
	case strings.HasPrefix(mode, "from-snapshot-full-"):
		o.Mode = scan.ModeFromSnapshotFull
		o.SnapshotID, _ = strconv.ParseInt(strings.TrimPrefix(mode, "from-snapshot-full-"), 10, 64)
	case strings.HasPrefix(mode, "from-snapshot-"):
		o.Mode = scan.ModeFromSnapshot
		o.SnapshotID, _ = strconv.ParseInt(strings.TrimPrefix(mode, "from-snapshot-"), 10, 64)
	default:
		t.Fatalf("unknown stream golden %s", name)
	}
	got := map[string][]string{} // "<snapshot> <phase>" -> rows
	ss := tbl.NewStreamScan(o)
	for {
		plan, err := ss.Next(ctx)
		if errors.Is(err, scan.ErrEndOfScan) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if plan == nil {
			t.Fatal("bounded stream waits for a snapshot")
		}
		phase := "delta"
		if plan.Full {
			phase = "full"
		}
		key := fmt.Sprintf("%d %s", plan.Snapshot.ID, phase)
		if err := tbl.ReadChanges(ctx, plan, func(kinds []kv.RowKind, rows [][]any) error {
			for i, r := range rows {
				kind := ""
				if !plan.Full {
					kind = kinds[i].String()
				}
				got[key] = append(got[key], canonicalLine(names, r, kind))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	w := map[string][]string{}
	for _, r := range want {
		key := fmt.Sprintf("%d %s", r.Snapshot, r.Phase)
		w[key] = append(w[key], goldenLine(names, r, r.Phase == "delta"))
	}
	for key := range w {
		sameMultiset(t, name+" snapshot "+key, got[key], w[key])
	}
	for key, rows := range got {
		if _, ok := w[key]; !ok && len(rows) > 0 {
			t.Errorf("%s: snapshot %s: %d rows the golden does not have: %v", name, key, len(rows), rows)
		}
	}
}
