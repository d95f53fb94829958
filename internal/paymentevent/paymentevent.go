// Package paymentevent is the rows the benchmarks write and read: payment
// events numbered n = 1, 2, ..., every value derived from n, so that a
// Benthos pipeline (tests/bench's generate mapping), lakecore's writers,
// parquet-go and the Java and Python peers all handle exactly the same
// rows.
package paymentevent

import (
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Columns is the table schema, in order; every column NOT NULL, so that a
// parquet-go baseline of required columns has the Parquet schema of the
// table's files.
var Columns = []struct{ Name, Type string }{
	{"id", "BIGINT NOT NULL"},
	{"user_id", "BIGINT NOT NULL"},
	{"user", "STRING NOT NULL"},
	{"amount", "DECIMAL(10, 2) NOT NULL"},
	{"country", "STRING NOT NULL"},
	{"method", "STRING NOT NULL"},
	{"event_time", "TIMESTAMP(6) NOT NULL"},
	{"dt", "STRING NOT NULL"},
}

var (
	// Countries are the values of country: row n has Countries[n%10].
	Countries = []string{"DE", "FR", "US", "GB", "JP", "BR", "IN", "ES", "NL", "CA"}
	// Methods are the values of method: row n has Methods[n%4].
	Methods = []string{"card", "paypal", "sepa", "apple_pay"}
)

// EpochMicros is 2026-01-01T00:00:00Z; event n happens n ms later.
const EpochMicros = 1767225600000000

// Fields is Columns as lakecore fields (ids 0, 1, ...).
func Fields() []types.DataField {
	out := make([]types.DataField, len(Columns))
	for i, c := range Columns {
		out[i] = types.DataField{ID: i, Name: c.Name, Type: types.MustParse(c.Type)}
	}
	return out
}

// User is the user_id of row n (5,000 distinct users).
func User(n int64) int64 { return n * 7919 % 5000 }

// UserName is the user of row n.
func UserName(n int64) string { return fmt.Sprintf("user-%04d", User(n)) }

// AmountCents is the unscaled amount (DECIMAL(10, 2)) of row n.
func AmountCents(n int64) int64 { return (n%500)*100 + n%100 }

// EventMicros is the event_time of row n, in microseconds since the epoch.
func EventMicros(n int64) int64 { return EpochMicros + n*1000 }

// Partition is the dt of row n among partitions partitions.
func Partition(n int64, partitions int) string {
	return fmt.Sprintf("d%03d", n%int64(partitions))
}

// Row is row n as lakecore's Go values, in Columns order.
func Row(n int64, partitions int) []any {
	us := EventMicros(n)
	return []any{
		n, User(n), UserName(n), types.NewDecimal(AmountCents(n), 2), Countries[n%10], Methods[n%4],
		types.Timestamp{Millis: us / 1000, NanoOfMilli: int32(us%1000) * 1000},
		Partition(n, partitions),
	}
}
