package cdcformat_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
)

func TestCanalEvents(t *testing.T) {
	tests := []struct {
		file    string
		line    int
		table   string
		types   []string
		changes []cdcformat.Change
	}{
		{"canal/event-insert.txt", 1, "event", []string{"pt INT", "_id INT", "v1 VARCHAR(10)"}, []cdcformat.Change{
			change(kv.Insert, "pt", "1", "_id", "1", "v1", "one"),
		}},
		// A multi-row "data" array: one change per row, in order.
		{"canal/event-insert.txt", 2, "event", []string{"pt INT", "_id INT", "v1 VARCHAR(10)"}, []cdcformat.Change{
			change(kv.Insert, "pt", "1", "_id", "2", "v1", "two"),
			change(kv.Insert, "pt", "2", "_id", "4", "v1", "four"),
		}},
		// "old" holds the changed column only: the -D row is data with old
		// laid over it (CanalRecordParser, mergeOldRecord).
		{"canal/event-update.txt", 1, "schema_evolution_2", []string{"pt INT", "_id INT", "v1 VARCHAR(10)", "v2 INT"}, []cdcformat.Change{
			change(kv.Delete, "pt", "1", "_id", "2", "v1", "two", "v2", nil),
			change(kv.Insert, "pt", "1", "_id", "2", "v1", "second", "v2", nil),
		}},
		// A mysqlType column missing from the row is null.
		{"canal/event-delete.txt", 1, "schema_evolution_1", []string{"pt INT", "_id INT", "v1 VARCHAR(10)", "v2 BIGINT"}, []cdcformat.Change{
			change(kv.Delete, "pt", "1", "_id", "1", "v1", "one", "v2", nil),
		}},
		// VARBINARY text is re-encoded as base64 for rowconv.
		{"canal/event-row.txt", 1, "schema_evolution_1", []string{"pt INT", "_id INT", "v1 VARCHAR(20)", "v2 BIGINT", "v3 DECIMAL(8, 3)", "v4 VARBINARY(10)", "v5 FLOAT"}, []cdcformat.Change{
			change(kv.Insert, "pt", "1", "_id", "9", "v1", "nine", "v2", "90000000000", "v3", "99999.999", "v4", "bmluZS5iaW4=", "v5", "9.9"),
		}},
		// Without mysqlType the rows are as sent and there are no types.
		{"canal/incomplete-data-1.txt", 1, "", nil, []cdcformat.Change{change(kv.Insert, "k", "1", "v", "Hi")}},
		// A bare "decimal" is DECIMAL(38, 18) (MySqlTypeUtils.getTypeInfo).
		{"canal/incomplete-data-2.txt", 1, "decimal_missing_precision", []string{"k INT", "v DECIMAL(38, 18)"}, []cdcformat.Change{change(kv.Insert, "k", "1", "v", "1.2")}},
	}
	for _, tt := range tests {
		ev, err := cdcformat.Decode(cdcformat.Canal, lines(t, tt.file)[tt.line-1])
		if err != nil {
			t.Errorf("%s:%d: %v", tt.file, tt.line, err)
			continue
		}
		if ev.Table != tt.table {
			t.Errorf("%s:%d: table %q, want %q", tt.file, tt.line, ev.Table, tt.table)
		}
		if got := fieldTypes(ev); !reflect.DeepEqual(got, tt.types) {
			t.Errorf("%s:%d: Fields %v, want %v", tt.file, tt.line, got, tt.types)
		}
		if tt.table != "" && (ev.Database != "paimon_sync_table" || !reflect.DeepEqual(ev.PrimaryKeys, []string{pk(tt.file)})) {
			t.Errorf("%s:%d: database %q, keys %v", tt.file, tt.line, ev.Database, ev.PrimaryKeys)
		}
		assertChanges(t, ev.Changes, tt.changes)
	}
}

func pk(file string) string {
	if strings.Contains(file, "incomplete") {
		return "k"
	}
	return "_id"
}

// isDdl events carry the statement and no rows; Paimon skips them
// (CanalRecordParser.extractRecords returns nothing for isDDL()).
func TestCanalDDL(t *testing.T) {
	ls := lines(t, "canal/schemaevolution-data-2.txt")
	ev, err := cdcformat.Decode(cdcformat.Canal, ls[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Changes) != 0 || ev.Fields != nil || ev.Table != "schema_evolution_1" ||
		ev.DDL != "/* Query from DMS-WEBSQL-0-Qid_1694572663426906u by user 1486767996652600 */ ALTER TABLE schema_evolution_1 ADD COLUMN v2 INT" {
		t.Errorf("DDL event = %+v", ev)
	}
	// The rest of the file: inserts of two rows, DDL, insert, update.
	want := []int{2, 0, 1, 2}
	for i, line := range ls[1:] {
		ev, err := cdcformat.Decode(cdcformat.Canal, line)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Changes) != want[i] || (want[i] == 0) != (ev.DDL != "") {
			t.Errorf("line %d: %d changes, DDL %q", i+2, len(ev.Changes), ev.DDL)
		}
	}
}

// An UPDATE of several rows pairs data[i] with old[i].
func TestCanalMultiRowUpdate(t *testing.T) {
	in := `{"data":[{"id":"1","v":"a2","w":"x"},{"id":"2","v":"b2","w":"y"}],"old":[{"v":"a1"},{"v":"b1","w":null}],"type":"UPDATE","database":"d","table":"t","pkNames":["id"],"isDdl":false}`
	ev, err := cdcformat.Decode(cdcformat.Canal, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	assertChanges(t, ev.Changes, []cdcformat.Change{
		change(kv.Delete, "id", "1", "v", "a1", "w", "x"),
		change(kv.Insert, "id", "1", "v", "a2", "w", "x"),
		change(kv.Delete, "id", "2", "v", "b1", "w", nil),
		change(kv.Insert, "id", "2", "v", "b2", "w", "y"),
	})
	// An empty data array has no changes, whatever the operation.
	ev, err = cdcformat.Decode(cdcformat.Canal, []byte(`{"data":[],"type":"DELETE"}`))
	if err != nil || len(ev.Changes) != 0 {
		t.Errorf("empty data: %+v, %v", ev, err)
	}
}

// The all-types fixture: the types KafkaCanalSyncTableActionITCase
// .testAllTypesImpl expects, and its expected rows after rowconv.
func TestCanalAllTypes(t *testing.T) {
	ev, err := cdcformat.Decode(cdcformat.Canal, lines(t, "canal/alltype.txt")[0])
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{
		"_id INT", "pt DECIMAL(2, 1)", "_tinyint1 BOOLEAN", "_boolean BOOLEAN", "_bool BOOLEAN", "_tinyint TINYINT",
		"_tinyint_unsigned SMALLINT", "_tinyint_unsigned_zerofill SMALLINT", "_smallint SMALLINT",
		"_smallint_unsigned INT", "_smallint_unsigned_zerofill INT", "_mediumint INT",
		"_mediumint_unsigned BIGINT", "_mediumint_unsigned_zerofill BIGINT", "_int INT",
		"_int_unsigned BIGINT", "_int_unsigned_zerofill BIGINT", "_bigint BIGINT",
		"_bigint_unsigned DECIMAL(20, 0)", "_bigint_unsigned_zerofill DECIMAL(20, 0)", "_serial DECIMAL(20, 0)",
		"_float FLOAT", "_float_unsigned FLOAT", "_float_unsigned_zerofill FLOAT",
		"_real DOUBLE", "_real_unsigned DOUBLE", "_real_unsigned_zerofill DOUBLE",
		"_double DOUBLE", "_double_unsigned DOUBLE", "_double_unsigned_zerofill DOUBLE",
		"_double_precision DOUBLE", "_double_precision_unsigned DOUBLE", "_double_precision_unsigned_zerofill DOUBLE",
		"_numeric DECIMAL(8, 3)", "_numeric_unsigned DECIMAL(8, 3)", "_numeric_unsigned_zerofill DECIMAL(8, 3)",
		"_fixed STRING", "_fixed_unsigned STRING", "_fixed_unsigned_zerofill STRING",
		"_decimal DECIMAL(8, 0)", "_decimal_unsigned DECIMAL(8, 0)", "_decimal_unsigned_zerofill DECIMAL(8, 0)",
		"_date DATE", "_datetime TIMESTAMP(0)", "_datetime3 TIMESTAMP(3)", "_datetime6 TIMESTAMP(6)",
		"_datetime_p TIMESTAMP(0)", "_datetime_p2 TIMESTAMP(2)", "_timestamp TIMESTAMP(6)", "_timestamp0 TIMESTAMP(0)",
		"_char CHAR(10)", "_varchar VARCHAR(20)", "_tinytext STRING", "_text STRING", "_mediumtext STRING", "_longtext STRING",
		"_bin VARBINARY(10)", "_varbin VARBINARY(20)", "_tinyblob BYTES", "_blob BYTES", "_mediumblob BYTES", "_longblob BYTES",
		"_json STRING", "_enum STRING", "_year INT", "_time TIME(0)",
		"_point STRING", "_geometry STRING", "_linestring STRING", "_polygon STRING", "_multipoint STRING", "_multiline STRING", "_multipolygon STRING", "_geometrycollection STRING",
		"_set ARRAY<STRING>",
	}
	if got := fieldTypes(ev); !reflect.DeepEqual(got, wantTypes) {
		t.Errorf("Fields:\n got %v\nwant %v", got, wantTypes)
	}
	if len(ev.Changes) != 2 {
		t.Fatalf("changes: %s", show(ev.Changes))
	}
	var rows [][]string
	for _, ch := range ev.Changes {
		if ch.Kind != kv.Insert {
			t.Errorf("kind %s, want +I", ch.Kind)
		}
		rows = append(rows, convert(t, ev.Fields, ch.Row))
	}
	// Paimon's expected first row, in field order (geometry columns, which
	// Paimon renders as GeoJSON, are checked apart below).
	want := strings.Split("1|1.1|true|true|false|1|2|3|1000|2000|3000|100000|200000|300000|1000000|2000000|3000000|"+
		"10000000000|20000000000|30000000000|40000000000|1.5|2.5|3.5|1.000001|2.000002|3.000003|1.000011|2.000022|3.000033|"+
		"1.000111|2.000222|3.000333|12345.110|12345.220|12345.330|"+
		"123456789876543212345678987654321.110|123456789876543212345678987654321.220|123456789876543212345678987654321.330|"+
		"11111|22222|33333|2023-03-23|"+
		"2023-03-23T14:30:05|2023-03-23T14:30:05.123|2023-03-23T14:30:05.123456|2023-03-24T14:30:00|2023-03-24T14:30:05.12|"+
		"2023-03-23T15:00:10.123456|2023-03-23T00:10:00|"+
		"Paimon|Apache Paimon|Apache Paimon MySQL TINYTEXT Test Data|Apache Paimon MySQL Test Data|Apache Paimon MySQL MEDIUMTEXT Test Data|Apache Paimon MySQL Long Test Data|"+
		"[98, 121, 116, 101, 115]|[109, 111, 114, 101, 32, 98, 121, 116, 101, 115]|"+
		"[84, 73, 78, 89, 66, 76, 79, 66, 32, 116, 121, 112, 101, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97]|"+
		"[66, 76, 79, 66, 32, 116, 121, 112, 101, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97]|"+
		"[77, 69, 68, 73, 85, 77, 66, 76, 79, 66, 32, 116, 121, 112, 101, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97]|"+
		"[76, 79, 78, 71, 66, 76, 79, 66, 32, 32, 98, 121, 116, 101, 115, 32, 116, 101, 115, 116, 32, 100, 97, 116, 97]|"+
		`{"a": "b"}|value1|2023|36803000`, "|")
	geoFrom := len(want)
	want = append(want, "[a b]")
	for i, w := range want {
		if i == geoFrom {
			i = len(ev.Fields) - 1 // _set, after the geometry columns
		}
		if rows[0][i] != w {
			t.Errorf("row 1 %s = %s, want %s", ev.Fields[i].Name, rows[0][i], w)
		}
	}
	// Geometry: kept as Canal's text (MySQL's internal SRID + WKB bytes).
	if g := ev.Changes[0].Row["_point"].(string); utf8.RuneCountInString(g) != 25 || g[4] != 1 {
		t.Errorf("_point = %q, want the 25 characters as sent", g)
	}
	// The second row is all NULL but the keys and _serial.
	for i, v := range rows[1] {
		name := ev.Fields[i].Name
		want := "NULL"
		switch name {
		case "_id":
			want = "2"
		case "pt":
			want = "2.2"
		case "_serial":
			want = "50000000000"
		}
		if v != want {
			t.Errorf("row 2 %s = %s, want %s", name, v, want)
		}
	}
}

func TestCanalValues(t *testing.T) {
	tests := []struct {
		mysqlType, value string
		want             any
	}{
		{"enum('value1','value2','value3')", `"2"`, "value2"},
		{"enum('value1','value2')", `"value1"`, "value1"}, // already a label
		{"set('a','b','c','d')", `"5"`, []any{"a", "c"}},
		{"set('a','b','c','d')", `"0"`, []any{}},
		{"set('a','b')", `"a,b"`, []any{"a", "b"}},
		{"tinyint(1)", `"1"`, true},
		{"bit(1)", `"0"`, false},
		{"boolean", `"true"`, true},
		{"tinyint(1)", `"2"`, "2"}, // left for rowconv to reject
		{"varbinary(4)", `"\u00ff\u0000A"`, "/wBB"},
		{"blob", `"日本"`, "5pel5pys"}, // beyond Latin-1: UTF-8 bytes
		{"bit(10)", `"7"`, "7"},
		{"int(11)", `12`, n("12")},
		{"tinyint(1)", `1`, true}, // numbers get the conversions too
		{"enum('a','b')", `2`, "b"},
		{"varchar(5)", `null`, nil},
	}
	for _, tt := range tests {
		in := `{"data":[{"v":` + tt.value + `}],"mysqlType":{"v":"` + tt.mysqlType + `"},"type":"INSERT"}`
		ev, err := cdcformat.Decode(cdcformat.Canal, []byte(in))
		if err != nil {
			t.Errorf("%s %s: %v", tt.mysqlType, tt.value, err)
			continue
		}
		if got := ev.Changes[0].Row["v"]; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %s: %#v, want %#v", tt.mysqlType, tt.value, got, tt.want)
		}
	}
}

// mysqlType keys keep their envelope order in Fields; a row drops columns
// mysqlType does not name, as Paimon.
func TestCanalFieldOrder(t *testing.T) {
	in := `{"data":[{"z":"1","a":"2","extra":"3"}],"mysqlType":{"z":"int","a":"varchar(3)","m":"date"},"type":"INSERT"}`
	ev, err := cdcformat.Decode(cdcformat.Canal, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fieldTypes(ev), []string{"z INT", "a VARCHAR(3)", "m DATE"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Fields %v, want %v", got, want)
	}
	assertChanges(t, ev.Changes, []cdcformat.Change{change(kv.Insert, "z", "1", "a", "2", "m", nil)})
}
