package paimon

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// TestJSONMessageMatchesStructured: a message_format: json message's bytes
// are exactly what the structured message of the same row serialises to
// (Benthos' AsBytes), and its metadata is the same, for rows of every type:
// strings needing every kind of escape, floats at encoding/json's format
// boundaries, decimals, timestamps inside and outside 0000-9999, binary,
// nested arrays, maps (string and other keys), multisets and rows, nulls;
// columns whose names sort differently from the schema order or need
// escaping. Rows go through one scratch (several JSON chunks and slab
// arrays) and a GC before they are compared.
func TestJSONMessageMatchesStructured(t *testing.T) {
	fields := types.MustParse("ROW<zeta BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(10, 2), " +
		"bigdec DECIMAL(38, 6), s STRING, c CHAR(3), `by` BYTES, dt DATE, tm TIME(3), ts TIMESTAMP(6), ltz TIMESTAMP(3) WITH LOCAL TIME ZONE, " +
		"ts0 TIMESTAMP(0), arr ARRAY<STRING>, m MAP<STRING, BIGINT>, im MAP<INT, TIMESTAMP(3)>, ms MULTISET<STRING>, " +
		"r ROW<y STRING, x BIGINT, b BYTES>, `A\"key` STRING, `é` INT, `_u` DOUBLE>").Fields
	dec := types.Decimal{Unscaled: big.NewInt(-1230), Scale: 2}
	huge, _ := new(big.Int).SetString("-12345678901234567890123456789012", 10)
	ts := types.Timestamp{Millis: 1717070400123, NanoOfMilli: 456000}
	far := types.Timestamp{Millis: 253402300800000 + 86400000*400, NanoOfMilli: 1} // year 10001: rowconv's path
	strs := []string{"plain", "", "quote\" back\\slash", "ctl\x00\x01\b\f\n\r\t\x1f\x7f", "<html>&amp;", "héllo wörld ✓ 🎉",
		"bad\xffutf8\xc3", "line\u2028para\u2029end", "\xed\xa0\x80surrogate", strings.Repeat("long ", 5000)}
	floats := []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789e13, 5e-324,
		math.MaxFloat64, -math.SmallestNonzeroFloat64, 0.1, 1.0 / 3, math.NaN(), math.Inf(1), math.Inf(-1)}
	var rows [][]any
	for i, s := range strs {
		f := floats[i%len(floats)]
		rows = append(rows, []any{i%2 == 0, int8(-128 + i), int16(300 * i), int32(-7 * i), int64(math.MaxInt64 - i),
			float32(f), f, dec, types.Decimal{Unscaled: huge, Scale: 6}, s, "ab ", []byte(s),
			types.Date(19873 - 40000*i), types.Time(45296789), ts, types.Timestamp{Millis: -62167219200000 + int64(i)}, far,
			[]any{s, nil, "x"}, types.Map{Keys: []any{"zz", s, "aa"}, Values: []any{int64(1), nil, int64(-3)}},
			types.Map{Keys: []any{int32(2), int32(-1)}, Values: []any{ts, nil}}, types.Map{Keys: []any{"b", "a"}, Values: []any{int32(2), int32(1)}},
			[]any{s, int64(i), []byte{0, 1, 2, 0xff}}, s, int32(i), f})
	}
	for _, f := range floats {
		rows = append(rows, []any{nil, nil, nil, nil, nil, float32(f), f, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
			[]any{}, types.Map{}, nil, nil, []any{nil, nil, nil}, nil, nil, f})
	}
	rows = append(rows, make([]any, len(fields)))
	meta := rowconv.RowMeta{SnapshotID: 42, CommitKind: "APPEND", CommitTimeMillis: 1717070400123, Partition: "dt=2024-05-30",
		Bucket: 3, File: "data-x-0.parquet"}
	structured, asJSON := newMessageBuilder(fields, false), newMessageBuilder(fields, true)
	mv := newMetaValues(meta, false, AllMetadataKeys)
	var ss, js rowScratch
	var wants, gots []*service.Message
	for n := range 40 { // several chunks
		for i, row := range rows {
			pos := int64(n*1000 + i)
			want, err := structured.message(row, mv, pos, noKind, &ss)
			if err != nil {
				t.Fatalf("row %d: structured: %v", i, err)
			}
			got, err := asJSON.message(row, mv, pos, noKind, &js)
			if err != nil {
				t.Fatalf("row %d: json: %v", i, err)
			}
			wants, gots = append(wants, want), append(gots, got)
		}
	}
	runtime.GC()
	for i, want := range wants {
		got := gots[i]
		if got.HasStructured() || !got.HasBytes() {
			t.Fatalf("message %d: a json message holds a structured value", i)
		}
		gb, _ := got.AsBytes()
		wb, err := want.AsBytes()
		if err != nil || len(wb) == 0 {
			t.Fatalf("message %d: structured message does not serialise: %v", i, err)
		}
		if !bytes.Equal(gb, wb) {
			t.Fatalf("message %d:\n got  %s\n want %s", i, gb, wb)
		}
		if cap(gb) != len(gb) {
			t.Fatalf("message %d: bytes of length %d have capacity %d: an append would write into the next message", i, len(gb), cap(gb))
		}
		wm, gm := map[string]any{}, map[string]any{}
		_ = want.MetaWalkMut(func(k string, v any) error { wm[k] = v; return nil })
		_ = got.MetaWalkMut(func(k string, v any) error { gm[k] = v; return nil })
		if !reflect.DeepEqual(gm, wm) {
			t.Fatalf("message %d metadata:\n got  %#v\n want %#v", i, gm, wm)
		}
	}

	// Values that do not fit their column fail alike in both forms.
	for _, bad := range [][]any{rows[0][:3], append([]any{"not a bool"}, rows[1][1:]...), append(append([]any{}, rows[1][:9]...), append([]any{int64(1)}, rows[1][10:]...)...)} {
		_, werr := structured.message(bad, mv, 0, noKind, &ss)
		_, gerr := asJSON.message(bad, mv, 0, noKind, &js)
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
			t.Errorf("bad row: structured error %v, json error %v", werr, gerr)
		}
	}
}

// TestAppendJSONString: random byte strings (ASCII, control characters,
// multi-byte, invalid and separator sequences) quote as encoding/json
// quotes them with HTML escaping off.
func TestAppendJSONString(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", " ", "\"", "\\", "\x00", "\x1f", "\x7f", "\b", "\f", "\n", "\r", "\t", "<", ">", "&", "é", "✓", "🎉",
		"\u2028", "\u2029", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		// Longer runs of bytes copied as they are, between the others.
		"plain-text", "0123456", "~}|{!#$%&'()*+,-./", "user-4321@example.com"}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for range 20000 {
		var sb strings.Builder
		for range rng.IntN(12) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		for range rng.IntN(3) {
			sb.WriteByte(byte(rng.IntN(256)))
		}
		s := sb.String()
		buf.Reset()
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := string(appendJSONString(nil, s)); got != want {
			t.Fatalf("%q (valid UTF-8 %v): got %s, want %s", s, utf8.ValidString(s), got, want)
		}
	}
}

// FuzzAppendJSONString: any bytes quote as encoding/json quotes them with
// HTML escaping off.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain text of some length", "a\"b\\c\x00d\x1fe\x7f", "é✓🎉\u2028\u2029", "\xff\xc3\xe2\x80 \xed\xa0\x80"} {
		f.Add(s)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	f.Fuzz(func(t *testing.T, s string) {
		buf.Reset()
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		if got := string(appendJSONString(nil, s)); got != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// TestAppendJSONFloat: random float64 bit patterns and magnitudes format
// as encoding/json formats them.
func TestAppendJSONFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 200000 {
		var f float64
		if i%2 == 0 {
			f = math.Float64frombits(rng.Uint64())
		} else {
			f = (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(60)-30))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONFloat(nil, f); !bytes.Equal(got, want) {
			t.Fatalf("%v: got %s, want %s", f, got, want)
		}
	}
}
