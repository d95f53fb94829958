//go:build interop

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The Flink SQL oracle (bin/flink-sql, FlinkMain.java): Flink 2.0.0's
// Table API and planner on a mini-cluster, with Paimon's Flink connector
// paimon-flink-2.0 2.0.0, one JVM for the whole run. Each warehouse is a
// Paimon catalog there; statements name tables database.table.

// flinkRead is oracleRead for Flink: the query flinkQuery makes, with the
// table's latest columns read by lakecore when there is a filter.
func flinkRead(engine string, ref tableRef, o readOpts) ([]string, error) {
	var fields []types.DataField
	if o.filter != "" {
		cat, err := lakecore.OpenCatalog(context.Background(), ref.warehouse, storage.S3Config{})
		if err != nil {
			return nil, err
		}
		tb, err := cat.OpenTable(context.Background(), ref.db, ref.table)
		if err != nil {
			return nil, err
		}
		fields = tb.Schema().Fields
	}
	q, err := flinkQuery(ref, o, fields)
	if err != nil {
		return nil, err
	}
	lines, err := flinkSQL(engine, ref.warehouse, q)
	sortCodePoints(lines)
	return lines, err
}

// flinkQuery is the SELECT * of ref an oracle read is in Flink SQL: at a
// snapshot with the scan.snapshot-id hint (time travel), filtered by the
// --filter expression turned into SQL on the table's columns fields
// (sqlFilter).
func flinkQuery(ref tableRef, o readOpts, fields []types.DataField) (string, error) {
	q := "SELECT * FROM " + sqlName(ref)
	if o.snapshot > 0 {
		q += fmt.Sprintf(" /*+ OPTIONS('scan.snapshot-id'='%d') */", o.snapshot)
	}
	if o.filter == "" {
		return q, nil
	}
	where, err := sqlFilter(o.filter, fields)
	if err != nil {
		return "", err
	}
	return q + " WHERE " + where, nil
}

// readQuery is the SQL query of an oracle read for the failure message:
// Flink's (fields are the table's latest columns, for a filter), "" for
// the oracles that read through an API.
func readQuery(reader string, ref tableRef, o readOpts, fields []types.DataField) string {
	if !slices.Contains(flinkEngines, reader) {
		return ""
	}
	q, err := flinkQuery(ref, o, fields)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return q
}

// flinkSQL runs one statement in the batch mode of a Flink engine (flink,
// flink1) with warehouse's catalog current, and returns a query's
// canonical rows in Flink's order.
func flinkSQL(engine, warehouse, sql string) ([]string, error) {
	return env.oracles[engine].Call("sql", "--warehouse", warehouse, "--sql", sql)
}

// flinkEngines are the Flink oracles: Flink 2.0.0 with Paimon 2.0.0, and
// the 1.20 line (Flink 1.20.3 with paimon-flink-1.20 1.3.1, the newest the
// registry serves of it).
var flinkEngines = []string{flink, flink1}

// forFlinkEngines runs test once per Flink engine, as a subtest named
// after it.
func forFlinkEngines(t *testing.T, test func(t *testing.T, engine string)) {
	requireOracles(t)
	for _, e := range flinkEngines {
		t.Run(e, func(t *testing.T) { test(t, e) })
	}
}

// sqlName is ref's table as Flink SQL names it in its warehouse's catalog.
func sqlName(ref tableRef) string { return "`" + ref.db + "`.`" + ref.table + "`" }

// sqlFilter turns an expression of the oracles' --filter language
// (filter_test.go) into a Flink SQL condition on fields: names quoted, and
// a string literal compared with a DATE or TIMESTAMP column typed as one.
// Literals of the types SQL cannot write this way (binary, TIMESTAMP WITH
// LOCAL TIME ZONE) are an error.
func sqlFilter(expr string, fields []types.DataField) (string, error) {
	toks, err := lexFilter(expr)
	if err != nil {
		return "", fmt.Errorf("filter %q: %w", expr, err)
	}
	keywords := map[string]bool{"AND": true, "IN": true, "NOT": true, "IS": true, "NULL": true, "TRUE": true, "FALSE": true}
	var out []string
	var col *types.DataType
	for _, tk := range toks {
		switch tk.kind {
		case 'w', '`':
			if tk.kind == 'w' && keywords[strings.ToUpper(tk.text)] {
				out = append(out, strings.ToUpper(tk.text))
				continue
			}
			i := types.FieldByName(fields, tk.text)
			if i < 0 {
				return "", fmt.Errorf("filter %q: no column %s", expr, tk.text)
			}
			col = &fields[i].Type
			out = append(out, "`"+strings.ReplaceAll(tk.text, "`", "``")+"`")
		case 's':
			lit := "'" + strings.ReplaceAll(tk.text, "'", "''") + "'"
			if col != nil {
				switch col.Kind {
				case types.KindDate:
					lit = "DATE " + lit
				case types.KindTimestamp:
					lit = "TIMESTAMP " + strings.Replace(lit, "T", " ", 1)
				case types.KindDecimal:
					lit = tk.text
				case types.KindFloat, types.KindDouble: // 'NaN', 'Infinity', '-Infinity'
					lit = "CAST(" + lit + " AS DOUBLE)"
				case types.KindChar, types.KindVarChar:
				default:
					return "", fmt.Errorf("filter %q: no SQL literal for a string compared with %s", expr, col)
				}
			}
			out = append(out, lit)
		default:
			out = append(out, tk.text)
		}
	}
	return strings.Join(out, " "), nil
}

// flinkRecord is one row of a Flink stream: its row kind and canonical row.
type flinkRecord struct {
	Kind string          `json:"kind"`
	Row  json.RawMessage `json:"row"`
}

// fastDiscovery is the hint option that has a Flink streaming read look for
// new snapshots every 200 ms (Paimon's default is 10 s).
const fastDiscovery = "'continuous.discovery-interval'='200ms'"

// flinkStream is a streaming query running in the Flink oracle.
type flinkStream struct {
	t      *testing.T
	engine string
	id     string
	query  string
}

// startFlinkStream starts sql in Flink's streaming mode; the stream is
// stopped when the test ends.
func startFlinkStream(t *testing.T, engine, warehouse, sql string) *flinkStream {
	t.Helper()
	s := &flinkStream{t: t, engine: engine, query: sql}
	s.id = fmt.Sprintf("%s#%p", t.Name(), s) // unique among the streams alive
	if _, err := env.oracles[engine].Call("stream-start", "--warehouse", warehouse, "--id", s.id, "--sql", sql); err != nil {
		t.Fatalf("Flink starts the streaming query %s: %v", sql, err)
	}
	t.Cleanup(func() {
		if _, err := env.oracles[engine].Call("stream-stop", "--id", s.id); err != nil {
			t.Errorf("Flink stops stream %s: %v", s.id, err)
		}
	})
	return s
}

// records runs a stream command of the oracle (its arguments after the
// stream's id) and returns the records it prints, failing the test on an
// error.
func (s *flinkStream) records(cmd string, args ...string) []flinkRecord {
	s.t.Helper()
	lines, err := env.oracles[s.engine].Call(append([]string{cmd, "--id", s.id}, args...)...)
	if err != nil {
		s.t.Fatalf("stream %s: %v", s.id, err)
	}
	out := make([]flinkRecord, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &out[i]); err != nil {
			s.t.Fatalf("stream %s: line %q: %v", s.id, l, err)
		}
	}
	return out
}

// take returns the next n records, failing the test when they do not come
// within two minutes.
func (s *flinkStream) take(n int) []flinkRecord {
	s.t.Helper()
	if n == 0 {
		return nil
	}
	return s.records("stream-take", "--rows", fmt.Sprint(n), "--timeout-ms", "120000")
}

// poll returns every record the stream emits within d.
func (s *flinkStream) poll(d time.Duration) []flinkRecord {
	s.t.Helper()
	return s.records("stream-poll", "--ms", fmt.Sprint(d.Milliseconds()))
}

// drain returns the records until the stream is quiet for quiet.
func (s *flinkStream) drain(quiet time.Duration) []flinkRecord {
	var all []flinkRecord
	for {
		recs := s.poll(quiet)
		if len(recs) == 0 {
			return all
		}
		all = append(all, recs...)
	}
}

// quiet fails the test when the stream emits another record within d.
func (s *flinkStream) quiet(d time.Duration) {
	s.t.Helper()
	if _, err := env.oracles[s.engine].Call("stream-quiet", "--id", s.id, "--ms", fmt.Sprint(d.Milliseconds())); err != nil {
		s.t.Errorf("stream %s: %v", s.id, err)
	}
}

// appendCommit is the rows of the k-th commit of the streamed append tables:
// ids 10k..10k+2, unique in the table.
func appendCommit(k int) []json.RawMessage {
	var rows []json.RawMessage
	for i := range 3 {
		rows = append(rows, row("id", 10*k+i, "pt", []string{"a", "b"}[(k+i)%2], "v", fmt.Sprintf("c%d-%d", k, i)))
	}
	return rows
}

// appendSpec is the streamed append tables' spec: (id, pt, v) partitioned
// by pt, with options, and commits 1-3 of appendCommit.
func appendSpec(options map[string]string) *specFile {
	s := &specFile{Schema: []specField{{"id", "INT"}, {"pt", "STRING"}, {"v", "STRING"}}, PartitionKeys: []string{"pt"}, Options: options}
	for k := 1; k <= 3; k++ {
		s.Commits = append(s.Commits, appendStep(appendCommit(k)...))
	}
	return s
}

// appendCommitLines is the canonical rows of appendCommit(k) in g's table.
func appendCommitLines(t *testing.T, g *goTable, k int) []string {
	t.Helper()
	rows, err := g.parseRows(appendCommit(k))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := canonicalRows(g.fields, rows)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestFlinkStreamsAppendTable has Flink SQL tail an append table that
// lakecore commits to, in every scan mode a streaming read of an append
// table has: each commit's rows arrive whole, in commit order, once, and
// exactly the commits the mode starts from.
func TestFlinkStreamsAppendTable(t *testing.T) { forFlinkEngines(t, testFlinkStreamsAppendTable) }

func testFlinkStreamsAppendTable(t *testing.T, engine string) {
	wh := t.TempDir()
	for _, tc := range []struct {
		mode  string
		hint  func(g *goTable) string // the OPTIONS of the mode
		first [][]int                 // the commits expected at the start, grouped as they may interleave
	}{
		{"latest-full", func(*goTable) string { return "'scan.mode'='latest-full'" }, [][]int{{1, 2, 3}}},
		{"from-snapshot", func(*goTable) string { return "'scan.mode'='from-snapshot','scan.snapshot-id'='2'" }, [][]int{{2}, {3}}},
		{"from-snapshot-full", func(*goTable) string { return "'scan.mode'='from-snapshot-full','scan.snapshot-id'='2'" }, [][]int{{1, 2}, {3}}},
		{"from-timestamp", func(g *goTable) string {
			s, err := g.tb.Snapshots().Get(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("'scan.mode'='from-timestamp','scan.timestamp-millis'='%d'", s.TimeMillis)
		}, [][]int{{2}, {3}}},
		{"latest", func(*goTable) string { return "'scan.mode'='latest'" }, nil},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ctx := ctxT(t)
			name := "stream_" + strings.ReplaceAll(tc.mode, "-", "_")
			g := runGoSpec(t, wh, name, appendSpec(nil))
			commitOf := map[string]int{} // canonical row -> its commit
			commitRows := map[int][]string{}
			addCommit := func(k int) {
				lines := appendCommitLines(t, g, k)
				for _, l := range lines {
					commitOf[l] = k
				}
				commitRows[k] = lines
			}
			for k := 1; k <= 3; k++ {
				addCommit(k)
			}
			commit := func(k int) {
				addCommit(k)
				if err := g.step(ctx, appendStep(appendCommit(k)...)); err != nil {
					t.Fatalf("lakecore commits %d: %v", k, err)
				}
			}
			query := fmt.Sprintf("SELECT * FROM %s /*+ OPTIONS(%s,%s) */", sqlName(g.ref), tc.hint(g), fastDiscovery)
			st := startFlinkStream(t, engine, wh, query)
			w := where{table: g.ref.String(), writer: "go", reader: "flink stream", query: query}
			var got []flinkRecord
			var wantGroups [][]int
			if tc.mode == "latest" {
				// the commits before the query planned its start are not read;
				// commit until one arrives: from then on every commit must
				for k := 4; ; k++ {
					if k > 12 {
						t.Fatalf("%s: no row of commits 4..12 arrived", w)
					}
					commit(k)
					if got = st.poll(3 * time.Second); len(got) > 0 {
						first := commitOf[string(got[0].Row)]
						if first < 4 {
							t.Fatalf("%s: the first row %s is of commit %d, before the stream started", w, got[0].Row, first)
						}
						for c := first; c <= k+2; c++ {
							wantGroups = append(wantGroups, []int{c})
						}
						for _, c := range []int{k + 1, k + 2} {
							commit(c)
						}
						break
					}
				}
			} else {
				wantGroups = append(tc.first, []int{4}, []int{5})
				n := 0
				for _, grp := range tc.first {
					n += 3 * len(grp)
				}
				got = st.take(n)
				commit(4)
				commit(5)
			}
			want := 0
			for _, grp := range wantGroups {
				want += 3 * len(grp)
			}
			got = append(got, st.take(want-len(got))...)
			st.quiet(1500 * time.Millisecond)
			// in order: the rows of a group may interleave, groups may not
			group := map[int]int{}
			var wantLines []string
			for i, grp := range wantGroups {
				for _, c := range grp {
					group[c] = i
					wantLines = append(wantLines, commitRows[c]...)
				}
			}
			var gotLines []string
			last := 0
			for _, r := range got {
				if r.Kind != "+I" {
					t.Errorf("%s: row kind %s of %s, want +I", w, r.Kind, r.Row)
				}
				gotLines = append(gotLines, string(r.Row))
				c, ok := commitOf[string(r.Row)]
				if !ok {
					continue // reported by the comparison below
				}
				if group[c] < last {
					t.Errorf("%s: row %s of commit %d arrived after a row of a later commit", w, r.Row, c)
				}
				last = max(last, group[c])
			}
			sortCodePoints(wantLines)
			sortCodePoints(gotLines)
			verdict(t, w, nil, wantLines, gotLines, nil)
		})
	}
}

// pkChangeGen makes random changes to an (id INT, pt STRING, v STRING)
// table keyed (pt, id), and keeps the merged state as a model
// (deduplicate: the last change of a key wins).
type pkChangeGen struct {
	rng   *rand.Rand
	model map[string][]any
}

func (g *pkChangeGen) next(n int, tag string) [][2]any {
	var out [][2]any
	for range n {
		r := []any{int32(g.rng.IntN(30)), []string{"a", "b"}[g.rng.IntN(2)], fmt.Sprintf("%s-%d", tag, g.rng.IntN(1000))}
		kind := kv.Insert
		switch g.rng.IntN(6) {
		case 0:
			kind = kv.Delete
		case 1, 2:
			kind = kv.UpdateAfter
		}
		out = append(out, [2]any{kind, r})
		key := fmt.Sprint(r[1], "/", r[0])
		if kind == kv.Delete {
			delete(g.model, key)
		} else {
			g.model[key] = r
		}
	}
	return out
}

// commitChanges writes changes to tb with lakecore and commits them.
func commitChanges(ctx context.Context, t *testing.T, tb *lakecore.Table, c *commit.Committer, id int64, changes [][2]any) {
	t.Helper()
	w, err := tb.NewKeyValueWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, ch := range changes {
		if err := w.Write(ctx, ch[0].(kv.RowKind), ch[1].([]any)); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx, id, msgs); err != nil {
		t.Fatalf("lakecore commits %d: %v", id, err)
	}
}

// byKey groups the records of a changelog by primary key, in order, as
// "kind row" lines: the order a changelog guarantees is the order of each
// key's changes, not across keys.
func byKey(pks []string, recs []pkRecord) (map[string][]string, error) {
	out := map[string][]string{}
	for _, r := range recs {
		key, err := recordKey(pks, r.Row)
		if err != nil {
			return nil, err
		}
		out[key] = append(out[key], r.Kind+" "+r.Row)
	}
	return out, nil
}

// replayUpserts is replayPlans for a changelog of upserts and deletes
// taken as given: +I and +U put the row, -D removes the key, -U is
// skipped.
func replayUpserts(pks []string, plans []pkPlan) ([]string, error) {
	state := map[string]string{}
	for _, p := range plans {
		for _, r := range p.Records {
			key, err := recordKey(pks, r.Row)
			if err != nil {
				return nil, err
			}
			switch r.Kind {
			case "+I", "+U":
				state[key] = r.Row
			case "-D":
				delete(state, key)
			case "-U":
			default:
				return nil, fmt.Errorf("row %s: row kind %q", r.Row, r.Kind)
			}
		}
	}
	out := slices.Collect(maps.Values(state))
	sortCodePoints(out)
	return out, nil
}

// recordKey is the primary key of a canonical row, as text.
func recordKey(pks []string, row string) (string, error) {
	var cols map[string]json.RawMessage
	if err := json.Unmarshal([]byte(row), &cols); err != nil {
		return "", fmt.Errorf("row %s: %w", row, err)
	}
	var key strings.Builder
	for _, k := range pks {
		key.Write(cols[k])
		key.WriteByte('/')
	}
	return key.String(), nil
}

func asPKRecords(recs []flinkRecord) []pkRecord {
	out := make([]pkRecord, len(recs))
	for i, r := range recs {
		out[i] = pkRecord{Kind: r.Kind, Row: string(r.Row)}
	}
	return out
}

// TestFlinkStreamsPrimaryKeyTable has Flink SQL tail primary-key tables
// lakecore writes, with each changelog producer, while lakecore commits:
//   - input and lookup: from-snapshot 1 and from-snapshot-full 2, Flink emits
//     exactly the changelog lakecore's own stream reads (the same records
//     with the same row kinds, in the same order for each key), which
//     replays to the model; latest-full and compacted-full replay to it;
//   - none: Flink normalizes the merged deltas (ChangelogNormalize) and the
//     stream replays to the model.
func TestFlinkStreamsPrimaryKeyTable(t *testing.T) {
	forFlinkEngines(t, testFlinkStreamsPrimaryKeyTable)
}

func testFlinkStreamsPrimaryKeyTable(t *testing.T, engine string) {
	pks := []string{"pt", "id"}
	for _, tc := range []struct {
		producer string
		options  map[string]string
		modes    []pkMode // exact ones first
		exact    int      // how many of modes are compared record by record
	}{
		{"input", nil, []pkMode{{"from-snapshot", 1}, {"from-snapshot-full", 2}, {"latest-full", 0}}, 2},
		{"lookup", nil, []pkMode{{"from-snapshot", 1}, {"from-snapshot-full", 2}, {"latest-full", 0}, {"compacted-full", 0}}, 2},
		{"lookup", map[string]string{"deletion-vectors.enabled": "true"}, []pkMode{{"from-snapshot", 1}, {"latest-full", 0}}, 1},
		{"none", nil, []pkMode{{"latest-full", 0}, {"from-snapshot-full", 2}}, 0},
	} {
		name := tc.producer
		if len(tc.options) > 0 {
			name += " deletion-vectors"
		}
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			wh := t.TempDir()
			cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
			if err != nil {
				t.Fatal(err)
			}
			opts := map[string]string{"bucket": "2", "changelog-producer": tc.producer}
			maps.Copy(opts, tc.options)
			tb, err := cat.CreateTable(ctx, "interop", "pk_stream", lakecore.TableSpec{
				Fields: []types.DataField{
					{Name: "id", Type: types.IntType()}, {Name: "pt", Type: types.StringType()}, {Name: "v", Type: types.StringType()},
				},
				PartitionKeys: []string{"pt"}, PrimaryKeys: pks, Options: opts,
			})
			if err != nil {
				t.Fatal(err)
			}
			ref := tableRef{wh, "interop", "pk_stream"}
			gen := &pkChangeGen{rng: rand.New(rand.NewPCG(11, uint64(len(name)))), model: map[string][]any{}}
			committer := tb.NewCommitter("interop-go")
			id := int64(0)
			commitN := func(n int, tag string) {
				for range n {
					id++
					commitChanges(ctx, t, tb, committer, id, gen.next(20, fmt.Sprintf("%s%d", tag, id)))
				}
			}
			commitN(3, "before")
			var streams []*flinkStream
			for _, m := range tc.modes {
				hint := fmt.Sprintf("'scan.mode'='%s',%s", m.Mode, fastDiscovery)
				if m.Snapshot > 0 {
					hint += fmt.Sprintf(",'scan.snapshot-id'='%d'", m.Snapshot)
				}
				streams = append(streams, startFlinkStream(t, engine, wh, fmt.Sprintf("SELECT * FROM %s /*+ OPTIONS(%s) */", sqlName(ref), hint)))
			}
			commitN(3, "during")
			if err := tb.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			var rows [][]any
			for _, r := range gen.model {
				rows = append(rows, r)
			}
			want, err := canonicalRows(tb.Schema().Fields, rows)
			if err != nil {
				t.Fatal(err)
			}
			sortCodePoints(want)
			for i, m := range tc.modes {
				w := where{table: ref.String() + " (changelog-producer " + name + ")", writer: "go", reader: "flink stream", query: streams[i].query}
				var got []flinkRecord
				if i < tc.exact {
					goPlans, err := goStream(ctx, tb, tb.Schema().Fields, m)
					if err != nil {
						t.Fatalf("%s: lakecore streams: %v", w, err)
					}
					var goRecs []pkRecord
					for _, p := range goPlans {
						goRecs = append(goRecs, p.Records...)
					}
					got = streams[i].take(len(goRecs))
					streams[i].quiet(1500 * time.Millisecond)
					wantKeys, err := byKey(pks, goRecs)
					if err != nil {
						t.Fatal(err)
					}
					gotKeys, err := byKey(pks, asPKRecords(got))
					if err != nil {
						t.Fatal(err)
					}
					for k, wl := range wantKeys {
						if !slices.Equal(wl, gotKeys[k]) {
							t.Errorf("%s: key %s: changelog differs from lakecore's stream\n got:\n  %s\n want:\n  %s", w, k,
								strings.Join(gotKeys[k], "\n  "), strings.Join(wl, "\n  "))
						}
					}
					for k, gl := range gotKeys {
						if _, ok := wantKeys[k]; !ok {
							t.Errorf("%s: key %s: unexpected records %v", w, k, gl)
						}
					}
				} else {
					got = streams[i].drain(3 * time.Second)
				}
				replay := replayPlans
				if tc.producer == "input" {
					// the input changelog is the writer's changes as given: a -D
					// of an absent key, a +I of a present one
					replay = replayUpserts
				}
				replayed, err := replay(pks, []pkPlan{{Records: asPKRecords(got)}})
				if err != nil {
					t.Errorf("%s: the stream does not replay: %v", w, err)
					continue
				}
				if d := equalRows(replayed, want); d != "" {
					t.Errorf("%s: the stream's %d records replayed differ from the model:%s", w, len(got), d)
				}
			}
		})
	}
}

// TestFlinkWritesGoReads has Flink SQL write tables lakecore made and
// wrote, and lakecore read, tail and write on after it: an append table
// and a primary-key table (changelog-producer input) with Flink's INSERT
// and DELETE, and a table Flink created. After every writer lakecore and
// Flink read the same rows, equal to the model, and lakecore's stream of
// the primary-key table emits Flink's changes.
func TestFlinkWritesGoReads(t *testing.T) { forFlinkEngines(t, testFlinkWritesGoReads) }

func testFlinkWritesGoReads(t *testing.T, engine string) {
	ctx := ctxT(t)
	wh := t.TempDir()
	cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	fields := []types.DataField{
		{Name: "id", Type: types.IntType()}, {Name: "pt", Type: types.StringType()}, {Name: "v", Type: types.StringType()},
		{Name: "n", Type: types.BigIntType()}, {Name: "x", Type: types.DoubleType()}, {Name: "ok", Type: types.BooleanType()},
	}
	sqlRow := func(r []any) string {
		return fmt.Sprintf("(%d, '%s', '%s', CAST(%d AS BIGINT), CAST(%v AS DOUBLE), %v)", r[0], r[1], r[2], r[3], r[4], r[5])
	}
	mkRow := func(id int, tag string) []any {
		return []any{int32(id), []string{"a", "b"}[id%2], fmt.Sprintf("%s-%d", tag, id), int64(id) * 1_000_000_007, float64(id) / 4, id%3 == 0}
	}
	check := func(ref tableRef, model [][]any, after string) *lakecore.Table {
		t.Helper()
		tb, err := cat.OpenTable(ctx, ref.db, ref.table)
		if err != nil {
			t.Fatal(err)
		}
		want, err := canonicalRows(tb.Schema().Fields, model)
		if err != nil {
			t.Fatal(err)
		}
		sortCodePoints(want)
		goRows, err := tb.ReadAll(ctx, 0)
		if err != nil {
			t.Fatalf("table %s after %s: lakecore reads: %v", ref, after, err)
		}
		got, err := canonicalRows(tb.Schema().Fields, goRows)
		if err != nil {
			t.Fatal(err)
		}
		sortCodePoints(got)
		verdict(t, where{table: ref.String(), writer: after, reader: "go"}, nil, want, got, nil)
		got, err = flinkRead(engine, ref, readOpts{})
		verdict(t, where{table: ref.String(), writer: after, reader: engine, query: readQuery(engine, ref, readOpts{}, nil)}, nil, want, got, err)
		return tb
	}
	flinkExec := func(what, sql string) {
		t.Helper()
		if _, err := flinkSQL(engine, wh, sql); err != nil {
			t.Fatalf("Flink %s: %s: %v", what, sql, err)
		}
	}

	t.Run("append", func(t *testing.T) {
		tb, err := cat.CreateTable(ctx, "interop", "flink_append", lakecore.TableSpec{Fields: fields, PartitionKeys: []string{"pt"}})
		if err != nil {
			t.Fatal(err)
		}
		ref := tableRef{wh, "interop", "flink_append"}
		var model [][]any
		goAppend := func(from, to int, tag string) {
			w, err := tb.NewWriter(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for id := from; id < to; id++ {
				r := mkRow(id, tag)
				model = append(model, r)
				if err := w.Write(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			msgs, err := w.Prepare(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tb.NewCommitter("interop-go").Commit(ctx, int64(from), msgs); err != nil {
				t.Fatal(err)
			}
		}
		goAppend(0, 10, "go")
		check(ref, model, "go")
		var vals []string
		for id := 10; id < 20; id++ {
			r := mkRow(id, "flink")
			model = append(model, r)
			vals = append(vals, sqlRow(r))
		}
		flinkExec("appends", "INSERT INTO "+sqlName(ref)+" VALUES "+strings.Join(vals, ", "))
		tb = check(ref, model, "go, then flink")
		if err := tb.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		goAppend(20, 30, "go2")
		check(ref, model, "go, flink, then go")
	})

	t.Run("primary key", func(t *testing.T) {
		pks := []string{"pt", "id"}
		tb, err := cat.CreateTable(ctx, "interop", "flink_pk", lakecore.TableSpec{
			Fields: fields, PartitionKeys: []string{"pt"}, PrimaryKeys: pks,
			Options: map[string]string{"bucket": "2", "changelog-producer": "input"},
		})
		if err != nil {
			t.Fatal(err)
		}
		ref := tableRef{wh, "interop", "flink_pk"}
		model := map[int][]any{}
		modelRows := func() [][]any { return slices.Collect(maps.Values(model)) }
		committer := tb.NewCommitter("interop-go")
		goCommit := func(id int64, from, to int, tag string) {
			var changes [][2]any
			for i := from; i < to; i++ {
				r := mkRow(i, tag)
				model[i] = r
				changes = append(changes, [2]any{kv.Insert, r})
			}
			commitChanges(ctx, t, tb, committer, id, changes)
		}
		goCommit(1, 0, 20, "go")
		check(ref, modelRows(), "go")
		// Flink updates 10..24 (15 upserts, 5 new keys) and deletes the even ids below 6
		var vals []string
		var wantChanges []pkRecord
		for i := 10; i < 25; i++ {
			r := mkRow(i, "flink")
			model[i] = r
			vals = append(vals, sqlRow(r))
			line, err := canonicalRow(fields, r)
			if err != nil {
				t.Fatal(err)
			}
			wantChanges = append(wantChanges, pkRecord{Kind: "+I", Row: line})
		}
		flinkExec("upserts", "INSERT INTO "+sqlName(ref)+" VALUES "+strings.Join(vals, ", "))
		s, err := check(ref, modelRows(), "go, then flink's INSERT").Snapshots().Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var deleted []pkRecord
		for i := 0; i < 6; i += 2 {
			line, err := canonicalRow(fields, model[i])
			if err != nil {
				t.Fatal(err)
			}
			deleted = append(deleted, pkRecord{Kind: "-D", Row: line})
			delete(model, i)
		}
		flinkExec("deletes", "DELETE FROM "+sqlName(ref)+" WHERE id < 6 AND MOD(id, 2) = 0")
		tb = check(ref, modelRows(), "go, then flink's INSERT and DELETE")
		// lakecore's stream of Flink's two snapshots: the changes as Flink wrote them
		plans, err := goStream(ctx, tb, tb.Schema().Fields, pkMode{"from-snapshot", s.ID})
		if err != nil {
			t.Fatalf("lakecore streams %s from snapshot %d: %v", ref, s.ID, err)
		}
		var gotChanges []pkRecord
		for _, p := range plans {
			gotChanges = append(gotChanges, p.Records...)
		}
		wantKeys, _ := byKey(pks, append(wantChanges, deleted...))
		gotKeys, err := byKey(pks, gotChanges)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.EqualFunc(wantKeys, gotKeys, slices.Equal[[]string]) {
			t.Errorf("table %s: lakecore's stream from snapshot %d (Flink's INSERT, DELETE) differs:\n got  %v\n want %v", ref, s.ID, gotKeys, wantKeys)
		}
		// lakecore writes on, after Flink's sequence numbers
		if err := tb.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		goCommit(2, 20, 30, "go2")
		check(ref, modelRows(), "go, flink, then go")
	})

	t.Run("flink creates", func(t *testing.T) {
		ref := tableRef{wh, "interop", "flink_made"}
		flinkExec("creates a table", "CREATE TABLE "+sqlName(ref)+
			" (id INT, pt STRING, v STRING, n BIGINT, x DOUBLE, ok BOOLEAN, PRIMARY KEY (pt, id) NOT ENFORCED)"+
			" PARTITIONED BY (pt) WITH ('bucket' = '3', 'changelog-producer' = 'lookup')")
		model := map[int][]any{}
		var vals []string
		for i := range 12 {
			r := mkRow(i, "flink")
			model[i] = r
			vals = append(vals, sqlRow(r))
		}
		flinkExec("inserts", "INSERT INTO "+sqlName(ref)+" VALUES "+strings.Join(vals, ", "))
		tb := check(ref, slices.Collect(maps.Values(model)), "flink")
		var changes [][2]any
		for i := 6; i < 18; i++ {
			r := mkRow(i, "go")
			model[i] = r
			changes = append(changes, [2]any{kv.UpdateAfter, r})
		}
		commitChanges(ctx, t, tb, tb.NewCommitter("interop-go"), 1, changes)
		check(ref, slices.Collect(maps.Values(model)), "flink, then go")
	})
}

// TestFlinkConsumerPinsSnapshots has a Flink streaming read with a
// consumer-id record its progress in an append table lakecore writes;
// lakecore's expiry keeps the snapshots from the consumer's on, and the
// query restarted with the same consumer-id resumes exactly there: the
// rows of the commits made while it was stopped, each once.
func TestFlinkConsumerPinsSnapshots(t *testing.T) { forFlinkEngines(t, testFlinkConsumerPinsSnapshots) }

func testFlinkConsumerPinsSnapshots(t *testing.T, engine string) {
	ctx := ctxT(t)
	wh := t.TempDir()
	// Paimon's Flink source refuses a consumer-id unless the table sets
	// consumer.expiration-time
	g := runGoSpec(t, wh, "flink_consumer", appendSpec(map[string]string{"consumer.expiration-time": "1 h"}))
	query := fmt.Sprintf("SELECT * FROM %s /*+ OPTIONS('consumer-id'='flink-c',%s) */", sqlName(g.ref), fastDiscovery)
	rowsOf := func(from, to int) []string {
		var out []string
		for k := from; k <= to; k++ {
			out = append(out, appendCommitLines(t, g, k)...)
		}
		sortCodePoints(out)
		return out
	}
	lines := func(recs []flinkRecord) []string {
		var out []string
		for _, r := range recs {
			out = append(out, string(r.Row))
		}
		sortCodePoints(out)
		return out
	}
	t.Run("first run", func(t *testing.T) {
		st := startFlinkStream(t, engine, wh, query)
		verdict(t, where{table: g.ref.String(), writer: "go", reader: "flink stream", query: query}, nil, rowsOf(1, 3), lines(st.take(9)), nil)
		// the consumer is written when a checkpoint completes
		deadline := time.Now().Add(time.Minute)
		for {
			c, ok, err := g.tb.Consumers().Get(ctx, "flink-c")
			if err != nil {
				t.Fatal(err)
			}
			if ok && c.NextSnapshot == 4 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("table %s: Flink's consumer flink-c after reading snapshots 1-3: %+v (exists %v), want nextSnapshot 4", g.ref, c, ok)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	for k := 4; k <= 6; k++ {
		if err := g.step(ctx, appendStep(appendCommit(k)...)); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.expire(ctx, 1, 1); err != nil {
		t.Fatal(err)
	}
	ids, err := g.tb.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []int64{4, 5, 6}) {
		t.Fatalf("table %s: after lakecore's expiry (retain 1) with Flink's consumer at 4: snapshots %v, want [4 5 6]", g.ref, ids)
	}
	t.Run("resumed", func(t *testing.T) {
		st := startFlinkStream(t, engine, wh, query)
		verdict(t, where{table: g.ref.String(), writer: "go", reader: "flink stream (resumed)", query: query}, nil, rowsOf(4, 6), lines(st.take(9)), nil)
		st.quiet(1500 * time.Millisecond)
	})
}
