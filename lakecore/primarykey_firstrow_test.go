package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// TestFirstRowWrite writes random inserts and updates (keys repeated within
// and across commits) into first-row tables over many commits. A key keeps
// its first row. Each commit's APPEND snapshot shows the rows of the commit
// before (level 0 is invisible to batch reads), its COMPACT snapshot those
// after it, with no level-0 file left; without compaction in the writer
// (write-only) new keys appear only once a compaction job ran. With
// changelog-producer lookup the changelog from snapshot 1 holds each key's
// first row exactly once, in COMPACT snapshots only. A -D or -U is
// refused alone with ErrInvalidRow unless ignore-delete drops it.
func TestFirstRowWrite(t *testing.T) {
	for _, c := range []struct {
		name      string
		options   map[string]string
		writeOnly bool
	}{
		{"none_b2", map[string]string{"bucket": "2"}, false},
		{"lookup_b1", map[string]string{"bucket": "1", "changelog-producer": "lookup", "num-sorted-run.compaction-trigger": "3"}, false},
		{"lookup_dynamic_bucket", map[string]string{"bucket": "-1", "changelog-producer": "lookup", "dynamic-bucket.target-row-num": "10"}, false},
		{"lookup_ignore_delete", map[string]string{"bucket": "2", "changelog-producer": "lookup", "ignore-delete": "true"}, false},
		{"lookup_write_only_compact_job", map[string]string{"bucket": "2", "changelog-producer": "lookup", "write-only": "true"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			opts := map[string]string{"merge-engine": "first-row"}
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
			committer := tbl.NewCommitter("test")
			model, visible := map[int64][]any{}, map[int64][]any{}
			rows := func(m map[int64][]any) [][]any {
				var out [][]any
				for _, r := range m {
					out = append(out, r)
				}
				return out
			}
			rng := rand.New(rand.NewPCG(9, uint64(len(c.name))))
			writer, err := tbl.NewKeyValueWriter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for id := int64(1); id <= 20; id++ {
				if rng.IntN(4) == 0 {
					if writer, err = tbl.NewKeyValueWriter(ctx); err != nil {
						t.Fatal(err)
					}
				}
				for i := range 10 + rng.IntN(20) {
					k := int64(rng.IntN(50))
					row := []any{k, fmt.Sprintf("c%d-%d", id, i)}
					if i == 3 {
						err := writer.Write(ctx, kv.Delete, row)
						if opts["ignore-delete"] == "true" {
							if err != nil {
								t.Fatalf("-D with ignore-delete: %v", err)
							}
						} else if !errors.Is(err, write.ErrInvalidRow) || !errors.Is(err, mergetree.ErrRetractNotAccepted) {
							t.Fatalf("-D of a first-row table: %v, want ErrInvalidRow and ErrRetractNotAccepted", err)
						}
						continue
					}
					kind := kv.Insert
					if rng.IntN(3) == 0 {
						kind = kv.UpdateAfter
					}
					if err := writer.Write(ctx, kind, row); err != nil {
						t.Fatal(err)
					}
					if _, ok := model[k]; !ok {
						model[k] = row
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
				if c.writeOnly {
					got, err := tbl.ReadAll(ctx, snap.ID)
					if err != nil {
						t.Fatal(err)
					}
					assertRows(t, got, rows(visible))
					if id%3 != 0 {
						continue
					}
					if _, err := tbl.Compact(ctx, maintain.CompactOptions{Committer: committer}); err != nil {
						t.Fatal(err)
					}
					if snap, err = tbl.Snapshots().Latest(ctx); err != nil {
						t.Fatal(err)
					}
					if writer, err = tbl.NewKeyValueWriter(ctx); err != nil {
						t.Fatal(err)
					}
				} else {
					if snap.CommitKind != snapshot.CommitCompact {
						t.Fatalf("commit %d: last snapshot %d is %s, want COMPACT", id, snap.ID, snap.CommitKind)
					}
					before, err := tbl.ReadAll(ctx, snap.ID-1)
					if err != nil {
						t.Fatal(err)
					}
					assertRows(t, before, rows(visible))
				}
				for k, r := range model {
					visible[k] = r
				}
				got, err := tbl.ReadAll(ctx, snap.ID)
				if err != nil {
					t.Fatal(err)
				}
				assertRows(t, got, rows(model))
				assertNoLevel0(t, tbl, snap)
				if opts["changelog-producer"] == "lookup" {
					assertLookupChangelogFiles(t, tbl, snap)
				}
			}
			if opts["changelog-producer"] != "lookup" {
				return
			}
			if c.writeOnly {
				if _, err := tbl.Compact(ctx, maintain.CompactOptions{Committer: committer}); err != nil {
					t.Fatal(err)
				}
			}
			log := map[int64][]any{}
			streamFromFirst(t, tbl, func(plan *scan.StreamPlan, kinds []kv.RowKind, rs [][]any) error {
				for i, r := range rs {
					k := r[0].(int64)
					if _, dup := log[k]; dup || kinds[i].IsRetract() || plan.Snapshot.CommitKind != snapshot.CommitCompact {
						return fmt.Errorf("snapshot %d (%s): changelog %s %v (key seen before: %v)", plan.Snapshot.ID, plan.Snapshot.CommitKind, kinds[i], r, dup)
					}
					log[k] = r
				}
				return nil
			})
			assertRows(t, rows(log), rows(model))
		})
	}
}
