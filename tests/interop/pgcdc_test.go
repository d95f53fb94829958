//go:build interop

package interop

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/pgtest"
	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/pgcdc"
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

// pgColumn is one column of TestJavaReadsPgCDCTable's source table: its
// DDL, the Paimon type pg_cdc gives it, the SQL that renders its value as the canonical JSON text
// (README.md "Canonical JSON"), and how that text goes into the line.
type pgColumn struct {
	name, ddl, paimon, sql string
	render                 func(string) (string, error) // nil: the text is a JSON literal as it is
}

func quoted(s string) (string, error) {
	var b strings.Builder
	quote(&b, s)
	return b.String(), nil
}

func floatText(bits int) func(string) (string, error) {
	return func(s string) (string, error) {
		v, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return "", err
		}
		return canonicalFloat(v, bits), nil
	}
}

// pgAllTypes are the Postgres types of postgres-cdc.md §7.4 that pg_cdc
// maps to Paimon types (docs/POSTGRES_CDC.md §3.5), with the canonical
// text of each Paimon type computed by Postgres itself.
var pgAllTypes = []pgColumn{
	{"id", "bigint PRIMARY KEY", "BIGINT NOT NULL", "id::text", nil},
	{"i2", "smallint", "SMALLINT", "i2::text", nil},
	{"i4", "integer", "INT", "i4::text", nil},
	{"o", "oid", "BIGINT", "o::text", nil},
	{"f4", "real", "FLOAT", "f4::text", floatText(32)},
	{"f8", "double precision", "DOUBLE", "f8::text", floatText(64)},
	{"n", "numeric(12,3)", "DECIMAL(12, 3)", "n::text", quoted},
	{"nu", "numeric", "STRING", "nu::text", quoted},
	{"m", "money", "DECIMAL(19, 2)", "m::numeric(19,2)::text", quoted},
	{"b", "boolean", "BOOLEAN", "b::text", nil},
	{"b1", "bit(1)", "BOOLEAN", "(b1 = B'1')::text", nil},
	{"bn", "bit varying(8)", "STRING", "bn::text", quoted}, // 0s and 1s
	{"by", "bytea", "BYTES", "translate(encode(by, 'base64'), E'\\n', '')", quoted},
	{"c", "char(5)", "CHAR(5)", "CASE WHEN c IS NOT NULL THEN concat(c) END", quoted},
	{"vc", "varchar(20)", "VARCHAR(20)", "vc::text", quoted},
	{"t", "text", "STRING", "t", quoted},
	{"u", "uuid", "STRING", "u::text", quoted},
	{"j", "json", "STRING", "j::text", quoted},    // verbatim
	{"jb", "jsonb", "STRING", "jb::text", quoted}, // normalised by Postgres
	{"e", "mood", "STRING", "e::text", quoted},
	{"iv", "interval", "STRING", "iv::text", quoted}, // ISO 8601 (IntervalStyle below)
	{"d", "date", "DATE", "to_char(d, 'YYYY-MM-DD')", quoted},
	{"tm", "time(6)", "TIME(3)", "to_char(date '2000-01-01' + tm, 'HH24:MI:SS.MS')", quoted}, // milliseconds, truncated
	{"ts", "timestamp(6)", "TIMESTAMP(6)", `to_char(ts, 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000'`, quoted},
	{"tz", "timestamptz(6)", "TIMESTAMP(6) WITH LOCAL TIME ZONE", `to_char(tz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000Z'`, quoted},
	{"ai", "integer[]", "ARRAY<INT>", "'[' || array_to_string(ai, ',', 'null') || ']'", nil},
	{"at", "text[]", "ARRAY<STRING>", "array_to_json(at)::text", nil},
	{"ip", "inet", "STRING", "ip::text", quoted},
}

// pgAllTypesRow is the expression list of generated row g (an integer):
// NaN numerics, negative doubles, escapes and non-ASCII text, NULL array
// elements, microseconds that TIME(3) truncates. The test's insert sets every column but the key
// to NULL on every seventh row.
const pgAllTypesRow = `g, (g % 32000)::smallint, g * 7 - 50000, (g * 3)::oid, g / 7.0::real, g / 3.0::float8 * CASE WHEN g % 2 = 0 THEN -1 ELSE 1 END,
	(g * 1.001)::numeric(12,3), CASE WHEN g % 11 = 0 THEN 'NaN'::numeric ELSE g::numeric / 7 END, (g * 1.25)::money,
	g % 2 = 0, (g % 2)::bit(1), (g % 256)::bit(8)::varbit, decode(lpad(to_hex(g), 8, '0'), 'hex'),
	chr(97 + g % 26), 'v' || g, 'text "' || g || E'"\n\tü€' || repeat('x', g % 5),
	md5(g::text)::uuid, ('{"g": ' || g || ', "a": [1, 2]}')::json, ('{"g": ' || g || ', "a": [1, 2]}')::jsonb,
	(ARRAY['sad', 'ok', 'happy'])[g % 3 + 1]::mood, make_interval(0, g % 13, 0, g % 30, g % 24, g % 60, (g % 1000) / 7.0),
	date '1999-12-31' + g, time '00:00:00' + g * interval '1.234567 second',
	timestamp '2024-02-29 12:00:00' + g * interval '1.000001 second', timestamptz '2024-03-10 01:59:59.5+01' + g * interval '1 minute',
	ARRAY[g, NULL, -g], ARRAY['a' || g, NULL, 'q"' || g || '\,'], ('10.0.' || (g % 256) || '.1/24')::inet`

// TestJavaReadsPgCDCTable: a pg_cdc → paimon pipeline (in-process, as
// tests/e2e runs it) captures a Postgres table of every type pg_cdc maps
// to Paimon into a primary-key table the output creates from the schema
// metadata: a snapshot of 300 rows; then, while streaming, a transaction
// that inserts, truncates (truncate: delete_all, an OVERWRITE snapshot of
// the whole table) and inserts 250 of the rows again; then inserts, updates,
// a key change, deletes and a transaction of all of them. After the
// snapshot, after the truncate and again after quiescing, Postgres's rows
// rendered canonically by Postgres itself equal lakecore's read of the
// table, Java Paimon 1.4.2's and Java Paimon 2.0.0's.
func TestJavaReadsPgCDCTable(t *testing.T) {
	requireOracles(t)
	if os.Getenv(testenv.RequireInterop) == "1" {
		t.Setenv(pgtest.EnvRequire, "1") // the oracle side of this test is Postgres
	}
	db := pgtest.New(t)
	var ddl []string
	for _, c := range pgAllTypes {
		ddl = append(ddl, c.name+" "+c.ddl)
	}
	db.Exec("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); CREATE TABLE alltypes (" + strings.Join(ddl, ", ") + ")")
	insert := func(from, to int) string {
		return fmt.Sprintf(`INSERT INTO alltypes SELECT %s FROM generate_series(%d, %d) g;
			UPDATE alltypes SET (%s) = (NULL%s) WHERE id BETWEEN %d AND %d AND id %% 7 = 0`,
			pgAllTypesRow, from, to, strings.Join(names(pgAllTypes[1:]), ", "), strings.Repeat(", NULL", len(pgAllTypes)-2), from, to)
	}
	db.Exec(insert(1, 300))

	wh := t.TempDir()
	sb := service.NewStreamBuilder()
	sb.SetThreads(1)
	if err := sb.SetYAML(fmt.Sprintf(`
logger: { level: WARN }
input:
  pg_cdc:
    dsn: %s
    slot_name: %s_slot
    tables: [ public.alltypes ]
    status_interval: 200ms
    heartbeat_interval: 0s
    truncate: delete_all
output:
  paimon:
    warehouse: %s
    database: interop
    table: '${! @table }'
    source_position: { stream: pg, offset: '${! @lsn_position }' }
    batching: { count: 100, period: 100ms }
    create_table: { enabled: true, bucket: 2 }
`, db.DSN, db.Name, wh)); err != nil {
		t.Fatal(err)
	}
	stream, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- stream.Run(context.Background()) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = stream.StopWithin(10 * time.Second)
			<-done
		}
	}
	t.Cleanup(stop)

	ref := tableRef{wh, "interop", "alltypes"}
	check := func(what string, java bool) {
		t.Helper()
		want := pgCanonical(t, db)
		var got []string
		for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			got = lakecoreCanonical(t, wh)
			if slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: lakecore's read never equalled Postgres: %s", what, diffLines(where{table: ref.String(), writer: "pg_cdc → paimon", reader: "lakecore"}, want, got))
			}
		}
		if !java {
			return
		}
		for _, o := range []string{java1, java2} {
			got, err := oracleRead(o, ref, readOpts{})
			if err != nil {
				t.Fatalf("%s: %s reads %s: %v", what, o, ref, err)
			}
			if d := diffLines(where{table: ref.String(), writer: "pg_cdc → paimon", reader: o}, want, got); d != "" {
				t.Errorf("%s: %s", what, d)
			} else {
				t.Logf("%s: %s reads the %d rows of Postgres", what, o, len(got))
			}
		}
	}
	check("after the snapshot", true)
	tb, err := lakecore.Open(context.Background(), wh, "interop", "alltypes")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range tb.Schema().Fields {
		if c := pgAllTypes[i]; f.Name != c.name || f.Type.String() != c.paimon {
			t.Errorf("column %d of the table the output created: %s %s, want %s %s (pg_cdc's paimon_types)", i, f.Name, f.Type, c.name, c.paimon)
		}
	}

	// A truncate between inserts in one transaction: an OVERWRITE of the
	// whole table with the rows after it, which Java must read as such.
	db.Exec("BEGIN;" + insert(2001, 2050) + "; TRUNCATE alltypes;" + insert(1, 250) + "; COMMIT")
	check("after insert, TRUNCATE, insert", true)
	if s, err := tb.Snapshots().Latest(context.Background()); err != nil || s.CommitKind != snapshot.CommitOverwrite {
		t.Fatalf("the truncate's snapshot: %+v, %v; want an OVERWRITE", s, err)
	}
	db.Exec(insert(301, 400))
	db.Exec("UPDATE alltypes SET t = t || ' updated', n = n + 1, tz = tz + interval '1 hour', at = array_append(at, 'new') WHERE id % 5 = 0")
	db.Exec("UPDATE alltypes SET id = id + 100000 WHERE id % 13 = 0") // key changes
	db.Exec("DELETE FROM alltypes WHERE id % 17 = 0")
	db.Exec(`BEGIN;` + insert(1001, 1010) + `;
		UPDATE alltypes SET jb = '{"in": "txn"}', iv = interval '1 day' WHERE id > 1000;
		DELETE FROM alltypes WHERE id = 1003;
		COMMIT`)
	check("after the stream", false)
	stop() // quiesced: nothing changes while Java reads
	check("after the stream, quiesced", true)
}

func names(cols []pgColumn) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
	}
	return out
}

// pgCanonical renders the source table as canonical lines, Postgres doing
// the rendering of each value.
func pgCanonical(t *testing.T, db *pgtest.DB) []string {
	t.Helper()
	ctx := context.Background()
	conn := db.Conn()
	if _, err := conn.Exec(ctx, "SET IntervalStyle = iso_8601; SET extra_float_digits = 1; SET lc_monetary = 'C'"); err != nil {
		t.Fatal(err)
	}
	exprs := make([]string, len(pgAllTypes))
	for i, c := range pgAllTypes {
		exprs[i] = c.sql
	}
	rows, err := conn.Query(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM alltypes")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	vals := make([]*string, len(pgAllTypes))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		err := writeObject(&b, len(pgAllTypes), func(i int) string { return pgAllTypes[i].name }, func(i int) error {
			v, render := vals[i], pgAllTypes[i].render
			switch {
			case v == nil:
				b.WriteString("null")
			case render == nil:
				b.WriteString(*v)
			default:
				s, err := render(*v)
				if err != nil {
					return fmt.Errorf("column %s value %q: %w", pgAllTypes[i].name, *v, err)
				}
				b.WriteString(s)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sortCodePoints(out)
	return out
}

// lakecoreCanonical is lakecore's read of interop.alltypes (nil before the
// output created it).
func lakecoreCanonical(t *testing.T, wh string) []string {
	t.Helper()
	ctx := context.Background()
	tb, err := lakecore.Open(ctx, wh, "interop", "alltypes")
	if err != nil {
		return nil
	}
	rows, err := tb.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := canonicalRows(tb.Schema().Fields, rows)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}
