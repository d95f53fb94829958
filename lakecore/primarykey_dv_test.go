package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// TestDeletionVectorsWrite writes random changes over many commits into
// deletion-vectors tables (deduplicate with deletes, partial-update,
// aggregation; changelog-producer none and lookup; sequence.field; a
// lookup cache too small for one file; writers restarted, restoring levels
// and vectors; compaction in the writer or only by a compaction job).
// After every commit the read equals the model and assertDeletionVectors
// holds; with changelog-producer lookup the replayed changelog equals the
// model too.
func TestDeletionVectorsWrite(t *testing.T) {
	for _, c := range []struct {
		name      string
		engine    string
		options   map[string]string
		writeOnly bool
	}{
		{"dedupe_b2", "deduplicate", map[string]string{"bucket": "2"}, false},
		{"dedupe_lookup_b1", "deduplicate", map[string]string{"bucket": "1", "changelog-producer": "lookup", "num-sorted-run.compaction-trigger": "3"}, false},
		{"dedupe_seqfield", "deduplicate", map[string]string{"bucket": "2", "sequence.field": "b"}, false},
		{"dedupe_tiny_lookup_cache", "deduplicate", map[string]string{"bucket": "3", "lookup.cache-max-memory-size": "2kb", "num-sorted-run.compaction-trigger": "2"}, false},
		{"partial_update", "partial-update", map[string]string{"bucket": "2"}, false},
		{"aggregation_lookup", "aggregation", map[string]string{"bucket": "1", "fields.b.aggregate-function": "sum", "changelog-producer": "lookup"}, false},
		{"dedupe_dynamic_bucket", "deduplicate", map[string]string{"bucket": "-1", "dynamic-bucket.target-row-num": "10"}, false},
		{"dedupe_input_changelog", "deduplicate", map[string]string{"bucket": "2", "changelog-producer": "input"}, false},
		{"dedupe_write_only_compact_job", "deduplicate", map[string]string{"bucket": "2", "write-only": "true"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			opts := map[string]string{"deletion-vectors.enabled": "true", "merge-engine": c.engine}
			for k, v := range c.options {
				opts[k] = v
			}
			tbl := newKATable(t, opts)
			committer := tbl.NewCommitter("test")
			model := &lookupModel{engine: c.engine, rows: map[int64][]any{}}
			rng := rand.New(rand.NewPCG(11, uint64(len(c.name))))
			writer, err := tbl.NewKeyValueWriter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			vectors := 0
			// The compaction job runs after every commit: with more
			// level-0 files universal compaction rewrites everything into
			// one file each time, leaving no vectors.
			compactEvery := int64(1)
			seqB := int64(0)
			for id := int64(1); id <= 25; id++ {
				if rng.IntN(4) == 0 { // restart: levels and vectors restored
					if writer, err = tbl.NewKeyValueWriter(ctx); err != nil {
						t.Fatal(err)
					}
				}
				for range 10 + rng.IntN(30) {
					kind, row := model.change(rng)
					if c.engine == "deduplicate" && opts["sequence.field"] == "b" && row[2] != nil {
						// sequence.field b: only increasing values win; keep
						// the model exact by writing a growing b.
						seqB++
						row = []any{row[0], row[1], seqB}
						if !kind.IsRetract() {
							model.rows[row[0].(int64)] = row
						}
					}
					if err := writer.Write(ctx, kind, row); err != nil {
						t.Fatal(err)
					}
				}
				msgs, err := writer.Prepare(ctx)
				if err != nil {
					t.Fatal(err)
				}
				snap, err := committer.Commit(ctx, id, msgs)
				if err != nil {
					t.Fatal(err)
				}
				if c.writeOnly && id%compactEvery == 0 {
					if _, err := tbl.Compact(ctx, maintain.CompactOptions{Committer: committer}); err != nil {
						t.Fatal(err)
					}
					if snap, err = tbl.Snapshots().Latest(ctx); err != nil {
						t.Fatal(err)
					}
					if writer, err = tbl.NewKeyValueWriter(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if c.writeOnly && id%compactEvery != 0 {
					continue // level 0 is invisible until the compaction job
				}
				rows, err := tbl.ReadAll(ctx, snap.ID)
				if err != nil {
					t.Fatal(err)
				}
				assertRows(t, rows, model.all())
				assertNoLevel0(t, tbl, snap)
				vectors += assertDeletionVectors(t, tbl, snap, model.rows)
			}
			if vectors == 0 {
				t.Error("no snapshot had a deletion vector: the test does not exercise them")
			}
			// A full compaction rewrites every file, so every vector goes:
			// the buckets' entries become empty files (version byte only),
			// as Java writes them.
			if _, err := tbl.Compact(ctx, maintain.CompactOptions{Committer: committer, Full: true}); err != nil {
				t.Fatal(err)
			}
			snap := mustLatest(t, tbl)
			rows, err := tbl.ReadAll(ctx, snap.ID)
			if err != nil {
				t.Fatal(err)
			}
			assertRows(t, rows, model.all())
			if n := assertDeletionVectors(t, tbl, snap, model.rows); n != 0 {
				t.Errorf("%d deletion vectors after a full compaction", n)
			}
			idx, err := manifest.ReadIndexEntries(ctx, tbl.FileIO(), tbl.Path(), *snap.IndexManifest)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range idx {
				if e.IndexType == manifest.IndexTypeDeletionVectors && (e.FileSize != 1 || e.RowCount != 0 || e.DVRanges == nil || len(e.DVRanges) != 0) {
					t.Errorf("after a full compaction bucket %d has deletion-vectors entry %+v, want an empty file", e.Bucket, e)
				}
			}
			if opts["changelog-producer"] == "lookup" {
				replayed, _ := replayChangelog(t, tbl)
				var got [][]any
				for _, r := range replayed {
					got = append(got, r)
				}
				assertRows(t, got, model.all())
			}
		})
	}
}

// assertDeletionVectors checks the merge-on-write invariants of a
// deletion-vectors table's snapshot: every vector belongs to a live file
// above level 0 and deletes positions inside it, one DELETION_VECTORS file
// per bucket, no file above level 0 holds a delete record, the rows not
// deleted hold every key of the model exactly once with its value, and
// every deleted row's key is either gone from the model or live in
// another row with a larger sequence number. It returns the number of
// vectors.
func assertDeletionVectors(t *testing.T, tbl *lakecore.Table, snap *snapshot.Snapshot, model map[int64][]any) int {
	t.Helper()
	ctx := context.Background()
	entries, err := tbl.Planner().LiveEntries(ctx, snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	dvs := map[string]*manifest.DeletionVector{}
	if snap.IndexManifest != nil {
		idx, err := manifest.ReadIndexEntries(ctx, tbl.FileIO(), tbl.Path(), *snap.IndexManifest)
		if err != nil {
			t.Fatal(err)
		}
		perBucket := map[string]int{}
		for _, e := range idx {
			if e.IndexType == manifest.IndexTypeDeletionVectors {
				perBucket[fmt.Sprintf("%x/%d", e.Partition, e.Bucket)]++
			}
		}
		for b, n := range perBucket {
			if n != 1 {
				t.Errorf("snapshot %d: bucket %s has %d deletion-vectors files", snap.ID, b, n)
			}
		}
		if dvs, err = manifest.ReadDeletionVectors(ctx, tbl.FileIO(), tbl.Path(), *snap.IndexManifest); err != nil {
			t.Fatal(err)
		}
	}
	live := map[string]bool{}
	type liveRow struct {
		row []any
		seq int64
	}
	rows := map[int64]liveRow{}
	type deadRow struct {
		file string
		key  int64
		seq  int64
	}
	var dead []deadRow
	for _, e := range entries {
		f := e.File
		live[f.FileName] = true
		if f.Level == 0 {
			continue
		}
		if f.DeleteRowCount == nil || *f.DeleteRowCount != 0 {
			t.Errorf("snapshot %d: file %s at level %d has delete records", snap.ID, f.FileName, f.Level)
		}
		recs := readFileRecords(t, ctx, tbl, commit.Message{Partition: e.Partition, Bucket: e.Bucket}, f)
		dv := dvs[f.FileName]
		if dv != nil {
			for p := range dv.All() {
				if p >= int64(len(recs)) {
					t.Errorf("snapshot %d: vector of %s deletes position %d of %d rows", snap.ID, f.FileName, p, len(recs))
				}
			}
		}
		for pos, r := range recs {
			k := r.row[0].(int64)
			if dv != nil && dv.IsDeleted(int64(pos)) {
				dead = append(dead, deadRow{f.FileName, k, r.seq})
				continue
			}
			if prev, dup := rows[k]; dup {
				t.Errorf("snapshot %d: key %d live twice: %v and %v (file %s)", snap.ID, k, prev.row, r.row, f.FileName)
			}
			rows[k] = liveRow{r.row, r.seq}
		}
	}
	for name := range dvs {
		if !live[name] {
			t.Errorf("snapshot %d: deletion vector of %s, which is not live", snap.ID, name)
		}
	}
	if len(rows) != len(model) {
		t.Errorf("snapshot %d: %d live keys, model has %d", snap.ID, len(rows), len(model))
	}
	for k, want := range model {
		if got, ok := rows[k]; !ok || !reflect.DeepEqual(got.row, want) {
			t.Errorf("snapshot %d: key %d: live row %v, model %v", snap.ID, k, got.row, want)
		}
	}
	for _, d := range dead {
		if r, ok := rows[d.key]; ok && r.seq <= d.seq {
			t.Errorf("snapshot %d: deleted row of key %d in %s (sequence %d) is newer than its live row (sequence %d)", snap.ID, d.key, d.file, d.seq, r.seq)
		}
	}
	return len(dvs)
}

// TestDeletionVectorsRefused: the deletion-vectors options lakecore does
// not write are refused by name when the writer is made.
func TestDeletionVectorsRefused(t *testing.T) {
	for _, c := range []struct {
		name, want string
		options    map[string]string
	}{
		{"first-row", "merge-engine first-row", map[string]string{"merge-engine": "first-row"}},
		{"bitmap64", "deletion-vectors.bitmap64", map[string]string{"deletion-vectors.bitmap64": "true"}},
		{"index in data dir", "index-file-in-data-file-dir", map[string]string{"index-file-in-data-file-dir": "true"}},
		{"full-compaction changelog", "changelog-producer = full-compaction", map[string]string{"changelog-producer": "full-compaction"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			opts := map[string]string{"deletion-vectors.enabled": "true", "bucket": "1"}
			for k, v := range c.options {
				opts[k] = v
			}
			fio, err := storage.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", lakecore.TableSpec{
				Fields:      []types.DataField{{Name: "k", Type: types.BigIntType().NotNull()}, {Name: "v", Type: types.StringType()}},
				PrimaryKeys: []string{"k"}, Options: opts,
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = tbl.NewKeyValueWriter(ctx)
			if !errors.Is(err, write.ErrUnsupportedTable) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewKeyValueWriter: %v, want ErrUnsupportedTable naming %s", err, c.want)
			}
		})
	}
}

// TestDeletionVectorsConcurrentWriters: two writers restored from the same
// snapshot update different keys of one bucket. The second commit fails
// with ErrConflict, committing nothing, rather than replacing the bucket's
// deletion vectors with ones that lack the first writer's (here the
// sequence-number check refuses it first; TestCommitCompactDeletionVectors
// covers the vectors' own base check); written again by a new writer, both
// updates read back and the merge-on-write invariants hold.
func TestDeletionVectorsConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	tbl := newKATable(t, map[string]string{"deletion-vectors.enabled": "true", "bucket": "1"})
	committer := tbl.NewCommitter("test")
	model := map[int64][]any{}
	commitRows := func(id int64, w *write.KeyValueWriter, rows ...[]any) (*snapshot.Snapshot, error) {
		for _, r := range rows {
			if err := w.Write(ctx, 0, r); err != nil {
				t.Fatal(err)
			}
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return committer.Commit(ctx, id, msgs)
	}
	newWriter := func() *write.KeyValueWriter {
		w, err := tbl.NewKeyValueWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	var rows [][]any
	for k := range int64(5) {
		rows = append(rows, []any{k, "v0", k})
		model[k] = []any{k, "v0", k}
	}
	if _, err := commitRows(1, newWriter(), rows...); err != nil {
		t.Fatal(err)
	}
	// Both writers restore the bucket (on their first write) before either
	// commits.
	a, b := newWriter(), newWriter()
	if err := b.Write(ctx, 0, []any{int64(2), "b", int64(2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := commitRows(2, a, []any{int64(1), "a", int64(1)}); err != nil {
		t.Fatal(err)
	}
	model[1] = []any{int64(1), "a", int64(1)}
	_, err := commitRows(3, b)
	if !errors.Is(err, commit.ErrConflict) {
		t.Fatalf("second writer's commit: %v, want ErrConflict", err)
	}
	if err := b.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := commitRows(4, newWriter(), []any{int64(2), "b", int64(2)}); err != nil {
		t.Fatal(err)
	}
	model[2] = []any{int64(2), "b", int64(2)}
	snap := mustLatest(t, tbl)
	got, err := tbl.ReadAll(ctx, snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]any, 0, len(model))
	for _, r := range model {
		want = append(want, r)
	}
	assertRows(t, got, want)
	assertNoLevel0(t, tbl, snap)
	assertDeletionVectors(t, tbl, snap, model)
}
