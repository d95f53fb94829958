package spillfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// testRecords returns n records of random sizes, some empty and, when
// large, some larger than a block.
func testRecords(n int, seed uint64, large bool) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][]byte, n)
	for i := range out {
		size := rng.IntN(200)
		switch rng.IntN(20) {
		case 0:
			size = 0
		case 1:
			if !large {
				break
			}
			size = BlockSize + rng.IntN(3*BlockSize)
		}
		rec := make([]byte, size)
		for j := range rec { // compressible, not constant
			rec[j] = byte('a' + rng.IntN(4))
		}
		out[i] = rec
	}
	return out
}

func writeFile(t testing.TB, path string, codec *Codec, recs [][]byte) {
	t.Helper()
	w, err := Create(path, codec)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if w.Records() != int64(len(recs)) {
		t.Fatalf("Records() = %d, want %d", w.Records(), len(recs))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != w.Size() {
		t.Fatalf("file of %v bytes (%v), Size() %d", st.Size(), err, w.Size())
	}
}

// readAll reads every record of data.
func readAll(data []byte, codec *Codec) ([][]byte, error) {
	r, err := NewReader("test", bytes.NewReader(data), codec)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, bytes.Clone(rec))
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"zstd", "lz4", "lzo", "none", "ZSTD"} {
		for _, n := range []int{0, 1, 500} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				codec, err := NewCodec(name, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer codec.Close()
				recs := testRecords(n, uint64(n), true)
				p := filepath.Join(dir, fmt.Sprintf("%s-%d", name, n))
				writeFile(t, p, codec, recs)
				// Read through Open with another codec: the header says which.
				other, _ := NewCodec("none", 0)
				defer other.Close()
				r, err := Open(p, other)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				for i := 0; ; i++ {
					rec, err := r.Next()
					if errors.Is(err, io.EOF) {
						if i != len(recs) {
							t.Fatalf("EOF after %d records, want %d", i, len(recs))
						}
						if _, err := r.Next(); !errors.Is(err, io.EOF) {
							t.Fatalf("Next after EOF: %v", err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if i >= len(recs) || !bytes.Equal(rec, recs[i]) {
						t.Fatalf("record %d differs (%d bytes)", i, len(rec))
					}
				}
			})
		}
	}
}

func TestNewCodecInvalid(t *testing.T) {
	for _, c := range []struct {
		name  string
		level int
	}{{"snappy", 0}, {"gzip", 0}, {"zstd", 23}, {"zstd", -1}} {
		if _, err := NewCodec(c.name, c.level); !errors.Is(err, ErrInvalidCompression) {
			t.Errorf("NewCodec(%q, %d): %v, want ErrInvalidCompression", c.name, c.level, err)
		}
	}
}

// TestCorrupt: every truncation and every flipped byte of a file gives an
// error wrapping ErrCorrupt (or, for a flip inside a payload that the
// block checksum covers, never the written records unchanged).
func TestCorrupt(t *testing.T) {
	for _, name := range []string{"zstd", "lz4", "none"} {
		t.Run(name, func(t *testing.T) {
			codec, _ := NewCodec(name, 0)
			defer codec.Close()
			recs := testRecords(40, 3, true)
			p := filepath.Join(t.TempDir(), "f")
			writeFile(t, p, codec, recs)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for n := 0; n < len(data); n += max(1, len(data)/500) {
				if _, err := readAll(data[:n], codec); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("truncated to %d of %d bytes: %v, want ErrCorrupt", n, len(data), err)
				}
			}
			if _, err := readAll(append(bytes.Clone(data), 0), codec); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("a byte after the end: %v, want ErrCorrupt", err)
			}
			rng := rand.New(rand.NewPCG(5, 6))
			for range 300 {
				bad := bytes.Clone(data)
				i := rng.IntN(len(bad))
				bad[i] ^= byte(1 + rng.IntN(255))
				if _, err := readAll(bad, codec); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("byte %d of %d flipped: %v, want ErrCorrupt", i, len(data), err)
				}
			}
		})
	}
}

// FuzzReader: reading whatever bytes never panics, every error wraps
// ErrCorrupt, and the records read fit in the input's raw bytes.
func FuzzReader(f *testing.F) {
	dir := f.TempDir()
	for i, name := range []string{"zstd", "lz4", "none"} {
		codec, _ := NewCodec(name, 0)
		p := filepath.Join(dir, name)
		writeFile(f, p, codec, testRecords(3+i*5, uint64(i), false))
		codec.Close()
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{})
	// Seeds stay small (no record spans blocks): the fuzzer minimizes
	// every new input, which takes long on 100 KiB ones.
	codec, _ := NewCodec("none", 0)
	defer codec.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := readAll(data, codec)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		total := 0
		for _, r := range recs {
			total += len(r)
		}
		// No codec expands beyond what 64 KiB blocks from the input allow.
		if limit := (len(data)/blockHead + 1) * BlockSize; total > limit {
			t.Fatalf("%d record bytes from %d input bytes", total, len(data))
		}
	})
}
