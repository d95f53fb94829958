package paimon

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// offsetMessage is an opMessage at source offset pos (metadata offset).
func offsetMessage(op, body string, pos int) *service.Message {
	m := opMessage(op, body)
	m.MetaSetMut("offset", fmt.Sprint(pos))
	return m
}

// TestTruncate: a message whose operation is "truncate" empties the table
// at its place in the batch, in one OVERWRITE snapshot: the rows written
// before it (earlier batches, and earlier messages of its batch, which are
// not even converted) are gone, those after it stay. Alone it writes what
// Java's TRUNCATE TABLE writes: an OVERWRITE deleting every file and adding
// none. source_position makes a replay of it a no-op, and unchanged_columns
// after it in the batch finds no pre-truncate row to keep values from.
func TestTruncate(t *testing.T) {
	ctx := context.Background()
	o := openKVOutput(t, "  bucket: 2", `unchanged_columns: '${! @keep.or("") }'
source_position: { stream: pg, offset: '${! @offset }' }
maintenance: { enabled: false, table_metrics: false }`)
	write := func(msgs ...*service.Message) error { return o.WriteBatch(ctx, service.MessageBatch(msgs)) }
	latest := func() *snapshot.Snapshot {
		t.Helper()
		s, err := o.staticSink().tbl.Snapshots().Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := write(offsetMessage("insert", `{"id":1,"v":"a"}`, 1), offsetMessage("insert", `{"id":2,"v":"b"}`, 2),
		offsetMessage("insert", `{"id":3,"v":"c"}`, 3)); err != nil {
		t.Fatal(err)
	}

	kept := offsetMessage("update", `{"id":1,"v":null}`, 10)
	kept.MetaSetMut("keep", "v")
	batch := service.MessageBatch{
		offsetMessage("insert", `{"id":4,"v":"d"}`, 4),
		offsetMessage("update", `not json: superseded, so never converted`, 5),
		offsetMessage("truncate", `{}`, 6),
		offsetMessage("insert", `{"id":5,"v":"e"}`, 7),
		offsetMessage("insert", `{"id":6,"v":"f"}`, 8),
		offsetMessage("delete", `{"id":6}`, 9),
		kept, // key 1 was truncated: no row to keep v from
	}
	idx := batch.Index()
	err := o.WriteBatch(ctx, batch)
	var bErr *service.BatchError
	if !errors.As(err, &bErr) || bErr.IndexedErrors() != 1 {
		t.Fatalf("want a BatchError for the last message only, got %v", err)
	}
	if e := indexedError(bErr, idx, 6); e == nil || e.Error() != fmt.Sprintf("unchanged_columns v: key [1] has no row in table %s to keep them from", o.staticSink().conf.Table) {
		t.Fatalf("message 6: %v", e)
	}
	if got := tableState(t, o); got != "5|e" {
		t.Fatalf("after insert, truncate, insert: %q, want 5|e", got)
	}
	s := latest()
	if s.CommitKind != snapshot.CommitOverwrite || *s.TotalRecordCount != 2 {
		t.Fatalf("snapshot %d: kind %s, total records %d; want OVERWRITE with 2 (5, and 6 deleted: the writer merges a key's changes)", s.ID, s.CommitKind, *s.TotalRecordCount)
	}

	// Alone: Java's truncateTable.
	if err := write(offsetMessage("truncate", `{}`, 11)); err != nil {
		t.Fatal(err)
	}
	s = latest()
	if s.CommitKind != snapshot.CommitOverwrite || *s.TotalRecordCount != 0 || *s.DeltaRecordCount != -2 {
		t.Fatalf("snapshot %d: kind %s, total %d, delta %d; want OVERWRITE, 0, -2", s.ID, s.CommitKind, *s.TotalRecordCount, *s.DeltaRecordCount)
	}
	if got := tableState(t, o); got != "" {
		t.Fatalf("after a truncate: %q", got)
	}

	// A replay of all of it is acknowledged without a commit.
	before := s.ID
	if err := write(offsetMessage("insert", `{"id":4,"v":"d"}`, 4), offsetMessage("truncate", `{}`, 6), offsetMessage("insert", `{"id":5,"v":"e"}`, 7),
		offsetMessage("truncate", `{}`, 11)); err != nil {
		t.Fatal(err)
	}
	if s = latest(); s.ID != before || tableState(t, o) != "" {
		t.Fatalf("the replay committed snapshot %d (was %d) or changed the table: %q", s.ID, before, tableState(t, o))
	}
}

// TestTruncateAppendTable: an append table takes a truncate from row_kind;
// without row_kind it ignores the operation metadata, so the message is a
// row like any other.
func TestTruncateAppendTable(t *testing.T) {
	ctx := context.Background()
	open := func(rowKind string) *paimonOutput {
		return openTestOutput(t, fmt.Sprintf(`
warehouse: %s
table: t
create_table: { enabled: true, schema: [ { name: id, type: BIGINT }, { name: v, type: STRING } ] }
maintenance: { enabled: false, table_metrics: false }
%s
`, t.TempDir(), rowKind))
	}
	for _, c := range []struct{ rowKind, want string }{
		{"row_kind: '${! @operation }'", "3|c"},
		{"", "1|a 2|<nil> 3|c"},
	} {
		o := open(c.rowKind)
		if err := o.WriteBatch(ctx, service.MessageBatch{opMessage("insert", `{"id":1,"v":"a"}`)}); err != nil {
			t.Fatal(err)
		}
		if err := o.WriteBatch(ctx, service.MessageBatch{opMessage("truncate", `{"id":2}`), opMessage("insert", `{"id":3,"v":"c"}`)}); err != nil {
			t.Fatal(err)
		}
		if got := tableState(t, o); got != c.want {
			t.Errorf("%q: table %q, want %q", c.rowKind, got, c.want)
		}
	}
}

// TestTruncateDynamicBucket: a dynamic-bucket table (bucket -1) is emptied
// too, its hash index entries dropped with the files, and keys written
// after the truncate, again or anew, are read once.
func TestTruncateDynamicBucket(t *testing.T) {
	ctx := context.Background()
	o := openKVOutput(t, "  bucket: -1", "maintenance: { enabled: false, table_metrics: false }")
	for _, c := range []struct {
		batch []*service.Message
		want  string
	}{
		{[]*service.Message{opMessage("insert", `{"id":1,"v":"a"}`), opMessage("insert", `{"id":2,"v":"b"}`)}, "1|a 2|b"},
		{[]*service.Message{opMessage("truncate", `{}`), opMessage("insert", `{"id":2,"v":"c"}`)}, "2|c"},
		{[]*service.Message{opMessage("insert", `{"id":1,"v":"d"}`), opMessage("update", `{"id":2,"v":"e"}`)}, "1|d 2|e"},
		{[]*service.Message{opMessage("truncate", `{}`)}, ""},
		{[]*service.Message{opMessage("insert", `{"id":1,"v":"f"}`)}, "1|f"},
	} {
		if err := o.WriteBatch(ctx, service.MessageBatch(c.batch)); err != nil {
			t.Fatal(err)
		}
		if got := tableState(t, o); got != c.want {
			t.Fatalf("table %q, want %q", got, c.want)
		}
	}
}
