package rowconv

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// BenchmarkConvertMessage measures message -> row for a typical event:
// JSON parsing by Benthos (AsStructured) plus conversion.
func BenchmarkConvertMessage(b *testing.B) {
	fields := types.MustParse("ROW<id BIGINT NOT NULL, ts TIMESTAMP(3) WITH LOCAL TIME ZONE, user STRING, " +
		"amount DECIMAL(10, 2), country CHAR(2), tags ARRAY<STRING>, dt STRING>").Fields
	conv, err := NewConverter(fields, ConvertOptions{})
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"id": 123456789, "ts": "2024-05-30T12:00:00.123Z", "user": "alice", "amount": "1234.50", ` +
		`"country": "DE", "tags": ["a", "b"], "dt": "2024-05-30"}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := conv.ConvertMessage(service.NewMessage(raw)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertStructured measures conversion alone, on an already
// parsed message.
func BenchmarkConvertStructured(b *testing.B) {
	fields := types.MustParse("ROW<id BIGINT NOT NULL, ts TIMESTAMP(3) WITH LOCAL TIME ZONE, user STRING, " +
		"amount DECIMAL(10, 2), country CHAR(2), tags ARRAY<STRING>, dt STRING>").Fields
	conv, err := NewConverter(fields, ConvertOptions{})
	if err != nil {
		b.Fatal(err)
	}
	v := jsonValue(b, `{"id": 123456789, "ts": "2024-05-30T12:00:00.123Z", "user": "alice", "amount": "1234.50", `+
		`"country": "DE", "tags": ["a", "b"], "dt": "2024-05-30"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := conv.Convert(v); err != nil {
			b.Fatal(err)
		}
	}
}
