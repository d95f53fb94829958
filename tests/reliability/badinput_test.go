package reliability

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
)

// The bad input catalogue goes through a stream built with
// service.NewStreamBuilder and the real paimon output. The messages come
// from batchFeed, a batch input the test feeds: Benthos hands an input's
// AckFunc the *service.BatchError with one error per failed message,
// whereas a producer func of AddBatchProducerFunc only sees the batch-level
// headline, and the catalogue must check each message's own error.

// batchFeedName is the test input's name.
const batchFeedName = "reliability_feed"

type batchFeed struct {
	batches chan fedBatch
	closed  chan struct{}
}

type fedBatch struct {
	batch service.MessageBatch
	acked chan error
}

func newBatchFeed() *batchFeed {
	return &batchFeed{batches: make(chan fedBatch), closed: make(chan struct{})}
}

// env returns an environment with the feed registered as an input.
func (f *batchFeed) env(t testing.TB) *service.Environment {
	t.Helper()
	env := service.NewEnvironment()
	err := env.RegisterBatchInput(batchFeedName, service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchInput, error) { return f, nil })
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// send hands a batch to the stream and returns the error its ack got.
func (f *batchFeed) send(ctx context.Context, batch service.MessageBatch) error {
	fb := fedBatch{batch: batch, acked: make(chan error, 1)}
	select {
	case f.batches <- fb:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-fb.acked:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *batchFeed) end() { close(f.closed) }

func (f *batchFeed) Connect(context.Context) error { return nil }

func (f *batchFeed) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	select {
	case fb := <-f.batches:
		return fb.batch, func(_ context.Context, err error) error {
			fb.acked <- err
			return nil
		}, nil
	case <-f.closed:
		return nil, nil, service.ErrEndOfInput
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

func (f *batchFeed) Close(context.Context) error { return nil }

// badCase is one message of the catalogue: its payload and, for a bad one,
// the texts its error must contain (the field and the reason).
type badCase struct {
	name    string
	payload []byte
	want    []string // nil: the message must land
	check   func(t *testing.T, row []any)
}

func TestBadInputCatalogue(t *testing.T) {
	skipShort(t)
	big := strings.Repeat("0123456789abcdef", (10<<20)/16) // 10 MiB
	cases := []badCase{
		{name: "good", payload: []byte(`{"id": 1, "n": 7, "d": 1.5, "name": "abc", "s": "x"}`)},
		{name: "malformed JSON", payload: []byte(`{"id": 2, "n": `), want: []string{"not valid JSON"}},
		{name: "JSON NaN literal", payload: []byte(`{"id": 3, "d": NaN}`), want: []string{"not valid JSON"}},
		{name: "not an object", payload: []byte(`[1, 2, 3]`), want: []string{"not a JSON object"}},
		{name: "string for a number", payload: []byte(`{"id": 4, "n": "seven"}`), want: []string{`"n"`, "INT"}},
		{name: "INT overflow", payload: []byte(`{"id": 5, "n": 2147483648}`), want: []string{`"n"`, "INT"}},
		{name: "BIGINT overflow", payload: []byte(`{"id": 9223372036854775808}`), want: []string{`"id"`, "BIGINT"}},
		{name: "fraction for an integer", payload: []byte(`{"id": 6, "n": 2.5}`), want: []string{`"n"`, "INT"}},
		{name: "NaN string for DOUBLE", payload: []byte(`{"id": 7, "d": "NaN"}`), check: func(t *testing.T, row []any) {
			if f, ok := row[2].(float64); !ok || !math.IsNaN(f) {
				t.Errorf("d = %v, want NaN", row[2])
			}
		}},
		{name: "Infinity string for DOUBLE", payload: []byte(`{"id": 8, "d": "Infinity"}`), check: func(t *testing.T, row []any) {
			if f, ok := row[2].(float64); !ok || !math.IsInf(f, 1) {
				t.Errorf("d = %v, want +Inf", row[2])
			}
		}},
		{name: "-Infinity string for DOUBLE", payload: []byte(`{"id": 9, "d": "-Infinity"}`), check: func(t *testing.T, row []any) {
			if f, ok := row[2].(float64); !ok || !math.IsInf(f, -1) {
				t.Errorf("d = %v, want -Inf", row[2])
			}
		}},
		{name: "NaN for INT", payload: []byte(`{"id": 10, "n": "NaN"}`), want: []string{`"n"`, "INT"}},
		{name: "DOUBLE out of range", payload: []byte(`{"id": 11, "d": 1e999}`), want: []string{`"d"`, "DOUBLE"}},
		{name: "VARCHAR too long", payload: []byte(`{"id": 12, "name": "abcdef"}`), want: []string{`"name"`, "VARCHAR(5)"}},
		{name: "VARCHAR at its limit in characters", payload: []byte(`{"id": 13, "name": "ääääé"}`), check: func(t *testing.T, row []any) {
			if row[3] != "ääääé" {
				t.Errorf("name = %q", row[3])
			}
		}},
		{name: "invalid UTF-8", payload: []byte("{\"id\": 14, \"s\": \"bad \xff\xfe bytes\"}"), want: []string{"UTF-8"}},
		{name: "null in NOT NULL", payload: []byte(`{"id": null, "n": 1}`), want: []string{`"id"`, "NOT NULL"}},
		{name: "missing NOT NULL", payload: []byte(`{"n": 1}`), want: []string{`"id"`, "NOT NULL"}},
		{name: "unknown field", payload: []byte(`{"id": 15, "colour": "red"}`), want: []string{`"colour"`, "not a column"}},
		{name: "10 MiB message", payload: []byte(`{"id": 16, "s": "` + big + `"}`), check: func(t *testing.T, row []any) {
			if s, _ := row[4].(string); s != big {
				t.Errorf("s has %d bytes, want the %d sent", len(s), len(big))
			}
		}},
		{name: "good after", payload: []byte(`{"id": 17, "n": -2147483648, "d": -0.0, "name": "", "s": ""}`)},
	}

	wh := filepath.Join(workDir(t), "warehouse")
	feed := newBatchFeed()
	sb := feed.env(t).NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: none"); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddInputYAML(batchFeedName + ": {}"); err != nil {
		t.Fatal(err)
	}
	// Messages marked "drop" are deleted: a batch of only those reaches
	// the output empty (Benthos never hands an input's empty batch on).
	if err := sb.AddProcessorYAML(`mapping: 'root = if content().string().contains("\"drop\"") { deleted() }'`); err != nil {
		t.Fatal(err)
	}
	err := sb.AddOutputYAML(fmt.Sprintf(`
paimon:
  warehouse: %s
  database: rel
  table: bad
  keep_input_batches: true # the input's batch reaches the output whole, so its BatchError does too
  create_table:
    enabled: true
    schema:
      - { name: id, type: BIGINT NOT NULL }
      - { name: n, type: INT }
      - { name: d, type: DOUBLE }
      - { name: name, type: VARCHAR(5) }
      - { name: s, type: STRING }
  max_in_flight: 1
`, wh))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, done := runStream(t, ctx, sb)

	// A batch that is empty once processed: acked, nothing committed.
	empty := service.MessageBatch{service.NewMessage([]byte(`{"drop": 1}`)), service.NewMessage([]byte(`{"drop": 2}`))}
	if err := feed.send(ctx, empty); err != nil {
		t.Errorf("empty batch: %v", err)
	}

	// All messages in one batch: the bad ones fail alone.
	batch := make(service.MessageBatch, len(cases))
	for i, c := range cases {
		batch[i] = service.NewMessage(c.payload)
	}
	idx := batch.Index()
	ackErr := feed.send(ctx, batch)
	var bErr *service.BatchError
	if !errors.As(ackErr, &bErr) {
		t.Fatalf("ack error %v (%T), want a *service.BatchError", ackErr, ackErr)
	}
	msgErr := map[int]error{}
	bErr.WalkMessagesIndexedBy(idx, func(i int, _ *service.Message, err error) bool {
		if err != nil {
			msgErr[i] = err
		}
		return true
	})
	for i, c := range cases {
		err := msgErr[i]
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: failed: %v", c.name, err)
		case c.want != nil && err == nil:
			t.Errorf("%s: accepted, want an error containing %q", c.name, c.want)
		case c.want != nil:
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q does not contain %q", c.name, err, w)
				}
			}
			t.Logf("%-34s -> %v", c.name, truncate(err.Error(), 160))
		}
	}
	feed.end()
	if err := <-done; err != nil {
		t.Fatalf("stream: %v", err)
	}

	tbl, err := lakecore.Open(context.Background(), wh, "rel", "bad")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tbl.ReadAll(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64][]any{}
	for _, r := range rows {
		byID[r[0].(int64)] = r
	}
	landed := 0
	for _, c := range cases {
		if c.want != nil {
			continue
		}
		landed++
		var id int64
		if _, err := fmt.Sscanf(string(c.payload), `{"id": %d`, &id); err != nil {
			t.Fatal(err)
		}
		row, ok := byID[id]
		if !ok {
			t.Errorf("%s: row %d not in the table", c.name, id)
			continue
		}
		if c.check != nil {
			c.check(t, row)
		}
	}
	if len(rows) != landed {
		t.Errorf("%d rows in the table, want the %d good messages", len(rows), landed)
	}
	snaps, err := tbl.Snapshots().ListIDs(context.Background())
	if err != nil || len(snaps) != 1 {
		t.Errorf("snapshots %v (%v): want exactly one (the empty batch commits nothing)", snaps, err)
	}
	figure(t, "%d cases: %d rejected with their own error, %d landed and read back", len(cases), len(msgErr), landed)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
