//go:build interop

// Java Paimon reads the tables these tests write (build tag interop:
// `make interop` runs them after tests/interop/setup.sh has built the
// oracle; without it they skip, or fail under REQUIRE_INTEROP=1).

package write_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/oracle"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

type javaQuery struct {
	filter string
	want   int
}

// javaReadCheck reads the table db.t of warehouse with Java Paimon 1.4 and
// 2.0 and checks the row count of each query. A filter that Java answers
// with fewer rows would mean stats that make Java skip files wrongly.
func javaReadCheck(t *testing.T, warehouse string, queries []javaQuery) {
	t.Helper()
	for _, line := range []string{oracle.Paimon1, oracle.Paimon2} {
		java := oracle.Java(t, line)
		for _, q := range queries {
			args := []string{"read", "--warehouse", warehouse, "--database", "db", "--table", "t"}
			if q.filter != "" {
				args = append(args, "--filter", q.filter)
			}
			out := java.Run(t, args...)
			n := 0
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(make([]byte, 1<<20), 1<<26)
			for sc.Scan() {
				var row map[string]any
				if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
					t.Fatalf("java %s output: %v", line, err)
				}
				n++
			}
			if n != q.want {
				t.Errorf("java %s read %q: %d rows, want %d", line, q.filter, n, q.want)
			}
		}
	}
}

// TestJavaReadsTwentyCommits has Java read the table of TestTwentyCommits,
// whose manifests the committer merged, with filters on the partition and
// on value stats.
func TestJavaReadsTwentyCommits(t *testing.T) {
	tt, all := twentyCommits(t)
	javaReadCheck(t, tt.dir, []javaQuery{
		{filter: "", want: len(all)},
		{filter: "p = 'part-3'", want: countWhere(all, func(r []any) bool { return r[1] == "part-3" })},
		{filter: "id >= 15000", want: countWhere(all, func(r []any) bool { return r[0].(int64) >= 15000 })},
		{filter: "v < 100.5", want: countWhere(all, func(r []any) bool { return r[2].(float64) < 100.5 })},
	})
}

// TestJavaReadsAllTypes has Java Paimon read a table of every type with
// filters on the stats-bearing columns.
func TestJavaReadsAllTypes(t *testing.T) {
	fields := allTypes()
	fields = append(fields, f("p", types.IntType()))
	tt := newTestTable(t, fields, []string{"p"}, nil)
	var rows [][]any
	for id := int64(1); id <= 40; id++ {
		rows = append(rows, append(allTypesRow(id), int32(id%3)))
	}
	rows = append(rows, append(nullRow(41, len(fields)-1), nil))
	tt.writeCommit(1, rows[:20])
	tt.writeCommit(2, rows[20:])
	javaReadCheck(t, tt.dir, []javaQuery{
		{filter: "", want: len(rows)},
		{filter: "id > 30", want: 11},
		{filter: "i <= -1999999990", want: 10},
		{filter: "s = '" + strings.Repeat("ü", 5) + "long string value'", want: 1},
		{filter: "d9 > 1234590.00", want: countWhere(rows, func(r []any) bool { return r[0].(int64) >= 23 && r[0].(int64) <= 40 })},
		{filter: "dt >= '2024-06-28'", want: countWhere(rows, func(r []any) bool { d, ok := r[14].(types.Date); return ok && d >= 19902 })},
		{filter: "ts3 < '2024-05-29T16:26:40.130'", want: countWhere(rows, func(r []any) bool {
			ts, ok := r[17].(types.Timestamp)
			return ok && ts.Millis < 1717000000130
		})},
		{filter: "p = 1", want: 14},
		{filter: "p IS NULL", want: 1},
		{filter: "b IS NULL", want: 1},
	})
}

// TestJavaReadsCompactAndOverwrite has Java read the table of
// TestCompactAndOverwrite: a COMPACT snapshot with DELETE entries, then an
// OVERWRITE of one partition.
func TestJavaReadsCompactAndOverwrite(t *testing.T) {
	tt, kept := compactAndOverwrite(t)
	javaReadCheck(t, tt.dir, []javaQuery{
		{filter: "", want: len(kept)},
		{filter: "p = 2", want: 3},
	})
}
