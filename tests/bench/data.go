package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/benthos-paimon/benthos-paimon/internal/paymentevent"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The rows of the write, memory and tail benchmarks are
// internal/paymentevent's payment events, one per message, numbered n = 1,
// 2, ... (Benthos' counter()).

// pqRow is the parquet-go baseline's row: the same Parquet types as
// lakecore writes for benchColumns.
type pqRow struct {
	ID        int64  `parquet:"id"`
	UserID    int64  `parquet:"user_id"`
	User      string `parquet:"user"`
	Amount    int64  `parquet:"amount,decimal(2:10)"`
	Country   string `parquet:"country"`
	Method    string `parquet:"method"`
	EventTime int64  `parquet:"event_time,timestamp(microsecond)"`
	Dt        string `parquet:"dt"`
}

// pqDictRow is pqRow with its strings dictionary-encoded, as lakecore's
// writer (and Java Paimon's) encodes them: the same-encoding baseline.
type pqDictRow struct {
	ID        int64  `parquet:"id"`
	UserID    int64  `parquet:"user_id"`
	User      string `parquet:"user,dict"`
	Amount    int64  `parquet:"amount,decimal(2:10)"`
	Country   string `parquet:"country,dict"`
	Method    string `parquet:"method,dict"`
	EventTime int64  `parquet:"event_time,timestamp(microsecond)"`
	Dt        string `parquet:"dt,dict"`
}

func pqRowAt(n int64, partitions int) pqRow {
	return pqRow{
		ID: n, UserID: paymentevent.User(n), User: paymentevent.UserName(n),
		Amount:  paymentevent.AmountCents(n),
		Country: paymentevent.Countries[n%10], Method: paymentevent.Methods[n%4],
		EventTime: paymentevent.EventMicros(n),
		Dt:        paymentevent.Partition(n, partitions),
	}
}

// anyRow converts a pqRow to lakecore's Go values in schema order
// (paymentevent.Row of its n).
func anyRow(r pqRow) []any {
	return []any{
		r.ID, r.UserID, r.User, types.NewDecimal(r.Amount, 2), r.Country, r.Method,
		types.Timestamp{Millis: r.EventTime / 1000, NanoOfMilli: int32(r.EventTime%1000) * 1000},
		r.Dt,
	}
}

// generateYAML is a Benthos generate input emitting rows 1..count as JSON
// objects equal to pqRowAt(n, partitions) (decimal as text, the timestamp
// as epoch microseconds).
func generateYAML(count, partitions, batchSize int) string {
	return fmt.Sprintf(`
generate:
  count: %d
  interval: ""
  batch_size: %d
  mapping: |
    let n = counter()
    let u = $n * 7919 %% 5000
    root.id = $n
    root.user_id = $u
    root.user = "user-%%04d".format($u)
    root.amount = "%%d.%%02d".format($n %% 500, $n %% 100)
    root.country = %s.index($n %% 10)
    root.method = %s.index($n %% 4)
    root.event_time = %d + $n * 1000
    root.dt = "d%%03d".format($n %% %d)
`, count, batchSize, jsonList(paymentevent.Countries), jsonList(paymentevent.Methods), paymentevent.EpochMicros, partitions)
}

func jsonList(s []string) string {
	return `["` + strings.Join(s, `", "`) + `"]`
}

// schemaYAML is the create_table.schema of the paimon output.
func schemaYAML(indent string) string {
	var b strings.Builder
	for _, c := range paymentevent.Columns {
		fmt.Fprintf(&b, "%s- { name: %s, type: %q }\n", indent, c.Name, c.Type)
	}
	return b.String()
}

// paimonOutputYAML is the paimon output writing the bench table.
func paimonOutputYAML(warehouse string, s3 *s3Server, batchCount int, period string) string {
	return fmt.Sprintf(`
paimon:
  warehouse: %q
%s  database: bench
  table: events
  timestamp_unit: us
  create_table:
    enabled: true
    schema:
%s    partition_keys: [ dt ]
  batching:
    count: %d
    period: %s
`, warehouse, s3YAML(s3), schemaYAML("      "), batchCount, period)
}

// s3YAML is the s3 block of a plugin config for the server, or "".
func s3YAML(s *s3Server) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf(`  s3:
    endpoint: %q
    region: %q
    force_path_style: true
    credentials: { id: %q, secret: %q }
`, s.cfg.Endpoint, s.cfg.Region, s.cfg.AccessKeyID, s.cfg.SecretAccessKey)
}

// openBenchCatalog opens the warehouse, on s3 when it is not nil.
func openBenchCatalog(ctx context.Context, warehouse string, s3 *s3Server) (*lakecore.Catalog, error) {
	var cfg storage.S3Config
	if s3 != nil {
		cfg = s3.cfg
	}
	return lakecore.OpenCatalog(ctx, warehouse, cfg)
}

// createBenchTable creates bench.events in the warehouse.
func createBenchTable(ctx context.Context, warehouse string, s3 *s3Server, options map[string]string) (*lakecore.Table, error) {
	cat, err := openBenchCatalog(ctx, warehouse, s3)
	if err != nil {
		return nil, err
	}
	return cat.CreateTable(ctx, "bench", "events", lakecore.TableSpec{Fields: paymentevent.Fields(), PartitionKeys: []string{"dt"}, Options: options})
}

// openBenchTable opens bench.events.
func openBenchTable(ctx context.Context, warehouse string, s3 *s3Server) (*lakecore.Table, error) {
	cat, err := openBenchCatalog(ctx, warehouse, s3)
	if err != nil {
		return nil, err
	}
	return cat.OpenTable(ctx, "bench", "events")
}

// parquetWriterOptions match lakecore's defaults: zstd at level 1
// (file.compression.zstd-level) and a 4 MiB row group byte budget is not
// expressible in parquet-go, so its default row groups are kept.
func parquetWriterOptions() []parquet.WriterOption {
	return []parquet.WriterOption{parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest})}
}
