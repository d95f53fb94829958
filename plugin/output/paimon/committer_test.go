package paimon

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// gateFileIO holds the first snapshot create until release is closed.
type gateFileIO struct {
	storage.FileIO
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func (g *gateFileIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if strings.Contains(p, "/snapshot/snapshot-") {
		g.once.Do(func() {
			close(g.started)
			<-g.release
		})
	}
	return g.FileIO.WriteExclusive(ctx, p, data)
}

// testTable creates an unpartitioned table (id BIGINT) on fio.
func testTable(t *testing.T, fio storage.FileIO) *lakecore.Table {
	t.Helper()
	tbl, err := lakecore.NewCatalog(fio).CreateTable(context.Background(), "default", "t",
		lakecore.TableSpec{Fields: types.MustParse("ROW<id BIGINT>").Fields})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// prepared writes rows ids from..from+n-1 into new data files and returns
// the commit request for them.
func prepared(t *testing.T, tbl *lakecore.Table, from, n int64) *commitRequest {
	t.Helper()
	ctx := context.Background()
	s := tbl.Schema()
	w, err := write.NewTableWriter(tbl.FileIO(), tbl.Path(), s, write.OptionsFromSchema(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	for id := from; id < from+n; id++ {
		if err := w.Write(ctx, []any{id}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &commitRequest{msgs: msgs, rows: n, files: 1}
}

// TestGroupCommit: while a commit runs, the batches that become ready are
// committed together as the next snapshot, each answered with it.
func TestGroupCommit(t *testing.T) {
	local, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gate := &gateFileIO{FileIO: local, started: make(chan struct{}), release: make(chan struct{})}
	tbl := testTable(t, gate)
	g := newGroupCommitter(tbl.NewCommitter("u"), tbl.Snapshots(), 7, 16, nil, newOutputMetrics(nil, Maintenance{}), 0, nil)
	go g.run()

	ctx := context.Background()
	results := make([]commitResult, 4)
	var wg sync.WaitGroup
	submit := func(i int, req *commitRequest) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = g.submit(ctx, req)
		}()
	}
	submit(0, prepared(t, tbl, 0, 10))
	<-gate.started // the first commit is writing its snapshot
	for i := 1; i < 4; i++ {
		submit(i, prepared(t, tbl, int64(i*100), 5))
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(g.reqs) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("requests not queued")
		}
		time.Sleep(time.Millisecond)
	}
	close(gate.release)
	wg.Wait()
	if err := g.close(ctx); err != nil {
		t.Fatal(err)
	}

	for i, r := range results {
		if r.err != nil || r.snap == nil {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	if s := results[0].snap; s.ID != 1 || s.CommitIdentifier != 7 || *s.DeltaRecordCount != 10 {
		t.Errorf("first snapshot %d, identifier %d, %d rows", s.ID, s.CommitIdentifier, *s.DeltaRecordCount)
	}
	for i := 1; i < 4; i++ {
		if results[i].snap != results[1].snap {
			t.Errorf("request %d committed in snapshot %d, request 1 in %d", i, results[i].snap.ID, results[1].snap.ID)
		}
	}
	if s := results[1].snap; s.ID != 2 || s.CommitIdentifier != 8 || *s.DeltaRecordCount != 15 || s.CommitUser != "u" {
		t.Errorf("group snapshot %d, identifier %d, %d rows, user %s", s.ID, s.CommitIdentifier, *s.DeltaRecordCount, s.CommitUser)
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil || len(rows) != 25 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}

// TestCloseCommitsQueued: Close commits what is queued before it returns,
// and refuses what comes after.
func TestCloseCommitsQueued(t *testing.T) {
	local, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gate := &gateFileIO{FileIO: local, started: make(chan struct{}), release: make(chan struct{})}
	tbl := testTable(t, gate)
	g := newGroupCommitter(tbl.NewCommitter("u"), tbl.Snapshots(), 1, 16, nil, newOutputMetrics(nil, Maintenance{}), 0, nil)
	go g.run()
	ctx := context.Background()
	res := make(chan commitResult, 2)
	go func() { res <- g.submit(ctx, prepared(t, tbl, 0, 3)) }()
	<-gate.started
	go func() { res <- g.submit(ctx, prepared(t, tbl, 10, 3)) }()
	for len(g.reqs) < 1 {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- g.close(ctx) }()
	close(gate.release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if r := <-res; r.err != nil {
			t.Fatalf("queued request: %v", r.err)
		}
	}
	if r := g.submit(ctx, prepared(t, tbl, 20, 1)); r.err == nil || !r.definite {
		t.Errorf("submit after close: %+v", r)
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil || len(rows) != 6 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}
