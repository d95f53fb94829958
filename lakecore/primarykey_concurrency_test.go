package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// createPKTable creates db.t (k BIGINT primary key, v STRING) in a new
// local warehouse with options.
func createPKTable(t *testing.T, options map[string]string) *lakecore.Table {
	t.Helper()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := lakecore.NewCatalog(fio).CreateTable(context.Background(), "db", "t", lakecore.TableSpec{
		Fields:      []types.DataField{{Name: "k", Type: types.BigIntType()}, {Name: "v", Type: types.StringType()}},
		PrimaryKeys: []string{"k"}, Options: options,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestPrimaryKeySequenceConflict: two writers restore the same bucket
// before either commits. The first commit wins; the second is refused
// with ErrSequenceConflict (its sequence numbers would not order its
// changes after the first writer's), and written again with a new writer
// it lands after them, so the later change of key 1 wins.
func TestPrimaryKeySequenceConflict(t *testing.T) {
	ctx := context.Background()
	tbl := createPKTable(t, map[string]string{"bucket": "1"})
	a, err := tbl.NewKeyValueWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tbl.NewKeyValueWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, kv.Insert, []any{int64(1), "a"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(ctx, kv.Insert, []any{int64(1), "b"}); err != nil {
		t.Fatal(err)
	}
	ma, err := a.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := b.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.NewCommitter("a").Commit(ctx, 1, ma); err != nil {
		t.Fatal(err)
	}
	_, err = tbl.NewCommitter("b").Commit(ctx, 1, mb)
	if !errors.Is(err, commit.ErrSequenceConflict) || !errors.Is(err, commit.ErrConflict) {
		t.Fatalf("second writer's commit: %v, want ErrSequenceConflict", err)
	}
	if err := b.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	b2, err := tbl.NewKeyValueWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := b2.Write(ctx, kv.Insert, []any{int64(1), "b"}); err != nil {
		t.Fatal(err)
	}
	mb, err = b2.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.NewCommitter("b").Commit(ctx, 1, mb); err != nil {
		t.Fatal(err)
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, rows, [][]any{{int64(1), "b"}})
}

// TestPrimaryKeyConcurrentWriters runs four writers on the same
// primary-key table (2 buckets) at once, each with its own commit user;
// a commit refused with ErrSequenceConflict is written again by a new
// writer. Applying the committed batches in snapshot order to a map must
// give the table's merged rows: no change lost, none reordered.
func TestPrimaryKeyConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	tbl := createPKTable(t, map[string]string{"bucket": "2"})
	type batch struct {
		snapshot int64
		changes  [][2]any // key, value ("" = delete)
	}
	var mu sync.Mutex
	var committed []batch
	conflicts, compactionConflicts := 0, 0
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			committer := tbl.NewCommitter(fmt.Sprintf("writer-%d", w))
			for id := int64(1); id <= 10; id++ {
				var changes [][2]any
				for range 5 + rng.IntN(10) {
					v := fmt.Sprintf("w%d-%d-%d", w, id, rng.IntN(1000))
					if rng.IntN(5) == 0 {
						v = ""
					}
					changes = append(changes, [2]any{int64(rng.IntN(20)), v})
				}
				for {
					kw, err := tbl.NewKeyValueWriter(ctx)
					if err != nil {
						errs <- err
						return
					}
					for _, c := range changes {
						kind := kv.Insert
						var v any = c[1]
						if c[1] == "" {
							kind, v = kv.Delete, nil
						}
						if err := kw.Write(ctx, kind, []any{c[0], v}); err != nil {
							errs <- err
							return
						}
					}
					msgs, err := kw.Prepare(ctx)
					if err != nil {
						errs <- err
						return
					}
					snap, err := committer.Commit(ctx, id, msgs)
					if errors.Is(err, commit.ErrCompactionConflict) {
						err = nil // the APPEND snapshot, returned, holds the batch
						mu.Lock()
						compactionConflicts++
						mu.Unlock()
					}
					if errors.Is(err, commit.ErrSequenceConflict) {
						_ = kw.Abort(ctx)
						mu.Lock()
						conflicts++
						mu.Unlock()
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					// An APPEND snapshot, possibly followed by a COMPACT one.
					appendID := snap.ID
					if snap.CommitKind == "COMPACT" {
						appendID--
					}
					mu.Lock()
					committed = append(committed, batch{appendID, changes})
					mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	slices.SortFunc(committed, func(a, b batch) int { return int(a.snapshot - b.snapshot) })
	model := map[int64]string{}
	for _, b := range committed {
		for _, c := range b.changes {
			if c[1] == "" {
				delete(model, c[0].(int64))
			} else {
				model[c[0].(int64)] = c[1].(string)
			}
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
	t.Logf("%d batches committed, %d sequence conflicts rewritten, %d compactions dropped after a conflict", len(committed), conflicts, compactionConflicts)
}

// TestPrimaryKeyCompact writes a write-only primary-key table (no inline
// compaction, level-0 files pile up), then compacts it with Table.Compact:
// universal compaction first, then a full compaction that leaves every
// bucket one run at the top level; the merged rows never change.
func TestPrimaryKeyCompact(t *testing.T) {
	ctx := context.Background()
	tbl := createPKTable(t, map[string]string{"bucket": "2", "write-only": "true"})
	committer := tbl.NewCommitter("writer")
	model := map[int64]string{}
	rng := rand.New(rand.NewPCG(8, 8))
	nextID := int64(1)
	writeCommits := func(n int) {
		for range n {
			id := nextID
			nextID++
			w, err := tbl.NewKeyValueWriter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for range 30 {
				k, v := int64(rng.IntN(40)), fmt.Sprint(rng.IntN(100))
				kind := kv.Insert
				if rng.IntN(4) == 0 {
					kind = kv.Delete
					delete(model, k)
				} else {
					model[k] = v
				}
				if err := w.Write(ctx, kind, []any{k, v}); err != nil {
					t.Fatal(err)
				}
			}
			msgs, err := w.Prepare(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := committer.Commit(ctx, id, msgs); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeCommits(9)
	rowsEqualModel := func() {
		t.Helper()
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
	runsPerBucket := func() map[int32]int {
		snap, _ := tbl.Snapshots().Latest(ctx)
		plan, err := tbl.Planner().Full(ctx, snap, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int32]int{}
		for _, sp := range plan.Splits {
			out[sp.Bucket] = len(mergetree.SortedRuns(sp.Files))
		}
		return out
	}
	if r := runsPerBucket(); r[0] != 9 || r[1] != 9 {
		t.Fatalf("write-only: sorted runs %v, want 9 level-0 files per bucket", r)
	}
	compact := func(full bool) {
		t.Helper()
		rep, err := tbl.Compact(ctx, maintain.CompactOptions{Full: full, CommitUser: "compactor"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Snapshots) != 1 || rep.Rewritten.Files == 0 {
			t.Fatalf("full=%v: report %+v, want one COMPACT snapshot", full, rep)
		}
		rowsEqualModel()
	}
	compact(true)
	if r := runsPerBucket(); r[0] != 1 || r[1] != 1 {
		t.Errorf("after full compaction: sorted runs %v, want 1 per bucket", r)
	}
	// A full compaction of fully compacted buckets without deletes does nothing.
	rep, err := tbl.Compact(ctx, maintain.CompactOptions{Full: true})
	if err != nil || len(rep.Snapshots) != 0 {
		t.Errorf("second full compaction: %+v, %v; want nothing to do", rep, err)
	}
	// Seven more level-0 files per bucket: universal compaction brings the
	// sorted runs down to the trigger.
	writeCommits(7)
	compact(false)
	if r := runsPerBucket(); r[0] > 5 || r[1] > 5 {
		t.Errorf("after universal compaction: sorted runs %v, want at most the trigger 5", r)
	}
}
