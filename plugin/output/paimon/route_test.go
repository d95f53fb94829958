package paimon

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// debeziumWithSchema is a Debezium event as Kafka Connect's JSON converter
// writes it (schemas.enable=true), for table tbl.
func debeziumWithSchema(tbl, op, before, after string) string {
	row := `{"type":"struct","optional":true,"field":"%s","fields":[
		{"type":"int64","optional":false,"field":"id"},
		{"type":"string","optional":true,"field":"v"},
		{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"}]}`
	return fmt.Sprintf(`{"schema":{"type":"struct","fields":[%s,%s,{"type":"string","optional":false,"field":"op"}]},
		"payload":{"before":%s,"after":%s,"op":"%s","source":{"db":"inv","table":"%s"}}}`,
		fmt.Sprintf(row, "before"), fmt.Sprintf(row, "after"), before, after, op, tbl)
}

// TestRoutedDebeziumCreatesTables: with an interpolated table and
// cdc_format debezium-json, each table is created from its first event:
// the Debezium schema's types (a Connect decimal as DECIMAL(10,2)) and the
// primary key of the pk metadata.
func TestRoutedDebeziumCreatesTables(t *testing.T) {
	wh := t.TempDir()
	o := openTestOutput(t, fmt.Sprintf(`
warehouse: %s
database: inv
table: ${! json("payload.source.table") }
cdc_format: debezium-json
create_table: { enabled: true, bucket: 2 }
maintenance: { enabled: false }
`, wh))
	msg := func(s string) *service.Message {
		m := service.NewMessage([]byte(s))
		m.MetaSetMut("pk", "id")
		return m
	}
	batch := service.MessageBatch{
		msg(debeziumWithSchema("t1", "c", "null", `{"id":1,"v":"a","amount":"AN4="}`)), // 2.22
		msg(debeziumWithSchema("t2", "c", "null", `{"id":1,"v":"x","amount":null}`)),
		msg(debeziumWithSchema("t1", "c", "null", `{"id":2,"v":"b","amount":"AQ=="}`)), // 0.01
		msg(debeziumWithSchema("t1", "u", `{"id":1,"v":"a","amount":"AN4="}`, `{"id":1,"v":"c","amount":"AN4="}`)),
		msg(debeziumWithSchema("t2", "d", `{"id":1,"v":"x","amount":null}`, "null")),
	}
	if err := o.WriteBatch(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		table string
		want  string
	}{{"t1", "[[1 c 2.22] [2 b 0.01]]"}, {"t2", "[]"}} {
		tbl, err := lakecore.Open(ctx, wh, "inv", c.table)
		if err != nil {
			t.Fatal(err)
		}
		s := tbl.Schema()
		if fmt.Sprint(s.PrimaryKeys) != "[id]" || s.Fields[2].Type.String() != "DECIMAL(10, 2)" || s.Fields[0].Type.String() != "BIGINT NOT NULL" {
			t.Fatalf("%s: schema %v", c.table, s.Fields)
		}
		rows, err := tbl.ReadAll(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, fmt.Sprint(r))
		}
		sort.Strings(got)
		if fmt.Sprint(got) != c.want && !(c.want == "[]" && len(got) == 0) {
			t.Errorf("%s rows %v, want %s", c.table, got, c.want)
		}
	}
}

// TestOutputBeforeRetracts: with the before mapping an update of an
// aggregation table is a -U of the old row, which the sum retracts, then
// the +U; without it the sum counts both.
func TestOutputBeforeRetracts(t *testing.T) {
	for _, c := range []struct {
		before string
		want   string
	}{{"before: root = @before", "[1 7]"}, {"", "[1 12]"}} {
		o := openTestOutput(t, fmt.Sprintf(`
warehouse: %s
table: t
%s
create_table:
  enabled: true
  schema:
    - { name: id, type: BIGINT }
    - { name: total, type: BIGINT }
  primary_keys: [ id ]
  bucket: 1
  options: { merge-engine: aggregation, fields.total.aggregate-function: sum }
maintenance: { enabled: false }
`, t.TempDir(), c.before))
		ins := service.NewMessage([]byte(`{"id":1,"total":5}`))
		ins.MetaSetMut("operation", "insert")
		upd := service.NewMessage([]byte(`{"id":1,"total":7}`))
		upd.MetaSetMut("operation", "update")
		upd.MetaSetMut("before", map[string]any{"id": 1, "total": 5})
		ctx := context.Background()
		for _, m := range []*service.Message{ins, upd} { // two batches: two commits
			if err := o.WriteBatch(ctx, service.MessageBatch{m}); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := o.staticSink().tbl.ReadAll(ctx, 0)
		if err != nil || len(rows) != 1 || fmt.Sprint(rows[0]) != c.want {
			t.Errorf("%q: rows %v %v, want %s", c.before, rows, err, c.want)
		}
	}
}

// TestOutputDynamicBucket: a primary-key table with bucket -1 is written
// with Paimon's dynamic buckets: keys spread over several buckets of at
// most dynamic-bucket.target-row-num keys, each key in one bucket across
// batches, and the merged table equals the changes.
func TestOutputDynamicBucket(t *testing.T) {
	o := openKVOutput(t, `  options: { dynamic-bucket.target-row-num: "20" }`, "maintenance: { enabled: false }")
	ctx := context.Background()
	want := map[int64]string{}
	for b := range 5 {
		var batch service.MessageBatch
		for i := range 30 {
			id := int64((b*13 + i*7) % 70)
			batch = append(batch, opMessage("update", fmt.Sprintf(`{"id":%d,"v":"b%d-%d"}`, id, b, i)))
			want[id] = fmt.Sprintf("b%d-%d", b, i)
		}
		if err := o.WriteBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	tbl := o.staticSink().tbl
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for _, r := range rows {
		if _, dup := got[r[0].(int64)]; dup {
			t.Fatalf("key %v twice", r[0])
		}
		got[r[0].(int64)] = r[1].(string)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %v\nwant %v", got, want)
	}
	s, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := tbl.PartitionStats(ctx, s)
	if err != nil || len(stats) != 1 || stats[0].Buckets < 3 {
		t.Fatalf("buckets %+v %v, want at least 3 (70 keys, 20 per bucket)", stats, err)
	}
}

// TestOutputLookupChangelog: on a changelog-producer lookup table the
// output writes level-0 files and its maintenance compaction writes the
// changelog (+I for new keys, -U/+U for changed ones) in a COMPACT
// snapshot.
func TestOutputLookupChangelog(t *testing.T) {
	o := openKVOutput(t, "  bucket: 1\n  options: { changelog-producer: lookup }",
		"maintenance: { enabled: true, table_metrics: false }\ncompaction: { enabled: true }")
	ctx := context.Background()
	k := o.staticSink()
	var logged int64
	for b, vs := range [][]string{{"a", "b"}, {"A", "b"}} { // key 1 changes, key 2 does not
		var batch service.MessageBatch
		for i, v := range vs {
			batch = append(batch, opMessage("update", fmt.Sprintf(`{"id":%d,"v":"%s"}`, i+1, v)))
		}
		if err := o.WriteBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		k.maint.runOnce(ctx)
		s, err := k.tbl.Snapshots().Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.CommitKind != snapshot.CommitCompact || s.ChangelogRecordCount == nil {
			t.Fatalf("batch %d: latest snapshot %d is %s with changelog %v, want a COMPACT snapshot with a changelog", b, s.ID, s.CommitKind, s.ChangelogRecordCount)
		}
		logged += *s.ChangelogRecordCount
	}
	// +I 1, +I 2; then -U/+U 1 and, without changelog-producer.row-deduplicate,
	// -U/+U 2 for the unchanged key too.
	if logged != 6 {
		t.Fatalf("%d changelog records, want 6", logged)
	}
}

// TestOutputDeletionVectors: on a deletion-vectors table the output
// writes level-0 files (invisible to batch reads) and its maintenance
// compaction moves them up, marking the replaced rows in the bucket's
// deletion vector: after each batch and compaction the table reads the
// latest value of every key, and from the second batch on the COMPACT
// snapshot carries a vector.
func TestOutputDeletionVectors(t *testing.T) {
	o := openTestOutput(t, fmt.Sprintf(`
warehouse: %s
table: t
create_table:
  enabled: true
  schema:
    - { name: id, type: BIGINT }
    - { name: v, type: STRING }
  primary_keys: [ id ]
  bucket: 1
  options: { deletion-vectors.enabled: "true" }
maintenance: { enabled: true, table_metrics: false }
compaction: { enabled: true }
`, t.TempDir()))
	ctx := context.Background()
	k := o.staticSink()
	for b, vs := range [][]string{{"a", "b", "c"}, {"A", "b"}, {"x"}} {
		var batch service.MessageBatch
		for i, v := range vs {
			m := service.NewMessage([]byte(fmt.Sprintf(`{"id":%d,"v":"%s"}`, i+1, v)))
			m.MetaSetMut("operation", "update")
			batch = append(batch, m)
		}
		if err := o.WriteBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		k.maint.runOnce(ctx)
		s, err := k.tbl.Snapshots().Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.CommitKind != snapshot.CommitCompact {
			t.Fatalf("batch %d: latest snapshot %d is %s, want COMPACT", b, s.ID, s.CommitKind)
		}
		rows, err := k.tbl.ReadAll(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]string{1: "a", 2: "b", 3: "c"}
		if b >= 1 {
			want[1] = "A"
		}
		if b >= 2 {
			want[1] = "x"
		}
		got := map[int64]string{}
		for _, r := range rows {
			got[r[0].(int64)] = r[1].(string)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("batch %d: rows %v, want %v", b, got, want)
		}
		if b == 0 {
			continue
		}
		if s.IndexManifest == nil {
			t.Fatalf("batch %d: COMPACT snapshot %d without an index manifest", b, s.ID)
		}
		dvs, err := manifest.ReadDeletionVectors(ctx, k.tbl.FileIO(), k.tbl.Path(), *s.IndexManifest)
		if err != nil {
			t.Fatal(err)
		}
		if len(dvs) == 0 {
			t.Fatalf("batch %d: no deletion vector after updating key 1", b)
		}
	}
}
