package paimon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
)

// TestPrimaryKeyTail tails paimon-cpp's Java-written merge-on-read table
// (internal/fixturetest/testdata/cpp/pk_table_scan_and_read_mor): from
// snapshot 1 with a full start, the first plan is the merged rows of
// snapshot 1, inserts; the later snapshots are their delta records with the
// row kinds Java wrote (changelog-producer none), the golden
// stream.from-snapshot-full-1.jsonl.
func TestPrimaryKeyTail(t *testing.T) {
	table := "pk_table_scan_and_read_mor"
	wh := fixturetest.CopyCppPKWarehouse(t, table)
	in := newInput(t, fmt.Sprintf("warehouse: %s\ntable: %s\nbounded: true\nscan_mode: from-snapshot-full\nscan_snapshot_id: 1\n", wh, table))
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	type keyed struct {
		got
		RowKind, Operation string
	}
	var msgs []keyed
	eachBatch(t, in, func(b service.MessageBatch, ack service.AckFunc) {
		for _, m := range b {
			k := keyed{got: decode(t, m)}
			if v, ok := m.MetaGetMut("paimon_row_kind"); ok {
				k.RowKind, _ = v.(string)
			}
			if v, ok := m.MetaGetMut("operation"); ok {
				k.Operation, _ = v.(string)
			}
			msgs = append(msgs, k)
		}
		if err := ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	})
	want := fixturetest.CppPKExpected(t, table, "stream.from-snapshot-full-1")
	var g, w []string
	for _, m := range msgs {
		if m.RowKind == "" || m.Operation == "" {
			t.Fatalf("row %s of snapshot %d has no row kind metadata", m.Row, m.Snapshot)
		}
		op := map[string]string{"+I": "insert", "-U": "update_before", "+U": "update_after", "-D": "delete"}[m.RowKind]
		if m.Operation != op {
			t.Errorf("row %s: operation %q for row kind %s, want %q", m.Row, m.Operation, m.RowKind, op)
		}
		if m.Snapshot == 1 && m.RowKind != "+I" {
			t.Errorf("full phase row %s: kind %s, want +I", m.Row, m.RowKind)
		}
		var vals map[string]any
		if err := json.Unmarshal([]byte(m.Row), &vals); err != nil {
			t.Fatal(err)
		}
		kind := m.RowKind
		if m.Snapshot == 1 {
			kind = "" // the golden states no kind for the full phase
		}
		g = append(g, fmt.Sprintf("%d %s %v %v %v %v", m.Snapshot, kind, vals["f0"], vals["f1"], vals["f2"], vals["f3"]))
	}
	for _, r := range want {
		kind := ""
		if r.HasKind {
			kind = r.Kind.String()
		}
		v := func(n string) string { return *r.Values[n] }
		w = append(w, fmt.Sprintf("%d %s %s %s %s %s", r.Snapshot, kind, v("f0"), v("f1"), v("f2"), v("f3")))
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("messages:\n%v\nwant\n%v", g, w)
	}
}

// TestPrimaryKeyTailShardedAndLatest tails the Java-written table of
// TestPrimaryKeyTail (bucket 2) as two shards, whose messages together are
// exactly the unsharded ones, each shard holding one bucket; and with
// changelog: false, which emits no -U, at most one message per key and
// snapshot, and the same final state when replayed.
func TestPrimaryKeyTailShardedAndLatest(t *testing.T) {
	table := "pk_table_scan_and_read_mor"
	wh := fixturetest.CopyCppPKWarehouse(t, table)
	read := func(extra string) []kvMsgRow {
		in := newInput(t, fmt.Sprintf("warehouse: %s\ntable: %s\nbounded: true\nscan_mode: from-snapshot-full\nscan_snapshot_id: 1\n%s", wh, table, extra))
		if err := in.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer in.Close(context.Background())
		var out []kvMsgRow
		eachBatch(t, in, func(b service.MessageBatch, ack service.AckFunc) {
			for _, m := range b {
				g := decode(t, m)
				kind, _ := m.MetaGetMut("paimon_row_kind")
				var vals map[string]any
				if err := json.Unmarshal([]byte(g.Row), &vals); err != nil {
					t.Fatal(err)
				}
				out = append(out, kvMsgRow{snapshot: g.Snapshot, bucket: g.Bucket, kind: kind.(string), key: fmt.Sprint(vals["f0"], "/", vals["f1"], "/", vals["f2"]), row: g.Row})
			}
			if err := ack(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		})
		return out
	}
	render := func(msgs []kvMsgRow) []string {
		out := make([]string, len(msgs))
		for i, m := range msgs {
			out[i] = fmt.Sprintf("%d %d %s %s", m.snapshot, m.bucket, m.kind, m.row)
		}
		slices.Sort(out)
		return out
	}
	all := read("")
	var union []kvMsgRow
	for i := range 2 {
		part := read(fmt.Sprintf("shard: {count: 2, index: %d}\n", i))
		if len(part) == 0 {
			t.Errorf("shard %d read nothing", i)
		}
		for _, m := range part {
			if int(m.bucket)%2 != i {
				t.Errorf("shard %d: message of bucket %d", i, m.bucket)
			}
		}
		union = append(union, part...)
	}
	if g, w := render(union), render(all); !slices.Equal(g, w) {
		t.Errorf("two shards:\n%v\nwant\n%v", g, w)
	}
	latest := read("changelog: false\n")
	t.Logf("%d changelog messages, %d latest values", len(all), len(latest))
	seen := map[string]bool{}
	for _, m := range latest {
		if m.kind == "-U" {
			t.Errorf("changelog: false emitted %+v", m)
		}
		k := fmt.Sprint(m.snapshot, " ", m.key)
		if seen[k] {
			t.Errorf("snapshot %d: key %s twice", m.snapshot, m.key)
		}
		seen[k] = true
	}
	state := func(msgs []kvMsgRow) map[string]string {
		s := map[string]string{}
		for _, m := range msgs {
			if m.kind == "+I" || m.kind == "+U" {
				s[m.key] = m.row
			} else {
				delete(s, m.key)
			}
		}
		return s
	}
	if g, w := state(latest), state(all); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("changelog: false replays to\n%v\nwant, as the changelog,\n%v", g, w)
	}
}

// kvMsgRow is a message of the fixture table: its key (f0, f1, f2) and its row.
type kvMsgRow struct {
	snapshot, bucket int64
	kind, key, row   string
}
