package pgcdc

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

const typesDDL = `CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE TABLE types (
  id int PRIMARY KEY, i2 smallint, i8 bigint, o oid, f4 real, f8 double precision,
  n102 numeric(10,2), nun numeric, nneg numeric(5,-2), nbig numeric(50,10),
  m money, b bool, bit1 bit(1), bit3 bit(3), vb varbit,
  by bytea, c5 char(5), vc varchar(10), tx text, u uuid, j json, jb jsonb,
  d date, tm time(3), tm6 time, ttz timetz, ts timestamp(3), ts6 timestamp, tstz timestamptz, iv interval,
  ip inet, e mood, ai int[], at text[], an numeric[], ats timestamptz[], ab bytea[]);`

// typesRow1 and typesRow2 are inserted with id n and n+10.
const typesRow1 = `(%d, -32768, 9223372036854775807, 4294967295, 0.1, 'NaN',
  123.45, 123456789012345678901234567890.123456789012345678901, 12345, 1.5,
  '-1234.56', true, '1', '101', '1101',
  '\xdeadbeef', 'ab', 'hello', 'x,y "q"', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"b":1, "a":2}', '{"b":1, "a":2}',
  '2024-02-29', '12:34:56.789', '23:59:59.999999', '12:00:00+02', '2024-03-10 01:02:03.123', '2024-03-10 01:02:03.123456',
  '2024-03-10 09:02:03.123456+08', '1 year 2 mons 3 days 04:05:06.789',
  '10.0.0.1/8', 'happy', '{1,2,NULL}', '{"x,y",z,NULL,"NULL"}', '{1.5,NaN}', '{"2024-03-10 01:02:03+00"}', '{"\\xdead"}')`

const typesRow2 = `(%d, NULL, NULL, NULL, NULL, '-Infinity', 'NaN', 'Infinity', -99, NULL, '12.34', false, '0', NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'infinity', NULL, NULL, NULL, 'infinity', NULL, '-infinity', NULL,
  NULL, NULL, '{}', '{}', NULL, NULL, NULL)`

// typesWant is the message of each row (without id), as JSON.
var typesWant = []string{
	`{"ab":["3q0="],"ai":[1,2,null],"an":["1.5","NaN"],"at":["x,y","z",null,"NULL"],"ats":["2024-03-10T01:02:03Z"],` +
		`"b":true,"bit1":true,"bit3":"101","by":"3q2+7w==","c5":"ab   ","d":"2024-02-29","e":"happy","f4":0.1,"f8":"NaN",` +
		`"i2":-32768,"i8":9223372036854775807,"ip":"10.0.0.1/8","iv":"P1Y2M3DT4H5M6.789S","j":"{\"b\":1, \"a\":2}",` +
		`"jb":"{\"a\": 2, \"b\": 1}","m":"-1234.56","n102":"123.45","nbig":"1.5000000000",` +
		`"nneg":"12300","nun":"123456789012345678901234567890.123456789012345678901","o":4294967295,` +
		`"tm":"12:34:56.789","tm6":"23:59:59.999999","ts":"2024-03-10T01:02:03.123","ts6":"2024-03-10T01:02:03.123456",` +
		`"tstz":"2024-03-10T01:02:03.123456Z","ttz":"12:00:00+02","tx":"x,y \"q\"","u":"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",` +
		`"vb":"1101","vc":"hello"}`,
	`{"ab":null,"ai":[],"an":null,"at":[],"ats":null,"b":false,"bit1":false,"bit3":null,"by":null,"c5":null,` +
		`"d":"infinity","e":null,"f4":null,"f8":"-Infinity","i2":null,"i8":null,"ip":null,"iv":null,"j":null,"jb":null,` +
		`"m":"12.34","n102":"NaN","nbig":null,"nneg":"-100","nun":"Infinity","o":null,"tm":null,"tm6":null,"ts":"infinity",` +
		`"ts6":null,"tstz":"-infinity","ttz":null,"tx":null,"u":null,"vb":null,"vc":null}`,
}

// typesPaimon is the paimon_types metadata expected for some columns.
var typesPaimon = map[string]string{
	"id": "INT NOT NULL", "i2": "SMALLINT", "i8": "BIGINT", "o": "BIGINT", "f4": "FLOAT", "f8": "DOUBLE",
	"n102": "DECIMAL(10, 2)", "nun": "STRING", "nneg": "STRING", "nbig": "STRING", "m": "DECIMAL(19, 2)",
	"b": "BOOLEAN", "bit1": "BOOLEAN", "bit3": "STRING", "by": "BYTES", "c5": "CHAR(5)", "vc": "VARCHAR(10)",
	"d": "DATE", "tm": "TIME(3)", "tm6": "TIME(3)", "ts": "TIMESTAMP(3)", "ts6": "TIMESTAMP(6)",
	"tstz": "TIMESTAMP(6) WITH LOCAL TIME ZONE", "ai": "ARRAY<INT>", "an": "ARRAY<STRING>", "ab": "ARRAY<BYTES>",
	"ats": "ARRAY<TIMESTAMP(6) WITH LOCAL TIME ZONE>", "e": "STRING", "jb": "STRING", "iv": "STRING",
}

// TestTypes: every type of postgres-cdc.md §7.4 (NaN, infinities, negative
// scale, unconstrained and oversized numeric, money, arrays with NULLs and
// quoted elements, enums, TOAST-free text forms) renders to the same
// message in the snapshot and in the stream, and each column's Paimon type
// parses. In the "hostile" case the database defaults are a non-UTC time
// zone, another DateStyle and IntervalStyle, escape bytea and no extra
// float digits: the session settings of the input override them all, so
// the messages are identical.
func TestTypes(t *testing.T) {
	for _, hostile := range []bool{false, true} {
		t.Run(map[bool]string{false: "defaults", true: "hostile"}[hostile], func(t *testing.T) {
			db := pgtest.New(t)
			if hostile {
				db.Exec(fmt.Sprintf(`ALTER DATABASE %[1]s SET timezone TO 'Asia/Shanghai'; ALTER DATABASE %[1]s SET DateStyle TO 'SQL, DMY';
					ALTER DATABASE %[1]s SET IntervalStyle TO 'postgres_verbose'; ALTER DATABASE %[1]s SET bytea_output TO 'escape';
					ALTER DATABASE %[1]s SET extra_float_digits TO 0`, db.Name))
			}
			db.Exec(typesDDL)
			db.Exec("INSERT INTO types VALUES " + fmt.Sprintf(typesRow1, 1) + ", " + fmt.Sprintf(typesRow2, 2))
			in := newInput(t, baseYAML(db, "tables: [ public.types ]\n"))
			connect(t, in)
			snap := readEvents(t, in, 2)
			db.Exec("INSERT INTO types VALUES " + fmt.Sprintf(typesRow1, 11) + ", " + fmt.Sprintf(typesRow2, 12))
			stream := readEvents(t, in, 2)
			for _, e := range append(snap, stream...) {
				id, _ := e.Row["id"].(json.Number).Int64()
				row := map[string]any{}
				for k, v := range e.Row {
					if k != "id" {
						row[k] = v
					}
				}
				if got, want := mustJSON(row), typesWant[(id-1)%10]; got != want {
					t.Errorf("%s row %d:\n got %s\nwant %s\ndiff %s", e.Op, id, got, want, jsonDiff(got, want))
				}
			}
			pt := snap[0].Meta["paimon_types"].(map[string]any)
			for col, v := range pt {
				if _, err := types.Parse(v.(string)); err != nil {
					t.Errorf("paimon_types %s = %q: %v", col, v, err)
				}
			}
			for col, want := range typesPaimon {
				if pt[col] != want {
					t.Errorf("paimon_types %s = %v, want %s", col, pt[col], want)
				}
			}
		})
	}
}

// jsonDiff lists the top-level keys whose values differ.
func jsonDiff(a, b string) string {
	var x, y map[string]any
	_ = json.Unmarshal([]byte(a), &x)
	_ = json.Unmarshal([]byte(b), &y)
	var out []string
	for k := range x {
		if mustJSON(x[k]) != mustJSON(y[k]) {
			out = append(out, fmt.Sprintf("%s: %s vs %s", k, mustJSON(x[k]), mustJSON(y[k])))
		}
	}
	for k := range y {
		if _, ok := x[k]; !ok {
			out = append(out, k+" missing")
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// TestDomains: domain columns (and arrays of them) are typed by their base
// type, in the snapshot and in the stream.
func TestDomains(t *testing.T) {
	db := pgtest.New(t)
	db.Exec(`CREATE DOMAIN posint AS int CHECK (VALUE > 0); CREATE DOMAIN price AS numeric(10,2); CREATE DOMAIN cents AS price;
		CREATE TABLE d (id posint PRIMARY KEY, p price, c cents, ps price[]);
		INSERT INTO d VALUES (1, 1.5, 2, '{3.25,NULL}')`)
	in := newInput(t, baseYAML(db, "tables: [ public.d ]\n"))
	connect(t, in)
	evs := readEvents(t, in, 1)
	db.Exec("INSERT INTO d VALUES (2, 1.5, 2, '{3.25,NULL}')")
	evs = append(evs, readEvents(t, in, 1)...)
	for _, e := range evs {
		row := map[string]any{}
		for k, v := range e.Row {
			if k != "id" {
				row[k] = v
			}
		}
		if got := mustJSON(row); got != `{"c":"2.00","p":"1.50","ps":["3.25",null]}` {
			t.Errorf("%s: %s", e.Op, got)
		}
		pt := e.Meta["paimon_types"].(map[string]any)
		if pt["id"] != "INT NOT NULL" || pt["p"] != "DECIMAL(10, 2)" || pt["c"] != "DECIMAL(10, 2)" || pt["ps"] != "ARRAY<DECIMAL(10, 2)>" {
			t.Errorf("%s: paimon_types %v", e.Op, pt)
		}
		if _, ok := e.Row["id"].(json.Number); !ok {
			t.Errorf("%s: id %T", e.Op, e.Row["id"])
		}
	}
}
