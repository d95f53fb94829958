package datafile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestWritersShareCompressor: writers sharing one Compressor from several
// goroutines write exactly the files they write with a compressor each,
// for every codec, over many small row groups (many page compressions).
func TestWritersShareCompressor(t *testing.T) {
	fields := []types.DataField{wField(0, "id", types.BigIntType()), wField(1, "s", types.StringType())}
	const writers = 4
	rowsOf := func(w int) [][]any {
		rows := make([][]any, 5000)
		for i := range rows {
			rows[i] = []any{int64(w*1_000_000 + i), "value " + strconv.Itoa((i*7+w)%900)}
		}
		return rows
	}
	for _, codec := range []string{"zstd", "snappy", "gzip", "lz4", "none"} {
		t.Run(codec, func(t *testing.T) {
			want := make([][]byte, writers)
			for w := range want {
				want[w], _ = wWriteFile(t, fields, WriterOptions{Compression: codec, RowGroupSize: 16 << 10}, rowsOf(w))
			}
			comp, err := NewCompressor(codec, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]bytes.Buffer, writers)
			errs := make([]error, writers)
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[w] = writeAll(&got[w], fields, WriterOptions{Compression: "lzo", Compressor: comp, RowGroupSize: 16 << 10}, rowsOf(w))
				}()
			}
			wg.Wait()
			for w := range writers {
				if errs[w] != nil {
					t.Fatalf("writer %d: %v", w, errs[w])
				}
				if !bytes.Equal(got[w].Bytes(), want[w]) {
					t.Errorf("writer %d: %d bytes with the shared compressor, %d with its own", w, got[w].Len(), len(want[w]))
				}
			}
		})
	}
}

// writeAll writes rows to out with a new Writer; for goroutines and
// benchmarks, where wWriteFile's t.Fatal does not fit.
func writeAll(out io.Writer, fields []types.DataField, o WriterOptions, rows [][]any) error {
	w, err := NewWriter(out, fields, o)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if err := w.Write(r); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
	}
	_, err = w.Close()
	return err
}

func TestNewCompressorRejects(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level int
	}{{"lzo", 0}, {"zstd", 23}, {"zstd", -1}, {"brotli", 0}} {
		if _, err := NewCompressor(tc.name, tc.level); !errors.Is(err, ErrInvalidWriterOptions) {
			t.Errorf("NewCompressor(%q, %d) = %v, want ErrInvalidWriterOptions", tc.name, tc.level, err)
		}
	}
}

// TestZstdCodesLiteralsWithoutMatches: a page of unique numbers (PLAIN
// INT64 values below 2^34, so five of each eight bytes are zero) has no
// matches for zstd to find, but its literals are skewed; libzstd (Java's
// zstd-jni) Huffman-codes them at level 1, and so must lakecore, or such
// a column is stored as large as its values.
func TestZstdCodesLiteralsWithoutMatches(t *testing.T) {
	c, err := NewCompressor("zstd", 1)
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, 0, 64<<10)
	x := uint64(1)
	for len(page) < cap(page) {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		page = binary.LittleEndian.AppendUint64(page, x>>30)
	}
	out, err := c.codec.Encode(nil, page)
	if err != nil {
		t.Fatal(err)
	}
	if ratio := float64(len(out)) / float64(len(page)); ratio > 0.8 {
		t.Fatalf("a page of %d bytes of unique small numbers compresses to %d (%.2f), want at most 0.8 of it", len(page), len(out), ratio)
	}
	back, err := c.codec.Decode(nil, out)
	if err != nil || !bytes.Equal(back, page) {
		t.Fatalf("round trip: %v, equal %v", err, bytes.Equal(back, page))
	}
}
