package cdcformat_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
)

func TestParseFormat(t *testing.T) {
	for _, f := range cdcformat.Formats() {
		got, err := cdcformat.ParseFormat(string(f))
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	_, err := cdcformat.ParseFormat("debezium")
	if err == nil || !strings.Contains(err.Error(), "debezium-json, canal-json, maxwell-json, ogg-json") {
		t.Errorf("ParseFormat(debezium) error = %v, want the list of valid names", err)
	}
	if _, err := cdcformat.Decode("avro", []byte(`{}`)); err == nil {
		t.Error("Decode with an unknown format: no error")
	}
}

// Tombstones (a Kafka record with a null value, read as an empty message) and
// JSON null carry no changes, and are not errors: Paimon skips them
// (KafkaDebeziumJsonDeserializationSchema.deserialize).
func TestTombstone(t *testing.T) {
	for _, f := range cdcformat.Formats() {
		for _, in := range []string{"", "  \n", "null"} {
			ev, err := cdcformat.Decode(f, []byte(in))
			if err != nil || !reflect.DeepEqual(ev, cdcformat.Event{}) {
				t.Errorf("Decode(%s, %q) = %+v, %v; want an empty event", f, in, ev, err)
			}
		}
		if ev, err := cdcformat.DecodeValue(f, nil); err != nil || ev.Changes != nil {
			t.Errorf("DecodeValue(%s, nil) = %+v, %v", f, ev, err)
		}
	}
}

const dbzSchema = `"schema":{"type":"struct","fields":[{"type":"struct","field":"after","fields":[{"type":"int32","field":"id"},{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"field":"price"},{"type":"int32","name":"io.debezium.time.Date","field":"d"}]}]}`

// errorCases are malformed envelopes and the start of their errors.
var errorCases = []struct {
	f    cdcformat.Format
	in   string
	want string
}{
	{cdcformat.Debezium, `{"op":`, `debezium-json: not valid JSON`},
	{cdcformat.Debezium, `{"op":"c","after":{}} {}`, `debezium-json: not valid JSON: data after the top-level value`},
	{cdcformat.Debezium, `[1]`, `debezium-json: not a JSON object but an array`},
	{cdcformat.Debezium, `{"after":{"id":1}}`, `debezium-json: field "op": missing`},
	{cdcformat.Debezium, `{"op":null,"after":{"id":1}}`, `debezium-json: field "op": missing`},
	{cdcformat.Debezium, `{"op":{},"after":{"id":1}}`, `debezium-json: field "op": not a string but an object`},
	{cdcformat.Debezium, `{"op":"x","after":{"id":1}}`, `debezium-json: field "op": unknown operation "x" (want c, r, u or d)`},
	{cdcformat.Debezium, `{` + dbzSchema + `,"payload":{"op":"x","after":{"id":1}}}`, `debezium-json: field "payload.op": unknown operation "x"`},
	{cdcformat.Debezium, `{"schema":null}`, `debezium-json: field "payload": missing`},
	{cdcformat.Debezium, `{"schema":null,"payload":"x"}`, `debezium-json: field "payload": not an object but a string`},
	{cdcformat.Debezium, `{"schema":{"fields":[]},"payload":{"op":"c","after":{}}}`, `debezium-json: field "schema.fields": no "after" or "before" struct`},
	{cdcformat.Debezium, `{"schema":{},"payload":{"op":"c","after":{}}}`, `debezium-json: field "schema.fields": missing or not an array`},
	{cdcformat.Debezium, `{"schema":"s","payload":{"op":"c","after":{}}}`, `debezium-json: field "schema": not an object but a string`},
	{cdcformat.Debezium, `{"op":"t"}`, `debezium-json: field "op": operation "t" (truncate) is not supported`},
	{cdcformat.Debezium, `{"op":"m"}`, `debezium-json: field "op": operation "m" (message) is not supported`},
	{cdcformat.Debezium, `{"op":"c","after":null}`, `debezium-json: field "after": missing`},
	{cdcformat.Debezium, `{"op":"r"}`, `debezium-json: field "after": missing`},
	{cdcformat.Debezium, `{"op":"c","after":[1]}`, `debezium-json: field "after": not an object but an array`},
	{cdcformat.Debezium, `{"op":"u","after":{"id":1}}`, `debezium-json: field "before": missing (required when "op" is "u")`},
	{cdcformat.Debezium, `{"op":"u","before":{"id":1}}`, `debezium-json: field "after": missing`},
	{cdcformat.Debezium, `{"op":"d","after":{"id":1}}`, `debezium-json: field "before": missing (required when "op" is "d")`},
	{cdcformat.Debezium, `{"op":"c","after":{},"pkNames":"id"}`, `debezium-json: field "pkNames": not an array but a string`},
	{cdcformat.Debezium, `{"op":"c","after":{},"pkNames":[{}]}`, `debezium-json: field "pkNames[0]": not a string but an object`},
	{cdcformat.Debezium, `{` + dbzSchema + `,"payload":{"op":"c","after":{"id":1,"price":"!!!"}}}`, `debezium-json: field "payload.after.price": Decimal: invalid base64 "!!!"`},
	{cdcformat.Debezium, `{` + dbzSchema + `,"payload":{"op":"c","after":{"id":1,"price":""}}}`, `debezium-json: field "payload.after.price": Decimal: empty unscaled value`},
	{cdcformat.Debezium, `{` + dbzSchema + `,"payload":{"op":"c","after":{"id":1,"price":true}}}`, `debezium-json: field "payload.after.price": Decimal: not a number or base64 string but a boolean`},
	{cdcformat.Debezium, `{` + dbzSchema + `,"payload":{"op":"c","after":{"d":"x"}}}`, `debezium-json: field "payload.after.d": Date: not a whole number of days`},
	{cdcformat.Debezium, `{` + dbzSchema + `,"payload":{"op":"d","before":{"d":99999999999}}}`, `debezium-json: field "payload.before.d": Date: day out of range`},

	{cdcformat.Canal, `{"type":"INSERT"}`, `canal-json: field "data": missing`},
	{cdcformat.Canal, `{"data":null,"type":"INSERT"}`, `canal-json: field "data": missing`},
	{cdcformat.Canal, `{"data":{},"type":"INSERT"}`, `canal-json: field "data": not an array but an object`},
	{cdcformat.Canal, `{"data":[{}]}`, `canal-json: field "type": missing`},
	{cdcformat.Canal, `{"data":[{}],"type":"insert"}`, `canal-json: field "type": unknown operation "insert" (want INSERT, UPDATE, DELETE or ROW)`},
	{cdcformat.Canal, `{"data":[{}],"type":"UPDATE"}`, `canal-json: field "old": missing (required when "type" is "UPDATE")`},
	{cdcformat.Canal, `{"data":[{}],"type":"UPDATE","old":{}}`, `canal-json: field "old": not an array but an object`},
	{cdcformat.Canal, `{"data":[{},{}],"type":"UPDATE","old":[{}]}`, `canal-json: field "old": has 1 rows, fewer than the 2 of "data"`},
	{cdcformat.Canal, `{"data":[{},{}],"type":"UPDATE","old":[{},5]}`, `canal-json: field "old[1]": not an object but a number`},
	{cdcformat.Canal, `{"data":[{"a":"1"},"x"],"type":"INSERT"}`, `canal-json: field "data[1]": not an object but a string`},
	{cdcformat.Canal, `{"data":[{}],"type":"INSERT","mysqlType":["int"]}`, `canal-json: field "mysqlType": not an object but an array`},
	{cdcformat.Canal, `{"data":[{}],"type":"INSERT","mysqlType":{"a":{}}}`, `canal-json: field "mysqlType.a": not a string but an object`},
	{cdcformat.Canal, `{"data":[{"e":"4"}],"type":"INSERT","mysqlType":{"e":"enum('a','b')"}}`, `canal-json: field "data[0].e": enum index 4 out of range of enum('a','b')`},
	{cdcformat.Canal, `{"data":[{"s":"4"}],"type":"INSERT","mysqlType":{"s":"set('a','b')"}}`, `canal-json: field "data[0].s": set bits 4 out of range of set('a','b')`},
	{cdcformat.Canal, `{"data":[{}],"type":"INSERT","pkNames":"id"}`, `canal-json: field "pkNames": not an array but a string`},

	{cdcformat.Maxwell, `{"data":{"id":1}}`, `maxwell-json: field "type": missing`},
	{cdcformat.Maxwell, `{"type":"insert"}`, `maxwell-json: field "data": missing`},
	{cdcformat.Maxwell, `{"type":"insert","data":"x"}`, `maxwell-json: field "data": not an object but a string`},
	{cdcformat.Maxwell, `{"type":"update","data":{"id":1}}`, `maxwell-json: field "old": missing (required when "type" is "update")`},
	{cdcformat.Maxwell, `{"type":"bootstrap-insert","data":{"id":1}}`, `maxwell-json: field "type": unknown operation "bootstrap-insert"`},
	{cdcformat.Maxwell, `{"type":"insert","data":{},"primary_key_columns":[1,{}]}`, `maxwell-json: field "primary_key_columns[1]": not a string but an object`},

	{cdcformat.Ogg, `{"after":{"id":1}}`, `ogg-json: field "op_type": missing`},
	{cdcformat.Ogg, `{"op_type":"I"}`, `ogg-json: field "after": missing`},
	{cdcformat.Ogg, `{"op_type":"U","after":{"id":1}}`, `ogg-json: field "before": missing (required when "op_type" is "U")`},
	{cdcformat.Ogg, `{"op_type":"D","after":{"id":1}}`, `ogg-json: field "before": missing (required when "op_type" is "D")`},
	{cdcformat.Ogg, `{"op_type":"T","table":"A.B"}`, `ogg-json: field "op_type": unknown operation "T" (want I, U or D)`},
	{cdcformat.Ogg, `{"op_type":"I","after":{},"table":"NODOT"}`, `ogg-json: field "table": "NODOT" is not SCHEMA.TABLE`},
	{cdcformat.Ogg, `{"op_type":"I","after":{},"table":" "}`, `ogg-json: field "table": " " is not SCHEMA.TABLE`},
}

func TestDecodeErrors(t *testing.T) {
	for _, tt := range errorCases {
		_, err := cdcformat.Decode(tt.f, []byte(tt.in))
		if err == nil {
			t.Errorf("%s %s: no error, want %q", tt.f, tt.in, tt.want)
			continue
		}
		if !errors.Is(err, cdcformat.ErrInvalidEnvelope) {
			t.Errorf("%s %s: error %v does not wrap ErrInvalidEnvelope", tt.f, tt.in, err)
		}
		var ee *cdcformat.EnvelopeError
		if !errors.As(err, &ee) || ee.Format != tt.f {
			t.Errorf("%s %s: error %v is not an *EnvelopeError of the format", tt.f, tt.in, err)
		}
		if !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s %s:\n got %q\nwant %q...", tt.f, tt.in, err, tt.want)
		}
	}
}

// Numbers are kept as their JSON text, so big integers and decimals are
// exact.
func TestNumbersExact(t *testing.T) {
	ev, err := cdcformat.Decode(cdcformat.Maxwell, []byte(`{"type":"insert","data":{"big":12345678901234567890,"dec":0.1000000000000000055511151231257827}}`))
	if err != nil {
		t.Fatal(err)
	}
	assertChanges(t, ev.Changes, []cdcformat.Change{change(kv.Insert, "big", n("12345678901234567890"), "dec", n("0.1000000000000000055511151231257827"))})
}

// DecodeValue reads what Benthos' AsStructured returns and leaves it
// unmodified; its result equals Decode's.
func TestDecodeValueMatchesDecode(t *testing.T) {
	cases := []struct {
		f    cdcformat.Format
		file string
	}{
		{cdcformat.Debezium, "debezium/schemaevolution-data-3.txt"},
		{cdcformat.Debezium, "debezium/schema-alltype.txt"},
		{cdcformat.Canal, "canal/event-update.txt"},
		{cdcformat.Maxwell, "maxwell/schemaevolution-data-3.txt"},
		{cdcformat.Ogg, "ogg/event-update.txt"},
	}
	for _, c := range cases {
		for i, line := range lines(t, c.file) {
			want, err := cdcformat.Decode(c.f, line)
			if err != nil {
				t.Fatal(err)
			}
			v := parse(t, line)
			snapshot := parse(t, line)
			got, err := cdcformat.DecodeValue(c.f, v)
			if err != nil {
				t.Fatal(err)
			}
			if c.f == cdcformat.Canal {
				// A map has no order: Fields come sorted by name.
				got.Fields, want.Fields = nil, nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s line %d: DecodeValue = %+v, Decode = %+v", c.file, i+1, got, want)
			}
			if !reflect.DeepEqual(v, snapshot) {
				t.Errorf("%s line %d: DecodeValue modified its input", c.file, i+1)
			}
			// Rows are fresh maps: changing one leaves the next decode alone.
			for _, ch := range got.Changes {
				ch.Row["x"] = 1
			}
			if !reflect.DeepEqual(v, snapshot) {
				t.Errorf("%s line %d: a change's row aliases the input", c.file, i+1)
			}
		}
	}
}

// isDdl is read as Jackson's asBoolean: true, "true" or a non-zero number.
func TestCanalIsDdlSpellings(t *testing.T) {
	for in, ddl := range map[string]bool{`true`: true, `"TRUE"`: true, `1`: true, `0`: false, `"no"`: false, `false`: false, `null`: false} {
		ev, err := cdcformat.Decode(cdcformat.Canal, []byte(`{"isDdl":`+in+`,"sql":"DROP TABLE t","data":[{"a":"1"}],"type":"INSERT"}`))
		if err != nil || (ev.DDL != "") != ddl || (len(ev.Changes) == 0) != ddl {
			t.Errorf("isDdl %s: %+v, %v", in, ev, err)
		}
	}
}

// DecodeValue takes float64 numbers (Benthos with BENTHOS_USE_NUMBER=false)
// and numeric strings where Debezium's schema wants whole numbers.
func TestDecodeValueFloats(t *testing.T) {
	v := map[string]any{
		"schema": map[string]any{"fields": []any{map[string]any{"field": "after", "fields": []any{
			map[string]any{"field": "d", "type": "int32", "name": "io.debezium.time.Date"},
			map[string]any{"field": "ts", "type": "int64", "name": "io.debezium.time.Timestamp"},
			map[string]any{"field": "p", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": map[string]any{"scale": 2.0}},
		}}}},
		"payload": map[string]any{"op": "c", "after": map[string]any{"d": 1.0, "ts": "1000", "p": 1.25}},
	}
	ev, err := cdcformat.DecodeValue(cdcformat.Debezium, v)
	if err != nil {
		t.Fatal(err)
	}
	assertChanges(t, ev.Changes, []cdcformat.Change{change(kv.Insert, "d", "1970-01-02", "ts", "1970-01-01T00:00:01.000", "p", "1.25")})
	if _, err := cdcformat.DecodeValue(cdcformat.Debezium, map[string]any{"payload": map[string]any{"op": "c", "after": map[string]any{}}, "schema": map[string]any{"fields": []any{map[string]any{"field": "after", "fields": []any{map[string]any{"field": "d", "name": "io.debezium.time.Date"}}}}}}); err != nil {
		t.Errorf("empty after: %v", err)
	}
	if _, err := cdcformat.DecodeValue(cdcformat.Debezium, "text"); err == nil || !strings.Contains(err.Error(), "not a JSON object but a string") {
		t.Errorf("DecodeValue(string) error %v", err)
	}
	if _, err := cdcformat.DecodeValue("avro", map[string]any{}); err == nil {
		t.Error("DecodeValue with an unknown format: no error")
	}
}
