package aggregate_test

import (
	"errors"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree/aggregate"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func TestNewErrors(t *testing.T) {
	rowT := types.RowType(types.DataField{Name: "k", Type: types.IntType()}, types.DataField{Name: "v", Type: types.StringType()})
	tests := []struct {
		name    string
		fn      string
		typ     types.DataType
		options map[string]string
		want    error
	}{
		{"unknown", "count", types.BigIntType(), nil, aggregate.ErrUnsupportedFunction},
		{"misspelled", "Sum", types.BigIntType(), nil, aggregate.ErrUnsupportedFunction},
		{"rbm64", "rbm64", types.BytesType(), nil, aggregate.ErrUnsupportedFunction},
		{"hll", "hll_sketch", types.BytesType(), nil, aggregate.ErrUnsupportedFunction},
		{"rbm32 binary(4)", "rbm32", types.BinaryType(4), nil, aggregate.ErrInvalidType},
		{"sum string", "sum", types.StringType(), nil, aggregate.ErrInvalidType},
		{"product date", "product", types.DateType(), nil, aggregate.ErrInvalidType},
		{"bool_and int", "bool_and", types.IntType(), nil, aggregate.ErrInvalidType},
		{"listagg varchar(5)", "listagg", types.VarCharType(5), nil, aggregate.ErrInvalidType},
		{"collect map", "collect", types.MapType(types.IntType(), types.IntType()), nil, aggregate.ErrInvalidType},
		{"collect distinct bytes", "collect", types.ArrayType(types.BytesType()), map[string]string{"fields.f.distinct": "true"}, aggregate.ErrUnsupportedFunction},
		{"merge_map array", "merge_map", types.ArrayType(types.IntType()), nil, aggregate.ErrInvalidType},
		{"merge_map bytes keys", "merge_map", types.MapType(types.BytesType(), types.IntType()), nil, aggregate.ErrUnsupportedFunction},
		{"merge_map row keys", "merge_map", types.MapType(rowT, types.IntType()), nil, aggregate.ErrUnsupportedFunction},
		{"keytime one field", "merge_map_with_keytime", types.MapType(types.IntType(), types.RowType(types.DataField{Name: "ts", Type: types.StringType()})), nil, aggregate.ErrInvalidType},
		{"keytime ts-field", "merge_map_with_keytime", types.MapType(types.IntType(), rowT), map[string]string{"fields.f.ts-field": "x"}, aggregate.ErrInvalidOption},
		{"nested_update array<int>", "nested_update", types.ArrayType(types.IntType()), nil, aggregate.ErrInvalidType},
		{"nested_update unknown key", "nested_update", types.ArrayType(rowT), map[string]string{"fields.f.nested-key": "k,x"}, aggregate.ErrInvalidOption},
		{"nested_update count-limit", "nested_update", types.ArrayType(rowT), map[string]string{"fields.f.count-limit": "many"}, aggregate.ErrInvalidOption},
		{"nested_partial_update no key", "nested_partial_update", types.ArrayType(rowT), nil, aggregate.ErrInvalidOption},
		{"distinct not boolean", "collect", types.ArrayType(types.IntType()), map[string]string{"fields.f.distinct": "yes"}, aggregate.ErrInvalidOption},
		{"ignore-retract and remove-record-on-delete", "sum", types.IntType(), map[string]string{"fields.f.ignore-retract": "true", "aggregation.remove-record-on-delete": "true"}, aggregate.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn, err := aggregate.New(tt.fn, types.DataField{Name: "f", Type: tt.typ}, tt.options)
			if !errors.Is(err, tt.want) {
				t.Fatalf("New(%s, %s) = %v, %v; want %v", tt.fn, tt.typ, fn, err, tt.want)
			}
		})
	}
}

func TestRetractUnsupported(t *testing.T) {
	for _, name := range []string{"max", "min", "first_value", "first_non_null_value", "first_not_null_value", "bool_and", "bool_or", "listagg"} {
		typ := types.IntType()
		switch name {
		case "bool_and", "bool_or":
			typ = types.BooleanType()
		case "listagg":
			typ = types.StringType()
		}
		fn, err := aggregate.New(name, types.DataField{Name: "f", Type: typ}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fn.Retract(nil, nil); !errors.Is(err, aggregate.ErrRetractUnsupported) {
			t.Errorf("%s: Retract = %v, want ErrRetractUnsupported", name, err)
		}
		fn, err = aggregate.New(name, types.DataField{Name: "f", Type: typ}, map[string]string{"fields.f.ignore-retract": "true"})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := fn.Retract("acc", nil); err != nil || got != "acc" {
			t.Errorf("%s with ignore-retract: Retract = %v, %v; want the accumulator", name, got, err)
		}
	}
}

func TestFuncName(t *testing.T) {
	options := map[string]string{
		"fields.a.aggregate-function":       "sum",
		"fields.s.aggregate-function":       "sum",
		"fields.id.aggregate-function":      "sum",
		"fields.default-aggregate-function": "max",
	}
	tests := []struct{ field, want string }{
		{"s", "last_value"},   // sequence field beats everything
		{"id", "primary-key"}, // then the primary key
		{"a", "sum"},          // then the field's function
		{"b", "max"},          // then the default
	}
	for _, tt := range tests {
		if got := aggregate.FuncName(tt.field, []string{"id"}, []string{"s"}, options); got != tt.want {
			t.Errorf("FuncName(%s) = %s, want %s", tt.field, got, tt.want)
		}
	}
	if got := aggregate.FuncName("b", nil, nil, nil); got != "last_non_null_value" {
		t.Errorf("FuncName without options = %s, want last_non_null_value", got)
	}
}

func TestRowAggregator(t *testing.T) {
	fields := []types.DataField{
		{Name: "id", Type: types.IntType().NotNull()},
		{Name: "n", Type: types.BigIntType()},
		{Name: "tag", Type: types.StringType()},
	}
	a, err := aggregate.NewRowAggregator(fields, []string{"id"}, nil, map[string]string{
		"fields.n.aggregate-function":         "sum",
		"aggregation.remove-record-on-delete": "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	if row, _ := a.Result(); row != nil {
		t.Fatalf("Result before Add = %v, want nil", row)
	}
	type in struct {
		kind kv.RowKind
		row  []any
	}
	tests := []struct {
		name     string
		rows     []in
		want     []any
		wantKind kv.RowKind
	}{
		{"sum and last_non_null", []in{{kv.Insert, []any{int32(1), int64(2), "a"}}, {kv.UpdateAfter, []any{int32(1), int64(3), nil}}}, []any{int32(1), int64(5), "a"}, kv.Insert},
		{"-U retracts", []in{{kv.Insert, []any{int32(1), int64(2), "a"}}, {kv.UpdateBefore, []any{int32(1), int64(2), "a"}}}, []any{int32(1), int64(0), nil}, kv.Insert},
		{"-D removes", []in{{kv.Insert, []any{int32(1), int64(2), "a"}}, {kv.Delete, []any{int32(1), int64(9), nil}}}, []any{int32(1), int64(9), nil}, kv.Delete},
		{"+I after -D aggregates onto the -D row", []in{{kv.Delete, []any{int32(1), int64(9), "d"}}, {kv.Insert, []any{int32(1), int64(1), nil}}}, []any{int32(1), int64(10), "d"}, kv.Insert},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.Reset()
			for _, r := range tt.rows {
				if err := a.Add(r.kind, r.row); err != nil {
					t.Fatal(err)
				}
			}
			got, kind := a.Result()
			if kind != tt.wantKind {
				t.Errorf("kind %v, want %v", kind, tt.wantKind)
			}
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Errorf("field %s = %#v, want %#v", fields[i].Name, got[i], tt.want[i])
				}
			}
		})
	}
	a.Reset()
	if err := a.Add(kv.Delete, []any{nil, nil, nil}); !errors.Is(err, aggregate.ErrInvalidValue) {
		t.Errorf("-D with a NULL key = %v, want ErrInvalidValue", err)
	}
	if err := a.Add(kv.Insert, []any{int32(1)}); !errors.Is(err, aggregate.ErrInvalidValue) {
		t.Errorf("short row = %v, want ErrInvalidValue", err)
	}
	if err := a.Add(kv.RowKind(9), []any{int32(1), nil, nil}); !errors.Is(err, kv.ErrInvalidRowKind) {
		t.Errorf("bad kind = %v, want ErrInvalidRowKind", err)
	}
	if _, err := aggregate.NewRowAggregator(fields, []string{"id"}, nil, map[string]string{"fields.tag.aggregate-function": "sum"}); !errors.Is(err, aggregate.ErrInvalidType) {
		t.Errorf("sum on STRING = %v, want ErrInvalidType", err)
	}
}
