package paimon

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// testTable is a table in a temporary warehouse with a committer whose
// snapshots get known commit times: the n-th commit is at baseTime + n s.
type testTable struct {
	t         testing.TB
	warehouse string
	tbl       *lakecore.Table
	committer *commit.Committer
	commits   atomic.Int64
	id        atomic.Int64
}

// baseTime is the commit time of snapshot 0 (snapshot n is committed at
// baseTime + n seconds): 2024-05-30T10:00:00Z.
var baseTime = time.Date(2024, 5, 30, 10, 0, 0, 0, time.UTC)

func snapshotTime(id int64) time.Time { return baseTime.Add(time.Duration(id) * time.Second) }

// eventsSchema is the test tables' schema.
const eventsSchema = "ROW<dt STRING, region STRING, id BIGINT, msg STRING>"

func newTestTable(t testing.TB, partitionKeys []string, options map[string]string) *testTable {
	t.Helper()
	wh := t.TempDir()
	return createTestTable(t, wh, partitionKeys, options)
}

func createTestTable(t testing.TB, wh string, partitionKeys []string, options map[string]string) *testTable {
	t.Helper()
	return createTable(t, wh, lakecore.TableSpec{
		Fields: types.MustParse(eventsSchema).Fields, PartitionKeys: partitionKeys, Options: options,
	})
}

// createTable creates the table default.events of spec in warehouse wh.
func createTable(t testing.TB, wh string, spec lakecore.TableSpec) *testTable {
	t.Helper()
	ctx := context.Background()
	cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "default", "events", spec)
	if err != nil {
		t.Fatal(err)
	}
	tt := &testTable{t: t, warehouse: wh, tbl: tbl}
	tt.committer = newCommitter(tt)
	return tt
}

// newCommitter is the committer of tt.tbl whose n-th commit is at
// snapshotTime(n).
func newCommitter(tt *testTable) *commit.Committer {
	o := commit.OptionsFromSchema(tt.tbl.Schema(), "input-test")
	o.Now = func() time.Time { return snapshotTime(tt.commits.Load()) }
	return commit.New(tt.tbl.FileIO(), tt.tbl.Path(), o)
}

// row is one test row: id n in partition (dt, region).
func row(dt, region string, n int64) []any { return []any{dt, region, n, fmt.Sprintf("m%d", n)} }

// appendRows commits rows as the next snapshot and returns it.
func (tt *testTable) appendRows(rows ...[]any) *snapshot.Snapshot {
	tt.t.Helper()
	ctx := context.Background()
	w, err := tt.tbl.NewWriter(ctx)
	if err != nil {
		tt.t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(ctx, r); err != nil {
			tt.t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		tt.t.Fatal(err)
	}
	return tt.commit(msgs)
}

// commit commits msgs as the next commit and returns the last snapshot.
func (tt *testTable) commit(msgs []commit.Message) *snapshot.Snapshot {
	tt.t.Helper()
	tt.commits.Add(1)
	s, err := tt.committer.Commit(context.Background(), tt.id.Add(1), msgs)
	if err != nil {
		tt.t.Fatal(err)
	}
	return s
}

// consumer reads the table's consumer id; 0 if absent.
func (tt *testTable) consumer(id string) int64 {
	tt.t.Helper()
	c, ok, err := tt.tbl.Consumers().Get(context.Background(), id)
	if err != nil {
		tt.t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return c.NextSnapshot
}

// expire deletes snapshots 1..upTo and writes the EARLIEST hint, as
// snapshot expiry leaves a table (data files are left alone).
func (tt *testTable) expire(upTo int64) {
	tt.t.Helper()
	ctx := context.Background()
	for id := int64(1); id <= upTo; id++ {
		if err := tt.tbl.Snapshots().Delete(ctx, id); err != nil {
			tt.t.Fatal(err)
		}
	}
	if err := tt.tbl.Snapshots().WriteEarliestHint(ctx, upTo+1); err != nil {
		tt.t.Fatal(err)
	}
}

func (tt *testTable) yaml(extra string) string {
	return fmt.Sprintf("warehouse: %s\ntable: events\n%s", tt.warehouse, extra)
}

// newInput builds an Input from YAML fields.
func newInput(t testing.TB, yaml string) *Input {
	t.Helper()
	return newInputWith(t, yaml, service.MockResources())
}

// newInputWith builds an Input from YAML fields with resources res.
func newInputWith(t testing.TB, yaml string, res *service.Resources) *Input {
	t.Helper()
	conf, err := ConfigSpec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	return New(c, res)
}

// got is one message as the tests compare it: its row as compact JSON and
// its metadata.
type got struct {
	Row       string
	Snapshot  int64
	Kind      string
	Time      string
	Partition string
	Bucket    int64
	File      string
	Pos       int64
}

func decode(t testing.TB, m *service.Message) got {
	t.Helper()
	v, err := m.AsStructured()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var g got
	g.Row = string(b)
	meta := func(k string) any {
		v, ok := m.MetaGetMut(k)
		if !ok {
			t.Fatalf("metadata %s missing", k)
		}
		return v
	}
	g.Snapshot = meta("paimon_snapshot_id").(int64)
	g.Kind = meta("paimon_commit_kind").(string)
	g.Time = meta("paimon_commit_time").(string)
	g.Partition = meta("paimon_partition").(string)
	g.Bucket = meta("paimon_bucket").(int64)
	g.File = meta("paimon_file").(string)
	g.Pos = meta("paimon_row").(int64)
	return g
}

// readN reads batches until n messages arrived, acking each batch.
func readN(t testing.TB, in *Input, n int) []got {
	t.Helper()
	var out []got
	for len(out) < n {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		b, ack, err := in.ReadBatch(ctx)
		cancel()
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(out), n, err)
		}
		for _, m := range b {
			out = append(out, decode(t, m))
		}
		if err := ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
