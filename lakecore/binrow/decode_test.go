package binrow_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// rawRow builds a row of len(slots) fields (arity < 57): a zero header with
// the given null byte 1, the slots, then tail.
func rawRow(nullByte byte, slots []uint64, tail ...byte) []byte {
	b := make([]byte, 8+8*len(slots))
	b[1] = nullByte
	for i, s := range slots {
		binary.LittleEndian.PutUint64(b[8+8*i:], s)
	}
	return append(b, tail...)
}

func ptr(off, n uint64) uint64 { return off<<32 | n }

func le32(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }

func TestDecodeCorrupt(t *testing.T) {
	arrInt := types.ArrayType(intT)
	zeros16 := make([]byte, 16)
	cases := []struct {
		name  string
		types []types.DataType
		row   []byte
		msg   string
	}{
		{"fixed part short", []types.DataType{intT, intT}, make([]byte, 16), "row of 16 bytes, its 2 fields need a fixed part of 24"},
		{"empty input", []types.DataType{intT}, nil, "row of 0 bytes"},
		{"string beyond row", []types.DataType{strT}, rawRow(0, []uint64{ptr(16, 100)}), "field 0 (STRING): corrupt binary row: offset 16 + length 100 beyond the 16 bytes"},
		{"offset and length at their maximum", []types.DataType{bytesT}, rawRow(0, []uint64{ptr(0x7fffffff, 0xffffffff)}), "offset 2147483647 + length 4294967295"},
		{"inline length above 7", []types.DataType{strT}, rawRow(0, []uint64{0x88 << 56}), "inline length 8 above 7"},
		{"negative array count", []types.DataType{arrInt}, rawRow(0, []uint64{ptr(16, 8)}, append(le32(-1), 0, 0, 0, 0)...), "negative element count -1"},
		{"array count beyond its bytes", []types.DataType{arrInt}, rawRow(0, []uint64{ptr(16, 8)}, append(le32(100), 0, 0, 0, 0)...), "array of 100 INT elements needs 420 bytes, has 8"},
		{"array shorter than its count", []types.DataType{arrInt}, rawRow(0, []uint64{ptr(16, 2)}, 0, 0, 0, 0, 0, 0, 0, 0), "shorter than its 4-byte element count"},
		{"map key array beyond the map", []types.DataType{mapSIT}, rawRow(0, []uint64{ptr(16, 8)}, append(le32(1000), 0, 0, 0, 0)...), "map key array of 1000 bytes in a map of 8 bytes"},
		{"map with more keys than values", []types.DataType{mapSIT},
			rawRow(0, []uint64{ptr(16, 28)}, bytes.Join([][]byte{le32(16), le32(1), le32(0), {'k', 0, 0, 0, 0, 0, 0, 0x81}, le32(0), le32(0), {0, 0, 0, 0}}, nil)...),
			"map with 1 keys and 0 values"},
		{"decimal of 0 bytes", []types.DataType{dec20T}, rawRow(0, []uint64{ptr(16, 0)}, zeros16...), "decimal of 0 bytes, want 1..16"},
		{"decimal of 17 bytes", []types.DataType{dec20T}, rawRow(0, []uint64{ptr(16, 17)}, append(zeros16, 0, 0, 0, 0, 0, 0, 0, 0)...), "decimal of 17 bytes"},
		{"compact decimal beyond precision", []types.DataType{types.DecimalType(2, 0)}, rawRow(0, []uint64{100}), "unscaled decimal 100 does not fit precision 2"},
		{"non-compact decimal beyond precision", []types.DataType{dec20T},
			rawRow(0, []uint64{ptr(16, 16)}, bytes.Repeat([]byte{0x7f}, 16)...), "does not fit precision 20"},
		{"timestamp nanos out of range", []types.DataType{ts9T}, rawRow(0, []uint64{ptr(16, 1_000_000)}, make([]byte, 8)...), "nano of millisecond 1000000 outside 0..999999"},
		{"negative timestamp nanos", []types.DataType{ts9T}, rawRow(0, []uint64{ptr(16, 0xffffffff)}, make([]byte, 8)...), "nano of millisecond -1"},
		{"timestamp millis beyond row", []types.DataType{ts9T}, rawRow(0, []uint64{ptr(12, 0)}), "timestamp millis at offset 12 beyond the 16 bytes"},
		{"nested row too short", []types.DataType{rowABT}, rawRow(0, []uint64{ptr(16, 8)}, make([]byte, 8)...), "field 0 (ROW<`a` INT, `b` STRING>): corrupt binary row: row of 8 bytes, its 2 fields need a fixed part of 24"},
		{"error inside a nested array names the path", []types.DataType{types.ArrayType(strT)},
			rawRow(0, []uint64{ptr(16, 16)}, append(append(le32(1), le32(0)...), 0, 0, 0, 0, 0, 0, 0, 0x8f)...),
			"field 0 (ARRAY<STRING>): element 0 (STRING): corrupt binary row: inline length 15"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vals, err := binrow.Decode(c.types, c.row)
			if !errors.Is(err, binrow.ErrCorrupt) {
				t.Fatalf("Decode = %v, %v; want ErrCorrupt", vals, err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q does not mention %q", err, c.msg)
			}
		})
	}
}

func TestDecodeIgnoresNullSlots(t *testing.T) {
	// A NULL field's slot is never read, whatever it holds.
	row := rawRow(0x01, []uint64{ptr(0x7fffffff, 0xffffffff)})
	vals, err := binrow.Decode([]types.DataType{strT}, row)
	if err != nil || vals[0] != nil {
		t.Fatalf("Decode = %v, %v", vals, err)
	}
}

func TestDeserializeErrors(t *testing.T) {
	if _, err := binrow.Deserialize([]types.DataType{intT}, []byte{0, 0, 1}); !errors.Is(err, binrow.ErrCorrupt) {
		t.Errorf("short input: %v", err)
	}
	data := unhex(t, "00000002 0000000000000000 0000000000000000 0100000000000000")
	_, err := binrow.Deserialize([]types.DataType{intT}, data)
	if !errors.Is(err, binrow.ErrArityMismatch) || !strings.Contains(err.Error(), "arity prefix 2 for 1 field types") {
		t.Errorf("arity mismatch: %v", err)
	}
	neg := unhex(t, "ffffffff 0000000000000000")
	if _, err := binrow.Deserialize(nil, neg); !errors.Is(err, binrow.ErrArityMismatch) {
		t.Errorf("negative arity: %v", err)
	}
}

// fuzzTypeLists are the row types FuzzDecode reads every input with.
func fuzzTypeLists(tb testing.TB) [][]types.DataType {
	all, _ := allTypes(tb)
	lists := [][]types.DataType{
		all,
		{intT},
		{strT},
		{strT, intT, intT, dblT},
		{intT, intT, dateT, ts9T, dec23T, bytesT},
		{types.ArrayType(strT), mapSIT, types.MultisetType(intT), rowABT},
	}
	for _, c := range goldenCases(tb) {
		lists = append(lists, c.types)
	}
	return lists
}

// FuzzDecode feeds arbitrary bytes to Decode under many row types. Decode
// must not panic; whatever it accepts must encode, and the encoding must be
// a fixed point of Decode followed by Encode.
func FuzzDecode(f *testing.F) {
	for _, c := range goldenCases(f) {
		f.Add(unhex(f, c.hex)[4:])
	}
	fieldTypes, values := allTypes(f)
	if row, err := binrow.Encode(fieldTypes, values); err == nil {
		f.Add(row)
	}
	if fixturetest.Available(f) {
		rows, _ := collectFixtureRows(f)
		for _, r := range rows {
			f.Add(r.data[4:])
		}
	}
	lists := fuzzTypeLists(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ts := range lists {
			vals, err := binrow.Decode(ts, data)
			if err != nil {
				if !errors.Is(err, binrow.ErrCorrupt) {
					t.Fatalf("error without ErrCorrupt: %v", err)
				}
				continue
			}
			enc, err := binrow.Encode(ts, vals)
			if err != nil {
				t.Fatalf("decoded values do not encode: %v (%v)", err, vals)
			}
			again, err := binrow.Decode(ts, enc)
			if err != nil {
				t.Fatalf("own encoding does not decode: %v", err)
			}
			enc2, err := binrow.Encode(ts, again)
			if err != nil || !bytes.Equal(enc, enc2) {
				t.Fatalf("encoding is not stable: %v\n %x\n %x", err, enc, enc2)
			}
		}
	})
}
