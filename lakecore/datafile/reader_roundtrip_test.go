package datafile

import (
	"bytes"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestReadWriterRoundTrip reads back what this package's Writer writes, for
// every codec it offers (its "lz4" is LZ4_RAW, which the reader decodes
// itself).
func TestReadWriterRoundTrip(t *testing.T) {
	T := types.MustParse
	fields := []types.DataField{
		rdField(0, "a", T("INT")), rdField(1, "s", T("STRING")), rdField(2, "ts", T("TIMESTAMP(9)")),
		rdField(3, "d", T("DECIMAL(30, 5)")), rdField(4, "arr", T("ARRAY<BIGINT>")),
		rdField(5, "m", T("MAP<STRING NOT NULL, ROW<x INT, y STRING>>")),
	}
	fields[5].Type.Value.Fields[0].ID = 6
	fields[5].Type.Value.Fields[1].ID = 7
	for _, codec := range []string{"zstd", "lz4", "snappy", "gzip", "none"} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, fields, WriterOptions{Compression: codec})
		if err != nil {
			t.Fatal(err)
		}
		var want [][]any
		for i := range 5000 {
			row := []any{int32(i), "str" + string(rune('a'+i%26)), rdTS("2024-01-01T00:00:00.123456789"), rdDec("123.45678"),
				[]any{int64(i), nil}, types.Map{Keys: []any{"k"}, Values: []any{[]any{int32(i), "y"}}}}
			if i%7 == 0 {
				row = []any{nil, nil, nil, nil, nil, nil}
			}
			if err := w.Write(row); err != nil {
				t.Fatal(err)
			}
			want = append(want, row)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&rdMemFile{Reader: bytes.NewReader(buf.Bytes())}, fields, fields, ReaderOptions{})
		if err != nil {
			t.Fatal(codec, err)
		}
		got, err := rdReadAll(r)
		if err != nil {
			t.Fatal(codec, err)
		}
		for i := range want {
			if g, w := fixturetest.Render(got[i]), fixturetest.Render(want[i]); g != w {
				t.Fatalf("%s row %d: %s != %s", codec, i, g, w)
			}
		}
	}
}
