package lakecore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestPrimaryKeyWriteSpill writes the same random changes (repeated keys,
// updates, -U and -D where the engine takes them) into three tables that
// differ only in the write buffer: a tiny one that spills sorted runs to
// local disk (merged in passes: local-sort.max-num-file-handles 3), the
// same tiny one flushing level-0 files instead (write-buffer-spillable
// false), and one large enough for every commit. Each commit's level-0
// files keep the invariants and exact metadata of checkKeyValueFiles; the
// spilling table's data and changelog files are record for record, and in
// their metadata but for names and creation times, the large buffer's; the
// flushing table writes many more files. After the last commit, and a full
// compaction, the three tables read the same rows.
func TestPrimaryKeyWriteSpill(t *testing.T) {
	for _, c := range []struct {
		name        string
		partitioned bool
		options     map[string]string
		retracts    bool
		keys        int
	}{
		// target-file-size 1 byte rolls a file at every rollCheckRows (1000)
		// records: the spilled and the in-memory flush roll alike.
		{"deduplicate/input changelog", false, map[string]string{"bucket": "1", "changelog-producer": "input", "target-file-size": "1b"}, true, 2500},
		{"deduplicate/sequence.field/partitioned", true, map[string]string{"bucket": "2", "sequence.field": "q"}, true, 300},
		{"partial-update/sequence-group", true, map[string]string{"bucket": "2", "merge-engine": "partial-update", "fields.q.sequence-group": "s,v"}, true, 300},
		{"aggregation", false, map[string]string{"bucket": "2", "merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}, true, 300},
		{"first-row", false, map[string]string{"bucket": "2", "merge-engine": "first-row", "ignore-delete": "true"}, true, 300},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			modes := []struct {
				name    string
				options map[string]string
			}{
				{"spill", map[string]string{"write-buffer-size": "4kb", "local-sort.max-num-file-handles": "3"}},
				{"flush", map[string]string{"write-buffer-size": "4kb", "write-buffer-spillable": "false"}},
				{"large", map[string]string{"write-buffer-size": "256mb"}},
			}
			tables := make([]*lakecore.Table, len(modes))
			for i, m := range modes {
				opts := map[string]string{"write-only": "true"}
				for k, v := range c.options {
					opts[k] = v
				}
				for k, v := range m.options {
					opts[k] = v
				}
				spec := lakecore.TableSpec{
					Fields: []types.DataField{
						{Name: "k", Type: types.BigIntType().NotNull()}, {Name: "pt", Type: types.StringType().NotNull()},
						{Name: "s", Type: types.StringType()}, {Name: "v", Type: types.BigIntType()}, {Name: "q", Type: types.BigIntType()},
					},
					PrimaryKeys: []string{"k", "pt"}, Options: opts,
				}
				if c.partitioned {
					spec.PartitionKeys = []string{"pt"}
				}
				fio, err := storage.NewLocal(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				if tables[i], err = lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", spec); err != nil {
					t.Fatal(err)
				}
			}
			rng := rand.New(rand.NewPCG(11, uint64(len(c.name))))
			files := make([]int, len(modes))
			maxSeqs := make([]map[string]int64, len(modes))
			for i := range maxSeqs {
				maxSeqs[i] = map[string]int64{}
			}
			for commitID := int64(1); commitID <= 3; commitID++ {
				writers := make([]interface {
					Write(context.Context, kv.RowKind, []any) error
					Prepare(context.Context) ([]commit.Message, error)
					Close() error
				}, len(modes))
				for i, tbl := range tables {
					w, err := tbl.NewKeyValueWriter(ctx)
					if err != nil {
						t.Fatal(err)
					}
					writers[i] = w
				}
				for range c.keys + c.keys/2 {
					kind := kv.Insert
					if c.retracts {
						switch r := rng.IntN(10); {
						case r < 2:
							kind = kv.Delete
						case r < 3:
							kind = kv.UpdateBefore
						case r < 6:
							kind = kv.UpdateAfter
						}
					}
					var s, v, q any = fmt.Sprintf("s%d", rng.IntN(1000)), int64(rng.IntN(100)), int64(rng.IntN(5))
					if rng.IntN(4) == 0 {
						s = nil
					}
					if rng.IntN(5) == 0 {
						q = nil
					}
					if kind.IsRetract() && c.options["merge-engine"] == "aggregation" {
						// A retracted last_non_null_value is NULL and a later
						// NULL keeps it so: folded in other groups (a flushing
						// buffer's files) the result differs, in Java too.
						// Spilling folds as one buffer does (see sameFiles).
						s, q = nil, nil
					}
					row := []any{int64(rng.IntN(c.keys)), []string{"a", "b"}[rng.IntN(2)], s, v, q}
					for _, w := range writers {
						if err := w.Write(ctx, kind, slices.Clone(row)); err != nil {
							t.Fatal(err)
						}
					}
				}
				msgs := make([][]commit.Message, len(modes))
				for i, w := range writers {
					var err error
					if msgs[i], err = w.Prepare(ctx); err != nil {
						t.Fatal(err)
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					checkKeyValueFiles(t, tables[i], msgs[i], maxSeqs[i])
					for _, m := range msgs[i] {
						files[i] += len(m.NewFiles)
					}
					if _, err := tables[i].NewCommitter("test").Commit(ctx, commitID, msgs[i]); err != nil {
						t.Fatal(err)
					}
					liveMaxSeq(t, tables[i], maxSeqs[i])
				}
				sameFiles(t, tables[0], msgs[0], tables[2], msgs[2])
				if t.Failed() {
					t.Fatalf("commit %d", commitID)
				}
			}
			t.Logf("level-0 files: %d spilling, %d flushing, %d with a large buffer", files[0], files[1], files[2])
			if files[0] != files[2] || files[1] < 5*files[0] {
				t.Errorf("level-0 files: %d spilling, %d flushing, %d with a large buffer", files[0], files[1], files[2])
			}
			var want [][]any
			for i, tbl := range tables {
				if c.options["merge-engine"] != "first-row" { // level 0 is invisible to batch reads of first-row
					got, err := tbl.ReadAll(ctx, 0)
					if err != nil {
						t.Fatal(err)
					}
					if i == 0 {
						want = got
						continue
					}
					assertRows(t, got, want)
				}
			}
			for i, tbl := range tables {
				if _, err := tbl.Compact(ctx, maintain.CompactOptions{Full: true}); err != nil {
					t.Fatal(err)
				}
				got, err := tbl.ReadAll(ctx, 0)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					if len(got) == 0 {
						t.Fatal("no rows after compaction")
					}
					want = got
					continue
				}
				assertRows(t, got, want)
			}
		})
	}
}

// sameFiles checks that two commits' messages hold, bucket by bucket, the
// same data and changelog files: the same records, and the same metadata
// but for file names and creation times.
func sameFiles(t *testing.T, ta *lakecore.Table, a []commit.Message, tb *lakecore.Table, b []commit.Message) {
	t.Helper()
	ctx := context.Background()
	if len(a) != len(b) {
		t.Fatalf("%d messages, want %d", len(a), len(b))
	}
	key := func(m commit.Message) string { return fmt.Sprintf("%x/%d", m.Partition, m.Bucket) }
	slices.SortFunc(a, func(x, y commit.Message) int { return strings.Compare(key(x), key(y)) })
	slices.SortFunc(b, func(x, y commit.Message) int { return strings.Compare(key(x), key(y)) })
	for i := range a {
		for _, kind := range []struct {
			name string
			x, y []manifest.DataFileMeta
		}{{"data", a[i].NewFiles, b[i].NewFiles}, {"changelog", a[i].Changelog, b[i].Changelog}} {
			if len(kind.x) != len(kind.y) {
				t.Errorf("bucket %s: %d %s files, want %d", key(a[i]), len(kind.x), kind.name, len(kind.y))
				continue
			}
			for j := range kind.x {
				fx, fy := kind.x[j], kind.y[j]
				rx, ry := readFileRecords(t, ctx, ta, a[i], fx), readFileRecords(t, ctx, tb, b[i], fy)
				if !reflect.DeepEqual(rx, ry) {
					t.Errorf("bucket %s, %s file %d: records differ (%d and %d)", key(a[i]), kind.name, j, len(rx), len(ry))
				}
				fx.FileName, fy.FileName = "", ""
				fx.CreationTimeMillis, fy.CreationTimeMillis = nil, nil
				if !reflect.DeepEqual(fx, fy) {
					t.Errorf("bucket %s, %s file %d: metadata\n%+v\nwant\n%+v", key(a[i]), kind.name, j, fx, fy)
				}
			}
		}
	}
}
