package reliability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// rolePKWriter is a child that writes batches of changes to a primary-key
// table (TestPrimaryKeyWriterProcesses, TestPrimaryKeyWriterKilled).
const rolePKWriter = "pk-writer"

// pkBatch returns the changes of batch b of writer w: the same on every
// run, so that the parent can replay exactly what each committed snapshot
// holds. Keys 0..59 are shared by every writer; a fifth are deletes.
func pkBatch(w, b int) (kinds []kv.RowKind, rows [][]any) {
	rng := rand.New(rand.NewPCG(uint64(w), uint64(b)))
	for range 30 {
		k := int64(rng.IntN(60))
		if rng.IntN(5) == 0 {
			kinds, rows = append(kinds, kv.Delete), append(rows, []any{k, nil})
			continue
		}
		kinds, rows = append(kinds, kv.UpdateAfter), append(rows, []any{k, fmt.Sprintf("w%d-b%d-%d", w, b, rng.IntN(1000))})
	}
	return kinds, rows
}

func pkUser(w int) string { return fmt.Sprintf("pk-writer-%d", w) }

// committedBatches returns, per APPEND snapshot id of user, its identifier.
func committedBatches(ctx context.Context, tbl *lakecore.Table, user string) (map[int64]int64, error) {
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int64]int64{}
	for _, id := range ids {
		s, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if s.CommitUser == user && s.CommitKind == snapshot.CommitAppend {
			out[id] = s.CommitIdentifier
		}
	}
	return out, nil
}

// runPKWriter writes batches 1..c.Batches of writer c.Writer, going on
// after the last batch the table holds (a restart after a kill), each
// committed with its batch number as identifier. A commit refused with
// ErrSequenceConflict is written again by a new writer. With c.KillAfter
// it kills itself with SIGKILL after a random time up to that many
// milliseconds.
func runPKWriter(c childEnv) int {
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "pk-writer %d: %v\n", c.Writer, err)
		return 2
	}
	cat, err := lakecore.OpenCatalog(ctx, c.Warehouse, c.S3.config())
	if err != nil {
		return fail(err)
	}
	tbl, err := cat.OpenTable(ctx, c.Database, c.Table)
	if err != nil {
		return fail(err)
	}
	if c.KillAfter > 0 {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(c.Writer)))
		time.AfterFunc(time.Duration(rng.IntN(c.KillAfter)+1)*time.Millisecond, func() {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		})
	}
	done, err := committedBatches(ctx, tbl, pkUser(c.Writer))
	if err != nil {
		return fail(err)
	}
	next := int64(1)
	for _, b := range done {
		next = max(next, b+1)
	}
	committer := tbl.NewCommitter(pkUser(c.Writer))
	for b := int(next); b <= c.Batches; b++ {
		kinds, rows := pkBatch(c.Writer, b)
		for {
			w, err := tbl.NewKeyValueWriter(ctx)
			if err != nil {
				return fail(err)
			}
			for i := range rows {
				if err := w.Write(ctx, kinds[i], rows[i]); err != nil {
					return fail(err)
				}
			}
			msgs, err := w.Prepare(ctx)
			if err != nil {
				return fail(err)
			}
			_, err = committer.Commit(ctx, int64(b), msgs)
			if errors.Is(err, commit.ErrSequenceConflict) {
				_ = w.Abort(ctx)
				continue
			}
			if err != nil && !errors.Is(err, commit.ErrCompactionConflict) {
				return fail(fmt.Errorf("batch %d: %w", b, err))
			}
			break
		}
	}
	return 0
}

func createPKTestTable(t *testing.T, tgt concTarget) {
	t.Helper()
	cat, err := lakecore.OpenCatalog(context.Background(), tgt.warehouse, tgt.s3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(context.Background(), "db", "pk", lakecore.TableSpec{
		Fields:      []types.DataField{{Name: "k", Type: types.BigIntType()}, {Name: "v", Type: types.StringType()}},
		PrimaryKeys: []string{"k"}, Options: map[string]string{"bucket": "2", "num-sorted-run.compaction-trigger": "3"},
	}); err != nil {
		t.Fatal(err)
	}
}

// checkPKTable replays the committed batches of every writer in snapshot
// order onto a map and checks the table against it at every APPEND
// snapshot: no committed change lost, none applied twice (a batch number
// committed once per writer), none out of order. It returns the batches
// committed per writer.
func checkPKTable(t *testing.T, tgt concTarget, writers int) map[int]int {
	t.Helper()
	ctx := context.Background()
	cat, err := lakecore.OpenCatalog(ctx, tgt.warehouse, tgt.s3)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.OpenTable(ctx, "db", "pk")
	if err != nil {
		t.Fatal(err)
	}
	type batch struct{ writer, batch int }
	bySnapshot := map[int64]batch{}
	counts := map[int]int{}
	for w := range writers {
		done, err := committedBatches(ctx, tbl, pkUser(w))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]int64{}
		for id, b := range done {
			if prev, ok := seen[b]; ok {
				t.Errorf("writer %d: batch %d committed twice, in snapshots %d and %d", w, b, prev, id)
			}
			seen[b] = id
			bySnapshot[id] = batch{w, int(b)}
		}
		counts[w] = len(done)
	}
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	model := map[int64]string{}
	for _, id := range ids {
		b, ok := bySnapshot[id]
		if !ok {
			continue
		}
		kinds, rows := pkBatch(b.writer, b.batch)
		for i := range rows {
			if kinds[i] == kv.Delete {
				delete(model, rows[i][0].(int64))
			} else {
				model[rows[i][0].(int64)] = rows[i][1].(string)
			}
		}
		got, err := tbl.ReadAll(ctx, id)
		if err != nil {
			t.Fatalf("snapshot %d: %v", id, err)
		}
		gotMap := map[int64]string{}
		for _, r := range got {
			if _, dup := gotMap[r[0].(int64)]; dup {
				t.Errorf("snapshot %d: key %d twice", id, r[0])
			}
			gotMap[r[0].(int64)] = r[1].(string)
		}
		if len(gotMap) != len(model) {
			t.Errorf("snapshot %d (writer %d, batch %d): %d rows, the model %d", id, b.writer, b.batch, len(gotMap), len(model))
		}
		for k, v := range model {
			if gotMap[k] != v {
				t.Errorf("snapshot %d (writer %d, batch %d): key %d = %q, the model %q", id, b.writer, b.batch, k, gotMap[k], v)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	return counts
}

// TestPrimaryKeyWriterProcesses runs 4 writer processes on one primary-key
// table at once (local disk and the S3 server), each committing 10 batches
// of changes to shared keys with inline compaction; every state the table
// went through equals the committed batches replayed in snapshot order.
func TestPrimaryKeyWriterProcesses(t *testing.T) {
	skipShort(t)
	for name, target := range map[string]func(*testing.T) concTarget{"local": localTarget, "s3": s3Target} {
		t.Run(name, func(t *testing.T) {
			tgt := target(t)
			createPKTestTable(t, tgt)
			const writers, batches = 4, 10
			var wg sync.WaitGroup
			errs := make([]error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd, _, err := startChild(rolePKWriter, childEnv{Warehouse: tgt.warehouse, S3: toChildS3(tgt.s3), Database: "db", Table: "pk", Writer: w, Batches: batches})
					if err == nil {
						err = cmd.Wait()
					}
					errs[w] = err
				}()
			}
			wg.Wait()
			for w, err := range errs {
				if err != nil {
					t.Fatalf("writer %d: %v", w, err)
				}
			}
			counts := checkPKTable(t, tgt, writers)
			for w := range writers {
				if counts[w] != batches {
					t.Errorf("writer %d: %d batches committed, want %d", w, counts[w], batches)
				}
			}
		})
	}
}

// TestPrimaryKeyWriterKilled SIGKILLs two writer processes at random
// moments (while buffering, writing files, compacting or committing) and
// restarts each until all its batches are in; each restart goes on after
// the last batch its user committed. The table must hold every batch
// exactly once, in an order consistent with the snapshots.
func TestPrimaryKeyWriterKilled(t *testing.T) {
	skipShort(t)
	t.Run("local", func(t *testing.T) { runPKWriterKilled(t, localTarget(t)) })
	t.Run("s3", func(t *testing.T) { runPKWriterKilled(t, s3Target(t)) })
}

func runPKWriterKilled(t *testing.T, tgt concTarget) {
	createPKTestTable(t, tgt)
	const writers, batches = 2, 25
	kills := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 80; round++ {
				killAfter := 80
				if round >= 60 {
					killAfter = 0 // finish
				}
				cmd, _, err := startChild(rolePKWriter, childEnv{Warehouse: tgt.warehouse, S3: toChildS3(tgt.s3), Database: "db", Table: "pk", Writer: w, Batches: batches, KillAfter: killAfter})
				if err != nil {
					t.Error(err)
					return
				}
				err = cmd.Wait()
				if err == nil {
					return
				}
				var exit interface{ Sys() any }
				if errors.As(err, &exit) {
					if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
						mu.Lock()
						kills++
						mu.Unlock()
						continue
					}
				}
				t.Errorf("writer %d, round %d: %v", w, round, err)
				return
			}
		}()
	}
	wg.Wait()
	counts := checkPKTable(t, tgt, writers)
	for w := range writers {
		if counts[w] != batches {
			t.Errorf("writer %d: %d batches committed, want %d", w, counts[w], batches)
		}
	}
	if kills == 0 {
		t.Error("no writer was killed: the test did not test recovery")
	}
	t.Logf("%d kills; batches per writer %v", kills, counts)
}
