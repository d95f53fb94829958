package commit_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

const tablePath = "db.db/t"

// createTable creates an append table partitioned by an INT column p.
func createTable(t testing.TB, fio storage.FileIO, options map[string]string) {
	t.Helper()
	s := schema.NewTableSchema([]types.DataField{
		{Name: "id", Type: types.BigIntType()},
		{Name: "p", Type: types.IntType()},
	}, []string{"p"}, options, nil)
	if _, err := schema.NewManager(fio, tablePath).Create(context.Background(), s); err != nil {
		t.Fatalf("create table: %v", err)
	}
}

func localFIO(t testing.TB) *storage.Local {
	t.Helper()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return fio
}

// faultyAfterOneCommit creates the table through a faultfs.FS over local
// storage, with no faults yet, and commits file a (identifier 1) with a
// committer of o; tests add the faults the next commit meets.
func faultyAfterOneCommit(t testing.TB, o commit.Options) (*storage.Local, *faultfs.FS, *commit.Committer) {
	t.Helper()
	local := localFIO(t)
	fio := faultfs.New(local, 1)
	createTable(t, fio, nil)
	cm := commit.New(fio, tablePath, o)
	if _, err := cm.Commit(context.Background(), 1, []commit.Message{msg(1, file("a", 1))}); err != nil {
		t.Fatal(err)
	}
	return local, fio, cm
}

func part(p int32) []byte {
	b, err := binrow.Serialize([]types.DataType{types.IntType()}, []any{p})
	if err != nil {
		panic(err)
	}
	return b
}

// file is the DataFileMeta of a (not actually written) data file: the
// committer never reads data files.
func file(name string, rows int64) manifest.DataFileMeta {
	ct := int64(1_700_000_000_000)
	zero := int64(0)
	src := int32(0)
	cols := []string{}
	return manifest.DataFileMeta{
		FileName: name, FileSize: 1000 + rows, RowCount: rows,
		MinKey: binrow.EmptyRow, MaxKey: binrow.EmptyRow, KeyStats: manifest.EmptyStats(), ValueStats: manifest.EmptyStats(),
		MinSequenceNumber: 0, MaxSequenceNumber: rows - 1, ExtraFiles: []string{},
		CreationTimeMillis: &ct, DeleteRowCount: &zero, FileSource: &src, ValueStatsCols: &cols,
	}
}

func msg(p int32, files ...manifest.DataFileMeta) commit.Message {
	return commit.Message{Partition: part(p), Bucket: 0, TotalBuckets: -1, NewFiles: files}
}

// fastRetries keeps contended tests quick; the defaults (10 ms .. 10 s, 10
// retries) would make them slow, not different.
func fastRetries(user string) commit.Options {
	return commit.Options{CommitUser: user, MaxRetries: 1000, MinRetryWait: time.Millisecond, MaxRetryWait: 20 * time.Millisecond}
}

// live returns the live files of the latest snapshot, read by the scan
// planner (independent of the committer), sorted by name.
func live(t testing.TB, fio storage.FileIO) []manifest.Entry {
	t.Helper()
	ctx := context.Background()
	s, err := snapshot.NewManager(fio, tablePath).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		return nil
	}
	e, err := scan.NewPlanner(fio, tablePath).LiveEntries(ctx, s, nil)
	if err != nil {
		t.Fatalf("live entries: %v", err)
	}
	sort.Slice(e, func(i, j int) bool { return e[i].File.FileName < e[j].File.FileName })
	return e
}

func names(entries []manifest.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.File.FileName
	}
	return out
}

// checkChain checks that the snapshots are 1..n without a gap, that every
// (user, identifier) in want is committed exactly once and nothing else,
// and that the latest total record count is totalRows.
func checkChain(t testing.TB, fio storage.FileIO, want map[string]int, totalRows int64) {
	t.Helper()
	ctx := context.Background()
	sm := snapshot.NewManager(fio, tablePath)
	ids, err := sm.ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range want {
		n += c
	}
	if len(ids) != n {
		t.Fatalf("%d snapshots, want %d", len(ids), n)
	}
	seen := map[string]bool{}
	var total int64
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("snapshot ids %v are not 1..%d", ids, n)
		}
		s, err := sm.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		k := fmt.Sprintf("%s/%d", s.CommitUser, s.CommitIdentifier)
		if seen[k] {
			t.Fatalf("%s committed twice (snapshot %d)", k, id)
		}
		seen[k] = true
		total += *s.DeltaRecordCount
		if *s.TotalRecordCount != total {
			t.Fatalf("snapshot %d: total record count %d, deltas sum to %d", id, *s.TotalRecordCount, total)
		}
	}
	for user, c := range want {
		for i := 1; i <= c; i++ {
			if !seen[fmt.Sprintf("%s/%d", user, i)] {
				t.Fatalf("%s/%d missing", user, i)
			}
		}
	}
	if total != totalRows {
		t.Fatalf("total record count %d, want %d", total, totalRows)
	}
}
