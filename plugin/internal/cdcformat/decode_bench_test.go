package cdcformat_test

import (
	"testing"

	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
)

// BenchmarkDecodeDebezium decodes Paimon's all-types Debezium message with its
// schema (76 columns, every encoded type), the expensive case: the schema is
// parsed with every message.
func BenchmarkDecodeDebezium(b *testing.B) {
	msg := lines(b, "debezium/schema-alltype.txt")[0]
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cdcformat.Decode(cdcformat.Debezium, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeDebeziumNoSchema decodes a small update without a schema,
// the common shape with schemas.enable=false.
func BenchmarkDecodeDebeziumNoSchema(b *testing.B) {
	msg := lines(b, "debezium/schemaevolution-data-3.txt")[2]
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cdcformat.Decode(cdcformat.Debezium, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecoderDebezium is BenchmarkDecodeDebezium through a Decoder,
// which parses the repeated schema once.
func BenchmarkDecoderDebezium(b *testing.B) {
	msg := lines(b, "debezium/schema-alltype.txt")[0]
	d, err := cdcformat.NewDecoder(cdcformat.Debezium)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(msg); err != nil {
			b.Fatal(err)
		}
	}
}
