package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
)

// TestInputChangelog writes changes (with -U before +U, as a CDC source
// sends them) into a table with changelog-producer input: streaming from
// snapshot 1 must give back exactly the changes of each commit with their
// row kinds, -U included, while the merged read holds the last state.
func TestInputChangelog(t *testing.T) {
	ctx := context.Background()
	tbl := createPKTable(t, map[string]string{"bucket": "2", "changelog-producer": "input"})
	committer := tbl.NewCommitter("test")
	rng := rand.New(rand.NewPCG(3, 4))
	written := map[int64][]string{} // APPEND snapshot id -> changes
	state := map[int64]string{}
	for id := int64(1); id <= 8; id++ {
		w, err := tbl.NewKeyValueWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var changes []string
		for range 20 {
			k := int64(rng.IntN(15))
			v := fmt.Sprintf("v%d", rng.IntN(100))
			var kinds []kv.RowKind
			var rows [][]any
			switch old, ok := state[k]; {
			case !ok:
				kinds, rows = []kv.RowKind{kv.Insert}, [][]any{{k, v}}
				state[k] = v
			case rng.IntN(3) == 0:
				kinds, rows = []kv.RowKind{kv.Delete}, [][]any{{k, old}}
				delete(state, k)
			default:
				kinds, rows = []kv.RowKind{kv.UpdateBefore, kv.UpdateAfter}, [][]any{{k, old}, {k, v}}
				state[k] = v
			}
			for i := range kinds {
				if err := w.Write(ctx, kinds[i], rows[i]); err != nil {
					t.Fatal(err)
				}
				changes = append(changes, fmt.Sprint(kinds[i], rows[i]))
			}
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := committer.Commit(ctx, id, msgs)
		if err != nil {
			t.Fatal(err)
		}
		appendID := snap.ID
		if snap.CommitKind == "COMPACT" {
			appendID--
		}
		written[appendID] = changes
	}
	got := map[int64][]string{}
	ss := tbl.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1, Bounded: true})
	for {
		plan, err := ss.Next(ctx)
		if errors.Is(err, scan.ErrEndOfScan) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.ReadChanges(ctx, plan, func(kinds []kv.RowKind, rows [][]any) error {
			for i := range rows {
				got[plan.Snapshot.ID] = append(got[plan.Snapshot.ID], fmt.Sprint(kinds[i], rows[i]))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range written {
		g := slices.Clone(got[id])
		slices.Sort(g)
		slices.Sort(want)
		if !slices.Equal(g, want) {
			t.Errorf("snapshot %d: changelog\n %v\nwant the written changes\n %v", id, g, want)
		}
	}
	for id := range got {
		if _, ok := written[id]; !ok && len(got[id]) > 0 {
			t.Errorf("snapshot %d (COMPACT) streamed %d changelog records", id, len(got[id]))
		}
	}
	var want [][]any
	for k, v := range state {
		want = append(want, []any{k, v})
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, rows, want)
}
