package manifest

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// tf is one field of a hand-built writer schema: its JSON and the encoded
// value of one record.
type tf struct {
	name, schema string
	enc          []byte
}

func fld(name, typ string, enc []byte) tf {
	s := `{"name":"` + name + `","type":` + typ
	if strings.HasPrefix(typ, `["null"`) {
		s += `,"default":null`
	}
	return tf{name: name, schema: s + "}", enc: enc}
}

// recordOf joins fields into a record schema and its encoded value.
func recordOf(name string, fields []tf) (schema string, enc []byte) {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.schema
		enc = append(enc, f.enc...)
	}
	return `{"type":"record","name":"` + name + `","fields":[` + strings.Join(parts, ",") + `]}`, enc
}

func statsFields(s *SimpleStats) []tf {
	return []tf{
		fld("_MIN_VALUES", `"bytes"`, appendBytes(nil, s.MinValues)),
		fld("_MAX_VALUES", `"bytes"`, appendBytes(nil, s.MaxValues)),
		fld("_NULL_COUNTS", `["null",{"type":"array","items":["null","long"]}]`, appendStats(nil, &SimpleStats{MinValues: []byte{}, MaxValues: []byte{}, NullCounts: s.NullCounts})[2:]),
	}
}

func fileFields(f *DataFileMeta) []tf {
	ks, kb := recordOf("ks", statsFields(&f.KeyStats))
	vs, vb := recordOf("vs", statsFields(&f.ValueStats))
	return []tf{
		fld("_FILE_NAME", `"string"`, appendString(nil, f.FileName)),
		fld("_FILE_SIZE", `"long"`, appendLong(nil, f.FileSize)),
		fld("_ROW_COUNT", `"long"`, appendLong(nil, f.RowCount)),
		fld("_MIN_KEY", `"bytes"`, appendBytes(nil, f.MinKey)),
		fld("_MAX_KEY", `"bytes"`, appendBytes(nil, f.MaxKey)),
		fld("_KEY_STATS", ks, kb),
		fld("_VALUE_STATS", vs, vb),
		fld("_MIN_SEQUENCE_NUMBER", `"long"`, appendLong(nil, f.MinSequenceNumber)),
		fld("_MAX_SEQUENCE_NUMBER", `"long"`, appendLong(nil, f.MaxSequenceNumber)),
		fld("_SCHEMA_ID", `"long"`, appendLong(nil, f.SchemaID)),
		fld("_LEVEL", `"int"`, appendInt(nil, f.Level)),
		fld("_EXTRA_FILES", `{"type":"array","items":"string"}`, appendStrings(nil, f.ExtraFiles)),
		fld("_CREATION_TIME", `["null",{"type":"long","logicalType":"timestamp-millis"}]`, appendOptLong(nil, f.CreationTimeMillis)),
		fld("_DELETE_ROW_COUNT", `["null","long"]`, appendOptLong(nil, f.DeleteRowCount)),
		fld("_FILE_SOURCE", `["null","int"]`, appendOptInt(nil, f.FileSource)),
	}
}

func entryFields(e *Entry, fileFields []tf) []tf {
	fs, fb := recordOf("f", fileFields)
	return []tf{
		fld("_VERSION", `"int"`, appendInt(nil, 2)),
		fld("_KIND", `"int"`, appendInt(nil, int32(e.Kind))),
		fld("_PARTITION", `"bytes"`, appendBytes(nil, e.Partition)),
		fld("_BUCKET", `"int"`, appendInt(nil, e.Bucket)),
		fld("_TOTAL_BUCKETS", `"int"`, appendInt(nil, e.TotalBuckets)),
		fld("_FILE", fs, fb),
	}
}

func testEntry() Entry {
	ct, drc, src := int64(1700000000123), int64(0), int32(0)
	row := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	one := int64(1)
	return Entry{Partition: row, TotalBuckets: -1, File: DataFileMeta{
		FileName: "data-1.parquet", FileSize: 1234, RowCount: 10, MinKey: row, MaxKey: row,
		KeyStats: EmptyStats(), ValueStats: SimpleStats{MinValues: row, MaxValues: row, NullCounts: []*int64{&one, nil}},
		MinSequenceNumber: 0, MaxSequenceNumber: 9, Level: 0, ExtraFiles: []string{},
		CreationTimeMillis: &ct, DeleteRowCount: &drc, FileSource: &src,
	}}
}

// container builds an object container of records with the given schema.
func container(t *testing.T, schema string, records ...[]byte) []byte {
	t.Helper()
	w, err := newContainerWriter(schema, NewEncoder(Codec{Name: "null"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		w.block = append(w.block, r...)
		if err := w.endRecord(); err != nil {
			t.Fatal(err)
		}
	}
	out, err := w.finish()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func without(fields []tf, name string) []tf {
	return slices.DeleteFunc(slices.Clone(fields), func(f tf) bool { return f.name == name })
}

func replaced(fields []tf, f tf) []tf {
	out := slices.Clone(fields)
	for i := range out {
		if out[i].name == f.name {
			out[i] = f
		}
	}
	return out
}

// TestByNameDecoding drives the name-based reader with writer schemas Java
// never wrote but must read the same way: fields reordered, unknown fields of
// any type, optional fields absent, wrapped and plain records.
func TestByNameDecoding(t *testing.T) {
	e := testEntry()
	plainSchema, plainEnc := recordOf("record", entryFields(&e, fileFields(&e.File)))

	// Fields in reverse order, plus unknown fields (a 3-branch union, a map,
	// an enum, a fixed, a nested record) that must be skipped.
	extra := []tf{
		fld("_UNKNOWN_UNION", `["null","string","long"]`, append([]byte{4}, appendLong(nil, 77)...)),
		fld("_UNKNOWN_MAP", `{"type":"map","values":"double"}`, []byte{2, 2, 'k', 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0}),
		fld("_UNKNOWN_ENUM", `{"type":"enum","name":"en","symbols":["A","B"]}`, []byte{2}),
		fld("_UNKNOWN_FIXED", `{"type":"fixed","name":"fx","size":3}`, []byte{1, 2, 3}),
		fld("_UNKNOWN_FLOAT", `"float"`, []byte{0, 0, 0x80, 0x3f}),
		fld("_UNKNOWN_BOOL", `"boolean"`, []byte{1}),
	}
	ff := append(fileFields(&e.File), extra...)
	slices.Reverse(ff)
	ef := append(entryFields(&e, ff), extra[0], extra[1], extra[4], extra[5]) // named types are defined once
	slices.Reverse(ef)
	reversedSchema, reversedEnc := recordOf("whatever", ef)

	// Paimon <= 0.8: top level, _FILE and stats wrapped in ["null", record].
	wrap := func(f tf) tf {
		i := strings.Index(f.schema, `"type":`) + len(`"type":`)
		return fld(f.name, `["null",`+f.schema[i:len(f.schema)-1]+`]`, append([]byte{2}, f.enc...))
	}
	wf := fileFields(&e.File)
	wf = replaced(wf, wrap(wf[5]))
	wf = replaced(wf, wrap(wf[6]))
	wrappedFields := entryFields(&e, wf)
	wrappedFields = replaced(wrappedFields, wrap(wrappedFields[5]))
	ws, wenc := recordOf("record", wrappedFields)
	wrappedSchema, wrappedEnc := `["null",`+ws+`]`, append([]byte{2}, wenc...)

	// Paimon <= 0.8 has no _FILE_SOURCE: it reads as nil.
	oldFields := without(fileFields(&e.File), "_FILE_SOURCE")
	oldSchema, oldEnc := recordOf("record", entryFields(&e, oldFields))
	old := e
	old.File.FileSource = nil

	for name, c := range map[string]struct {
		schema string
		enc    []byte
		want   Entry
	}{
		"plain":    {plainSchema, plainEnc, e},
		"reversed": {reversedSchema, reversedEnc, e},
		"wrapped":  {wrappedSchema, wrappedEnc, e},
		"0.8":      {oldSchema, oldEnc, old},
	} {
		got, err := DecodeEntries(container(t, c.schema, c.enc, c.enc))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(got, []Entry{c.want, c.want}) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got[0], c.want)
		}
	}
}

func TestByNameDecodingErrors(t *testing.T) {
	e := testEntry()
	file := fileFields(&e.File)
	build := func(fileFields []tf, top ...tf) []byte {
		fields := entryFields(&e, fileFields)
		for _, f := range top {
			fields = replaced(fields, f)
		}
		s, enc := recordOf("record", fields)
		return container(t, s, enc)
	}
	micros := int64(1700000000123456)
	cases := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"missing required", build(without(file, "_FILE_SIZE")), ErrMissingField, "_FILE_SIZE is not in the writer schema"},
		{"missing _VERSION", func() []byte {
			s, enc := recordOf("record", entryFields(&e, file)[1:])
			return container(t, s, enc)
		}(), ErrMissingField, "_VERSION"},
		{"version 1", build(file, fld("_VERSION", `"int"`, appendInt(nil, 1))), ErrUnsupportedVersion, "_VERSION is 1"},
		{"reversed union", build(replaced(file, fld("_DELETE_ROW_COUNT", `["long","null"]`, []byte{0, 0}))), ErrSchemaMismatch, `["null", T]`},
		{"kind as long", build(file, fld("_KIND", `"long"`, appendLong(nil, 0))), ErrSchemaMismatch, "_KIND"},
		{"kind 5", build(file, fld("_KIND", `"int"`, appendInt(nil, 5))), ErrCorrupt, "_KIND 5"},
		{"null required", build(replaced(file, fld("_FILE_NAME", `["null","string"]`, []byte{0}))), ErrMissingField, "_FILE_NAME is null"},
		{"string as bytes", build(replaced(file, fld("_FILE_NAME", `"bytes"`, appendBytes(nil, []byte("x"))))), ErrSchemaMismatch, "_FILE_NAME"},
		{"null top-level row", func() []byte {
			s, _ := recordOf("record", entryFields(&e, file))
			return container(t, `["null",`+s+`]`, []byte{0})
		}(), ErrCorrupt, "null row"},
		{"top-level not a record", container(t, `"long"`, []byte{2}), ErrSchemaMismatch, "want a record"},
	}
	for _, c := range cases {
		_, err := DecodeEntries(c.data)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %v mentioning %q", c.name, err, c.want, c.msg)
		}
	}

	// _CREATION_TIME written as timestamp-micros is converted to millis.
	mf := replaced(file, fld("_CREATION_TIME", `["null",{"type":"long","logicalType":"timestamp-micros"}]`, appendOptLong(nil, &micros)))
	got, err := DecodeEntries(build(mf))
	if err != nil || *got[0].File.CreationTimeMillis != 1700000000123 {
		t.Errorf("micros creation time: %v %v", err, got)
	}
}

func TestContainerErrors(t *testing.T) {
	e := testEntry()
	good, err := EncodeEntries([]Entry{e}, Codec{Name: "null"})
	if err != nil {
		t.Fatal(err)
	}
	snappy, err := EncodeEntries([]Entry{e}, Codec{Name: "snappy"})
	if err != nil {
		t.Fatal(err)
	}
	flip := func(b []byte, i int) []byte {
		c := slices.Clone(b)
		c[i] ^= 0xff
		return c
	}
	cases := map[string]struct {
		data []byte
		want error
	}{
		"empty":          {nil, ErrUnsupportedFormat},
		"orc":            {[]byte("ORC\x0a\x06"), ErrUnsupportedFormat},
		"json":           {[]byte(`{"a":1}`), ErrUnsupportedFormat},
		"header only":    {good[:20], ErrCorrupt},
		"sync mismatch":  {flip(good, len(good)-1), ErrCorrupt},
		"snappy crc":     {flip(snappy, len(snappy)-17), ErrCorrupt},
		"codec bzip2":    {[]byte(strings.Replace(string(good), "\x08null", "\x0abzip2", 1)), ErrUnsupportedCodec},
		"trailing bytes": {append(slices.Clone(good), 0x02), ErrCorrupt},
	}
	// A block that inflates beyond maxBlockSize (a zstd bomb: 17 MB of zeros
	// compress to a few hundred bytes) is refused, whatever the codec.
	for _, codec := range []string{"zstd", "snappy", "deflate"} {
		w, err := newContainerWriter(manifestSchema, NewEncoder(Codec{Name: codec}))
		if err != nil {
			t.Fatal(err)
		}
		w.block, w.count = make([]byte, maxBlockSize+1<<20), 1
		if err := w.flush(); err != nil {
			t.Fatal(err)
		}
		cases["bomb "+codec] = struct {
			data []byte
			want error
		}{w.out, ErrCorrupt}
	}
	for name, c := range cases {
		if _, err := DecodeEntries(c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", name, err, c.want)
		}
	}
}
