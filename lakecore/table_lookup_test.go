package lakecore_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// TestLookup looks keys up in pk_09 (key f0, f1, f2; partition f1; bucket
// key f2 of 2 buckets) at several snapshots and checks each against the
// batch read: updated, deleted, never written and long keys.
func TestLookup(t *testing.T) {
	ctx := context.Background()
	tbl := openFixture(t, "cpp-java09-pk-table-avro-manifest-reference", "pk_09")
	for _, c := range []struct {
		snap int64
		key  []any
		want []any
	}{
		{2, []any{"Alice", int32(10), int32(1)}, r09("Alice", 10, 1, 11.1)},
		{8, []any{"Alice", int32(10), int32(1)}, r09("Alice", 10, 1, 21.1)},
		{4, []any{"Lily", int32(10), int32(1)}, r09("Lily", 10, 1, 20.1)},
		{8, []any{"Lily", int32(10), int32(1)}, nil},                        // deleted
		{8, []any{"Tony", int32(10), int32(0)}, nil},                        // deleted by a deletion vector
		{8, []any{"Alice", int32(20), int32(1)}, nil},                       // another partition
		{8, []any{"Nobody", int32(10), int32(0)}, nil},                      // never written
		{8, []any{twoRoads, int32(10), int32(1)}, r09(twoRoads, 10, 1, 11)}, // a key in the variable-length part
		{8, []any{"Paul", int32(20), int32(1)}, r09("Paul", 20, 1, 18.1)},
	} {
		got, err := tbl.Lookup(ctx, c.snap, c.key)
		if err != nil {
			t.Fatalf("snapshot %d, key %v: %v", c.snap, c.key, err)
		}
		if c.want == nil {
			if got != nil {
				t.Errorf("snapshot %d, key %v: %v, want no row", c.snap, c.key, got)
			}
			continue
		}
		assertRows(t, [][]any{got}, [][]any{c.want})
	}
	for _, bad := range [][]any{{"Alice", int32(10)}, {"Alice", int64(10), int32(1)}, {nil, int32(10), int32(1)}} {
		if _, err := tbl.Lookup(ctx, 0, bad); !errors.Is(err, lakecore.ErrInvalidKey) {
			t.Errorf("key %v: %v, want ErrInvalidKey", bad, err)
		}
	}
	// The merge-on-read table of paimon-cpp: level-0 deletes and updates.
	fio, err := storage.NewLocal(fixturetest.CppPKWarehouse(t, "pk_table_scan_and_read_mor"))
	if err != nil {
		t.Fatal(err)
	}
	mor, err := lakecore.NewCatalog(fio).OpenTable(ctx, "default", "pk_table_scan_and_read_mor")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := mor.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	pk := mor.Schema().PrimaryKeys
	for _, row := range rows {
		key := make([]any, len(pk))
		for i, k := range pk {
			key[i] = row[slices.Index(mor.Schema().FieldNames(), k)]
		}
		got, err := mor.Lookup(ctx, 0, key)
		if err != nil {
			t.Fatal(err)
		}
		assertRows(t, [][]any{got}, [][]any{row})
	}
}
