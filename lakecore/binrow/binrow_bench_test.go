package binrow_test

import (
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// A typical partition row: a date string and an hour.
var (
	benchPartTypes  = []types.DataType{strT, intT}
	benchPartValues = []any{"2024-05-30", int32(12)}
	benchPartKeys   = []types.DataField{{Name: "dt", Type: strT}, {Name: "hr", Type: intT}}
)

func BenchmarkEncodePartition(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := binrow.Encode(benchPartTypes, benchPartValues); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSerializePartition(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := binrow.Serialize(benchPartTypes, benchPartValues); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodePartition(b *testing.B) {
	row, err := binrow.Encode(benchPartTypes, benchPartValues)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := binrow.Decode(benchPartTypes, row); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHash(b *testing.B) {
	row, err := binrow.Encode(benchPartTypes, benchPartValues)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(row)))
	b.ReportAllocs()
	for b.Loop() {
		binrow.Hash(row)
	}
}

// BenchmarkBucketOfIntKey is the per-row cost of a fixed-bucket writer with
// an INT bucket key: encode the key row, then hash it.
func BenchmarkBucketOfIntKey(b *testing.B) {
	keyTypes := []types.DataType{intT}
	key := []any{int32(0)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		key[0] = int32(i)
		row, err := binrow.Encode(keyTypes, key)
		if err != nil {
			b.Fatal(err)
		}
		binrow.Bucket(row, 16)
	}
}

func BenchmarkPartitionPath(b *testing.B) {
	o := binrow.DefaultPartitionOptions()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := binrow.PartitionPath(benchPartKeys, benchPartValues, o); err != nil {
			b.Fatal(err)
		}
	}
}
