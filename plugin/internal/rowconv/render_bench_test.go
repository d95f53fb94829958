package rowconv

import (
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// BenchmarkNewRowMessage measures row -> message with metadata for a typical
// event row, plus serialisation as an output would do it.
func BenchmarkNewRowMessage(b *testing.B) {
	fields := types.MustParse("ROW<id BIGINT NOT NULL, ts TIMESTAMP(3) WITH LOCAL TIME ZONE, user STRING, " +
		"amount DECIMAL(10, 2), country CHAR(2), tags ARRAY<STRING>, dt STRING>").Fields
	row := []any{int64(123456789), types.Timestamp{Millis: 1717070400123}, "alice", types.NewDecimal(123450, 2),
		"DE", []any{"a", "b"}, "2024-05-30"}
	meta := RowMeta{SnapshotID: 42, CommitKind: "APPEND", CommitTimeMillis: 1717070400123, Partition: "dt=2024-05-30", File: "data-x-0.parquet"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		meta.Row = int64(i)
		msg, err := NewRowMessage(fields, row, meta)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := msg.AsBytes(); err != nil {
			b.Fatal(err)
		}
	}
}
