package paimon

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// expiringFileIO runs expire once, right before the first create of
// snapshot-2 through it.
type expiringFileIO struct {
	storage.FileIO
	once   sync.Once
	expire func()
}

func (e *expiringFileIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if strings.HasSuffix(p, "/snapshot/snapshot-2") {
		e.once.Do(e.expire)
	}
	return e.FileIO.WriteExclusive(ctx, p, data)
}

// TestStaleSnapshotIsDeliveredAgain: the group's commit builds on snapshot
// 1; meanwhile another writer commits 2, 3 and 4 and expiry deletes 1 to 3,
// so the group's exclusive create of snapshot-2 succeeds on a stale base.
// The committer deletes it and cannot tell whether its files are in the
// table; the output must then fail the batches with an unknown outcome
// (delivered again, files kept), not acknowledge them and not commit the
// same files again.
func TestStaleSnapshotIsDeliveredAgain(t *testing.T) {
	ctx := context.Background()
	local, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fio := &expiringFileIO{FileIO: local}
	tbl := testTable(t, fio)
	g := newGroupCommitter(tbl.NewCommitter("u"), tbl.Snapshots(), 1, 16, nil, newOutputMetrics(nil, Maintenance{}), 0, nil)
	go g.run()
	defer func() { _ = g.close(ctx) }()

	if res := g.submit(ctx, prepared(t, tbl, 0, 10)); res.err != nil || res.snap.ID != 1 {
		t.Fatalf("first commit: %+v", res)
	}
	// The other writer and the expiry work on the storage directly.
	direct, err := lakecore.NewCatalog(local).OpenTable(ctx, "default", "t")
	if err != nil {
		t.Fatal(err)
	}
	fio.expire = func() {
		w := direct.NewCommitter("other")
		for i := int64(1); i <= 3; i++ {
			if _, err := w.Commit(ctx, i, prepared(t, direct, 1000*i, 1).msgs); err != nil {
				t.Error(err)
			}
		}
		for id := int64(1); id <= 3; id++ {
			if err := tbl.Snapshots().Delete(ctx, id); err != nil {
				t.Error(err)
			}
		}
		if err := tbl.Snapshots().WriteEarliestHint(ctx, 4); err != nil {
			t.Error(err)
		}
	}
	req := prepared(t, tbl, 100, 5)
	res := g.submit(ctx, req)
	if res.err == nil || !errors.Is(res.err, commit.ErrStaleSnapshot) || res.definite {
		t.Fatalf("stale commit: err %v, definite %v; want an unknown outcome wrapping ErrStaleSnapshot", res.err, res.definite)
	}
	for _, m := range req.msgs {
		for _, f := range m.NewFiles {
			if ok, err := storage.Exists(ctx, local, tbl.Path()+"/bucket-0/"+f.FileName); err != nil || !ok {
				t.Errorf("data file %s of the unknown commit is gone (%v): it must be kept", f.FileName, err)
			}
		}
	}
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil || len(ids) != 1 || ids[0] != 4 {
		t.Fatalf("snapshots %v (%v), want only 4", ids, err)
	}
	// Delivered again (as new files), the rows land once.
	if res := g.submit(ctx, prepared(t, tbl, 100, 5)); res.err != nil {
		t.Fatalf("second delivery: %v", res.err)
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if id := r[0].(int64); id >= 100 && id < 105 {
			n++
		}
	}
	if n != 5 {
		t.Errorf("the redelivered batch is in the table %d times over its 5 rows", n)
	}
}
