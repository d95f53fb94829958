package read_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestLatestChanges writes many changes per key in each commit (-U before
// +U, deletes, re-inserts) to primary-key tables whose streaming splits
// hold several records per key: the raw input changelog, and delta files
// flushed many times per commit by a tiny write buffer. Read with
// SetLatestChanges, each snapshot gives exactly the last change of each
// key it touched: its last value as +I/+U, or -D for a key it deleted,
// never -U, once per key, in the order the records were read.
func TestLatestChanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options map[string]string
	}{
		{"changelog-producer input", map[string]string{"bucket": "2", "changelog-producer": "input"}},
		{"delta files, small write buffer", map[string]string{"bucket": "2", "write-buffer-size": "1 kb", "write-buffer-spillable": "false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fio, err := storage.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := lakecore.NewCatalog(fio).CreateTable(bg, "db", "t", lakecore.TableSpec{
				Fields:      []types.DataField{{Name: "k", Type: types.BigIntType()}, {Name: "v", Type: types.StringType()}},
				PrimaryKeys: []string{"k"}, Options: tc.options,
			})
			if err != nil {
				t.Fatal(err)
			}
			committer := tbl.NewCommitter("test")
			rng := rand.New(rand.NewPCG(7, 8))
			state := map[int64]string{}
			want := map[int64]map[int64]string{} // APPEND snapshot -> key -> last value ("" deleted)
			for id := int64(1); id <= 6; id++ {
				w, err := tbl.NewKeyValueWriter(bg)
				if err != nil {
					t.Fatal(err)
				}
				last := map[int64]string{}
				for range 200 {
					k := int64(rng.IntN(20))
					v := fmt.Sprintf("v%d-%d", id, rng.IntN(1000))
					write := func(kind kv.RowKind, val string) {
						if err := w.Write(bg, kind, []any{k, val}); err != nil {
							t.Fatal(err)
						}
					}
					switch old, ok := state[k]; {
					case !ok:
						write(kv.Insert, v)
						state[k], last[k] = v, v
					case rng.IntN(4) == 0:
						write(kv.Delete, old)
						delete(state, k)
						last[k] = ""
					default:
						write(kv.UpdateBefore, old)
						write(kv.UpdateAfter, v)
						state[k], last[k] = v, v
					}
				}
				msgs, err := w.Prepare(bg)
				if err != nil {
					t.Fatal(err)
				}
				snap, err := committer.Commit(bg, id, msgs)
				if err != nil {
					t.Fatal(err)
				}
				appendID := snap.ID
				if snap.CommitKind == "COMPACT" {
					appendID--
				}
				want[appendID] = last
			}
			r, err := tbl.NewRead([]string{"v"}) // the key is not projected
			if err != nil {
				t.Fatal(err)
			}
			r.SetLatestChanges(true)
			r.SetBatchSize(7)
			ss := tbl.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1, Bounded: true})
			multi := false // some split held more than one record of a key
			for {
				plan, err := ss.Next(bg)
				if errors.Is(err, scan.ErrEndOfScan) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]kv.RowKind{}
				for _, sp := range plan.Splits {
					var n int64
					for _, f := range sp.Files {
						n += f.RowCount
					}
					it, err := r.Open(bg, sp)
					if err != nil {
						t.Fatal(err)
					}
					var rows int64
					for {
						b, err := it.Next(bg)
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							t.Fatal(err)
						}
						if b.Pos.File == "" || len(b.Kinds) != len(b.Rows) {
							t.Fatalf("batch without file position or kinds: %+v", b)
						}
						for i, row := range b.Rows {
							got[row[0].(string)] = b.Kinds[i]
						}
						rows += int64(len(b.Rows))
					}
					_ = it.Close()
					multi = multi || rows < n
				}
				exp := want[plan.Snapshot.ID]
				// Values are unique per write, so a value names its key's change.
				wantKinds := map[string]bool{}
				deletes := 0
				for _, v := range exp {
					if v == "" {
						deletes++
						continue
					}
					wantKinds[v] = true
				}
				var gotDeletes int
				for v, kind := range got {
					switch {
					case kind == kv.UpdateBefore:
						t.Errorf("snapshot %d: -U %s", plan.Snapshot.ID, v)
					case kind == kv.Delete:
						gotDeletes++
					case !wantKinds[v]:
						t.Errorf("snapshot %d: %s %s is not the last value of its key", plan.Snapshot.ID, kind, v)
					default:
						delete(wantKinds, v)
					}
				}
				if len(wantKinds) > 0 {
					t.Errorf("snapshot %d: latest values missing: %v", plan.Snapshot.ID, wantKinds)
				}
				if gotDeletes != deletes {
					t.Errorf("snapshot %d: %d deletes, want %d", plan.Snapshot.ID, gotDeletes, deletes)
				}
			}
			if !multi {
				t.Error("no split held several records of a key: the test does not exercise the collapse")
			}
		})
	}
}
