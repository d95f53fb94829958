package read

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/datafile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

// FuzzKeyValueFile decodes damaged KeyValue data files (seeded with the
// Java-written files of paimon-cpp's merge-on-read table, which hold +I,
// +U and -D records) as the primary-key readers do: every table column,
// then _SEQUENCE_NUMBER and _VALUE_KIND, each row split into a record. It
// must fail with an error, never panic.
func FuzzKeyValueFile(f *testing.F) {
	table := "pk_table_scan_and_read_mor"
	dir := fixturetest.CppPK(f, table)
	data, err := os.ReadFile(filepath.Join(dir, "schema", "schema-0"))
	if err != nil {
		f.Fatal(err)
	}
	s, err := schema.Parse(data)
	if err != nil {
		f.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*", "bucket-*", "data-*.parquet"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no data files under %s: %v", dir, err)
	}
	for _, p := range files[:min(len(files), 4)] {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		m := bytes.Clone(b)
		for j := 4; j < len(m)-8; j += 61 {
			m[j] ^= 0x11
		}
		f.Add(m)
	}
	fields := append(s.Fields[:len(s.Fields):len(s.Fields)], kv.SequenceNumberField, kv.ValueKindField)
	tr := &TableRead{current: s}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := datafile.NewReader(memFile{bytes.NewReader(data)}, fields, fields, datafile.ReaderOptions{BatchSize: 7, FileName: "fuzz.parquet"})
		if err != nil {
			return
		}
		defer r.Close()
		for range 1000 {
			rows, err := r.Next(context.Background())
			if errors.Is(err, io.EOF) || err != nil {
				return
			}
			for _, row := range rows {
				if _, _, kind, err := tr.record(row, "fuzz.parquet"); err == nil && !kind.Valid() {
					t.Fatalf("record accepted row kind %d", kind)
				}
			}
		}
	})
}
