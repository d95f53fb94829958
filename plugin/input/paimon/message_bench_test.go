package paimon

import (
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// BenchmarkMessage renders one row of the payment event of tests/bench
// (BIGINT x2, STRING x4, DECIMAL(10,2), TIMESTAMP(6)) into the input's
// message: the per-row cost of the message shape. cpu-ns/op is the
// process's CPU time per message (GC included), steadier than ns/op on a
// shared machine.
func BenchmarkMessage(b *testing.B) {
	fields := types.MustParse("ROW<id BIGINT NOT NULL, user_id BIGINT NOT NULL, user STRING NOT NULL, amount DECIMAL(10, 2) NOT NULL, " +
		"country STRING NOT NULL, method STRING NOT NULL, event_time TIMESTAMP(6) NOT NULL, dt STRING NOT NULL>").Fields
	row := []any{int64(123456), int64(4321), "user-4321", types.NewDecimal(-45678, 2), "DE", "card",
		types.Timestamp{Millis: 1767225723456, NanoOfMilli: 789000}, "d002"}
	build := newMessageBuilder(fields, false)
	mv := newMetaValues(rowconv.RowMeta{SnapshotID: 3, CommitKind: "APPEND", CommitTimeMillis: 1767225600000, Partition: "dt=d002", File: "data-1.parquet"}, false, AllMetadataKeys)
	var scratch rowScratch
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		if _, err := build.message(row, mv, 17, noKind, &scratch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
}
