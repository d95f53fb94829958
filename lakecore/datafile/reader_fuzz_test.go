package datafile

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// FuzzReader feeds truncated and mutated copies of Java-written fixture
// files to NewReader and Next: every outcome must be rows or an error, never
// a panic or a hang. which picks the schema the bytes are read with.
func FuzzReader(f *testing.F) {
	seeds := []struct{ fixture, table, file string }{
		{"cpp-java11-append-bucket1-nested-types-orc-manifest", "parquet_append_table", "bucket-0/data-9ea62f34-1dca-49c1-bf7a-d37303d8fb76-0.parquet"},
		{"cpp-java11-append-fixed-bucket-complex-types", "append_complex_data", "f1=10/bucket-0/data-f8754699-0c43-4e53-be00-7e8af1754913-0.parquet"},
		{"cpp-java13snap-append-unaware-timestamps", "append_with_multiple_ts_precision_and_timezone", "bucket-0/data-9b8abdde-df4d-4655-bb4c-ffda164ef9d4-0.parquet"},
		{"cpp-java12-append-unaware-file-index", "append_with_bitmap_no_embedding", "bucket-0/data-783929b2-49d4-4006-a898-194a62e3278d-0.parquet"},
	}
	var schemas [][]types.DataField
	for i, s := range seeds {
		ft := openReaderFixture(f, s.fixture, s.table)
		schemas = append(schemas, ft.fields(f, 0))
		data, err := ft.fio.ReadFile(context.Background(), ft.path+"/"+s.file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
		f.Add(uint8(i), data[:len(data)/2])
		f.Add(uint8(i), data[len(data)/3:])
		mutated := bytes.Clone(data)
		for j := 4; j < len(mutated)-8; j += 97 {
			mutated[j] ^= 0x20
		}
		f.Add(uint8(i), mutated)
	}
	// Files of other writers: nested shapes, NANOS timestamps, LZ4_RAW pages
	// (decoded by this package, not parquet-go) in v1 and v2 layouts.
	for _, version := range []int{1, 2} {
		dir := f.TempDir()
		name, _ := rdWriteRecords(f, dir, 40, parquet.PageBufferSize(512), parquet.DataPageVersion(version),
			parquet.Compression(&parquet.Lz4Raw))
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(len(schemas)), data)
	}
	schemas = append(schemas, rdRecordFields())
	// A table schema that casts, to run the cast paths on damaged values.
	castTable := func(fields []types.DataField) []types.DataField {
		out := append([]types.DataField(nil), fields...)
		for i := range out {
			if !out[i].Type.IsNested() {
				out[i].Type = types.StringType()
			}
		}
		return out
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		fields := schemas[int(which&0x7f)%len(schemas)]
		table := fields
		if which >= 128 {
			table = castTable(fields)
		}
		r, err := NewReader(&rdMemFile{Reader: bytes.NewReader(data)}, fields, table, ReaderOptions{BatchSize: 3, FileName: "fuzz.parquet"})
		if err != nil {
			return
		}
		defer r.Close()
		for range 10000 {
			if _, err := r.Next(context.Background()); err != nil {
				return
			}
		}
	})
}
