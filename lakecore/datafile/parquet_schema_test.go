package datafile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestSchemaMatchesJavaFixtures is the golden test of the schema converter:
// for every Parquet file Java wrote in the fixtures, the schema elements the
// writer produces for the file's Paimon fields equal the file's own,
// element by element (names, physical and logical types, converted types,
// repetition, decimal scale/precision, lengths and field ids, including the
// synthetic LIST/MAP ids and absent ids on the repeated groups).
func TestSchemaMatchesJavaFixtures(t *testing.T) {
	wForEachJavaFile(t, func(t *testing.T, data []byte, fields []types.DataField) {
		want := wReadFooter(t, data).Schema
		s, err := buildWriteSchema(fields, schemaOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := s.elements
		if len(got) != len(want) {
			t.Fatalf("got %d schema elements, want %d", len(got), len(want))
		}
		for i := range want {
			if g, w := wDescribeElement(got[i]), wDescribeElement(want[i]); g != w {
				t.Errorf("element %d:\n got %s\nwant %s", i, g, w)
			}
		}
	})
}

// matchSchema picks the fields whose names are the file's top-level columns.
func wMatchSchema(schemas [][]types.DataField, els []footerSchemaElement) []types.DataField {
	n := int(els[0].NumChildren.V)
	var names []string
	for i := 1; i < len(els) && len(names) < n; {
		names = append(names, els[i].Name)
		i += wSubtreeSize(els, i)
	}
	for _, fields := range schemas {
		if len(fields) != len(names) {
			continue
		}
		ok := true
		for i, f := range fields {
			ok = ok && f.Name == names[i]
		}
		if ok {
			return fields
		}
	}
	return nil
}

func wSubtreeSize(els []footerSchemaElement, i int) int {
	size := 1
	for c := 0; c < int(els[i].NumChildren.V); c++ {
		size += wSubtreeSize(els, i+size)
	}
	return size
}

func wDescribeElement(e footerSchemaElement) string {
	opt := func(valid bool, v any) string {
		if !valid {
			return "-"
		}
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("name=%s type=%s len=%s rep=%s children=%s conv=%s scale=%s prec=%s id=%s logical=%s",
		e.Name, opt(e.Type.Valid, e.Type.V), opt(e.TypeLength.Valid, e.TypeLength.V),
		opt(e.RepetitionType.Valid, e.RepetitionType.V), opt(e.NumChildren.Valid, e.NumChildren.V),
		opt(e.ConvertedType.Valid, e.ConvertedType.V), opt(e.Scale.Valid, e.Scale.V),
		opt(e.Precision.Valid, e.Precision.V), opt(e.FieldID.Valid, e.FieldID.V), e.LogicalType.String())
}

// TestSchemaNestedIDs pins Java's synthetic ids for nested LIST/MAP levels
// (SpecialFields.getArrayElementFieldId / getMapKeyFieldId /
// getMapValueFieldId with the depth counted from the enclosing field) and
// the levels the writer derives.
func TestSchemaNestedIDs(t *testing.T) {
	inner := types.RowType(wField(7, "x", types.IntType()))
	fields := []types.DataField{
		wField(3, "a", types.ArrayType(types.ArrayType(types.StringType()))),
		wField(4, "m", types.MapType(types.StringType(), types.ArrayType(inner))),
		wField(5, "ms", types.MultisetType(types.StringType()).NotNull()),
	}
	s, err := buildWriteSchema(fields, schemaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range s.elements {
		got = append(got, fmt.Sprintf("%s:%s:%s", e.Name, wOpt32(e.FieldID.Valid, e.FieldID.V), e.RepetitionType.V))
	}
	base := int32(536870911)
	want := []string{
		"paimon_schema:-:REQUIRED",
		"a:3:OPTIONAL", "list:-:REPEATED",
		fmt.Sprintf("element:%d:OPTIONAL", base+3*1024+1), "list:-:REPEATED",
		fmt.Sprintf("element:%d:OPTIONAL", base+3*1024+2),
		"m:4:OPTIONAL", "key_value:-:REPEATED",
		fmt.Sprintf("key:%d:REQUIRED", base-4*1024-1),
		fmt.Sprintf("value:%d:OPTIONAL", base+4*1024+1), "list:-:REPEATED",
		fmt.Sprintf("element:%d:OPTIONAL", base+4*1024+2),
		"x:7:OPTIONAL",
		"ms:5:REQUIRED", "key_value:-:REPEATED",
		fmt.Sprintf("key:%d:REQUIRED", base-5*1024-1),
		fmt.Sprintf("value:%d:REQUIRED", base+5*1024+1),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("elements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Leaf levels: a.list.element.list.element has max def 5, max rep 2.
	levels := map[string][2]int{}
	for i, l := range s.leaves {
		levels[strings.Join(s.paths[i], ".")] = [2]int{l.defLevel, l.repLevel}
	}
	wantLevels := map[string][2]int{
		"a.list.element.list.element":      {5, 2},
		"m.key_value.key":                  {2, 1},
		"m.key_value.value.list.element.x": {6, 2},
		"ms.key_value.key":                 {1, 1},
		"ms.key_value.value":               {1, 1},
	}
	for k, v := range wantLevels {
		if levels[k] != v {
			t.Errorf("%s: levels (def, rep) %v, want %v", k, levels[k], v)
		}
	}
}

func wOpt32(valid bool, v int32) string {
	if !valid {
		return "-"
	}
	return fmt.Sprint(v)
}

func TestDecimalMinBytes(t *testing.T) {
	// ParquetSchemaConverter.computeMinBytesForDecimalPrecision; DECIMAL(23,5)
	// is FIXED_LEN_BYTE_ARRAY(10) in the fixture.
	for p, want := range map[int]int{1: 1, 2: 1, 3: 2, 9: 4, 10: 5, 18: 8, 19: 9, 23: 10, 38: 16} {
		if got := decimalMinBytes(p); got != want {
			t.Errorf("decimalMinBytes(%d) = %d, want %d", p, got, want)
		}
	}
}
