package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

type rdPoint struct {
	X int32  `parquet:"x"`
	Y string `parquet:"y,optional"`
}

// rdRecord exercises the Parquet shapes other writers (parquet-go, pyarrow)
// produce: three-level LIST, bare repeated fields, lists of lists and of
// groups, MAP, INT64 NANOS timestamps, unannotated INT64 timestamps, unsigned
// INT32, FIXED_LEN_BYTE_ARRAY bytes and decimals in INT64 and BINARY.
type rdRecord struct {
	ID        int64            `parquet:"id"`
	Name      *string          `parquet:"name,optional,dict"`
	Tags      []string         `parquet:"tags,list"`
	Legacy    []int32          `parquet:"legacy"`
	Matrix    [][]int32        `parquet:"matrix,list"`
	Ts        time.Time        `parquet:"ts,timestamp(nanosecond)"`
	TsMicro   time.Time        `parquet:"ts_us,timestamp(nanosecond)"`
	RawMicros int64            `parquet:"raw_us"`
	Amount    int64            `parquet:"amount,decimal(2:18)"`
	Big       []byte           `parquet:"big,decimal(3:30)"`
	Day       int32            `parquet:"day,date"`
	Tm        int64            `parquet:"tm,time(microsecond)"`
	Blob      [16]byte         `parquet:"blob"`
	U32       uint32           `parquet:"u32"`
	Ratio     float64          `parquet:"ratio"`
	Attrs     map[string]int32 `parquet:"attrs"`
	Pt        *rdPoint         `parquet:"pt,optional"`
	Pts       []rdPoint        `parquet:"pts,list"`
}

func rdField(id int, name string, t types.DataType) types.DataField {
	return types.DataField{ID: id, Name: name, Type: t}
}

// rdRecordFields is the Paimon schema a file of rdRecord is read with.
func rdRecordFields() []types.DataField {
	T := types.MustParse
	point := func(xID, yID int) types.DataType {
		return types.RowType(rdField(xID, "x", types.IntType().NotNull()), rdField(yID, "y", types.StringType()))
	}
	return []types.DataField{
		rdField(0, "id", T("BIGINT NOT NULL")),
		rdField(1, "name", T("STRING")),
		rdField(2, "tags", T("ARRAY<STRING NOT NULL> NOT NULL")),
		rdField(3, "legacy", T("ARRAY<INT NOT NULL> NOT NULL")),
		rdField(4, "matrix", T("ARRAY<ARRAY<INT NOT NULL> NOT NULL> NOT NULL")),
		rdField(5, "ts", T("TIMESTAMP(9) WITH LOCAL TIME ZONE NOT NULL")),
		rdField(6, "ts_us", T("TIMESTAMP(6) NOT NULL")),
		rdField(7, "raw_us", T("TIMESTAMP(6) NOT NULL")),
		rdField(8, "amount", T("DECIMAL(18, 2) NOT NULL")),
		rdField(9, "big", T("DECIMAL(30, 3) NOT NULL")),
		rdField(10, "day", T("DATE NOT NULL")),
		rdField(11, "tm", T("TIME(3) NOT NULL")),
		rdField(12, "blob", T("BINARY(16) NOT NULL")),
		rdField(13, "u32", T("BIGINT NOT NULL")),
		rdField(14, "ratio", T("FLOAT NOT NULL")),
		rdField(15, "attrs", T("MAP<STRING NOT NULL, INT NOT NULL> NOT NULL")),
		rdField(16, "pt", point(17, 18)),
		rdField(19, "pts", types.ArrayType(point(20, 21).NotNull()).NotNull()),
	}
}

// twosComplement encodes v big-endian in n bytes.
func twosComplement(v *big.Int, n int) []byte {
	m := new(big.Int).Set(v)
	if m.Sign() < 0 {
		m.Add(m, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	b := m.Bytes()
	return append(make([]byte, n-len(b)), b...)
}

// rdGenerate returns row i as a record and as the values the reader must return.
func rdGenerate(i int) (rdRecord, []any) {
	r := rdRecord{ID: int64(i)}
	want := make([]any, 18)
	want[0] = int64(i)
	if i%7 != 0 {
		s := fmt.Sprintf("n%d", i%13)
		r.Name, want[1] = &s, s
	}
	tags := []any{}
	for j := range i % 3 {
		s := fmt.Sprintf("t%d-%d", i, j)
		r.Tags = append(r.Tags, s)
		tags = append(tags, s)
	}
	want[2] = tags
	legacy := []any{}
	for j := range i % 4 {
		r.Legacy = append(r.Legacy, int32(i*10+j))
		legacy = append(legacy, int32(i*10+j))
	}
	want[3] = legacy
	matrix := []any{}
	for j := range i % 3 {
		inner, innerWant := []int32{}, []any{}
		for k := range (i + j) % 3 {
			inner = append(inner, int32(i+j+k))
			innerWant = append(innerWant, int32(i+j+k))
		}
		r.Matrix = append(r.Matrix, inner)
		matrix = append(matrix, innerWant)
	}
	want[4] = matrix
	nanos := int64(-1e12) + int64(i)*123456789 // before and after 1970
	r.Ts = time.Unix(0, nanos).UTC()
	want[5] = types.TimestampOf(r.Ts)
	r.TsMicro = r.Ts
	want[6] = types.TimestampOf(time.Unix(0, nanos-((nanos%1000)+1000)%1000).UTC())
	r.RawMicros = int64(i)*1000003 - 5e9
	want[7] = types.TimestampOf(time.UnixMicro(r.RawMicros).UTC())
	r.Amount = int64(i*100+i%100) - 50000
	want[8] = types.NewDecimal(r.Amount, 2)
	bigVal := new(big.Int).Mul(big.NewInt(int64(i)-5000), new(big.Int).Exp(big.NewInt(10), big.NewInt(22), nil))
	r.Big = twosComplement(bigVal, 13)
	want[9] = types.Decimal{Unscaled: bigVal, Scale: 3}
	r.Day = int32(i - 5000)
	want[10] = types.Date(r.Day)
	r.Tm = int64(i) * 1234567 % 86400000000
	want[11] = types.Time(r.Tm / 1000)
	for j := range r.Blob {
		r.Blob[j] = byte(i + j)
	}
	want[12] = append([]byte(nil), r.Blob[:]...)
	r.U32 = uint32(4000000000 + i)
	want[13] = int64(r.U32)
	r.Ratio = float64(i) / 3
	want[14] = float32(r.Ratio)
	attrs := types.Map{Keys: []any{}, Values: []any{}}
	if i%2 == 0 {
		k := fmt.Sprintf("k%d", i%5)
		r.Attrs = map[string]int32{k: int32(i)}
		attrs = types.Map{Keys: []any{k}, Values: []any{int32(i)}}
	}
	want[15] = attrs
	point := func(x int) (rdPoint, []any) {
		if x%2 == 0 {
			return rdPoint{X: int32(x), Y: "y"}, []any{int32(x), "y"}
		}
		return rdPoint{X: int32(x)}, []any{int32(x), nil}
	}
	if i%5 != 0 {
		p, pw := point(i)
		r.Pt, want[16] = &p, pw
	}
	pts := []any{}
	for j := range i % 3 {
		p, pw := point(i + j)
		r.Pts = append(r.Pts, p)
		pts = append(pts, pw)
	}
	want[17] = pts
	return r, want
}

// rdWriteRecords writes n generated rows with parquet-go and returns the file.
func rdWriteRecords(t testing.TB, dir string, n int, options ...parquet.WriterOption) (string, [][]any) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[rdRecord](&buf, options...)
	want := make([][]any, n)
	recs := make([]rdRecord, 0, 256)
	for i := range n {
		rec, row := rdGenerate(i)
		want[i] = row
		recs = append(recs, rec)
		if len(recs) == cap(recs) || i == n-1 {
			if _, err := w.Write(recs); err != nil {
				t.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	name := "records.parquet"
	if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name, want
}

// rdOpen opens a file of a local directory.
func rdOpen(t testing.TB, dir, name string) storage.File {
	t.Helper()
	fio, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fio.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func rdReadAll(r *Reader) ([][]any, error) {
	var rows [][]any
	for {
		batch, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, batch...)
	}
}

// rdReadBytes reads a whole file held in memory with the given fields as
// both file and table schema; for damaged files, whose error may come from
// NewReader or from reading.
func rdReadBytes(data []byte, fields []types.DataField, opts ReaderOptions) error {
	r, err := NewReader(&rdMemFile{Reader: bytes.NewReader(data)}, fields, fields, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = rdReadAll(r)
	return err
}

func TestReadParquetGoFiles(t *testing.T) {
	const n = 10000
	variants := []struct {
		name    string
		options []parquet.WriterOption
	}{
		{"v1 pages, uncompressed", []parquet.WriterOption{parquet.MaxRowsPerRowGroup(3000), parquet.PageBufferSize(2048)}},
		{"v2 pages, snappy", []parquet.WriterOption{parquet.MaxRowsPerRowGroup(4096), parquet.PageBufferSize(1024),
			parquet.DataPageVersion(2), parquet.Compression(&snappy.Codec{})}},
		{"v2 pages, lz4_raw", []parquet.WriterOption{parquet.MaxRowsPerRowGroup(5000), parquet.PageBufferSize(4096),
			parquet.DataPageVersion(2), parquet.Compression(&parquet.Lz4Raw)}},
		{"v1 pages, lz4_raw", []parquet.WriterOption{parquet.MaxRowsPerRowGroup(3000), parquet.PageBufferSize(4096),
			parquet.Compression(&parquet.Lz4Raw)}},
		{"one row group", nil},
	}
	fields := rdRecordFields()
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			name, want := rdWriteRecords(t, dir, n, v.options...)
			for _, batch := range []int{0, 1000, 333} {
				r, err := NewReader(rdOpen(t, dir, name), fields, fields, ReaderOptions{BatchSize: batch})
				if err != nil {
					t.Fatal(err)
				}
				if r.NumRows() != n {
					t.Errorf("NumRows = %d, want %d", r.NumRows(), n)
				}
				if v.options != nil && len(r.file.RowGroups()) < 2 {
					t.Errorf("the file has %d row groups, want several", len(r.file.RowGroups()))
				}
				got, err := rdReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				r.Close()
				if len(got) != n {
					t.Fatalf("read %d rows, want %d", len(got), n)
				}
				for i := range got {
					if g, w := fixturetest.Render(got[i]), fixturetest.Render(want[i]); g != w {
						t.Fatalf("batch %d, row %d:\n got %s\nwant %s", batch, i, g, w)
					}
				}
			}

			// A projection decodes only its columns, in its order.
			r, err := NewReader(rdOpen(t, dir, name), fields, fields, ReaderOptions{Projection: []int{17, 4, 0}, BatchSize: 700})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if len(r.leaves) != 4 { // pts.x, pts.y, matrix, id
				t.Errorf("projection reads %d leaf columns, want 4", len(r.leaves))
			}
			got, err := rdReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if g, w := fixturetest.Render(got[i]), fixturetest.Render([]any{want[i][17], want[i][4], want[i][0]}); g != w {
					t.Fatalf("projected row %d:\n got %s\nwant %s", i, g, w)
				}
			}
		})
	}
}

// TestReadNestedEvolution reads a file whose ROW, ARRAY<ROW> and MAP value
// fields were renamed, retyped and extended after it was written.
func TestReadNestedEvolution(t *testing.T) {
	dir := t.TempDir()
	name, want := rdWriteRecords(t, dir, 50)
	fileFields := rdRecordFields()
	T := types.MustParse
	table := []types.DataField{
		rdField(19, "points", types.ArrayType(types.RowType(
			rdField(21, "label", types.StringType()),
			rdField(20, "x", types.BigIntType().NotNull()),
			rdField(30, "z", types.DoubleType()),
		).NotNull())),
		rdField(16, "pt", types.RowType(rdField(17, "x", types.StringType()))),
		rdField(15, "attrs", T("MAP<STRING NOT NULL, DECIMAL(12, 1)>")),
		rdField(31, "added", T("STRING")),
		rdField(0, "id", T("STRING NOT NULL")),
	}
	r, err := NewReader(rdOpen(t, dir, name), fileFields, table, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := rdReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range got {
		var points []any
		for _, p := range want[i][17].([]any) {
			pv := p.([]any)
			points = append(points, []any{pv[1], int64(pv[0].(int32)), nil})
		}
		if points == nil {
			points = []any{}
		}
		var pt any
		if p, ok := want[i][16].([]any); ok {
			pt = []any{fmt.Sprint(p[0])}
		}
		attrs := want[i][15].(types.Map)
		vals := make([]any, len(attrs.Values))
		for j, v := range attrs.Values {
			vals[j] = types.NewDecimal(int64(v.(int32))*10, 1)
		}
		exp := []any{points, pt, types.Map{Keys: attrs.Keys, Values: vals}, nil, fmt.Sprint(i)}
		if g, w := fixturetest.Render(row), fixturetest.Render(exp); g != w {
			t.Fatalf("row %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

func TestReadErrors(t *testing.T) {
	ft := openReaderFixture(t, "cpp-java12-append-unaware-type-cast-evolution", "append_table_alter_table_with_cast")
	schema0, schema1 := ft.fields(t, 0), ft.fields(t, 1)
	newFile := "key0=0/key1=1/bucket-0/data-c6ed61af-aa32-4be5-bbb9-d26fcad0fda6-0.parquet"
	open := func(t *testing.T) storage.File {
		f, err := ft.fio.Open(context.Background(), ft.path+"/"+newFile)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	with := func(fields []types.DataField, name string, typ string) []types.DataField {
		out := append([]types.DataField(nil), fields...)
		for i := range out {
			if out[i].Name == name {
				out[i].Type = types.MustParse(typ)
			}
		}
		return out
	}
	t.Run("NOT NULL column missing from the file", func(t *testing.T) {
		table := append(append([]types.DataField(nil), schema1...), rdField(9, "f7", types.IntType().NotNull()))
		_, err := NewReader(open(t), schema1, table, ReaderOptions{})
		if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "data-c6ed61af") {
			t.Errorf("err = %v, want ErrSchemaMismatch naming the file", err)
		}
	})
	t.Run("file field without a Parquet column reads as NULL", func(t *testing.T) {
		file := append(append([]types.DataField(nil), schema1...), rdField(9, "f7", types.IntType()))
		r, err := NewReader(open(t), file, file, ReaderOptions{Projection: []int{8, 3}})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := rdReadAll(r)
		if err != nil || len(rows) != 3 || rows[0][0] != nil || rows[0][1] != int32(150) {
			t.Errorf("rows = %v, %v; want NULL and f3", rows, err)
		}
	})
	t.Run("wrong physical type", func(t *testing.T) {
		bad := with(schema1, "f3", "STRING") // an INT32 column
		_, err := NewReader(open(t), bad, bad, ReaderOptions{})
		if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), `"f3"`) {
			t.Errorf("err = %v, want ErrSchemaMismatch naming f3", err)
		}
	})
	t.Run("decimal scale differs from the file", func(t *testing.T) {
		bad := with(schema1, "f2", "DECIMAL(6, 2)")
		_, err := NewReader(open(t), bad, bad, ReaderOptions{})
		if !errors.Is(err, ErrSchemaMismatch) {
			t.Errorf("err = %v, want ErrSchemaMismatch", err)
		}
	})
	t.Run("unsupported cast", func(t *testing.T) {
		_, err := NewReader(open(t), schema1, with(schema1, "f0", "DATE"), ReaderOptions{})
		if !errors.Is(err, ErrUnsupportedCast) || !strings.Contains(err.Error(), `"f0"`) {
			t.Errorf("err = %v, want ErrUnsupportedCast naming f0", err)
		}
	})
	t.Run("value that cannot be cast", func(t *testing.T) {
		r, err := NewReader(open(t), schema1, with(schema1, "f1", "INT"), ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Next(context.Background())
		if !errors.Is(err, ErrCastFailed) || !strings.Contains(err.Error(), "2024-11-26 15:28:31") {
			t.Errorf("err = %v, want ErrCastFailed quoting the value", err)
		}
		if _, again := r.Next(context.Background()); again == nil || again.Error() != err.Error() {
			t.Errorf("second Next = %v, want the same error", again)
		}
	})
	t.Run("NULL in a NOT NULL column", func(t *testing.T) {
		ts := openReaderFixture(t, "cpp-java13snap-append-unaware-timestamps", "append_with_multiple_ts_precision_and_timezone")
		fields := ts.fields(t, 0)
		f, err := ts.fio.Open(context.Background(), ts.path+"/bucket-0/data-9b8abdde-df4d-4655-bb4c-ffda164ef9d4-0.parquet")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := NewReader(f, fields, with(fields, "ts_micro", "TIMESTAMP(6) NOT NULL"), ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(context.Background()); !errors.Is(err, ErrNullInNotNullColumn) || !strings.Contains(err.Error(), "ts_micro") {
			t.Errorf("err = %v, want ErrNullInNotNullColumn naming ts_micro", err)
		}
	})
	t.Run("old file with the new schema as its own", func(t *testing.T) {
		// f3 of schema 1 is an INT that the old file has as STRING f3.
		f, err := ft.fio.Open(context.Background(), ft.path+"/key0=0/key1=1/bucket-0/data-124e046e-ab87-4454-a5e6-0f97eb3a9713-0.parquet")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = NewReader(f, schema1, schema1, ReaderOptions{})
		if !errors.Is(err, ErrSchemaMismatch) {
			t.Errorf("err = %v, want ErrSchemaMismatch", err)
		}
		_ = schema0
	})
	t.Run("bad options", func(t *testing.T) {
		for _, o := range []ReaderOptions{{Projection: []int{8}}, {Projection: []int{-1}}, {BatchSize: -1}} {
			if _, err := NewReader(open(t), schema1, schema1, o); err == nil {
				t.Errorf("NewReader(%+v) succeeded", o)
			}
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		r, err := NewReader(open(t), schema1, schema1, ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if rows, err := r.Next(context.Background()); err != nil || len(rows) != 3 {
			t.Errorf("Next after a cancelled call = %d rows, %v", len(rows), err)
		}
	})
	t.Run("closed reader", func(t *testing.T) {
		r, err := NewReader(open(t), schema1, schema1, ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := r.Next(context.Background()); err == nil {
			t.Error("Next after Close succeeded")
		}
	})
}

// rdMemFile is a storage.File over bytes, optionally failing reads.
type rdMemFile struct {
	*bytes.Reader
	fail error
}

func (f *rdMemFile) Close() error { return nil }
func (f *rdMemFile) ReadAt(p []byte, off int64) (int, error) {
	if f.fail != nil {
		return 0, f.fail
	}
	return f.Reader.ReadAt(p, off)
}

func TestReadDamagedFiles(t *testing.T) {
	ft := openReaderFixture(t, "cpp-java11-append-bucket1-nested-types-orc-manifest", "parquet_append_table")
	fields := ft.fields(t, 0)
	data, err := ft.fio.ReadFile(context.Background(), ft.path+"/bucket-0/data-9ea62f34-1dca-49c1-bf7a-d37303d8fb76-0.parquet")
	if err != nil {
		t.Fatal(err)
	}
	read := func(b []byte) error {
		return rdReadBytes(b, fields, ReaderOptions{FileName: "damaged.parquet", BatchSize: 2})
	}
	if err := read(data); err != nil {
		t.Fatalf("intact file: %v", err)
	}
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		if !errors.Is(err, ErrCorruptFile) && !errors.Is(err, ErrSchemaMismatch) {
			t.Errorf("%s: err = %v, want ErrCorruptFile", what, err)
		}
		if !strings.Contains(err.Error(), "damaged.parquet") {
			t.Errorf("%s: err = %v does not name the file", what, err)
		}
	}
	for _, n := range []int{0, 3, 11, 100, len(data) / 2, len(data) - 9, len(data) - 1} {
		check(fmt.Sprintf("cut to %d bytes", n), read(data[:n]))
	}
	footer := bytes.Clone(data)
	footerLen := int(footer[len(footer)-8]) | int(footer[len(footer)-7])<<8
	for i := len(footer) - 8 - footerLen; i < len(footer)-8; i += 7 {
		footer[i] ^= 0xff
	}
	if err := read(footer); err != nil && !errors.Is(err, ErrCorruptFile) && !errors.Is(err, ErrSchemaMismatch) {
		t.Errorf("scrambled footer: err = %v", err)
	}
	magic := bytes.Clone(data)
	copy(magic[len(magic)-4:], "PAR0")
	check("bad magic", read(magic))
	pages := bytes.Clone(data)
	for i := 4; i < 400 && i < len(pages); i += 3 {
		pages[i] ^= 0x5a
	}
	check("scrambled pages", read(pages))

	// An I/O failure is reported as such, not as corruption.
	ioErr := errors.New("connection reset")
	_, err = NewReader(&rdMemFile{Reader: bytes.NewReader(data), fail: ioErr}, fields, fields, ReaderOptions{FileName: "remote.parquet"})
	if !errors.Is(err, ioErr) || errors.Is(err, ErrCorruptFile) || !strings.Contains(err.Error(), "remote.parquet") {
		t.Errorf("I/O failure: err = %v", err)
	}
}

// TestReadMultiset reads a MAP<STRING, INT NOT NULL> column, the layout Java
// writes for MULTISET, as MULTISET<STRING>.
func TestReadMultiset(t *testing.T) {
	dir := t.TempDir()
	name, want := rdWriteRecords(t, dir, 20)
	fields := rdRecordFields()
	fields[15].Type = types.MultisetType(types.StringType().NotNull())
	r, err := NewReader(rdOpen(t, dir, name), fields, fields, ReaderOptions{Projection: []int{15}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := rdReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if g, w := fixturetest.Render(got[i][0]), fixturetest.Render(want[i][15]); g != w {
			t.Fatalf("row %d: got %s, want %s", i, g, w)
		}
	}
}

// TestReadDamagedLZ4 damages the pages of LZ4_RAW files: parquet-go alone
// would grow its buffer until memory runs out; the reader must fail cleanly.
func TestReadDamagedLZ4(t *testing.T) {
	fields := rdRecordFields()
	for _, version := range []int{1, 2} {
		dir := t.TempDir()
		name, _ := rdWriteRecords(t, dir, 2000, parquet.PageBufferSize(2048), parquet.DataPageVersion(version),
			parquet.Compression(&parquet.Lz4Raw))
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		failures := 0
		for start := 4; start < len(data)/2; start += len(data) / 40 {
			bad := bytes.Clone(data)
			for i := start; i < start+64; i++ {
				bad[i] ^= 0xa5
			}
			if err := rdReadBytes(bad, fields, ReaderOptions{FileName: "lz4.parquet"}); err != nil {
				failures++
				if !errors.Is(err, ErrCorruptFile) || !strings.Contains(err.Error(), "lz4.parquet") {
					t.Errorf("v%d damage at %d: err = %v, want ErrCorruptFile naming the file", version, start, err)
				}
			}
		}
		if failures == 0 {
			t.Errorf("v%d: no damage was detected", version)
		}
	}
}
