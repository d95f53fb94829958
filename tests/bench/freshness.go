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
	type result struct{ p50, p95, p99, max, n, toCommit, toVisible Sample }
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
			lats, err := freshnessRun(ctx, e, wh, srv, runFor, warmup, rate)
			if err != nil {
				return nil, fmt.Errorf("%s, run %d: %w", where, i+1, err)
			}
			lat := lats.total
			r := results[where]
			r.toCommit = append(r.toCommit, ms(percentile(lats.toCommit, 95)))
			r.toVisible = append(r.toVisible, ms(percentile(lats.toVisible, 95)))
			r.p50 = append(r.p50, ms(percentile(lat, 50)))
			r.p95 = append(r.p95, ms(percentile(lat, 95)))
			r.p99 = append(r.p99, ms(percentile(lat, 99)))
			r.max = append(r.max, ms(percentile(lat, 100)))
			r.n = append(r.n, float64(len(lat)))
			e.Logf("   run %d %-5s p50 %.0f ms p95 %.0f ms p99 %.0f ms (%d rows); p95 to the commit %.0f ms, from the commit to visible %.0f ms",
				i+1, where, ms(percentile(lat, 50)), ms(percentile(lat, 95)), ms(percentile(lat, 99)), len(lat), ms(percentile(lats.toCommit, 95)), ms(percentile(lats.toVisible, 95)))
		}
	}
	s := &Section{Title: "Freshness (write to visible)"}
	s.Intro = fmt.Sprintf(`A `+"`generate → paimon`"+` pipeline (%d messages/s, one per message batch, each stamped with `+"`timestamp_unix_nano()`"+` as it is generated; no processors, so that is when it enters the output; `+"`batching: {period: %v}`"+`) and a `+"`paimon`"+` input pipeline (`+"`discovery_interval: %v`"+`) run in one process for %v per run; the input's consumer records *now − stamp* for every row. The first %v of each run is left out (table creation, first connect). Latency in milliseconds.`,
		rate, freshBatching, freshDiscovery, runFor, warmup)
	t := Table{Header: []string{"Storage", "p50 ms", "p95 ms", "p99 ms", "max ms", "rows per run", "p95 to the commit, ms", "p95 commit to visible, ms"}}
	for _, where := range []string{"local", "s3"} {
		r := results[where]
		label := "local disk"
		if where == "s3" {
			label = "S3 (versitygw on loopback)"
			if s3Err != nil {
				t.Rows = append(t.Rows, []string{label, "not measured: " + firstLine(s3Err.Error()), "", "", "", "", "", ""})
				continue
			}
		}
		t.Rows = append(t.Rows, []string{label, r.p50.Fmt(fMs), r.p95.Fmt(fMs), r.p99.Fmt(fMs), r.max.Fmt(fMs), r.n.Fmt(fInt), r.toCommit.Fmt(fMs), r.toVisible.Fmt(fMs)})
	}
	s.Tables = []Table{t}
	s.Notes = append(s.Notes, "The last two columns split each row's latency at its snapshot's commit time (the `paimon_commit_time` metadata, in milliseconds): *to the commit* is the wait for the batch to close plus writing its data file and manifests; *commit to visible* is the input's discovery of the snapshot, the read and the hand-over to the consumer.")
	// What the batching period alone explains: a row waits up to one
	// period for its batch to close, half of it on average. The input
	// does not add its discovery interval: on a local disk it watches the
	// snapshot directory, on S3 it probes for the next snapshot soon
	// after the last one.
	wait := ms(freshBatching / 2)
	if p50 := results["local"].p50.Median(); !math.IsNaN(p50) {
		rest := fmt.Sprintf("leaves %s ms for writing the batch, the commit, the discovery of the snapshot and the read", fMs(p50-wait))
		if p50 < wait {
			rest = "is below that"
		}
		s.Notes = append(s.Notes, fmt.Sprintf("A row waits up to %s for its batch to close, %s ms on average. The reader does not wait for its discovery interval (%s): on a local disk it watches the snapshot directory, on S3 it probes for the next snapshot's name soon after the last one (see `discovery_interval`). The local p50 of %s ms %s.",
			fDur(freshBatching), fMs(wait), fDur(freshDiscovery), fMs(p50), rest))
	}
	s.figure("local_p95_ms", results["local"].p95.Median())
	s.figure("local_p50_ms", results["local"].p50.Median())
	s.figure("local_rows", results["local"].n.Median())
	if s3Err == nil {
		s.figure("s3_p95_ms", results["s3"].p95.Median())
	}
	return s, nil
}

// freshLatencies are the latencies of the rows of one freshness run:
// total is now minus the stamp, split at the snapshot's commit time into
// toCommit and toVisible.
type freshLatencies struct {
	total, toCommit, toVisible []time.Duration
}

func freshnessRun(ctx context.Context, e *Env, warehouse string, srv *s3Server, runFor, warmup time.Duration, rate int) (freshLatencies, error) {
	cat, err := openBenchCatalog(ctx, warehouse, srv)
	if err != nil {
		return freshLatencies{}, err
	}
	mustType := func(s string) types.DataType { t, _ := types.Parse(s); return t }
	if _, err := cat.CreateTable(ctx, "bench", "fresh", lakecore.TableSpec{Fields: []types.DataField{
		{ID: 0, Name: "id", Type: mustType("BIGINT NOT NULL")},
		{ID: 1, Name: "sent_ns", Type: mustType("BIGINT NOT NULL")},
		{ID: 2, Name: "payload", Type: mustType("STRING")},
	}}); err != nil {
		return freshLatencies{}, err
	}

	var mu sync.Mutex
	var lat freshLatencies
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
				committed, err := commitTime(m)
				if err != nil {
					return err
				}
				rows++
				if t := time.Unix(0, sent); t.Sub(start) >= warmup {
					lat.total = append(lat.total, now.Sub(t))
					lat.toCommit = append(lat.toCommit, committed.Sub(t))
					lat.toVisible = append(lat.toVisible, now.Sub(committed))
				}
			}
			return nil
		},
		log: e.log,
	}.build()
	if err != nil {
		return freshLatencies{}, err
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
		return freshLatencies{}, err
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
		return freshLatencies{}, fmt.Errorf("writer stopped early: %v", err)
	case err := <-readerDone:
		return freshLatencies{}, fmt.Errorf("reader stopped early: %v", err)
	}
	if err := writer.StopWithin(30 * time.Second); err != nil {
		return freshLatencies{}, fmt.Errorf("stop writer: %w", err)
	}
	if err := <-writerDone; err != nil && !errors.Is(err, context.Canceled) {
		return freshLatencies{}, fmt.Errorf("writer: %w", err)
	}
	// Wait until the reader has seen every committed row.
	tbl, err := cat.OpenTable(ctx, "bench", "fresh")
	if err != nil {
		return freshLatencies{}, err
	}
	snap, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		return freshLatencies{}, err
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
			return freshLatencies{}, fmt.Errorf("reader saw %d of %d rows 10 s after the writer stopped", got, want)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return freshLatencies{}, ctx.Err()
		}
	}
	if err := reader.StopWithin(30 * time.Second); err != nil {
		return freshLatencies{}, fmt.Errorf("stop reader: %w", err)
	}
	<-readerDone
	mu.Lock()
	defer mu.Unlock()
	if len(lat.total) == 0 {
		return freshLatencies{}, errors.New("no rows read after the warm-up")
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

// commitTime is the commit time of the snapshot m was read from: its
// paimon_commit_time metadata, which the paimon input sets in RFC 3339
// with milliseconds.
func commitTime(m *service.Message) (time.Time, error) {
	s, ok := m.MetaGet("paimon_commit_time")
	if !ok {
		return time.Time{}, errors.New("row without paimon_commit_time metadata")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("paimon_commit_time %q: %w", s, err)
	}
	return t, nil
}
