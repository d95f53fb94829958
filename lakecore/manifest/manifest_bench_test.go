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

// BenchmarkDecodeEntries100 decodes a zstd manifest of 100 entries with
// one Decoder kept across files, as the scan planner and the committer do,
// and with the package function, which builds a new one each call.
func BenchmarkDecodeEntries100(b *testing.B) {
	data, err := manifest.EncodeEntries(hundredEntries(), manifest.Codec{})
	if err != nil {
		b.Fatal(err)
	}
	d := manifest.NewDecoder()
	for _, bc := range []struct {
		name   string
		decode func([]byte) ([]manifest.Entry, error)
	}{{"Decoder", d.DecodeEntries}, {"OneOff", manifest.DecodeEntries}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				entries, err := bc.decode(data)
				if err != nil || len(entries) != 100 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeEntries100 encodes 100 entries with zstd level 1, with one
// Encoder kept across files, as the committer does, and with the package
// function, which builds a new one each call.
func BenchmarkEncodeEntries100(b *testing.B) {
	entries := hundredEntries()
	e := manifest.NewEncoder(manifest.Codec{})
	oneOff := func(entries []manifest.Entry) ([]byte, error) {
		return manifest.EncodeEntries(entries, manifest.Codec{})
	}
	for _, bc := range []struct {
		name   string
		encode func([]manifest.Entry) ([]byte, error)
	}{{"Encoder", e.EncodeEntries}, {"OneOff", oneOff}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.encode(entries); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
