package datafile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// javaLZ4File returns testdata/java-lz4-hadoop.parquet (see
// TestReadJavaHadoopLZ4) and its fields.
func javaLZ4File(t *testing.T) ([]byte, []types.DataField) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "java-lz4-hadoop.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return data, []types.DataField{
		rdField(0, "id", types.IntType()),
		rdField(1, "s", types.StringType()),
		rdField(2, "arr", types.ArrayType(types.IntType())),
		rdField(3, "d", types.DoubleType()),
	}
}

// testdata/java-lz4-hadoop.parquet was written by Java Paimon 1.4.2
// (parquet-mr 1.16.0) with file.compression=lz4 through the interop oracle
// (tests/interop: `paimon-java paimon1 write`): 301 rows of
// id INT, s STRING, arr ARRAY<INT>, d DOUBLE; row i < 300 has
// s = "row-<i%7>" (NULL when i%5 == 0), arr = [i, NULL, -i] (NULL when
// i%3 == 0), d = i/2; row 300 has id 1000, a 400 000-character s
// ("abcdefghij" repeated, larger than Hadoop's 256 KiB LZ4 buffer, so its
// page holds several chunks), arr = [] and d NULL. The column chunks use the
// deprecated LZ4 codec with Hadoop's block framing, which lakecore could not
// read before (found by the interop suite: Java-written tables with
// file.compression=lz4 failed with ErrUnsupportedFile).
func TestReadJavaHadoopLZ4(t *testing.T) {
	data, fields := javaLZ4File(t)
	r, err := NewReader(&rdMemFile{Reader: bytes.NewReader(data)}, fields, fields, ReaderOptions{FileName: "java-lz4-hadoop.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := rdReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 301 {
		t.Fatalf("%d rows, want 301", len(rows))
	}
	for i, row := range rows[:300] {
		var s, arr any
		if i%5 != 0 {
			s = "row-" + string(rune('0'+i%7))
		}
		if i%3 != 0 {
			arr = []any{int32(i), nil, int32(-i)}
		}
		want := []any{int32(i), s, arr, float64(i) / 2}
		if !rdEqual(row, want) {
			t.Fatalf("row %d = %v, want %v", i, row, want)
		}
	}
	last := rows[300]
	if last[0] != int32(1000) || last[1] != strings.Repeat("abcdefghij", 40000) || last[3] != nil {
		t.Fatalf("row 300: id %v, s of %d characters, d %v", last[0], len(last[1].(string)), last[3])
	}
	if arr, ok := last[2].([]any); !ok || len(arr) != 0 {
		t.Fatalf("row 300: arr = %#v, want []", last[2])
	}
}

// rdEqual compares rows of scalars and flat arrays.
func rdEqual(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, xok := a[i].([]any)
		y, yok := b[i].([]any)
		if xok || yok {
			if !xok || !yok || !rdEqual(x, y) {
				return false
			}
			continue
		}
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// hadoopFrame builds Hadoop's block framing of data: blocks of at most
// block bytes, each split into LZ4 chunks of at most chunk input bytes.
func hadoopFrame(t testing.TB, data []byte, block, chunk int) []byte {
	t.Helper()
	var out []byte
	for len(data) > 0 {
		b := data[:min(block, len(data))]
		data = data[len(b):]
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		for len(b) > 0 {
			c := b[:min(chunk, len(b))]
			b = b[len(c):]
			buf := make([]byte, lz4.CompressBlockBound(len(c)))
			n, err := lz4.CompressBlock(c, buf, nil)
			if err != nil || n == 0 {
				t.Fatalf("compress: %d %v", n, err)
			}
			out = binary.BigEndian.AppendUint32(out, uint32(n))
			out = append(out, buf[:n]...)
		}
	}
	return out
}

func TestHadoopLZ4Frames(t *testing.T) {
	data := []byte(strings.Repeat("paimon hadoop lz4 frame ", 5000))
	for _, c := range []struct {
		name         string
		block, chunk int
	}{
		{"one block, one chunk", len(data), len(data)},
		{"one block, several chunks", len(data), 7000},
		{"several blocks", 30000, 30000},
		{"several blocks of several chunks", 40000, 9000},
	} {
		t.Run(c.name, func(t *testing.T) {
			frame := hadoopFrame(t, data, c.block, c.chunk)
			dst := make([]byte, len(data))
			n, err := decodeLZ4Page(format.Lz4, frame, dst)
			if err != nil || n != len(data) || !bytes.Equal(dst, data) {
				t.Fatalf("decoded %d bytes, err %v, equal %v", n, err, bytes.Equal(dst[:n], data))
			}
		})
	}

	t.Run("plain block under the LZ4 codec", func(t *testing.T) {
		// what some older writers put under LZ4: Arrow falls back to it too
		buf := make([]byte, lz4.CompressBlockBound(len(data)))
		k, err := lz4.CompressBlock(data, buf, nil)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(data))
		n, err := decodeLZ4Page(format.Lz4, buf[:k], dst)
		if err != nil || n != len(data) || !bytes.Equal(dst, data) {
			t.Fatalf("decoded %d bytes, err %v", n, err)
		}
	})

	t.Run("damaged frames", func(t *testing.T) {
		frame := hadoopFrame(t, data, 40000, 9000)
		for name, bad := range map[string][]byte{
			"truncated":         frame[:len(frame)-10],
			"short length":      frame[:2],
			"block too large":   append(binary.BigEndian.AppendUint32(nil, uint32(len(data)+1)), frame[4:]...),
			"chunk beyond data": append(append(binary.BigEndian.AppendUint32(nil, 40000), 0x7f, 0xff, 0xff, 0xff), frame[8:]...),
			"zero-length chunk": append(append(binary.BigEndian.AppendUint32(nil, 40000), 0, 0, 0, 0), frame[8:]...),
			"trailing bytes":    append(bytes.Clone(frame), 1, 2),
		} {
			dst := make([]byte, len(data))
			if _, err := hadoopLZ4(bad, dst); err == nil {
				t.Errorf("%s: no error", name)
			}
			// and through the page decoder (frame, then plain block) with an error, never a panic
			if n, err := decodeLZ4Page(format.Lz4, bad, dst); err == nil && bytes.Equal(dst[:n], data) {
				t.Errorf("%s: decoded the whole page from a damaged frame", name)
			}
		}
		if _, err := hadoopLZ4(frame, make([]byte, len(data)+5)); err == nil {
			t.Error("a frame shorter than the page: no error")
		}
	})
}

// TestReadJavaHadoopLZ4Damaged: a damaged Java LZ4 file fails with
// ErrCorruptFile naming the file, never a panic or a hang.
func TestReadJavaHadoopLZ4Damaged(t *testing.T) {
	data, fields := javaLZ4File(t)
	failures := 0
	for start := 4; start < len(data)*3/4; start += 97 {
		bad := bytes.Clone(data)
		for i := start; i < start+16 && i < len(bad); i++ {
			bad[i] ^= 0x5a
		}
		if err := rdReadBytes(bad, fields, ReaderOptions{FileName: "lz4.parquet"}); err != nil {
			failures++
			if !strings.Contains(err.Error(), "lz4.parquet") {
				t.Errorf("damage at %d: %v does not name the file", start, err)
			}
			if !errors.Is(err, ErrCorruptFile) && !errors.Is(err, ErrSchemaMismatch) && !errors.Is(err, ErrUnsupportedFile) {
				t.Logf("damage at %d: %v", start, err)
			}
		}
	}
	if failures == 0 {
		t.Error("no damage was detected")
	}
}

// FuzzHadoopLZ4 checks that any input decodes with an error or into the
// page, never panics; seeded with frames and the Java file's bytes.
func FuzzHadoopLZ4(f *testing.F) {
	data := []byte(strings.Repeat("seed data ", 300))
	f.Add(hadoopFrame(f, data, 1000, 300), len(data))
	f.Add(hadoopFrame(f, data, len(data), len(data)), len(data))
	if java, err := os.ReadFile(filepath.Join("testdata", "java-lz4-hadoop.parquet")); err == nil {
		f.Add(java[4:min(len(java), 600)], 4096)
	}
	f.Fuzz(func(t *testing.T, src []byte, size int) {
		if size < 0 || size > 1<<20 {
			return
		}
		dst := make([]byte, size)
		n, err := decodeLZ4Page(format.Lz4, src, dst)
		if err == nil && (n < 0 || n > size) {
			t.Fatalf("decoded %d bytes into %d", n, size)
		}
	})
}
