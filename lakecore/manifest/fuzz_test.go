package manifest_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
)

// classified reports whether err wraps one of the package's sentinels: every
// decoding failure must say what kind of failure it is.
func classified(err error) bool {
	for _, s := range []error{manifest.ErrCorrupt, manifest.ErrUnsupportedFormat, manifest.ErrUnsupportedCodec,
		manifest.ErrUnsupportedVersion, manifest.ErrMissingField, manifest.ErrSchemaMismatch} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// seedFiles adds the fixture files whose name has prefix (and not
// "manifest-list-" unless asked) plus encodings of our own.
func seedFiles(f *testing.F, prefix string, own ...[]byte) {
	root := fixturetest.Dir(f)
	for _, p := range manifestFiles(f) {
		name := filepath.Base(p)
		if !strings.HasPrefix(name, prefix) || (prefix == "manifest-" && strings.HasPrefix(name, "manifest-list-")) {
			continue
		}
		_ = root
		f.Add(readFile(f, p))
	}
	for _, b := range own {
		f.Add(b)
	}
}

func mustEncode(f *testing.F, b []byte, err error) []byte {
	if err != nil {
		f.Fatal(err)
	}
	return b
}

func FuzzDecodeEntries(f *testing.F) {
	full, err := manifest.EncodeEntries([]manifest.Entry{fullEntry(1), minimalEntry()}, manifest.Codec{Name: "null"})
	seedFiles(f, "manifest-", mustEncode(f, full, err))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := manifest.DecodeEntries(data)
		if err != nil {
			if !classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		again, err := manifest.EncodeEntries(entries, manifest.Codec{Name: "null"})
		if err != nil {
			return // decodable but not writable (e.g. a null _NULL_COUNTS)
		}
		back, err := manifest.DecodeEntries(again)
		if err != nil || (len(entries) > 0 && !reflect.DeepEqual(back, entries)) {
			t.Fatalf("re-encoded entries differ: %v", err)
		}
	})
}

func FuzzDecodeFileMetas(f *testing.F) {
	full, err := manifest.EncodeFileMetas([]manifest.FileMeta{fullFileMeta(1)}, manifest.Codec{Name: "null"})
	seedFiles(f, "manifest-list-", mustEncode(f, full, err))
	f.Fuzz(func(t *testing.T, data []byte) {
		metas, err := manifest.DecodeFileMetas(data)
		if err != nil {
			if !classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		again, err := manifest.EncodeFileMetas(metas, manifest.Codec{Name: "null"})
		if err != nil {
			return
		}
		back, err := manifest.DecodeFileMetas(again)
		if err != nil || (len(metas) > 0 && !reflect.DeepEqual(back, metas)) {
			t.Fatalf("re-encoded metas differ: %v", err)
		}
	})
}

func FuzzDecodeIndexEntries(f *testing.F) {
	seedFiles(f, "index-manifest-")
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := manifest.DecodeIndexEntries(data)
		if err != nil {
			if !classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		again, err := manifest.EncodeIndexEntries(entries, manifest.Codec{Name: "null"})
		if err != nil {
			return
		}
		back, err := manifest.DecodeIndexEntries(again)
		if err != nil || (len(entries) > 0 && !reflect.DeepEqual(back, entries)) {
			t.Fatalf("re-encoded index entries differ: %v", err)
		}
	})
}

func FuzzDecodeDeletionVector(f *testing.F) {
	for _, g := range goldenDV {
		data := readFile(f, filepath.Join("testdata", g.file))
		f.Add(data[g.offset:], g.length)
	}
	f.Fuzz(func(t *testing.T, data []byte, length int32) {
		dv, n, err := manifest.DecodeDeletionVector(data, length)
		if err != nil {
			if !errors.Is(err, manifest.ErrCorrupt) && !errors.Is(err, manifest.ErrUnsupportedIndex) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if n > len(data) {
			t.Fatalf("consumed %d of %d bytes", n, len(data))
		}
		var count int64
		last := int64(-1)
		for p := range dv.All() {
			if p <= last || !dv.IsDeleted(p) {
				t.Fatalf("position %d after %d, deleted=%v", p, last, dv.IsDeleted(p))
			}
			last = p
			count++
		}
		if count != dv.Cardinality() {
			t.Fatalf("iterated %d positions, cardinality %d", count, dv.Cardinality())
		}
		// What decodes re-encodes (32-bit positions) to the same positions.
		pos := slices.Collect(dv.All())
		if count == 0 || last > 1<<31-1 {
			return
		}
		file, ranges, err := manifest.EncodeDeletionVectorsFile([]manifest.DataFileVector{{DataFile: "f", Positions: pos}})
		if err != nil {
			t.Fatalf("re-encode %d positions: %v", count, err)
		}
		again, _, err := manifest.DecodeDeletionVector(file[ranges[0].Offset:], ranges[0].Length)
		if err != nil {
			t.Fatalf("decode the re-encoded vector: %v", err)
		}
		if !slices.Equal(slices.Collect(again.All()), pos) {
			t.Fatal("re-encoded vector holds other positions")
		}
	})
}

// TestCorruptFixtures truncates fixture files at every length and flips every
// byte of a few: decoding must fail with a classified error or succeed, and
// never panic.
func TestCorruptFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	decoders := map[string]func([]byte) (int, error){
		"index-manifest-": func(b []byte) (int, error) { v, err := manifest.DecodeIndexEntries(b); return len(v), err },
		"manifest-list-":  func(b []byte) (int, error) { v, err := manifest.DecodeFileMetas(b); return len(v), err },
		"manifest-":       func(b []byte) (int, error) { v, err := manifest.DecodeEntries(b); return len(v), err },
	}
	picked := map[string]bool{}
	for _, p := range manifestFiles(t) {
		if strings.Contains(p, "orc-manifest") {
			continue
		}
		name := filepath.Base(p)
		prefix := "manifest-"
		for _, k := range []string{"index-manifest-", "manifest-list-"} {
			if strings.HasPrefix(name, k) {
				prefix = k
			}
		}
		// one file per kind and fixture
		key := filepath.Dir(p) + prefix
		if picked[key] {
			continue
		}
		picked[key] = true
		data := readFile(t, p)
		decode := decoders[prefix]
		all, err := decode(data)
		if err != nil {
			t.Fatal(err)
		}
		for n := range len(data) {
			// A cut at a block boundary is a valid, shorter file (Java bounds
			// reads by the recorded size for this reason); anything else fails.
			if got, err := decode(data[:n]); (err == nil && got >= all && all > 0) || (err != nil && !classified(err)) {
				t.Fatalf("%s truncated to %d bytes: %d records, %v", name, n, got, err)
			}
		}
		if strings.Contains(p, "rust-java08") || strings.Contains(p, "paimon-java20snap") {
			for i := range data {
				c := append([]byte{}, data...)
				c[i] ^= 0x5a
				if _, err := decode(c); err != nil && !classified(err) {
					t.Fatalf("%s with byte %d flipped: %v", name, i, err)
				}
			}
		}
	}
}
