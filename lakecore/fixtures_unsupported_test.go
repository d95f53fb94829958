package lakecore_test

import (
	"context"
	"errors"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Section 6: a table with ORC manifests is refused clearly, while its schema
// and Parquet data files read correctly.
func TestFixtureORCManifests(t *testing.T) {
	ctx := context.Background()
	const fixture, table = "cpp-java11-append-bucket1-nested-types-orc-manifest", "parquet_append_table"
	fio := fixtureFIO(t, fixture)
	tablePath := "default.db/" + table

	_, err := lakecore.NewCatalog(fio).OpenTable(ctx, "default", table)
	if !errors.Is(err, lakecore.ErrUnsupported) || !strings.Contains(err.Error(), "ORC manifests are not supported") {
		t.Fatalf("OpenTable of a table with ORC manifests: %v", err)
	}

	// The planner, used directly, reports the ORC file by name.
	snap, err := snapshot.NewManager(fio, tablePath).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = scan.NewPlanner(fio, tablePath).Full(ctx, snap, nil)
	if !errors.Is(err, manifest.ErrUnsupportedFormat) || !strings.Contains(err.Error(), "ORC manifests are not supported") ||
		!strings.Contains(err.Error(), snap.BaseManifestList) {
		t.Fatalf("Full over ORC manifests: %v", err)
	}

	// The schema JSON with nested types, and the Parquet files through a
	// hand-made split (unpartitioned, bucket 0).
	s, err := schema.NewManager(fio, tablePath).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.FieldNames(), ","); got != "f1,f2,f3,f4,f5,f6,f7,f8,f9,f10,f11,f12,f13" {
		t.Fatalf("fields %s", got)
	}
	if got := s.Fields[9].Type.String(); got != "MAP<ARRAY<FLOAT>, ROW<`f0` BOOLEAN, `f1` BIGINT>>" {
		t.Errorf("f10 is %s", got)
	}
	r, err := read.NewTableRead(fio, tablePath, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	split := scan.Split{Partition: binrow.EmptyRow, Bucket: 0, TotalBuckets: 1}
	for i, rows := range []int64{6, 3} {
		name := "data-9ea62f34-1dca-49c1-bf7a-d37303d8fb76-" + string(rune('0'+i)) + ".parquet"
		st, err := fio.Stat(ctx, path.Join(tablePath, "bucket-0", name))
		if err != nil {
			t.Fatal(err)
		}
		split.Files = append(split.Files, manifest.DataFileMeta{FileName: name, FileSize: st.Size, RowCount: rows, MinSequenceNumber: int64(i * 6)})
	}
	it, err := r.Open(ctx, split)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	got := drain(t, it)

	arr := func(fs ...float32) []any {
		out := make([]any, len(fs))
		for i, f := range fs {
			out[i] = f
		}
		return out
	}
	m := func(kv ...any) types.Map {
		var mp types.Map
		for i := 0; i < len(kv); i += 2 {
			mp.Keys, mp.Values = append(mp.Keys, kv[i]), append(mp.Values, kv[i+1])
		}
		return mp
	}
	st := func(b bool, n int64) []any { return []any{b, n} }
	row := func(f1 bool, n int, f3 any, f10 any) []any {
		if f3 != nil {
			f3 = int16(f3.(int))
		}
		return []any{f1, int8(30 + n), f3, int32(300000 + n), int64(3000000000 + n), float32(3 + float32(n)/10),
			300 + float64(n)/1e9, "s3" + string(rune('0'+n)), []byte("a3" + string(rune('0'+n))), f10,
			types.Timestamp{NanoOfMilli: int32(70000 + n*1000)}, types.Date(80 + n), types.NewDecimal(int64(90+n), 2)}
	}
	want := [][]any{
		row(true, 1, nil, m(arr(5.11, 5.21), st(true, 61))),
		row(false, 2, 302, m(arr(5.12, 5.22), st(false, 62))),
		row(true, 3, 303, nil),
		row(false, 4, 304, m(arr(5.141, 5.241), st(false, 641), arr(5.14, 5.24), st(false, 64))),
		row(true, 5, 305, m(arr(5.15, 5.25), st(true, 65))),
		row(false, 6, 306, m(arr(5.16, 5.26), nil)),
		row(true, 7, 307, m(arr(5.17, 5.27, 5.37), st(true, 67))),
		row(false, 8, 308, m(arr(5.18, 5.28), st(false, 68))),
		row(true, 9, 309, m(arr(5.19, 5.29), st(true, 69))),
	}
	assertRows(t, got, want)
}

// Sections 7 and 8: primary-key tables. The planner gives for every
// snapshot the live files of an independent replay of the manifests,
// holding totalRecordCount rows (fixtures_pk_test.go checks the merged
// rows); writing them is refused.
func TestFixturePrimaryKeyTables(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		fixture, table string
		latestFiles    int
	}{
		{"cpp-java09-pk-table-avro-manifest-reference", "pk_09", 3},
		{"paimon-java20snap-pk-table-manifest-reference", "test_pk_global_index_golden", -1},
	} {
		t.Run(c.table, func(t *testing.T) {
			fio := fixtureFIO(t, c.fixture)
			tbl, err := lakecore.NewCatalog(fio).OpenTable(ctx, "default", c.table)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.NewWriter(ctx); !errors.Is(err, lakecore.ErrPrimaryKeyTable) || !strings.Contains(err.Error(), "primary keys") {
				t.Fatalf("NewWriter of a primary-key table: %v", err)
			}
			tablePath := "default.db/" + c.table
			sm := snapshot.NewManager(fio, tablePath)
			ids, err := sm.ListIDs(ctx)
			if err != nil || len(ids) == 0 {
				t.Fatalf("snapshots: %v %v", ids, err)
			}
			planner := scan.NewPlanner(fio, tablePath)
			var dvSeen bool
			for _, id := range ids {
				snap, err := sm.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				want := replay(t, fio, tablePath, snap)
				live, err := planner.LiveEntries(ctx, snap, nil)
				if err != nil {
					t.Fatalf("snapshot %d: %v", id, err)
				}
				got := map[string]int64{}
				var rows int64
				for _, e := range live {
					got[e.File.FileName] = e.File.RowCount
					rows += e.File.RowCount
				}
				if !maps.Equal(got, want) {
					t.Errorf("snapshot %d: live files %v, replay gives %v", id, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
				}
				if snap.TotalRecordCount == nil || rows != *snap.TotalRecordCount {
					t.Errorf("snapshot %d: live files hold %d rows, totalRecordCount %v", id, rows, snap.TotalRecordCount)
				}
				plan, err := planner.Full(ctx, snap, nil)
				if err != nil {
					t.Fatalf("snapshot %d: %v", id, err)
				}
				var planned int
				for _, sp := range plan.Splits {
					planned += len(sp.Files)
					for i := 1; i < len(sp.Files); i++ {
						if sp.Files[i-1].MinSequenceNumber > sp.Files[i].MinSequenceNumber {
							t.Errorf("snapshot %d: split files not sorted by sequence number", id)
						}
					}
					for name := range sp.DeletionVectors {
						dvSeen = true
						if !slices.ContainsFunc(sp.Files, func(f manifest.DataFileMeta) bool { return f.FileName == name }) {
							t.Errorf("snapshot %d: deletion vector of %s attached to a split without that file", id, name)
						}
					}
				}
				// Both tables have deletion vectors: batch plans leave out level 0.
				var above0 int
				for _, e := range live {
					if e.File.Level > 0 {
						above0++
					}
				}
				if planned != above0 {
					t.Errorf("snapshot %d: %d files in splits, %d live above level 0", id, planned, above0)
				}
				if id == ids[len(ids)-1] && c.latestFiles >= 0 && len(live) != c.latestFiles {
					t.Errorf("latest snapshot: %d live files, want %d", len(live), c.latestFiles)
				}
			}
			if c.table == "pk_09" && !dvSeen {
				t.Error("pk_09 has deletion vectors from snapshot 6 on; none attached")
			}
		})
	}
}

// replay computes the live files of a snapshot independently of the
// planner: a set of (partition, bucket, file) keys, added and removed in
// list order.
func replay(t *testing.T, fio interface {
	ReadFile(context.Context, string) ([]byte, error)
}, tablePath string, snap *snapshot.Snapshot) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	type key struct {
		part   string
		bucket int32
		name   string
	}
	live := map[key]int64{}
	for _, list := range []string{snap.BaseManifestList, snap.DeltaManifestList} {
		data, err := fio.ReadFile(ctx, tablePath+"/manifest/"+list)
		if err != nil {
			t.Fatal(err)
		}
		metas, err := manifest.DecodeFileMetas(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range metas {
			data, err := fio.ReadFile(ctx, tablePath+"/manifest/"+m.FileName)
			if err != nil {
				t.Fatal(err)
			}
			entries, err := manifest.DecodeEntries(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				k := key{string(e.Partition), e.Bucket, e.File.FileName}
				if e.Kind == manifest.FileKindAdd {
					live[k] = e.File.RowCount
				} else {
					delete(live, k)
				}
			}
		}
	}
	out := map[string]int64{}
	for k, n := range live {
		out[k.name] = n
	}
	return out
}
