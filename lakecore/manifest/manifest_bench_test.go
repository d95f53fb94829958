package manifest_test

import (
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
)

func hundredEntries() []manifest.Entry {
	entries := make([]manifest.Entry, 100)
	for i := range entries {
		entries[i] = fullEntry(i)
	}
	return entries
}

// BenchmarkDecodeEntries100 decodes a zstd manifest of 100 entries.
func BenchmarkDecodeEntries100(b *testing.B) {
	data, err := manifest.EncodeEntries(hundredEntries(), manifest.Codec{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		entries, err := manifest.DecodeEntries(data)
		if err != nil || len(entries) != 100 {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeEntries100 encodes 100 entries with zstd level 1.
func BenchmarkEncodeEntries100(b *testing.B) {
	entries := hundredEntries()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := manifest.EncodeEntries(entries, manifest.Codec{}); err != nil {
			b.Fatal(err)
		}
	}
}
