package aggregate_test

import (
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree/aggregate"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// fuzzRow is one input row of FuzzRowAggregator: its kind and one value
// per fuzzFields column.
type fuzzRow struct {
	kind kv.RowKind
	vals []any
}

var fuzzStrings = []string{"", "a", "b", "ab"}

func fuzzFields() []types.DataField {
	return []types.DataField{
		{Name: "id", Type: types.IntType().NotNull()},
		{Name: "sum", Type: types.BigIntType()},
		{Name: "max", Type: types.IntType()},
		{Name: "min", Type: types.IntType()},
		{Name: "last", Type: types.StringType()},
		{Name: "lastnn", Type: types.StringType()},
		{Name: "first", Type: types.IntType()},
		{Name: "firstnn", Type: types.IntType()},
		{Name: "or", Type: types.BooleanType()},
		{Name: "list", Type: types.StringType()},
	}
}

// decodeFuzzRows turns bytes into rows: 10 bytes a row, a value NULL when
// its byte is a multiple of 5.
func decodeFuzzRows(data []byte) []fuzzRow {
	var rows []fuzzRow
	for len(data) >= 10 {
		b := data[:10]
		data = data[10:]
		r := fuzzRow{kind: kv.RowKind(b[0] % 4), vals: make([]any, 10)}
		r.vals[0] = int32(7)
		for i := 1; i < 10; i++ {
			if b[i]%5 == 0 {
				continue
			}
			switch i {
			case 1:
				r.vals[i] = int64(int8(b[i])) << 56 // large values exercise wrapping
			case 2, 3, 6, 7:
				r.vals[i] = int32(int8(b[i]))
			case 4, 5, 9:
				r.vals[i] = fuzzStrings[b[i]%4]
			case 8:
				r.vals[i] = b[i]%2 == 0
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// model computes the expected row with simple per-function definitions:
// sum adds non-NULL adds and subtracts non-NULL retractions (wrapping);
// max, min, first_value, first_non_null_value, bool_or and listagg ignore
// retractions (ignore-retract) and fold the non-NULL adds; last_value is
// the last row's value, NULL after a retraction; last_non_null_value the
// last non-NULL value, NULL once one is retracted.
func model(rows []fuzzRow) []any {
	out := make([]any, 10)
	out[0] = int32(7)
	var sum *int64
	firstSeen := false
	var list []string
	for _, r := range rows {
		add := r.kind.IsAdd()
		if v, ok := r.vals[1].(int64); ok {
			if sum == nil {
				sum = new(int64)
			}
			if add {
				*sum += v
			} else {
				*sum -= v
			}
		}
		if add {
			out[4] = r.vals[4]
		} else {
			out[4] = nil
		}
		if r.vals[5] != nil {
			if add {
				out[5] = r.vals[5]
			} else {
				out[5] = nil
			}
		}
		if !add {
			continue
		}
		if v, ok := r.vals[2].(int32); ok && (out[2] == nil || v > out[2].(int32)) {
			out[2] = v
		}
		if v, ok := r.vals[3].(int32); ok && (out[3] == nil || v < out[3].(int32)) {
			out[3] = v
		}
		if !firstSeen {
			firstSeen = true
			out[6] = r.vals[6]
		}
		if out[7] == nil {
			out[7] = r.vals[7]
		}
		if v, ok := r.vals[8].(bool); ok {
			out[8] = v || (out[8] != nil && out[8].(bool))
		}
		if v, ok := r.vals[9].(string); ok {
			if out[9] == nil {
				out[9] = v
			}
			if v != "" {
				list = append(list, v)
			}
		}
	}
	if sum != nil {
		out[1] = *sum
	}
	if len(list) > 0 {
		out[9] = strings.Join(list, ",")
	}
	return out
}

var fuzzOptions = map[string]string{
	"fields.sum.aggregate-function":     "sum",
	"fields.max.aggregate-function":     "max",
	"fields.max.ignore-retract":         "true",
	"fields.min.aggregate-function":     "min",
	"fields.min.ignore-retract":         "true",
	"fields.last.aggregate-function":    "last_value",
	"fields.first.aggregate-function":   "first_value",
	"fields.first.ignore-retract":       "true",
	"fields.firstnn.aggregate-function": "first_non_null_value",
	"fields.firstnn.ignore-retract":     "true",
	"fields.or.aggregate-function":      "bool_or",
	"fields.or.ignore-retract":          "true",
	"fields.list.aggregate-function":    "listagg",
	"fields.list.ignore-retract":        "true",
}

// FuzzRowAggregator compares RowAggregator on random rows of one key with
// model, and checks that Reset really starts over (the same rows merged
// twice give the same row).
func FuzzRowAggregator(f *testing.F) {
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x03\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte(strings.Repeat("\x01\x7f\x80\x81\x02\x03\x04\x06\x07\x09", 5)))
	a, err := aggregate.NewRowAggregator(fuzzFields(), []string{"id"}, nil, fuzzOptions)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := decodeFuzzRows(data)
		if len(rows) == 0 {
			return
		}
		want := model(rows)
		for round := 0; round < 2; round++ {
			a.Reset()
			for _, r := range rows {
				if err := a.Add(r.kind, r.vals); err != nil {
					t.Fatal(err)
				}
			}
			got, kind := a.Result()
			if kind != kv.Insert {
				t.Fatalf("kind %v, want +I", kind)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("round %d field %s: got %#v, want %#v (rows %v)", round, fuzzFields()[i].Name, got[i], want[i], rows)
				}
			}
		}
	})
}
