package lakecore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestTableMaintenance runs each maintenance method of the facade once on
// a small partitioned table and checks the rows survive.
func TestTableMaintenance(t *testing.T) {
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "m", lakecore.TableSpec{
		Fields:        []types.DataField{{Name: "id", Type: types.IntType()}, {Name: "dt", Type: types.StringType()}},
		PartitionKeys: []string{"dt"},
		Options:       map[string]string{"partition.expiration-time": "1 d", "compaction.min.file-num": "3"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := tb.NewCommitter("facade-test")
	for i := 0; i < 4; i++ {
		w, err := tb.NewWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range []string{"2020-01-01", "2999-01-01"} {
			if err := w.Write(ctx, []any{int32(i), dt}); err != nil {
				t.Fatal(err)
			}
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Commit(ctx, int64(i+1), msgs); err != nil {
			t.Fatal(err)
		}
	}

	rep, err := tb.Compact(ctx, maintain.CompactOptions{})
	if err != nil || rep.Tasks != 2 {
		t.Fatalf("compact: %v %v", err, rep)
	}
	rep, err = tb.ExpirePartitions(ctx, maintain.ExpirePartitionsOptions{})
	if err != nil || !slices.Equal(rep.PartitionsDropped, []string{"dt=2020-01-01"}) {
		t.Fatalf("expire partitions: %v %v", err, rep)
	}
	latest, err := tb.Snapshots().Latest(ctx)
	if err != nil || latest.CommitKind != snapshot.CommitOverwrite {
		t.Fatalf("latest %+v %v", latest, err)
	}
	rep, err = tb.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMin: 1, OlderThan: time.Now().Add(time.Minute)})
	if err != nil || rep.SnapshotsExpired != 5 || rep.RemovedData.Files != 9 { // 8 compaction inputs, the dropped partition's output
		t.Fatalf("expire snapshots: %v %v", err, rep)
	}
	rep, err = tb.RemoveOrphanFiles(ctx, maintain.RemoveOrphanFilesOptions{DryRun: true})
	if err != nil || len(rep.Removed) != 0 {
		t.Fatalf("remove orphan files: %v %v", err, rep)
	}
	rows, err := tb.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	for _, r := range rows {
		if r[1] != "2999-01-01" {
			t.Errorf("row %v of a dropped partition", r)
		}
		ids = append(ids, r[0].(int32))
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int32{0, 1, 2, 3}) {
		t.Errorf("ids %v", ids)
	}
}
