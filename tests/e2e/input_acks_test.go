package e2e

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// heldBatch is a batch the holding output has received and not yet
// answered.
type heldBatch struct {
	msgs    []inMsg
	release chan struct{}
}

// holdingOutput hands every batch to the test and returns (acks it) only
// when the test releases it; with max_in_flight 8 Benthos keeps up to 8
// batches in it at once, so the test decides the order of the acks.
type holdingOutput struct {
	t     testing.TB
	batch chan heldBatch
}

func (o *holdingOutput) Connect(context.Context) error { return nil }
func (o *holdingOutput) Close(context.Context) error   { return nil }
func (o *holdingOutput) WriteBatch(ctx context.Context, b service.MessageBatch) error {
	h := heldBatch{release: make(chan struct{})}
	for _, m := range b {
		h.msgs = append(h.msgs, inDecode(o.t, m))
	}
	select {
	case o.batch <- h:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// inMetrics reads json_api metrics by name, summing over labels.
type inMetrics struct{ mux *http.ServeMux }

func (m inMetrics) get(t testing.TB, name string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	var all map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &all); err != nil {
		t.Fatalf("metrics: %v", err)
	}
	total, found := 0.0, false
	for k, v := range all {
		if base, _, _ := strings.Cut(k, "{"); base == name {
			if f, ok := v.(float64); ok {
				total, found = total+f, true
			}
		}
	}
	if !found {
		t.Fatalf("metric %s not exported", name)
	}
	return total
}

// TestInputShuffledAcks runs a bounded read with consumer_id into an output
// that holds up to 8 batches and acks them in a random order. Whenever it
// looks, the consumer file is at most the oldest snapshot of a held
// (certainly unacked) batch; at the end it is past the last snapshot, every
// row was delivered once, and the input's metrics count the rows, files and
// snapshots read.
func TestInputShuffledAcks(t *testing.T) {
	it := newInTable(t, t.TempDir(), inNoS3)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	const snapshots = 25
	for range snapshots {
		if _, err := it.commit(ctx, 1+rng.IntN(9)); err != nil {
			t.Fatal(err)
		}
	}
	var euRows int
	for id := range it.total() {
		if id%3 != 0 {
			euRows++
		}
	}

	env := service.NewEnvironment()
	out := &holdingOutput{t: t, batch: make(chan heldBatch)}
	err := env.RegisterBatchOutput("holding", service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			return out, service.BatchPolicy{}, 8, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	sb := env.NewStreamBuilder()
	_ = sb.SetLoggerYAML("level: WARN")
	metrics := inMetrics{mux: http.NewServeMux()}
	sb.SetHTTPMux(metrics.mux)
	if err := sb.SetMetricsYAML("json_api: {}"); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddInputYAML(it.inputYAML("  scan_mode: from-snapshot\n  scan_snapshot_id: 1\n  bounded: true\n  batch_size: 3\n" +
		"  consumer_id: shuffled\n  partition_filter: { region: eu }\n")); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddOutputYAML("holding: {}"); err != nil {
		t.Fatal(err)
	}
	strm, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	runErr := make(chan error, 1)
	go func() { runErr <- strm.Run(ctx) }()

	var held []heldBatch
	var all []inMsg
	maxHeld := 0
	check := func() {
		t.Helper()
		if len(held) == 0 {
			return
		}
		oldest := held[0].msgs[0].snapshot
		for _, h := range held {
			oldest = min(oldest, h.msgs[0].snapshot)
		}
		if pos := it.consumer("shuffled"); pos > oldest {
			t.Fatalf("consumer at %d while a batch of snapshot %d is unacked", pos, oldest)
		}
	}
	for len(all) < euRows || len(held) > 0 {
		if len(all) < euRows && len(held) < 8 {
			select {
			case h := <-out.batch:
				held = append(held, h)
				all = append(all, h.msgs...)
				maxHeld = max(maxHeld, len(held))
				check()
				continue
			case <-time.After(200 * time.Millisecond):
				if len(held) == 0 {
					select {
					case h := <-out.batch:
						held = append(held, h)
						all = append(all, h.msgs...)
						continue
					case <-time.After(30 * time.Second):
						t.Fatalf("no batch after %d of %d rows", len(all), euRows)
					}
				}
			}
		}
		k := rng.IntN(len(held))
		close(held[k].release)
		held = append(held[:k], held[k+1:]...)
		check()
	}
	if err := <-runErr; err != nil {
		t.Fatalf("run: %v", err)
	}
	end := time.Now()
	if maxHeld < 4 {
		t.Errorf("at most %d batches were in flight; the test needs several to shuffle their acks", maxHeld)
	}
	if pos := it.consumer("shuffled"); pos != snapshots+1 {
		t.Errorf("consumer at the end: %d, want %d", pos, snapshots+1)
	}
	count := map[int64]int{}
	files := map[string]bool{}
	for _, m := range all {
		count[m.id]++
		if m.partition != "region=eu" {
			t.Errorf("row %d of partition %s passed the filter", m.id, m.partition)
		}
		files[m.partition+"/"+m.file] = true
	}
	for id := int64(0); id < int64(it.total()); id++ {
		if want := map[bool]int{true: 0, false: 1}[id%3 == 0]; count[id] != want {
			t.Errorf("row %d delivered %d times, want %d", id, count[id], want)
		}
	}
	for name, want := range map[string]float64{
		"paimon_input_rows":                   float64(euRows),
		"paimon_input_files":                  float64(len(files)),
		"paimon_input_snapshots":              snapshots,
		"paimon_input_consumer_next_snapshot": snapshots + 1,
	} {
		if got := metrics.get(t, name); got != want {
			t.Errorf("metric %s = %v, want %v", name, got, want)
		}
	}
	last, err := it.tbl.Snapshots().Get(ctx, snapshots)
	if err != nil {
		t.Fatal(err)
	}
	lag := metrics.get(t, "paimon_input_lag_ms")
	if lo, hi := float64(start.UnixMilli()-last.TimeMillis), float64(end.UnixMilli()-last.TimeMillis); lag < lo || lag > hi {
		t.Errorf("lag %v ms, want the age of snapshot %d when emitted, in [%v, %v]", lag, snapshots, lo, hi)
	}
}
