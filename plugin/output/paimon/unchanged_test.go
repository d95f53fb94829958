package paimon

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// keepMessage is an opMessage whose unchanged columns are keep.
func keepMessage(op, body, keep string) *service.Message {
	m := opMessage(op, body)
	if keep != "" {
		m.MetaSetMut("keep", keep)
	}
	return m
}

// tableState renders the output's table as sorted "id|v" rows.
func tableState(t *testing.T, o *paimonOutput) string {
	t.Helper()
	rows, err := o.staticSink().tbl.ReadAll(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%v|%v", r[0], r[1]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestUnchangedColumns: unchanged_columns keeps the named columns from the
// key's current row: the committed table (a point lookup) or, within a
// batch, the key's earlier change (an insert, an update, or a delete after
// which nothing is kept); a key without a row, a column that does not
// exist and a merge engine without a current row fail their message alone.
func TestUnchangedColumns(t *testing.T) {
	ctx := context.Background()
	o := openKVOutput(t, "  bucket: 2", "unchanged_columns: '${! @keep.or(\"\") }'\nmaintenance: { enabled: false, table_metrics: false }")
	write := func(msgs ...*service.Message) error { return o.WriteBatch(ctx, service.MessageBatch(msgs)) }
	if err := write(opMessage("read", `{"id":1,"v":"big1"}`), opMessage("read", `{"id":2,"v":"big2"}`), opMessage("read", `{"id":3,"v":"big3"}`)); err != nil {
		t.Fatal(err)
	}
	// From the table: id 1 keeps big1. Within the batch: id 2 changes v,
	// then keeps the new value; id 4 is inserted and then kept; id 3 is
	// deleted, then an update of it has nothing to keep.
	batch := service.MessageBatch{
		keepMessage("update", `{"id":1,"v":null}`, "v"),
		opMessage("update", `{"id":2,"v":"big2b"}`),
		keepMessage("update", `{"id":2,"v":null}`, " v "),
		opMessage("insert", `{"id":4,"v":"big4"}`),
		keepMessage("update", `{"id":4}`, "v"),
		opMessage("delete", `{"id":3}`),
		keepMessage("update", `{"id":3,"v":null}`, "v"),
		keepMessage("update", `{"id":9,"v":null}`, "v"),
		keepMessage("update", `{"id":1,"v":null}`, "nosuch"),
	}
	idx := batch.Index()
	err := o.WriteBatch(ctx, batch)
	var bErr *service.BatchError
	if !errors.As(err, &bErr) || bErr.IndexedErrors() != 3 {
		t.Fatalf("want a BatchError for 3 messages, got %v", err)
	}
	tbl := fmt.Sprint(o.staticSink().conf.Table) // default.t in <warehouse>
	for i, want := range map[int]string{
		6: "unchanged_columns v: key [3] has no row in table " + tbl + " to keep them from",
		7: "unchanged_columns v: key [9] has no row in table " + tbl + " to keep them from",
		8: "unchanged_columns: nosuch is not a column of table " + tbl,
	} {
		if e := indexedError(bErr, idx, i); e == nil || e.Error() != want {
			t.Errorf("message %d: %v, want %q", i, e, want)
		}
	}
	if got, want := tableState(t, o), "1|big1 2|big2b 4|big4"; got != want {
		t.Fatalf("table %s, want %s", got, want)
	}
	// A later batch looks up what the earlier one committed.
	if err := write(keepMessage("update", `{"id":2,"v":null}`, "v"), keepMessage("update", `{"id":4,"v":null}`, "v")); err != nil {
		t.Fatal(err)
	}
	if got, want := tableState(t, o), "1|big1 2|big2b 4|big4"; got != want {
		t.Fatalf("table %s, want %s", got, want)
	}

	agg := openKVOutput(t, "  bucket: 1\n  options: { merge-engine: aggregation }", "unchanged_columns: '${! @keep.or(\"\") }'")
	err = agg.WriteBatch(ctx, service.MessageBatch{keepMessage("update", `{"id":1,"v":null}`, "v")})
	if !errors.As(err, &bErr) || !strings.Contains(err.Error(), "merge-engine aggregation does not replace rows") {
		t.Fatalf("aggregation: %v", err)
	}
}
