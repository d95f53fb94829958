package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// lookupModel is what a table of (k BIGINT, a STRING, b BIGINT) must
// hold after a change, per merge engine.
type lookupModel struct {
	engine string
	rows   map[int64][]any
}

// change picks a random change of a key and applies it to the model.
func (m *lookupModel) change(rng *rand.Rand) (kv.RowKind, []any) {
	k := int64(rng.IntN(40))
	var a any = []string{"x", "y"}[rng.IntN(2)]
	var b any = int64(rng.IntN(2))
	old, exists := m.rows[k]
	switch m.engine {
	case "deduplicate":
		if exists && rng.IntN(4) == 0 {
			delete(m.rows, k)
			return kv.Delete, old
		}
		m.rows[k] = []any{k, a, b}
		if exists {
			return kv.UpdateAfter, []any{k, a, b}
		}
		return kv.Insert, []any{k, a, b}
	case "partial-update":
		switch rng.IntN(3) {
		case 0:
			a = nil
		case 1:
			b = nil
		}
		row := []any{k, a, b}
		if exists {
			row = []any{k, old[1], old[2]}
			if a != nil {
				row[1] = a
			}
			if b != nil {
				row[2] = b
			}
		}
		m.rows[k] = row
		return kv.Insert, []any{k, a, b}
	case "aggregation": // a last_non_null_value, b sum
		if rng.IntN(3) == 0 {
			a = nil
		}
		row := []any{k, a, b}
		if exists {
			row = []any{k, old[1], old[2].(int64) + b.(int64)}
			if a != nil {
				row[1] = a
			}
		}
		m.rows[k] = row
		return kv.Insert, []any{k, a, b}
	}
	panic("unknown engine " + m.engine)
}

func (m *lookupModel) all() [][]any {
	var out [][]any
	for _, r := range m.rows {
		out = append(out, r)
	}
	return out
}

// TestLookupChangelog writes random changes over many commits into tables
// with changelog-producer lookup (deduplicate, partial-update, aggregation;
// fixed and dynamic buckets; row deduplication on and off; writers reused
// and restarted; a lookup cache too small for one file; compaction in the
// writer or only by a compaction job).
// After every commit the merged read equals the model and, when the writer
// compacts, no level-0 file is left; the streaming read of the changelog
// from snapshot 1, replayed onto a map, equals the model, each -U and -D
// retracting exactly the replayed row and each +I a new key, and only
// COMPACT snapshots carry the changelog; with row deduplication no -U/+U
// pair has equal rows, without it some do.
func TestLookupChangelog(t *testing.T) {
	for _, c := range []struct {
		name      string
		engine    string
		options   map[string]string
		writeOnly bool
	}{
		{"dedupe_b2", "deduplicate", map[string]string{"bucket": "2"}, false},
		{"dedupe_b1_rowdedup", "deduplicate", map[string]string{"bucket": "1", "changelog-producer.row-deduplicate": "true", "num-sorted-run.compaction-trigger": "3"}, false},
		{"dedupe_tiny_lookup_cache", "deduplicate", map[string]string{"bucket": "3", "lookup.cache-max-memory-size": "2kb", "num-sorted-run.compaction-trigger": "2"}, false},
		{"dedupe_seqfield", "deduplicate", map[string]string{"bucket": "2", "sequence.field": "k"}, false},
		{"dedupe_dynamic_bucket", "deduplicate", map[string]string{"bucket": "-1", "dynamic-bucket.target-row-num": "10"}, false},
		{"partial_update", "partial-update", map[string]string{"bucket": "2", "changelog-producer.row-deduplicate": "true"}, false},
		{"aggregation", "aggregation", map[string]string{"bucket": "1", "fields.b.aggregate-function": "sum", "changelog-producer.row-deduplicate": "true"}, false},
		{"dedupe_write_only_compact_job", "deduplicate", map[string]string{"bucket": "2", "write-only": "true"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			opts := map[string]string{"changelog-producer": "lookup", "merge-engine": c.engine}
			for k, v := range c.options {
				opts[k] = v
			}
			tbl := newKATable(t, opts)
			committer := tbl.NewCommitter("test")
			model := &lookupModel{engine: c.engine, rows: map[int64][]any{}}
			rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
			// Writers are closed at the end: a small lookup cache makes
			// local lookup files.
			newWriter := func() (*write.KeyValueWriter, error) {
				w, err := tbl.NewKeyValueWriter(ctx)
				if err == nil {
					t.Cleanup(func() { _ = w.Close() })
				}
				return w, err
			}
			writer, err := newWriter()
			if err != nil {
				t.Fatal(err)
			}
			for id := int64(1); id <= 25; id++ {
				if rng.IntN(4) == 0 { // restart: levels and lookups restored from the files
					if writer, err = newWriter(); err != nil {
						t.Fatal(err)
					}
				}
				for range 10 + rng.IntN(30) {
					kind, row := model.change(rng)
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
				if c.writeOnly && id%3 == 0 {
					if _, err := tbl.Compact(ctx, maintain.CompactOptions{Committer: committer}); err != nil {
						t.Fatal(err)
					}
					if snap, err = tbl.Snapshots().Latest(ctx); err != nil {
						t.Fatal(err)
					}
					writer, err = newWriter() // its levels changed under it
					if err != nil {
						t.Fatal(err)
					}
				}
				rows, err := tbl.ReadAll(ctx, snap.ID)
				if err != nil {
					t.Fatal(err)
				}
				assertRows(t, rows, model.all())
				if !c.writeOnly || id%3 == 0 {
					assertNoLevel0(t, tbl, snap)
					assertLookupChangelogFiles(t, tbl, snap)
				}
			}
			if c.writeOnly {
				if _, err := tbl.Compact(ctx, maintain.CompactOptions{Committer: committer}); err != nil {
					t.Fatal(err)
				}
			}
			replayed, equalPairs := replayChangelog(t, tbl)
			var got [][]any
			for _, r := range replayed {
				got = append(got, r)
			}
			assertRows(t, got, model.all())
			rowDedup := opts["changelog-producer.row-deduplicate"] == "true"
			if rowDedup && equalPairs > 0 {
				t.Errorf("row deduplication on: %d -U/+U pairs with equal rows", equalPairs)
			}
			if !rowDedup && equalPairs == 0 {
				t.Errorf("row deduplication off: no -U/+U pair with equal rows; the test does not exercise it")
			}
		})
	}
}

// assertNoLevel0 fails if snap has a live level-0 file: a lookup table's
// writer compacts level 0 up at every commit.
func assertNoLevel0(t *testing.T, tbl *lakecore.Table, snap *snapshot.Snapshot) {
	t.Helper()
	entries, err := tbl.Planner().LiveEntries(context.Background(), snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.File.Level == 0 {
			t.Errorf("snapshot %d (%s): level-0 file %s is live", snap.ID, snap.CommitKind, e.File.FileName)
		}
	}
}

// replayChangelog streams the changelog from snapshot 1 and applies it to
// a map, failing on a record that does not fit the replayed state or a
// changelog in a snapshot that is not COMPACT. It returns the map and the
// number of -U/+U pairs with equal rows.
func replayChangelog(t *testing.T, tbl *lakecore.Table) (map[int64][]any, int) {
	t.Helper()
	state := map[int64][]any{}
	equal := 0
	var pendingBefore []any
	streamFromFirst(t, tbl, func(plan *scan.StreamPlan, kinds []kv.RowKind, rows [][]any) error {
		if plan.Snapshot.CommitKind != snapshot.CommitCompact {
			return fmt.Errorf("snapshot %d (%s) carries changelog", plan.Snapshot.ID, plan.Snapshot.CommitKind)
		}
		for i, row := range rows {
			k := row[0].(int64)
			old, ok := state[k]
			switch kinds[i] {
			case kv.Insert:
				if ok {
					return fmt.Errorf("snapshot %d: +I %v of a key holding %v", plan.Snapshot.ID, row, old)
				}
				state[k] = row
			case kv.UpdateBefore, kv.Delete:
				if !ok || fmt.Sprint(old) != fmt.Sprint(row) {
					return fmt.Errorf("snapshot %d: %s %v retracts a key holding %v (present %v)", plan.Snapshot.ID, kinds[i], row, old, ok)
				}
				delete(state, k)
				pendingBefore = nil
				if kinds[i] == kv.UpdateBefore {
					pendingBefore = row
				}
			case kv.UpdateAfter:
				if pendingBefore == nil || pendingBefore[0] != row[0] {
					return fmt.Errorf("snapshot %d: +U %v without its -U", plan.Snapshot.ID, row)
				}
				if fmt.Sprint(pendingBefore) == fmt.Sprint(row) {
					equal++
				}
				pendingBefore = nil
				state[k] = row
			}
		}
		return nil
	})
	return state, equal
}

// assertLookupChangelogFiles checks the changelog files of a COMPACT
// snapshot as Java writes them (KeyValueFileWriterFactory
// createRollingChangelogFileWriter): named changelog-<uuid>-<n>.parquet,
// file source APPEND, above level 0, and the snapshot's
// changelogRecordCount their row count.
func assertLookupChangelogFiles(t *testing.T, tbl *lakecore.Table, snap *snapshot.Snapshot) {
	t.Helper()
	plan, err := tbl.Planner().Changelog(context.Background(), snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, sp := range plan.Splits {
		for _, f := range sp.Files {
			rows += f.RowCount
			if !strings.HasPrefix(f.FileName, "changelog-") || !strings.HasSuffix(f.FileName, ".parquet") || f.Level == 0 ||
				f.FileSource == nil || *f.FileSource != 0 || f.DeleteRowCount == nil {
				t.Errorf("snapshot %d: changelog file %s: level %d, file source %v", snap.ID, f.FileName, f.Level, f.FileSource)
			}
		}
	}
	if len(plan.Splits) > 0 && snap.CommitKind != snapshot.CommitCompact {
		t.Errorf("snapshot %d (%s) has changelog files", snap.ID, snap.CommitKind)
	}
	if rows > 0 && (snap.ChangelogRecordCount == nil || *snap.ChangelogRecordCount != rows) {
		t.Errorf("snapshot %d: changelogRecordCount %v, want %d", snap.ID, snap.ChangelogRecordCount, rows)
	}
}

// TestLookupUpgradeStrategy: a level-0 file alone in its section goes up a
// level as LookupMergeTreeCompactRewriter.upgradeStrategy says. A big
// first commit sits at the top level; a small second one of new keys is
// compacted alone to the level below it, upgraded as the same file when the
// engine keeps the latest record anyway (deduplicate without
// sequence.field), rewritten otherwise; either way each of its keys gets a
// +I changelog record at that level.
func TestLookupUpgradeStrategy(t *testing.T) {
	for _, c := range []struct {
		name    string
		options map[string]string
		upgrade bool
	}{
		{"deduplicate", nil, true},
		{"deduplicate with sequence.field", map[string]string{"sequence.field": "b"}, false},
		{"partial-update", map[string]string{"merge-engine": "partial-update"}, false},
		{"first-row", map[string]string{"merge-engine": "first-row"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			opts := map[string]string{"bucket": "1", "changelog-producer": "lookup"}
			for k, v := range c.options {
				opts[k] = v
			}
			tbl := newKATable(t, opts)
			committer := tbl.NewCommitter("test")
			w, err := tbl.NewKeyValueWriter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for id, keys := range [][2]int64{{0, 2000}, {5000, 5010}} {
				for k := keys[0]; k < keys[1]; k++ {
					if err := w.Write(ctx, kv.Insert, []any{k, fmt.Sprintf("value-%d", k*7919), k}); err != nil {
						t.Fatal(err)
					}
				}
				msgs, err := w.Prepare(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(msgs) != 1 || len(msgs[0].NewFiles) != 1 || len(msgs[0].CompactAfter) != 1 {
					t.Fatalf("commit %d: messages %+v, want one new file compacted into one", id+1, msgs)
				}
				m := msgs[0]
				wantLevel := int32(5) // the top level, then the level below it
				if id == 1 {
					wantLevel = 4
				}
				after, log := m.CompactAfter[0], m.CompactChangelog
				if after.Level != wantLevel {
					t.Errorf("commit %d: compacted to level %d, want %d", id+1, after.Level, wantLevel)
				}
				// The top level always takes the file as it is
				// (CHANGELOG_NO_REWRITE at maxLevel).
				same := after.FileName == m.NewFiles[0].FileName
				if want := id == 0 || c.upgrade; same != want {
					t.Errorf("commit %d: output %s for input %s: upgraded %v, want %v", id+1, after.FileName, m.NewFiles[0].FileName, same, want)
				}
				if len(log) != 1 || log[0].RowCount != keys[1]-keys[0] || log[0].Level != wantLevel {
					t.Errorf("commit %d: changelog files %+v, want one at level %d with %d rows", id+1, log, wantLevel, keys[1]-keys[0])
				}
				if _, err := committer.Commit(ctx, int64(id+1), msgs); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestForceUpLevel0: with compaction.force-up-level-0 (and no lookup) every
// commit's compaction takes level 0 up, with the ordinary rewriter: no
// level-0 file stays and no changelog is written.
func TestForceUpLevel0(t *testing.T) {
	ctx := context.Background()
	tbl := createPKTable(t, map[string]string{"bucket": "2", "compaction.force-up-level-0": "true"})
	committer := tbl.NewCommitter("test")
	model := map[int64]string{}
	for id := int64(1); id <= 6; id++ {
		w, err := tbl.NewKeyValueWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k := range int64(20) {
			v := fmt.Sprintf("c%d", id)
			if err := w.Write(ctx, kv.Insert, []any{k * id % 30, v}); err != nil {
				t.Fatal(err)
			}
			model[k*id%30] = v
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := committer.Commit(ctx, id, msgs)
		if err != nil {
			t.Fatal(err)
		}
		assertNoLevel0(t, tbl, snap)
		if snap.ChangelogManifestList != nil && *snap.ChangelogManifestList != "" {
			t.Errorf("snapshot %d: changelog %s without a changelog producer", snap.ID, *snap.ChangelogManifestList)
		}
	}
	var want [][]any
	for k, v := range model {
		want = append(want, []any{k, v})
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, rows, want)
}

// TestLookupChangelogFault: a storage failure while a lookup compaction
// writes its changelog fails Prepare with write.ErrWriterFailed; Abort
// deletes every file written since the last Prepare (level-0, compacted
// and changelog files) and the batch written again by a new writer
// commits, its changelog replaying to the model.
func TestLookupChangelogFault(t *testing.T) {
	ctx := context.Background()
	local, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fio := faultfs.New(local, 1)
	tbl, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", lakecore.TableSpec{
		Fields:      []types.DataField{{Name: "k", Type: types.BigIntType().NotNull()}, {Name: "v", Type: types.StringType()}},
		PrimaryKeys: []string{"k"}, Options: map[string]string{"bucket": "2", "changelog-producer": "lookup"},
	})
	if err != nil {
		t.Fatal(err)
	}
	committer := tbl.NewCommitter("test")
	model := map[int64][]any{}
	batch := func(id int64) [][]any {
		var rows [][]any
		for k := range int64(30) {
			rows = append(rows, []any{(k * id) % 40, fmt.Sprintf("c%d-%d", id, k)})
		}
		return rows
	}
	dataFiles := func() []string {
		infos, err := local.List(ctx, "db.db/t", true)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range infos {
			if !f.IsDir && strings.Contains(f.Path, "/bucket-") {
				out = append(out, f.Path)
			}
		}
		return out
	}
	for id := int64(1); id <= 4; id++ {
		w, err := tbl.NewKeyValueWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range batch(id) {
			if err := w.Write(ctx, kv.Insert, r); err != nil {
				t.Fatal(err)
			}
		}
		if id == 3 {
			before := dataFiles()
			if len(before) == 0 {
				t.Fatal("no data files listed before the batch")
			}
			fio.Add(faultfs.Fault{Ops: faultfs.OpCreate, Match: func(_ faultfs.Op, p string) bool { return strings.Contains(p, "/changelog-") }, Times: 1})
			if _, err := w.Prepare(ctx); !errors.Is(err, write.ErrWriterFailed) || !errors.Is(err, faultfs.ErrInjected) {
				t.Fatalf("Prepare with a failing changelog file: %v, want ErrWriterFailed", err)
			}
			if err := w.Abort(ctx); err != nil {
				t.Fatal(err)
			}
			if after := dataFiles(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("files after Abort:\n %v\nwant those before the batch:\n %v", after, before)
			}
			if w, err = tbl.NewKeyValueWriter(ctx); err != nil {
				t.Fatal(err)
			}
			for _, r := range batch(id) {
				if err := w.Write(ctx, kv.Insert, r); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, r := range batch(id) {
			model[r[0].(int64)] = r
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := committer.Commit(ctx, id, msgs); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(fio.Injected()); n != 1 {
		t.Fatalf("%d faults injected, want 1", n)
	}
	replayed, _ := replayChangelog(t, tbl)
	var got, want [][]any
	for _, r := range replayed {
		got = append(got, r)
	}
	for _, r := range model {
		want = append(want, r)
	}
	assertRows(t, got, want)
}
