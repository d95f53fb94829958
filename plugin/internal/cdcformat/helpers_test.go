package cdcformat_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
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
