package rowconv

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// sameRow reports whether two rows hold the same values of the same Go
// types: floats by their bits (so -0 differs from 0), decimals by value
// and scale.
func sameRow(a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	switch x := a.(type) {
	case types.Decimal:
		y := b.(types.Decimal)
		return x.Scale == y.Scale && x.Unscaled.Cmp(y.Unscaled) == 0
	case float32:
		return math.Float32bits(x) == math.Float32bits(b.(float32))
	case float64:
		return math.Float64bits(x) == math.Float64bits(b.(float64))
	case []any:
		y := b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameRow(x[i], y[i]) {
				return false
			}
		}
		return true
	case []byte:
		return string(x) == string(b.([]byte))
	}
	return reflect.DeepEqual(a, b)
}

// checkRaw asserts that convertRaw either declines raw or gives exactly
// the row the structured path gives for a message of raw, with its values
// boxed one by one and from a slab alike; it reports whether it took raw.
func checkRaw(t testing.TB, c *Converter, raw []byte) bool {
	t.Helper()
	row, ok := c.convertRaw(raw, nil)
	var slab boxes.Slab
	slabRow, slabOK := c.convertRaw(raw, &slab)
	if slabOK != ok {
		t.Fatalf("%q: convertRaw took it %v, from a slab %v", raw, ok, slabOK)
	}
	if !ok {
		return false
	}
	want, added, err := c.convertStructured(service.NewMessage(raw))
	if err != nil || len(added) > 0 {
		t.Fatalf("%q: convertRaw gave %#v; the structured path added %v, error %v", raw, row, added, err)
	}
	if !sameRow(row, want) {
		t.Fatalf("%q: convertRaw gave %#v, the structured path %#v", raw, row, want)
	}
	if !sameRow(slabRow, want) {
		t.Fatalf("%q: convertRaw from a slab gave %#v, the structured path %#v", raw, slabRow, want)
	}
	return true
}

// TestConvertRawSlabKeepsRows: rows boxed from one slab keep their values
// while the slab boxes the rows after them (more than a slab array of
// each kind: rows, strings and their bytes, numbers, decimals, timestamps).
func TestConvertRawSlabKeepsRows(t *testing.T) {
	c := mustConverter(t, "ROW<id BIGINT NOT NULL, n INT, ts TIMESTAMP(3), s STRING, code CHAR(3), amount DECIMAL(10, 2), "+
		"big DECIMAL(30, 2)>", ConvertOptions{})
	var slab boxes.Slab
	var raws [][]byte
	var rows [][]any
	for i := range 2000 {
		raw := fmt.Appendf(nil, `{"id": %d, "n": %d, "ts": "2024-05-30T12:00:%02d.%03dZ", "s": "%s", "code": "C%02d", `+
			`"amount": "%d.%02d", "big": "%d123456789012345678.5"}`, i*7919, -i, i%60, i%1000,
			strings.Repeat("x", i%300), i%100, i-1000, i%100, i)
		row, ok := c.convertRaw(raw, &slab)
		if !ok {
			t.Fatalf("%s: declined", raw)
		}
		raws, rows = append(raws, raw), append(rows, row)
	}
	for i, raw := range raws {
		want, _, err := c.convertStructured(service.NewMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if !sameRow(rows[i], want) {
			t.Fatalf("row %d after boxing the rest: %#v, want %#v", i, rows[i], want)
		}
	}
}

// rawOptions are the option sets the differential checks run with.
var rawOptions = []ConvertOptions{
	{},
	{UnknownFields: UnknownFieldsIgnore, TimestampUnit: UnitNanos},
	{UnknownFields: UnknownFieldsIgnore, TimestampUnit: UnitSeconds},
	{SchemaEvolution: true, TimestampUnit: UnitMicros},
}

// valueCaseSeeds returns the type and JSON of every valueCase literal in
// convert_test.go: the conversion tests are the seeds of the fuzz target.
func valueCaseSeeds(t testing.TB) [][2]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "convert_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seeds [][2]string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if at, ok := lit.Type.(*ast.ArrayType); !ok || exprString(at.Elt) != "valueCase" {
			return true
		}
		for _, e := range lit.Elts {
			el, ok := e.(*ast.CompositeLit)
			if !ok || len(el.Elts) < 2 {
				continue
			}
			var s [2]string
			for i := 0; i < 2; i++ {
				switch v := el.Elts[i].(type) {
				case *ast.BasicLit:
					s[i], _ = strconv.Unquote(v.Value)
				case *ast.Ident: // typ (TestConvertRow's variable)
					s[i] = "ROW<a INT, b STRING NOT NULL>"
				}
			}
			seeds = append(seeds, s)
		}
		return false
	})
	if len(seeds) < 200 {
		t.Fatalf("found %d value cases in convert_test.go, expected more", len(seeds))
	}
	return seeds
}

// rawMessages are the messages a fuzz input of type typ and JSON in
// becomes: in as the value of column v, and in as the whole message.
func rawMessages(in string) [][]byte {
	return [][]byte{[]byte(`{"bi": 1, "v": ` + in + `}`), []byte(in)}
}

func rawConverters(t testing.TB, typ types.DataType) []*Converter {
	fields := []types.DataField{{Name: "bi", Type: types.BigIntType().NotNull()}, {Name: "v", Type: typ}}
	var convs []*Converter
	for _, o := range rawOptions {
		c, err := NewConverter(fields, o)
		if err != nil {
			t.Fatal(err)
		}
		convs = append(convs, c)
	}
	return convs
}

// TestRawMatchesStructuredOnValueCases runs every value case of the
// conversion tests through both paths, and checks that the fast path
// takes the common shapes.
func TestRawMatchesStructuredOnValueCases(t *testing.T) {
	taken := 0
	seeds := valueCaseSeeds(t)
	for _, s := range seeds {
		for _, c := range rawConverters(t, types.MustParse(s[0])) {
			for _, raw := range rawMessages(s[1]) {
				if checkRaw(t, c, raw) {
					taken++
				}
			}
		}
	}
	t.Logf("%d value cases, fast path taken %d times", len(seeds), taken)
	if taken < len(seeds) {
		t.Errorf("fast path taken only %d times for %d cases", taken, len(seeds))
	}
}

// TestRawJSON: the shapes the fast path must take or decline.
func TestRawJSON(t *testing.T) {
	c := mustConverter(t, "ROW<id BIGINT NOT NULL, s STRING, d DECIMAL(10, 2), t TIMESTAMP(6), f DOUBLE, b BOOLEAN, i INT, vc VARCHAR(3), a ARRAY<INT>>", ConvertOptions{})
	ign := mustConverter(t, "ROW<id BIGINT NOT NULL, s STRING>", ConvertOptions{UnknownFields: UnknownFieldsIgnore})
	cases := []struct {
		c    *Converter
		in   string
		take bool
		row  []any // when taken
	}{
		{c, `{"id": 1}`, true, []any{int64(1), nil, nil, nil, nil, nil, nil, nil, nil}},
		{c, " \t\r\n{\"id\":1e3, \"s\": \"a\\u00e9\\ud83d\\ude00\\n\\\"\", \"d\": 1.5, \"t\": \"2024-05-30T12:00:00.123456789+02:00\", \"f\": -0, \"b\": true, \"i\": -2147483648, \"vc\": \"héé\", \"a\": null}\n",
			true, []any{int64(1000), "aé😀\n\"", dec("150", 2), ts(1717063200123, 456000), math.Copysign(0, -1), true, int32(math.MinInt32), "héé", nil}},
		{c, `{"id": 1, "s": 12.50, "d": "0.1", "t": 1717070400123.456, "f": "NaN", "b": "FALSE", "i": "7"}`, true,
			[]any{int64(1), "12.50", dec("10", 2), ts(1717070400123, 456000), math.NaN(), false, int32(7), nil, nil}},
		{c, `{"id": 1, "s": "\ufffd"}`, true, []any{int64(1), "\ufffd", nil, nil, nil, nil, nil, nil, nil}},
		// Declined: the structured path decides (and gives today's errors).
		{c, `{"id": 1, "a": [1]}`, false, nil},                 // nested value
		{c, `{"id": 1, "s": {"x": 1}}`, false, nil},            // object as a string column's JSON text
		{c, `{"id": 1, "id": 2}`, false, nil},                  // duplicate key (encoding/json takes the last)
		{c, `{"id": 1, "x": 2}`, false, nil},                   // unknown field, unknown_fields: error
		{c, `{"s": "x"}`, false, nil},                          // missing NOT NULL column
		{c, `{"id": null}`, false, nil},                        // null for a NOT NULL column
		{c, "{\"id\": 1, \"s\": \"a\xffb\"}", false, nil},      // invalid UTF-8
		{c, `{"id": 1, "s": "\ud800"}`, false, nil},            // lone surrogate, replaced by encoding/json
		{c, "{\"id\": 1, \"s\": \"a\tb\"}", false, nil},        // control character
		{c, `{"id": 1} {"id": 2}`, false, nil},                 // two documents
		{c, `{"id": 01}`, false, nil},                          // not JSON
		{c, `{"id": 1,}`, false, nil},                          // not JSON
		{c, `{"id": 2147483648, "i": 2147483648}`, false, nil}, // out of range
		{c, `{"id": 1, "vc": "abcd"}`, false, nil},             // too long
		{c, `{"id": 1, "d": 1.005}`, false, nil},               // would round
		{c, `[{"id": 1}]`, false, nil},                         // not an object
		{c, ``, false, nil},                                    // empty
		{ign, `{"id": 1, "x": {"y": [1, "\u00e9", null, true]}, "s": "v"}`, true, []any{int64(1), "v"}},
		{ign, `{"id": 1, "x": {"y": [1,]}}`, false, nil},                                                 // not JSON inside an ignored field
		{ign, "{\"id\": 1, \"x\": \"\xff\"}", false, nil},                                                // invalid UTF-8 inside an ignored field
		{ign, `{"id": 1, "x": ` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, false, nil}, // deep
	}
	for _, tc := range cases {
		row, ok := tc.c.convertRaw([]byte(tc.in), nil)
		if ok != tc.take {
			t.Errorf("%q: taken %v, want %v", tc.in, ok, tc.take)
			continue
		}
		checkRaw(t, tc.c, []byte(tc.in))
		if ok && !sameRow(row, tc.row) && !(len(row) == len(tc.row) && sameRowNaN(row, tc.row)) {
			t.Errorf("%q: row %#v, want %#v", tc.in, row, tc.row)
		}
	}
}

// sameRowNaN is sameRow with any NaN equal to any NaN.
func sameRowNaN(a, b []any) bool {
	for i := range a {
		x, ok1 := a[i].(float64)
		y, ok2 := b[i].(float64)
		if ok1 && ok2 && math.IsNaN(x) && math.IsNaN(y) {
			continue
		}
		if !sameRow(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestConvertMessageRawAndStructured: a message a processor made
// structured is read from its structure, not from stale bytes.
func TestConvertMessageRawAndStructured(t *testing.T) {
	c := mustConverter(t, "ROW<id BIGINT NOT NULL>", ConvertOptions{})
	msg := service.NewMessage([]byte(`{"id": 1}`))
	msg.SetStructured(map[string]any{"id": int64(2)})
	row, _, err := c.ConvertMessage(msg)
	if err != nil || row[0] != int64(2) {
		t.Errorf("structured message: %v, %v", row, err)
	}
	row, _, err = c.ConvertMessage(service.NewMessage([]byte(`{"id": 3}`)))
	if err != nil || row[0] != int64(3) {
		t.Errorf("raw message: %v, %v", row, err)
	}
}

// FuzzRawMatchesStructured: for any type and JSON, convertRaw declines or
// gives the structured path's row, for the JSON as a column's value and as
// the whole message, with every option set.
func FuzzRawMatchesStructured(f *testing.F) {
	for _, s := range valueCaseSeeds(f) {
		f.Add(s[0], s[1])
	}
	f.Add(allTypesSchema, `{"bi": 1, "s": "x"}`)
	f.Fuzz(func(t *testing.T, typ, in string) {
		tt, err := types.Parse(typ)
		if err != nil {
			return
		}
		convs := rawConverters(t, tt)
		if tt.Kind == types.KindRow {
			for _, o := range rawOptions {
				if c, err := NewConverter(tt.Fields, o); err == nil {
					convs = append(convs, c)
				}
			}
		}
		for _, c := range convs {
			for _, raw := range rawMessages(in) {
				checkRaw(t, c, raw)
			}
		}
	})
}

func exprString(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
