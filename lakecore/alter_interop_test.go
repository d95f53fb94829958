//go:build interop

package lakecore_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/internal/oracle"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

var timeMillisLine = regexp.MustCompile(`"timeMillis" : \d+`)

// TestInteropAlterMatchesJava applies one ALTER TABLE with Java's
// Catalog.alterTable and with Table.Alter to copies of a table and expects
// the same new schema file (but for its timeMillis), or both to refuse it:
// on a lakecore-written table with snapshots and on a Java-written one.
func TestInteropAlterMatchesJava(t *testing.T) {
	java := oracle.Java(t, oracle.Paimon1)
	goTable := tagTable(t)
	javaTable := fixturetest.CopyWarehouse(t, "cpp-java12-append-unaware-schema-evolution")
	type change = []string
	for _, c := range []struct {
		name    string
		wh, db  string
		table   string
		changes []change
		fails   bool
	}{
		{"set options", goTable, "db", "t", []change{{"set", "snapshot.num-retained.max", "20"}, {"set", "write-only", "true"}, {"set", "compaction.min.file-num", "5"}}, false},
		{"set, reset and add", goTable, "db", "t", []change{{"set", "a.b.c", "x"}, {"reset", "compaction.min.file-num"}, {"add", "z", "STRING"}, {"add", "r", "ROW<x INT, y ARRAY<STRING>>"}}, false},
		{"many options", goTable, "db", "t", []change{{"set", "k1", "1"}, {"set", "k2", "2"}, {"set", "k3", "3"}, {"set", "k4", "4"}, {"set", "k5", "5"}, {"set", "k6", "6"}, {"set", "k7", "7"}, {"set", "k8", "8"}, {"set", "k9", "9"}, {"set", "k10", "10"}, {"set", "k11", "11"}, {"set", "k12", "12"}, {"set", "k13", "13"}}, false},
		{"java table", javaTable, "default", "append_table_with_alter_table", []change{{"set", "snapshot.num-retained.max", "20"}, {"reset", "manifest.format"}, {"add", "z", "BIGINT"}}, false},
		{"bucket from -1", goTable, "db", "t", []change{{"set", "bucket", "2"}}, true},
		{"reset bucket", goTable, "db", "t", []change{{"reset", "bucket"}}, true},
		{"immutable", goTable, "db", "t", []change{{"set", "merge-engine", "first-row"}}, true},
		{"bad value", goTable, "db", "t", []change{{"set", "snapshot.num-retained.max", "abc"}}, true},
		{"min above max", goTable, "db", "t", []change{{"set", "snapshot.num-retained.max", "5"}, {"set", "snapshot.num-retained.min", "6"}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			javaW, goW := copyWarehouse(t, c.wh), copyWarehouse(t, c.wh)
			js, _ := json.Marshal(c.changes)
			_, javaErr := java.Call("alter", "--warehouse", javaW, "--database", c.db, "--table", c.table, "--changes", string(js))
			var a schema.Alteration
			for _, ch := range c.changes {
				switch ch[0] {
				case "set":
					a.Set = append(a.Set, [2]string{ch[1], ch[2]})
				case "reset":
					a.Reset = append(a.Reset, ch[1])
				case "add":
					a.AddColumns = append(a.AddColumns, types.DataField{Name: ch[1], Type: types.MustParse(ch[2])})
				}
			}
			tbl, err := openTable(t, goW, c.db, c.table)
			if err != nil {
				t.Fatal(err)
			}
			before := tbl.Schema().ID
			s, goErr := tbl.Alter(context.Background(), a)
			if c.fails {
				if javaErr == nil || goErr == nil {
					t.Fatalf("want both to refuse: Java %v, lakecore %v", javaErr, goErr)
				}
				t.Logf("Java: %v\nlakecore: %v", javaErr, goErr)
				return
			}
			if javaErr != nil || goErr != nil {
				t.Fatalf("Java %v, lakecore %v", javaErr, goErr)
			}
			p := filepath.Join(c.db+".db", c.table, "schema", "schema-"+itoa(before+1))
			jf := timeMillisLine.ReplaceAll(readFile(t, filepath.Join(javaW, p)), []byte(`"timeMillis" : 0`))
			gf := timeMillisLine.ReplaceAll(readFile(t, filepath.Join(goW, p)), []byte(`"timeMillis" : 0`))
			if string(jf) != string(gf) || s.ID != before+1 {
				t.Fatalf("schema %d: Java wrote\n%s\nlakecore wrote (schema %d)\n%s", before+1, jf, s.ID, gf)
			}
		})
	}
}
