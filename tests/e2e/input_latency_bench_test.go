package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
)

// BenchmarkInputFreshness measures write-to-visible latency: a generate
// input makes 200 messages/s stamped with their creation time, the paimon
// output commits them with batching period 100 ms, and a paimon input with
// discovery_interval 100 ms tails the table in the same process; the
// latency of a row is the time from its creation to its arrival at the
// input's consumer. Reports p50, p95 and p99 over 15 s (after 2 s of
// warm-up), on a local disk and on the S3 test server (versitygw).
// Targets (issue #6): p95 <= 300 ms on a local disk.
func BenchmarkInputFreshness(b *testing.B) {
	b.Run("local", func(b *testing.B) {
		for b.Loop() {
			freshness(b, b.TempDir(), storage.S3Config{})
		}
	})
	b.Run("s3", func(b *testing.B) {
		cfg, bucket := s3test.Server(b)
		for b.Loop() {
			freshness(b, "s3://"+bucket+"/wh"+fmt.Sprint(time.Now().UnixNano()), cfg)
		}
	})
}

func freshness(b *testing.B, warehouse string, s3 storage.S3Config) {
	s3YAML := ""
	if s3.Endpoint != "" {
		s3YAML = fmt.Sprintf("    s3: { endpoint: %s, region: %s, force_path_style: true, credentials: { id: %s, secret: %s } }\n",
			s3.Endpoint, s3.Region, s3.AccessKeyID, s3.SecretAccessKey)
	}
	table := fmt.Sprintf("    warehouse: %s\n    table: fresh\n%s", warehouse, s3YAML)

	measureFreshness(b, `generate:
  interval: 5ms
  mapping: 'root = {"id": counter(), "sent": now().ts_unix_nano()}'
`, "paimon:\n"+table+`    batching: { period: 100ms }
    create_table:
      enabled: true
      schema: [ { name: id, type: BIGINT }, { name: sent, type: BIGINT } ]
`, "paimon:\n"+table+"    scan_mode: latest\n    discovery_interval: 100ms\n")
}

// measureFreshness runs a writer stream (input and output YAML) and a
// reader stream (input YAML) for 15 s and reports the p50, p95 and p99 of
// the time from each row's `sent` field (unix nanoseconds) to its arrival
// at the reader, after 2 s of warm-up; removals (-U, -D) are not counted.
func measureFreshness(b *testing.B, writerIn, writerOut, readerIn string) {
	const run, warmup = 15 * time.Second, 2 * time.Second
	// The writer creates the table; the reader starts once it exists.
	wb := service.NewStreamBuilder()
	_ = wb.SetLoggerYAML("level: WARN")
	inMust(b, wb.AddInputYAML(writerIn))
	inMust(b, wb.AddOutputYAML(writerOut))
	writer, err := wb.Build()
	inMust(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = writer.Run(ctx) }()

	var mu sync.Mutex
	var lat []time.Duration
	start := time.Now()
	rb := service.NewStreamBuilder()
	_ = rb.SetLoggerYAML("level: WARN")
	inMust(b, rb.AddInputYAML(readerIn))
	inMust(b, rb.AddBatchConsumerFunc(func(_ context.Context, batch service.MessageBatch) error {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		for _, m := range batch {
			if k, _ := m.MetaGet("paimon_row_kind"); k == "-D" || k == "-U" {
				continue
			}
			v, err := m.AsStructured()
			if err != nil {
				return err
			}
			sent, _ := v.(map[string]any)["sent"].(int64)
			if time.Unix(0, sent).After(start.Add(warmup)) {
				lat = append(lat, now.Sub(time.Unix(0, sent)))
			}
		}
		return nil
	}))
	reader, err := rb.Build()
	inMust(b, err)
	go func() { _ = reader.Run(ctx) }()

	time.Sleep(run) // the measurement window
	_ = writer.StopWithin(10 * time.Second)
	_ = reader.StopWithin(10 * time.Second)

	mu.Lock()
	defer mu.Unlock()
	if len(lat) < 100 {
		b.Fatalf("only %d samples", len(lat))
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.95), "p95-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat)), "samples")
}

func inMust(b testing.TB, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
