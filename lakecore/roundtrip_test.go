package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// writeRows writes rows with the table's writer and returns the messages
// to commit.
func writeRows(t *testing.T, tb *lakecore.Table, rows [][]any) []commit.Message {
	t.Helper()
	ctx := context.Background()
	w, err := tb.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func events(day string, from, n int) [][]any {
	out := make([][]any, n)
	for i := range out {
		out[i] = []any{day, int64(from + i), fmt.Sprintf("m%d", from+i)}
	}
	return out
}

// streamRows reads the rows of one stream plan.
func streamRows(t *testing.T, tb *lakecore.Table, p *scan.StreamPlan) [][]any {
	t.Helper()
	r, err := tb.NewRead(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for _, sp := range p.Splits {
		it, err := r.Open(context.Background(), sp)
		if err != nil {
			t.Fatal(err)
		}
		for {
			next, err := it.Next(context.Background())
			rows := next.Rows
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rows...)
		}
		it.Close()
	}
	return out
}

// TestWriteCommitStream: rows written and committed through the facade come
// out of ReadAll and, snapshot by snapshot, of streams, with OVERWRITE
// skipped unless asked for, and in write order within a fixed bucket.
func TestWriteCommitStream(t *testing.T) {
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "events", lakecore.TableSpec{
		Fields: eventFields, PartitionKeys: []string{"day"}, Options: map[string]string{"bucket": "2", "bucket-key": "id"},
	})
	if err != nil {
		t.Fatal(err)
	}
	stream := tb.NewStreamScan(scan.StreamOptions{})
	overwrites := tb.NewStreamScan(scan.StreamOptions{Mode: scan.ModeLatest, ReadOverwrite: true})
	for _, s := range []*scan.StreamScanner{stream, overwrites} {
		if p, err := s.Next(ctx); p != nil || err != nil {
			t.Fatalf("stream of an empty table: %+v, %v", p, err)
		}
	}
	committer := tb.NewCommitter("roundtrip")

	first := append(events("mon", 0, 5), events("tue", 100, 3)...)
	if _, err := committer.Commit(ctx, 1, writeRows(t, tb, first)); err != nil {
		t.Fatal(err)
	}
	second := events("mon", 5, 2)
	if _, err := committer.Commit(ctx, 2, writeRows(t, tb, second)); err != nil {
		t.Fatal(err)
	}
	monRow, err := binrow.Serialize([]types.DataType{types.StringType()}, []any{"mon"})
	if err != nil {
		t.Fatal(err)
	}
	replaced := events("mon", 50, 1)
	s3, err := committer.Overwrite(ctx, 3, [][]byte{monRow}, writeRows(t, tb, replaced))
	if err != nil {
		t.Fatal(err)
	}
	if s3.CommitKind != snapshot.CommitOverwrite {
		t.Fatalf("overwrite committed as %s", s3.CommitKind)
	}

	// The default stream: APPENDs 1 and 2, the OVERWRITE as an empty plan.
	want := [][][]any{first, second, nil}
	for i, w := range want {
		p, err := stream.Next(ctx)
		if err != nil || p == nil || p.Snapshot.ID != int64(i+1) || p.Full {
			t.Fatalf("plan %d: %+v, %v", i+1, p, err)
		}
		assertRows(t, streamRows(t, tb, p), w)
	}
	if p, err := stream.Next(ctx); p != nil || err != nil {
		t.Errorf("stream after the last snapshot: %+v, %v", p, err)
	}
	// With ReadOverwrite the overwrite's new rows (not its deletions).
	for i, w := range want {
		p, err := overwrites.Next(ctx)
		if err != nil || p == nil {
			t.Fatalf("plan %d: %v", i+1, err)
		}
		if i == 2 {
			w = replaced
		}
		assertRows(t, streamRows(t, tb, p), w)
	}

	// The table now holds tue and the replacement of mon; within each
	// bucket rows come in write order.
	all, err := tb.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, all, append(events("tue", 100, 3), replaced...))
	before, err := tb.ReadAll(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, before, append(slices.Clone(first), second...))
	plan, err := tb.Planner().Full(ctx, mustSnapshot(t, tb, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tb.NewRead([]string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range plan.Splits {
		it, err := r.Open(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, row := range drain(t, it) {
			ids = append(ids, row[0].(int64))
		}
		it.Close()
		if !slices.IsSorted(ids) {
			t.Errorf("partition %v bucket %d: ids %v not in write order", sp.PartitionValues, sp.Bucket, ids)
		}
	}
}

func mustSnapshot(t *testing.T, tb *lakecore.Table, id int64) *snapshot.Snapshot {
	t.Helper()
	s, err := tb.Snapshots().Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
