// Package paymentevent is the rows the benchmarks write and read: payment
// events numbered n = 1, 2, ..., every value derived from n, so that a
// Benthos pipeline (tests/bench's generate mapping), lakecore's writers,
// parquet-go and the Java and Python peers all handle exactly the same
// rows. Row is the repetitive payment event (5,000 users, sequential
// times); UniqueRow is the same table with near-unique values.
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

// The near-unique payment events: the same columns, but values that do not
// repeat, as a table of real events holds. Row n's id and dt are the
// payment event's; every other value comes from splitmix64 (Mix64) of
// n<<2|k, one stream k a column group, so that the Java and Python peers
// (tests/interop: AppendBench.java, python/peer_bench.py, --dataset unique)
// reproduce every row bit for bit with 64-bit integer arithmetic alone:
//
//	user_id     h0 >> 44 (below 2^20: 644,336 distinct in 1,000,000 rows)
//	user        "u" + n + "-" + the 8 hex digits of h0's low 32 bits: unique
//	amount      h1 >> 31 cents (0 to 85,899,345.91: DECIMAL(10, 2))
//	country     Countries[(h2 >> 32) % 10]
//	method      Methods[h2 & 3]
//	event_time  EventMicros(n) + h3 % 60,000,000 - 30,000,000 (n ms after
//	            the epoch, give or take 30 s, to the microsecond)
//
// At 1,000,000 rows in 4 partitions a file's user dictionary would be about
// 5 MiB, far past parquet-mr's 1 MiB dictionary page
// (parquet.dictionary.page.size), so Java's writer falls back to PLAIN for
// it, and event_time has 999,519 distinct values in 1,000,000 rows, in no
// order.

// uniqueGolden is splitmix64's increment, 2^64 / φ.
const uniqueGolden = 0x9E3779B97F4A7C15

// Mix64 is splitmix64 (Steele, Lea and Flood 2014; Java's
// SplittableRandom.mix64 after its golden-ratio increment) of x: the value
// the generator seeded with x returns first.
func Mix64(x uint64) uint64 {
	z := x + uniqueGolden
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// uniqueHash is stream k (0..3) of row n's near-unique values.
func uniqueHash(n int64, k uint64) uint64 { return Mix64(uint64(n)<<2 | k) }

// UniqueUserID is the user_id of near-unique row n.
func UniqueUserID(n int64) int64 { return int64(uniqueHash(n, 0) >> 44) }

// UniqueUserName is the user of near-unique row n: unique to the row.
func UniqueUserName(n int64) string {
	return fmt.Sprintf("u%d-%08x", n, uint32(uniqueHash(n, 0)))
}

// UniqueAmountCents is the unscaled amount (DECIMAL(10, 2)) of near-unique
// row n.
func UniqueAmountCents(n int64) int64 { return int64(uniqueHash(n, 1) >> 31) }

// UniqueEventMicros is the event_time of near-unique row n, in
// microseconds since the epoch.
func UniqueEventMicros(n int64) int64 {
	return EventMicros(n) + int64(uniqueHash(n, 3)%60_000_000) - 30_000_000
}

// UniqueRow is near-unique row n as lakecore's Go values, in Columns order.
func UniqueRow(n int64, partitions int) []any {
	h2 := uniqueHash(n, 2)
	us := UniqueEventMicros(n)
	return []any{
		n, UniqueUserID(n), UniqueUserName(n), types.NewDecimal(UniqueAmountCents(n), 2),
		Countries[(h2>>32)%10], Methods[h2&3],
		types.Timestamp{Millis: us / 1000, NanoOfMilli: int32(us%1000) * 1000},
		Partition(n, partitions),
	}
}
