package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// inTable is a table the input tests write with lakecore directly:
// ids (BIGINT) in partitions region=eu|us, bucket=2 keyed by id, so that
// the order within a fixed bucket can be checked.
type inTable struct {
	t         testing.TB
	warehouse string
	s3        storage.S3Config
	tbl       *lakecore.Table
	mu        sync.Mutex
	next      int64           // next id
	ident     int64           // commit identifier
	snapOf    map[int64]int64 // id -> snapshot that added it
	rowsOf    map[int64]int   // snapshot -> rows
}

const inSchema = "ROW<region STRING, id BIGINT, payload STRING>"

func newInTable(t testing.TB, warehouse string, s3 storage.S3Config) *inTable {
	t.Helper()
	ctx := context.Background()
	cat, err := lakecore.OpenCatalog(ctx, warehouse, s3)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "default", "tail", lakecore.TableSpec{
		Fields:        types.MustParse(inSchema).Fields,
		PartitionKeys: []string{"region"},
		Options:       map[string]string{"bucket": "2", "bucket-key": "id"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &inTable{t: t, warehouse: warehouse, s3: s3, tbl: tbl, snapOf: map[int64]int64{}, rowsOf: map[int64]int{}}
}

// commit writes n new rows (ids continuing, regions alternating) as one
// snapshot and returns its id. Safe to call from one goroutine at a time.
func (it *inTable) commit(ctx context.Context, n int) (int64, error) {
	w, err := it.tbl.NewWriter(ctx)
	if err != nil {
		return 0, err
	}
	it.mu.Lock()
	first := it.next
	it.next += int64(n)
	it.ident++
	ident := it.ident
	it.mu.Unlock()
	for id := first; id < first+int64(n); id++ {
		region := "eu"
		if id%3 == 0 {
			region = "us"
		}
		if err := w.Write(ctx, []any{region, id, fmt.Sprintf("p%d", id)}); err != nil {
			return 0, err
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		return 0, err
	}
	s, err := it.tbl.NewCommitter("input-e2e").Commit(ctx, ident, msgs)
	if err != nil {
		return 0, err
	}
	it.mu.Lock()
	for id := first; id < first+int64(n); id++ {
		it.snapOf[id] = s.ID
	}
	it.rowsOf[s.ID] = n
	it.mu.Unlock()
	return s.ID, nil
}

func (it *inTable) total() int {
	it.mu.Lock()
	defer it.mu.Unlock()
	return int(it.next)
}

func (it *inTable) snapshotOf(id int64) int64 {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.snapOf[id]
}

func (it *inTable) consumer(id string) int64 {
	it.t.Helper()
	c, ok, err := it.tbl.Consumers().Get(context.Background(), id)
	if err != nil {
		it.t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return c.NextSnapshot
}

// inputYAML is the paimon input's config for the table.
func (it *inTable) inputYAML(extra string) string {
	y := fmt.Sprintf("paimon:\n  warehouse: %s\n  table: tail\n", it.warehouse)
	if it.s3.Endpoint != "" {
		y += fmt.Sprintf("  s3: { endpoint: %s, region: %s, force_path_style: true, credentials: { id: %s, secret: %s } }\n",
			it.s3.Endpoint, it.s3.Region, it.s3.AccessKeyID, it.s3.SecretAccessKey)
	}
	return y + extra
}

// inMsg is one message as the input tests see it.
type inMsg struct {
	id, snapshot, bucket int64
	partition, file      string
	at                   time.Time
}

func inDecode(t testing.TB, m *service.Message) inMsg {
	v, err := m.AsStructured()
	if err != nil {
		t.Fatal(err)
	}
	obj := v.(map[string]any)
	var out inMsg
	switch id := obj["id"].(type) {
	case int64:
		out.id = id
	case float64:
		out.id = int64(id)
	default:
		t.Fatalf("id %v (%T)", obj["id"], obj["id"])
	}
	s, _ := m.MetaGetMut("paimon_snapshot_id")
	b, _ := m.MetaGetMut("paimon_bucket")
	p, _ := m.MetaGetMut("paimon_partition")
	f, _ := m.MetaGetMut("paimon_file")
	out.snapshot, out.bucket, out.partition, out.file = s.(int64), b.(int64), p.(string), f.(string)
	if want := fmt.Sprintf("p%d", out.id); obj["payload"] != want {
		t.Errorf("row %d: payload %v, want %s", out.id, obj["payload"], want)
	}
	return out
}

// inCollector gathers messages delivered to a consumer func.
type inCollector struct {
	mu   sync.Mutex
	msgs []inMsg
	want int
	done chan struct{}
	once sync.Once
}

func newInCollector() *inCollector { return &inCollector{done: make(chan struct{})} }

// add records a batch; done closes once want (set with expect) messages
// arrived.
func (c *inCollector) add(t testing.TB, b service.MessageBatch) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range b {
		x := inDecode(t, m)
		x.at = now
		c.msgs = append(c.msgs, x)
	}
	if c.want > 0 && len(c.msgs) >= c.want {
		c.once.Do(func() { close(c.done) })
	}
}

func (c *inCollector) expect(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.want = n
	if len(c.msgs) >= n {
		c.once.Do(func() { close(c.done) })
	}
}

func (c *inCollector) snapshot() []inMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]inMsg(nil), c.msgs...)
}

func (c *inCollector) wait(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(timeout):
		c.mu.Lock()
		n, want := len(c.msgs), c.want
		c.mu.Unlock()
		t.Fatalf("received %d of %d messages in %s", n, want, timeout)
	}
}

// inStream builds a stream from the paimon input YAML into fn and starts
// it; stop stops it within timeout and returns Run's result.
func inStream(t testing.TB, env *service.Environment, inputYAML string, fn service.MessageBatchHandlerFunc) (stop func(time.Duration) error, runErr <-chan error) {
	t.Helper()
	if env == nil {
		env = service.GlobalEnvironment()
	}
	sb := env.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: WARN"); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddInputYAML(inputYAML); err != nil {
		t.Fatal(err)
	}
	if fn != nil {
		if err := sb.AddBatchConsumerFunc(fn); err != nil {
			t.Fatal(err)
		}
	}
	strm, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- strm.Run(context.Background()) }()
	return strm.StopWithin, errc
}

// inNoS3 is the S3 configuration of local warehouses.
var inNoS3 = storage.S3Config{}
