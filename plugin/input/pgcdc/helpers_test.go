package pgcdc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// event is one captured message as the tests look at it.
type event struct {
	Table, Op, LSN, Position, Chunk, PK, Identity, Toast string
	Seq                                                  int64
	Row, Before                                          map[string]any
	Meta                                                 map[string]any
}

func toEvent(t testing.TB, m *service.Message) event {
	t.Helper()
	v, err := m.AsStructured()
	if err != nil {
		t.Fatal(err)
	}
	e := event{Meta: map[string]any{}}
	e.Row, _ = v.(map[string]any)
	_ = m.MetaWalkMut(func(k string, v any) error { e.Meta[k] = v; return nil })
	str := func(k string) string {
		s, _ := e.Meta[k].(string)
		return s
	}
	e.Table, e.Op, e.LSN, e.Position, e.Chunk = str("table"), str("operation"), str("lsn"), str("lsn_position"), str("snapshot_chunk")
	e.PK, e.Identity, e.Toast = str("pk"), str("replica_identity"), str("unchanged_toast")
	e.Seq, _ = e.Meta["lsn_seq"].(int64)
	e.Before, _ = e.Meta["before"].(map[string]any)
	return e
}

// baseYAML is the input config of a test on db: the test's slot and
// publication, fast status updates, no heartbeats.
func baseYAML(db *pgtest.DB, extra string) string {
	return fmt.Sprintf("dsn: %s\nslot_name: %s_slot\nstatus_interval: 100ms\nheartbeat_interval: 0s\n%s", db.DSN, db.Name, extra)
}

func slotName(db *pgtest.DB) string { return db.Name + "_slot" }

// newInput builds an Input from YAML fields, driven by the test itself.
func newInput(t testing.TB, yaml string) *Input {
	t.Helper()
	return newInputWith(t, yaml, service.MockResources())
}

// newInputWith is newInput with the given resources.
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

// batchOf is one ReadBatch result.
type batchOf struct {
	events []event
	ack    service.AckFunc
}

func readBatch(t testing.TB, in *Input, timeout time.Duration) (batchOf, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		b, ack, err := in.ReadBatch(ctx)
		if err == service.ErrNotConnected {
			if cerr := in.Connect(ctx); cerr != nil {
				t.Fatalf("reconnect: %v", cerr)
			}
			continue
		}
		if ctx.Err() != nil {
			return batchOf{}, false
		}
		if err != nil {
			t.Fatalf("ReadBatch: %v", err)
		}
		out := batchOf{ack: ack}
		for _, m := range b {
			out.events = append(out.events, toEvent(t, m))
		}
		return out, true
	}
}

// readEvents reads and acks batches until n events arrived.
func readEvents(t testing.TB, in *Input, n int) []event {
	t.Helper()
	var out []event
	deadline := time.Now().Add(60 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d of %d events: %v", len(out), n, out)
		}
		b, ok := readBatch(t, in, 30*time.Second)
		if !ok {
			t.Fatalf("no batch after %d of %d events", len(out), n)
		}
		out = append(out, b.events...)
		if err := b.ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func connect(t testing.TB, in *Input) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := in.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = in.Close(context.Background()) })
}

// render is a row as the source query renders it: columns in order, "|"
// separated, NULL as NULL.
func render(row map[string]any, cols ...string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		v, ok := row[c]
		switch {
		case !ok || v == nil:
			parts[i] = "NULL"
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, "|")
}

// applied is the state a keyed upsert/delete sink reaches from events
// applied in order: key (the first column) → rendered row.
func applied(events []event, table string, cols ...string) []string {
	state := map[string]string{}
	for _, e := range events {
		if e.Table != table {
			continue
		}
		key := fmt.Sprint(e.Row[cols[0]])
		switch e.Op {
		case "read", "insert", "update":
			state[key] = render(e.Row, cols...)
		case "delete":
			delete(state, key)
		}
	}
	out := make([]string, 0, len(state))
	for _, v := range state {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return lessKey(out[i], out[j]) })
	return out
}

// lessKey orders rendered rows by their numeric first column.
func lessKey(a, b string) bool {
	ka, _, _ := strings.Cut(a, "|")
	kb, _, _ := strings.Cut(b, "|")
	if len(ka) != len(kb) {
		return len(ka) < len(kb)
	}
	return ka < kb
}

func equalRows(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s: got %d rows, want %d\n got: %v\nwant: %v", what, len(got), len(want), head(got), head(want))
	}
}

func head(s []string) []string {
	if len(s) > 20 {
		return append(s[:20:20], "…")
	}
	return s
}

// confirmedFlush is the slot's confirmed_flush_lsn.
func confirmedFlush(t testing.TB, db *pgtest.DB) string {
	t.Helper()
	return db.QueryString(fmt.Sprintf("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '%s'", slotName(db)))
}

// eventually polls cond every 20 ms until it holds, failing t with what
// after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitConfirmed waits until the slot's confirmed_flush_lsn satisfies ok.
func waitConfirmed(t testing.TB, db *pgtest.DB, what string, ok func(lsn string) bool) string {
	t.Helper()
	var l string
	eventually(t, 20*time.Second, "confirmed_flush_lsn: "+what, func() bool {
		l = confirmedFlush(t, db)
		return ok(l)
	})
	return l
}

// lsnCmp compares two LSNs in Postgres.
func lsnCmp(t testing.TB, db *pgtest.DB, a, b string) int {
	t.Helper()
	v := db.QueryString(fmt.Sprintf("SELECT sign('%s'::pg_lsn - '%s'::pg_lsn)::int", a, b))
	switch v {
	case "-1":
		return -1
	case "0":
		return 0
	}
	return 1
}

// streamCollector runs the input in a real Benthos stream whose output
// records and acks every batch.
type streamCollector struct {
	mu     sync.Mutex
	events []event
	stream *service.Stream
	done   chan error
}

func runStream(t testing.TB, inputYAML string, consume func([]event) error) *streamCollector {
	t.Helper()
	return runStreamWith(t, service.NewStreamBuilder(), inputYAML, consume)
}

func runStreamWith(t testing.TB, sb *service.StreamBuilder, inputYAML string, consume func([]event) error) *streamCollector {
	t.Helper()
	if err := sb.SetLoggerYAML("level: WARN"); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddInputYAML("pg_cdc:\n" + indent(inputYAML)); err != nil {
		t.Fatal(err)
	}
	c := &streamCollector{done: make(chan error, 1)}
	err := sb.AddBatchConsumerFunc(func(_ context.Context, b service.MessageBatch) error {
		evs := make([]event, len(b))
		for i, m := range b {
			evs[i] = toEvent(t, m)
		}
		if consume != nil {
			if err := consume(evs); err != nil {
				return err
			}
		}
		c.mu.Lock()
		c.events = append(c.events, evs...)
		c.mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	strm, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	c.stream = strm
	go func() { c.done <- strm.Run(context.Background()) }()
	t.Cleanup(func() { c.stop(t) })
	return c
}

func (c *streamCollector) stop(t testing.TB) {
	if c.stream == nil {
		return
	}
	_ = c.stream.StopWithin(10 * time.Second)
	c.stream = nil
}

func (c *streamCollector) snapshot() []event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event(nil), c.events...)
}

// waitFor waits until cond holds for the events so far.
func (c *streamCollector) waitFor(t testing.TB, what string, cond func([]event) bool) []event {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		evs := c.snapshot()
		if cond(evs) {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; %d events", what, len(evs))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func countOp(evs []event, op string) int {
	n := 0
	for _, e := range evs {
		if e.Op == op {
			n++
		}
	}
	return n
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func jsonNum(s string) any { return json.Number(s) }
