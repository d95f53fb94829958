package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The periods of the freshness pipelines: the output's batching period and
// the input's discovery interval.
const (
	freshBatching  = 100 * time.Millisecond
	freshDiscovery = 100 * time.Millisecond
)

// measureFreshness is the write-to-visible latency: a generate -> paimon
// pipeline stamps each message with the time it was generated (it enters
// the output at once: no processors), and a paimon input -> consumer
// pipeline in the same process reads the row back and records now minus
// the stamp. Both run at once (batching period freshBatching, discovery
// interval freshDiscovery), on the local disk and on S3.
func measureFreshness(ctx context.Context, e *Env) (*Section, error) {
	runFor := time.Duration(e.pick(20, 3)) * time.Second
	const warmup = time.Second
	const rate = 200 // messages per second
	type result struct{ p50, p95, p99, max, n Sample }
	results := map[string]*result{"local": {}, "s3": {}}
	var s3Err error
	var bucket string
	if _, b, err := e.S3("bench-fresh"); err != nil {
		s3Err = err
	} else {
		bucket = b
	}
	for i := range e.Config.runs() {
		for _, where := range []string{"local", "s3"} {
			var wh string
			var srv *s3Server
			if where == "s3" {
				if s3Err != nil {
					continue
				}
				srv = e.s3
				wh = fmt.Sprintf("%s/fresh-%d", srv.warehouse(bucket), i)
			} else {
				wh = e.Dir(fmt.Sprintf("fresh-%d", i))
			}
			lat, err := freshnessRun(ctx, e, wh, srv, runFor, warmup, rate)
			if err != nil {
				return nil, fmt.Errorf("%s, run %d: %w", where, i+1, err)
			}
			r := results[where]
			r.p50 = append(r.p50, ms(percentile(lat, 50)))
			r.p95 = append(r.p95, ms(percentile(lat, 95)))
			r.p99 = append(r.p99, ms(percentile(lat, 99)))
			r.max = append(r.max, ms(percentile(lat, 100)))
			r.n = append(r.n, float64(len(lat)))
			e.Logf("   run %d %-5s p50 %.0f ms p95 %.0f ms p99 %.0f ms (%d rows)", i+1, where, ms(percentile(lat, 50)), ms(percentile(lat, 95)), ms(percentile(lat, 99)), len(lat))
		}
	}
	s := &Section{Title: "Freshness (write to visible)"}
	s.Intro = fmt.Sprintf(`A `+"`generate → paimon`"+` pipeline (%d messages/s, one per message batch, each stamped with `+"`timestamp_unix_nano()`"+` as it is generated; no processors, so that is when it enters the output; `+"`batching: {period: %v}`"+`) and a `+"`paimon`"+` input pipeline (`+"`discovery_interval: %v`"+`) run in one process for %v per run; the input's consumer records *now − stamp* for every row. The first %v of each run is left out (table creation, first connect). Latency in milliseconds.`,
		rate, freshBatching, freshDiscovery, runFor, warmup)
	t := Table{Header: []string{"Storage", "p50 ms", "p95 ms", "p99 ms", "max ms", "rows per run"}}
	for _, where := range []string{"local", "s3"} {
		r := results[where]
		label := "local disk"
		if where == "s3" {
			label = "S3 (versitygw on loopback)"
			if s3Err != nil {
				t.Rows = append(t.Rows, []string{label, "not measured: " + firstLine(s3Err.Error()), "", "", "", ""})
				continue
			}
		}
		t.Rows = append(t.Rows, []string{label, r.p50.Fmt(fMs), r.p95.Fmt(fMs), r.p99.Fmt(fMs), r.max.Fmt(fMs), r.n.Fmt(fInt)})
	}
	s.Tables = []Table{t}
	// What the periods alone explain: a row waits up to one batching
	// period for its batch to close and up to one discovery interval for
	// the reader's next poll, half of each on average.
	wait := ms(freshBatching/2 + freshDiscovery/2)
	if p50 := results["local"].p50.Median(); !math.IsNaN(p50) {
		rest := fmt.Sprintf("leaves %s ms for the commit, the discovery of the snapshot and the read", fMs(p50-wait))
		if p50 < wait {
			rest = "is below that"
		}
		s.Notes = append(s.Notes, fmt.Sprintf("A row waits up to %s for its batch to close and up to %s for the reader's next poll: %s ms on average from the two periods alone. The local p50 of %s ms %s.",
			fDur(freshBatching), fDur(freshDiscovery), fMs(wait), fMs(p50), rest))
	}
	s.figure("local_p95_ms", results["local"].p95.Median())
	s.figure("local_p50_ms", results["local"].p50.Median())
	s.figure("local_rows", results["local"].n.Median())
	if s3Err == nil {
		s.figure("s3_p95_ms", results["s3"].p95.Median())
	}
	return s, nil
}

func freshnessRun(ctx context.Context, e *Env, warehouse string, srv *s3Server, runFor, warmup time.Duration, rate int) ([]time.Duration, error) {
	cat, err := openBenchCatalog(ctx, warehouse, srv)
	if err != nil {
		return nil, err
	}
	mustType := func(s string) types.DataType { t, _ := types.Parse(s); return t }
	if _, err := cat.CreateTable(ctx, "bench", "fresh", lakecore.TableSpec{Fields: []types.DataField{
		{ID: 0, Name: "id", Type: mustType("BIGINT NOT NULL")},
		{ID: 1, Name: "sent_ns", Type: mustType("BIGINT NOT NULL")},
		{ID: 2, Name: "payload", Type: mustType("STRING")},
	}}); err != nil {
		return nil, err
	}

	var mu sync.Mutex
	var lat []time.Duration
	var rows int64
	start := time.Now()
	reader, err := stream{
		input: fmt.Sprintf(`
paimon:
  warehouse: %q
%s  database: bench
  table: fresh
  discovery_interval: %v
`, warehouse, s3YAML(srv), freshDiscovery),
		consume: func(_ context.Context, b service.MessageBatch) error {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			for _, m := range b {
				v, err := m.AsStructured()
				if err != nil {
					return err
				}
				obj, _ := v.(map[string]any)
				sent, ok := toInt64(obj["sent_ns"])
				if !ok {
					return fmt.Errorf("row without sent_ns: %v", v)
				}
				rows++
				if t := time.Unix(0, sent); t.Sub(start) >= warmup {
					lat = append(lat, now.Sub(t))
				}
			}
			return nil
		},
		log: e.log,
	}.build()
	if err != nil {
		return nil, err
	}
	writer, err := stream{
		input: fmt.Sprintf(`
generate:
  interval: %s
  mapping: |
    root.id = counter()
    root.sent_ns = timestamp_unix_nano()
    root.payload = "freshness probe"
`, time.Second/time.Duration(rate)),
		output: fmt.Sprintf(`
paimon:
  warehouse: %q
%s  database: bench
  table: fresh
  batching:
    count: 1000000
    period: %v
`, warehouse, s3YAML(srv), freshBatching),
		log: e.log,
	}.build()
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	readerDone := make(chan error, 1)
	go func() { readerDone <- reader.Run(runCtx) }()
	writerDone := make(chan error, 1)
	go func() { writerDone <- writer.Run(runCtx) }()

	select {
	case <-time.After(runFor):
	case err := <-writerDone:
		return nil, fmt.Errorf("writer stopped early: %v", err)
	case err := <-readerDone:
		return nil, fmt.Errorf("reader stopped early: %v", err)
	}
	if err := writer.StopWithin(30 * time.Second); err != nil {
		return nil, fmt.Errorf("stop writer: %w", err)
	}
	if err := <-writerDone; err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("writer: %w", err)
	}
	// Wait until the reader has seen every committed row.
	tbl, err := cat.OpenTable(ctx, "bench", "fresh")
	if err != nil {
		return nil, err
	}
	snap, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		return nil, err
	}
	want := *snap.TotalRecordCount
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := rows
		mu.Unlock()
		if got >= want {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("reader saw %d of %d rows 10 s after the writer stopped", got, want)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err := reader.StopWithin(30 * time.Second); err != nil {
		return nil, fmt.Errorf("stop reader: %w", err)
	}
	<-readerDone
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		return nil, errors.New("no rows read after the warm-up")
	}
	return lat, nil
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}
