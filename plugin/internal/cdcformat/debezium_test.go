package cdcformat_test

import (
	"reflect"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// The rows of Paimon's schema-evolution fixture without a schema: insert,
// delete, an update whose "before" has only the changed column (merged over
// "after" for the -D row, DebeziumJsonRecordParser.extractRecords), insert.
func TestDebeziumNoSchema(t *testing.T) {
	want := schemaEvolution3()
	for i, line := range lines(t, "debezium/schemaevolution-data-3.txt") {
		ev, err := cdcformat.Decode(cdcformat.Debezium, line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if ev.Database != "test" || ev.Table != "product" || ev.Fields != nil || ev.PrimaryKeys != nil || ev.DDL != "" {
			t.Errorf("line %d: event %+v", i+1, ev)
		}
		assertChanges(t, ev.Changes, want[i])
	}
}

func TestDebeziumSchemaNullAndInclude(t *testing.T) {
	ev, err := cdcformat.Decode(cdcformat.Debezium, lines(t, "debezium/schema-null-delete.txt")[0])
	if err != nil {
		t.Fatal(err)
	}
	if ev.Fields != nil {
		t.Errorf(`"schema": null gave Fields %v`, fieldTypes(ev))
	}
	assertChanges(t, ev.Changes, []cdcformat.Change{change(kv.Delete, "id", n("101"), "name", "scooter", "description", "Small 2-wheel scooter", "weight", n("3.14"))})

	ev, err = cdcformat.Decode(cdcformat.Debezium, lines(t, "debezium/schema-include.txt")[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fieldTypes(ev), []string{"id INT", "name STRING", "description STRING", "weight DOUBLE"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Fields = %v, want %v", got, want)
	}
	if ev.Database != "inventory" || ev.Table != "products" {
		t.Errorf("database.table = %s.%s", ev.Database, ev.Table)
	}
	assertChanges(t, ev.Changes, []cdcformat.Change{change(kv.Insert, "id", n("101"), "name", "scooter", "description", "Small 2-wheel scooter", "weight", n("3.140000104904175"))})
}

// Nested values without a schema stay structured (Paimon writes them as JSON
// text; rowconv does the same for a STRING column).
func TestDebeziumNested(t *testing.T) {
	ev, err := cdcformat.Decode(cdcformat.Debezium, lines(t, "debezium/nestedtype.txt")[0])
	if err != nil {
		t.Fatal(err)
	}
	assertChanges(t, ev.Changes, []cdcformat.Change{change(kv.Insert, "id", n("101"), "name", "hammer", "row", map[string]any{"row_key": "value"})})
	c, err := rowconv.NewConverter([]types.DataField{{Name: "id", Type: types.IntType()}, {Name: "name", Type: types.StringType()}, {Name: "row", Type: types.StringType()}}, rowconv.ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	row, _, err := c.Convert(ev.Changes[0].Row)
	if err != nil {
		t.Fatal(err)
	}
	if row[2] != `{"row_key":"value"}` {
		t.Errorf("row column = %#v", row[2])
	}
}

// The all-types fixture with a schema: the types are those
// KafkaSyncTableActionITCase.testAllTypesWithSchemaImpl expects (nullable
// here: Paimon's NOT NULL comes from the primary key), and the values,
// converted by rowconv to those types, are the ones it reads back.
func TestDebeziumAllTypes(t *testing.T) {
	ev, err := cdcformat.Decode(cdcformat.Debezium, lines(t, "debezium/schema-alltype.txt")[0])
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{
		"_id INT", "pt DECIMAL(2, 1)", "_bit1 BOOLEAN", "_bit BINARY(8)",
		"_tinyint1 SMALLINT", "_boolean SMALLINT", "_bool SMALLINT", "_tinyint SMALLINT", "_tinyint_unsigned SMALLINT", "_tinyint_unsigned_zerofill SMALLINT",
		"_smallint SMALLINT", "_smallint_unsigned INT", "_smallint_unsigned_zerofill INT",
		"_mediumint INT", "_mediumint_unsigned INT", "_mediumint_unsigned_zerofill INT",
		"_int INT", "_int_unsigned BIGINT", "_int_unsigned_zerofill BIGINT",
		"_bigint BIGINT", "_bigint_unsigned DECIMAL(20, 0)", "_bigint_unsigned_zerofill DECIMAL(20, 0)", "_serial DECIMAL(20, 0)",
		"_float DOUBLE", "_float_unsigned DOUBLE", "_float_unsigned_zerofill DOUBLE",
		"_real DOUBLE", "_real_unsigned DOUBLE", "_real_unsigned_zerofill DOUBLE",
		"_double DOUBLE", "_double_unsigned DOUBLE", "_double_unsigned_zerofill DOUBLE",
		"_double_precision DOUBLE", "_double_precision_unsigned DOUBLE", "_double_precision_unsigned_zerofill DOUBLE",
		"_numeric DECIMAL(8, 3)", "_numeric_unsigned DECIMAL(8, 3)", "_numeric_unsigned_zerofill DECIMAL(8, 3)",
		"_fixed STRING", "_fixed_unsigned STRING", "_fixed_unsigned_zerofill STRING",
		"_decimal DECIMAL(8, 0)", "_decimal_unsigned DECIMAL(8, 0)", "_decimal_unsigned_zerofill DECIMAL(8, 0)",
		"_big_decimal DECIMAL(38, 10)",
		"_date DATE", "_datetime TIMESTAMP(3)", "_datetime3 TIMESTAMP(3)", "_datetime6 TIMESTAMP(6)", "_datetime_p TIMESTAMP(3)", "_datetime_p2 TIMESTAMP(3)",
		"_timestamp TIMESTAMP(6)", "_timestamp0 TIMESTAMP(6)",
		"_char STRING", "_varchar STRING", "_tinytext STRING", "_text STRING", "_mediumtext STRING", "_longtext STRING",
		"_bin BYTES", "_varbin BYTES", "_tinyblob BYTES", "_blob BYTES", "_mediumblob BYTES", "_longblob BYTES",
		"_json STRING", "_enum STRING", "_year INT", "_time TIME(0)",
		"_point STRING", "_geometry STRING", "_linestring STRING", "_polygon STRING", "_multipoint STRING", "_multiline STRING", "_multipolygon STRING", "_geometrycollection STRING",
		"_set STRING",
	}
	if got := fieldTypes(ev); !reflect.DeepEqual(got, wantTypes) {
		t.Errorf("Fields:\n got %v\nwant %v", got, wantTypes)
	}
	if len(ev.Changes) != 1 || ev.Changes[0].Kind != kv.Insert {
		t.Fatalf("op r: changes %s, want one +I", show(ev.Changes))
	}
	row := ev.Changes[0].Row
	decoded := map[string]any{
		"_bit":       "AAAAAAAAB8c=", // little-endian xwcAAAAAAAA= reversed
		"_date":      "2023-03-23",
		"_datetime":  "2023-03-23T14:30:05.000",
		"_datetime3": "2023-03-23T14:30:05.123",
		"_datetime6": "2023-03-23T14:30:05.123456",
		"_timestamp": "2023-03-23T22:00:10.123456Z",
		"_bin":       "Ynl0ZXMAAAAAAA==",
		"_time":      "10:13:23.000000",
		"pt":         "1.1",
		"_numeric":   "12345.110",
		"_set":       "a,b",
	}
	for k, want := range decoded {
		if !reflect.DeepEqual(row[k], want) {
			t.Errorf("%s = %#v, want %#v", k, row[k], want)
		}
	}

	vals := convert(t, ev.Fields, row)
	got := map[string]string{}
	for i, f := range ev.Fields {
		got[f.Name] = vals[i]
	}
	// Paimon's expected row (testAllTypesWithSchemaImpl), column by column,
	// in our rendering. Left out: _fixed* and _big_decimal, whose expected
	// digits are not in the fixture (1.2345678987654322e+32 cannot read back
	// as ...321.11), and the geometry columns, which Paimon renders as
	// GeoJSON and we keep as the Debezium struct.
	want := map[string]string{
		"_id": "1", "pt": "1.1", "_bit1": "true", "_bit": "[0, 0, 0, 0, 0, 0, 7, 199]",
		"_tinyint1": "1", "_boolean": "1", "_bool": "0", "_tinyint": "1", "_tinyint_unsigned": "2", "_tinyint_unsigned_zerofill": "3",
		"_smallint": "1000", "_smallint_unsigned": "2000", "_smallint_unsigned_zerofill": "3000",
		"_mediumint": "100000", "_mediumint_unsigned": "200000", "_mediumint_unsigned_zerofill": "300000",
		"_int": "1000000", "_int_unsigned": "2000000", "_int_unsigned_zerofill": "3000000",
		"_bigint": "10000000000", "_bigint_unsigned": "20000000000", "_bigint_unsigned_zerofill": "30000000000", "_serial": "40000000000",
		"_float": "1.5", "_float_unsigned": "2.5", "_float_unsigned_zerofill": "3.5",
		"_real": "1.000001", "_real_unsigned": "2.000002", "_real_unsigned_zerofill": "3.000003",
		"_double": "1.000011", "_double_unsigned": "2.000022", "_double_unsigned_zerofill": "3.000033",
		"_double_precision": "1.000111", "_double_precision_unsigned": "2.000222", "_double_precision_unsigned_zerofill": "3.000333",
		"_numeric": "12345.110", "_numeric_unsigned": "12345.220", "_numeric_unsigned_zerofill": "12345.330",
		"_decimal": "11111", "_decimal_unsigned": "22222", "_decimal_unsigned_zerofill": "33333",
		"_date":     "2023-03-23",
		"_datetime": "2023-03-23T14:30:05", "_datetime3": "2023-03-23T14:30:05.123", "_datetime6": "2023-03-23T14:30:05.123456",
		"_datetime_p": "2023-03-24T14:30:00", "_datetime_p2": "2023-03-24T14:30:05.12",
		"_timestamp": "2023-03-23T22:00:10.123456", "_timestamp0": "2023-03-23T07:10:00",
		"_char": "Paimon", "_varchar": "Apache Paimon", "_tinytext": "Apache Paimon MySQL TINYTEXT Test Data", "_text": "Apache Paimon MySQL Test Data",
		"_mediumtext": "Apache Paimon MySQL MEDIUMTEXT Test Data", "_longtext": "Apache Paimon MySQL Long Test Data",
		"_bin":        "[98, 121, 116, 101, 115, 0, 0, 0, 0, 0]",
		"_varbin":     "[109, 111, 114, 101, 32, 98, 121, 116, 101, 115]",
		"_tinyblob":   "[84, 73, 78, 89, 66, 76, 79, 66, 32, 116, 121, 112, 101, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97]",
		"_blob":       "[66, 76, 79, 66, 32, 116, 121, 112, 101, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97]",
		"_mediumblob": "[77, 69, 68, 73, 85, 77, 66, 76, 79, 66, 32, 116, 121, 112, 101, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97]",
		"_longblob":   "[76, 79, 78, 71, 66, 76, 79, 66, 32, 32, 98, 121, 116, 101, 115, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97]",
		"_json":       `{"a": "b"}`, "_enum": "value1", "_year": "2023", "_time": "36803000", "_set": "a,b",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("converted %s = %s, want %s", k, got[k], w)
		}
	}
}

// Debezium's encodings decoded for rowconv, per semantic type.
func TestDebeziumValues(t *testing.T) {
	col := func(typ, name, params string) string {
		s := `{"type":"` + typ + `","field":"v"`
		if name != "" {
			s += `,"name":"` + name + `"`
		}
		if params != "" {
			s += `,"parameters":` + params
		}
		return s + "}"
	}
	msg := func(column, value string) []byte {
		return []byte(`{"schema":{"type":"struct","fields":[{"type":"struct","field":"before","fields":[` + column + `]}]},"payload":{"op":"c","after":{"v":` + value + `}}}`)
	}
	tests := []struct {
		column, value string
		want          any
		wantType      string
	}{
		{col("bytes", "org.apache.kafka.connect.data.Decimal", `{"scale":"2","connect.decimal.precision":"10"}`), `"BNI="`, "12.34", "DECIMAL(10, 2)"},
		{col("bytes", "org.apache.kafka.connect.data.Decimal", `{"scale":"0"}`), `"/w=="`, "-1", "DECIMAL(20, 0)"},
		{col("bytes", "org.apache.kafka.connect.data.Decimal", `{"scale":"3","connect.decimal.precision":"5"}`), `"AA=="`, "0.000", "DECIMAL(5, 3)"},
		{col("bytes", "org.apache.kafka.connect.data.Decimal", `{"scale":"1","connect.decimal.precision":"5"}`), `"-12.5"`, "-12.5", "DECIMAL(5, 1)"}, // not base64: decimal text
		{col("bytes", "org.apache.kafka.connect.data.Decimal", `{"scale":"2","connect.decimal.precision":"40"}`), `12345678901234567890123456789012345678.25`, "12345678901234567890123456789012345678.25", "STRING"},
		{col("struct", "io.debezium.data.VariableScaleDecimal", ""), `{"scale":3,"value":"AeI="}`, "0.482", "STRING"},
		{col("int32", "io.debezium.time.Date", ""), `-1`, "1969-12-31", "DATE"},
		{col("int64", "io.debezium.time.Timestamp", ""), `-1`, "1969-12-31T23:59:59.999", "TIMESTAMP(3)"},
		{col("int64", "io.debezium.time.MicroTimestamp", ""), `1679581805123456`, "2023-03-23T14:30:05.123456", "TIMESTAMP(6)"},
		{col("int64", "io.debezium.time.NanoTimestamp", ""), `1679581805123456789`, "2023-03-23T14:30:05.123456789", "TIMESTAMP(9)"},
		{col("string", "io.debezium.time.ZonedTimestamp", ""), `"2023-03-23T22:00:10.123456+02:00"`, "2023-03-23T22:00:10.123456+02:00", "TIMESTAMP(6)"},
		{col("int32", "io.debezium.time.Time", ""), `36803123`, "10:13:23.123", "TIME(3)"},
		{col("int64", "io.debezium.time.MicroTime", ""), `36803123456`, "10:13:23.123456", "TIME(0)"},
		{col("int64", "io.debezium.time.NanoTime", ""), `36803123456789`, "10:13:23.123456789", "TIME(9)"},
		{col("string", "io.debezium.data.Json", ""), `"{\"a\":1}"`, `{"a":1}`, "STRING"},
		{col("bytes", "", ""), `"AAE="`, "AAE=", "BYTES"},
		{col("float64", "", ""), `1.25`, n("1.25"), "DOUBLE"},
		{col("float32", "", ""), `1.25`, n("1.25"), "FLOAT"},
		{col("int8", "", ""), `-5`, n("-5"), "TINYINT"},
		{col("boolean", "", ""), `true`, true, "BOOLEAN"},
		{col("array", "", ""), `[1,2]`, []any{n("1"), n("2")}, "STRING"},
		{col("int64", "io.debezium.time.Timestamp", ""), `null`, nil, "TIMESTAMP(3)"},
	}
	for _, tt := range tests {
		ev, err := cdcformat.Decode(cdcformat.Debezium, msg(tt.column, tt.value))
		if err != nil {
			t.Errorf("%s = %s: %v", tt.column, tt.value, err)
			continue
		}
		if got := ev.Changes[0].Row["v"]; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s = %s: decoded %#v, want %#v", tt.column, tt.value, got, tt.want)
		}
		if got := ev.Fields[0].Type.String(); got != tt.wantType {
			t.Errorf("%s: type %s, want %s", tt.column, got, tt.wantType)
		}
	}

	for _, bad := range []struct{ column, value, want string }{
		{col("int64", "io.debezium.time.MicroTime", ""), `86400000000`, "MicroTime: not a time of day"},
		{col("int64", "io.debezium.time.MicroTime", ""), `-1`, "MicroTime: not a time of day"},
		{col("int64", "io.debezium.time.NanoTimestamp", ""), `"x"`, "NanoTimestamp: not a whole number"},
		{col("int64", "io.debezium.time.Timestamp", ""), `9223372036854775807`, "Timestamp: out of the years 0000-9999"},
		{col("bytes", "io.debezium.data.Bits", `{"length":"3"}`), `"%%"`, "Bits: invalid base64"},
		{col("bytes", "org.apache.kafka.connect.data.Decimal", `{}`), `"AA=="`, "Decimal: missing or invalid scale parameter"},
		{col("struct", "io.debezium.data.VariableScaleDecimal", ""), `{"value":"AA=="}`, `VariableScaleDecimal: "scale" missing`},
	} {
		_, err := cdcformat.Decode(cdcformat.Debezium, msg(bad.column, bad.value))
		if err == nil || !containsAll(err.Error(), `field "payload.after.v"`, bad.want) {
			t.Errorf("%s = %s: error %v, want %q", bad.column, bad.value, err, bad.want)
		}
	}
}
