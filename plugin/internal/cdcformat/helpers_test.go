package cdcformat_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

type n = json.Number

// lines returns the messages of a testdata file, one a line.
func lines(t testing.TB, name string) [][]byte {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out [][]byte
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, []byte(l))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// change builds an expected change.
func change(k kv.RowKind, kvs ...any) cdcformat.Change {
	row := map[string]any{}
	for i := 0; i < len(kvs); i += 2 {
		row[kvs[i].(string)] = kvs[i+1]
	}
	return cdcformat.Change{Kind: k, Row: row}
}

// show renders changes for failure messages: kind then sorted key=value.
func show(cs []cdcformat.Change) string {
	var b strings.Builder
	for _, c := range cs {
		keys := make([]string, 0, len(c.Row))
		for k := range c.Row {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(c.Kind.String() + "{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s=%#v", k, c.Row[k])
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func assertChanges(t *testing.T, got, want []cdcformat.Change) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes:\n got: %s\nwant: %s", show(got), show(want))
	}
}

// fieldTypes renders Event.Fields as "name TYPE" lines.
func fieldTypes(ev cdcformat.Event) []string {
	if ev.Fields == nil {
		return nil
	}
	out := make([]string, len(ev.Fields))
	for i, f := range ev.Fields {
		out[i] = f.Name + " " + f.Type.String()
	}
	return out
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// render prints a converted lakecore value the way the expectations above
// are written, as Paimon's tests print rows: decimals and timestamps as
// text, bytes as a list of byte values, TIME as milliseconds of the day.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case types.Decimal:
		return x.String()
	case types.Date:
		return time.Unix(int64(x)*86400, 0).UTC().Format("2006-01-02")
	case types.Timestamp:
		return x.Time().UTC().Format("2006-01-02T15:04:05.999999999")
	case types.Time:
		return strconv.FormatInt(int64(x), 10)
	case []byte:
		parts := make([]string, len(x))
		for i, c := range x {
			parts[i] = strconv.Itoa(int(c))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// product is a row of the products table of Paimon's fixtures.
func product(k kv.RowKind, id, name, desc, weight string, more ...any) cdcformat.Change {
	return change(k, append([]any{"id", n(id), "name", name, "description", desc, "weight", n(weight)}, more...)...)
}

// convert converts a decoded row with rowconv to fields, rendering each
// value.
func convert(t *testing.T, fields []types.DataField, row map[string]any) []string {
	t.Helper()
	c, err := rowconv.NewConverter(fields, rowconv.ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vals, _, err := c.Convert(row)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = render(v)
	}
	return out
}

func parse(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// schemaEvolution3 are the changes of Paimon's schema-evolution fixture
// number 3, the same rows in each format: insert, delete, an update of the
// address (the -D row has the old address, whether the format sends the
// whole old row or only the changed column), insert.
func schemaEvolution3() [][]cdcformat.Change {
	return [][]cdcformat.Change{
		{product(kv.Insert, "105", "hammer", "14oz carpenter's hammer", "0.875", "address", "Shanghai")},
		{product(kv.Delete, "101", "scooter", "Small 2-wheel scooter", "3.14")},
		{
			product(kv.Delete, "105", "hammer", "14oz carpenter's hammer", "0.875", "address", "Shanghai"),
			product(kv.Insert, "105", "hammer", "14oz carpenter's hammer", "0.875", "address", "Beijing"),
		},
		{product(kv.Insert, "107", "rocks", "box of assorted rocks", "5.3")},
	}
}
