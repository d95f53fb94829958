//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The Java oracle of primary-key tables: Java 1.4.2 and 2.0.0 write every
// spec of testdata/pk (pk-write), and TestPKOracle checks the oracle
// itself: every snapshot read by both Java versions equals the model, the
// two versions read each other's tables alike, and their streaming reads
// (every scan mode) agree record by record; a complete changelog folded
// into a map equals the merged state. pk_test.go (build tag pk) compares
// lakecore with these tables.

// pkStep is one line of pk-write's output.
type pkStep struct {
	Step          int    `json:"step"`
	Kind          string `json:"kind"`
	Snapshot      *int64 `json:"snapshot"`
	FirstSnapshot *int64 `json:"firstSnapshot"`
}

// pkTable is a table one Java version wrote from a spec.
type pkTable struct {
	name      string
	writer    string
	ref       tableRef
	spec      *pkSpec
	steps     []pkStep
	snapshots []javaSnapshot
	err       error
}

// stepOf returns the step that made snapshot id (-1 if none).
func (p *pkTable) stepOf(id int64) int {
	for _, s := range p.steps {
		if s.FirstSnapshot != nil && *s.FirstSnapshot <= id && id <= *s.Snapshot {
			return s.Step
		}
	}
	return -1
}

type pkSet struct {
	names  []string
	specs  map[string]*pkSpec
	tables map[string]map[string]*pkTable // writer -> spec name -> table
	err    error
}

var (
	pkOnce sync.Once
	pkAll  pkSet
	pkDir  string
)

// pkTables writes every PK spec with Java 1.4.2 and 2.0.0, once per test
// binary (TestPKOracle and TestPKRead share them). PK_KEEP=1 keeps the
// warehouses (their path is logged).
func pkTables(t *testing.T) *pkSet {
	t.Helper()
	requireOracles(t)
	pkOnce.Do(func() {
		pkAll.names, pkAll.specs, pkAll.err = loadPKSpecs()
		if pkAll.err != nil {
			return
		}
		pkDir, pkAll.err = os.MkdirTemp("", "pk-interop-")
		if pkAll.err != nil {
			return
		}
		if os.Getenv("PK_KEEP") == "" {
			cleanups = append(cleanups, func() { _ = os.RemoveAll(pkDir) })
		}
		if pkAll.err = os.MkdirAll(pkDir+"/specs", 0o755); pkAll.err != nil {
			return
		}
		for _, n := range pkAll.names {
			if _, pkAll.err = writeSpecFile(pkDir+"/specs", n, pkAll.specs[n]); pkAll.err != nil {
				return
			}
		}
		// the two JVMs write at the same time (2 cores)
		pkAll.tables = map[string]map[string]*pkTable{java1: {}, java2: {}}
		var wg sync.WaitGroup
		for _, w := range []string{java1, java2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, n := range pkAll.names {
					pkAll.tables[w][n] = writePK(w, n, pkAll.specs[n])
				}
			}()
		}
		wg.Wait()
	})
	if pkAll.err != nil {
		t.Fatalf("PK specs: %v", pkAll.err)
	}
	t.Logf("PK warehouses under %s (PK_KEEP=1 keeps them)", pkDir)
	return &pkAll
}

func writePK(w, name string, s *pkSpec) *pkTable {
	p := &pkTable{name: name, writer: w, spec: s,
		ref: tableRef{warehouse: pkDir + "/" + w, db: "pk", table: name}}
	file := pkDir + "/specs/" + name + ".json"
	lines, err := env.oracles[w].Call(append(append([]string{"pk-write"}, p.ref.flags()...), "--spec", file)...)
	if err != nil {
		p.err = fmt.Errorf("%s pk-write %s: %w", w, file, err)
		return p
	}
	for _, l := range lines {
		var st pkStep
		if err := json.Unmarshal([]byte(l), &st); err != nil {
			p.err = fmt.Errorf("%s pk-write: %q: %w", w, l, err)
			return p
		}
		p.steps = append(p.steps, st)
	}
	p.snapshots, p.err = oracleSnapshots(w, p.ref)
	return p
}

// pkRecord is one record of a streaming plan: its row kind and canonical
// row (an object in the table's current schema).
type pkRecord struct {
	Kind string
	Row  string
}

// pkPlan is one streaming plan that has records.
type pkPlan struct {
	Snapshot int64
	Records  []pkRecord
}

// pkMode is one streaming read: a scan.mode and its snapshot (0: none).
type pkMode struct {
	Mode     string
	Snapshot int64
}

func (m pkMode) String() string {
	if m.Snapshot > 0 {
		return fmt.Sprintf("%s %d", m.Mode, m.Snapshot)
	}
	return m.Mode
}

// pkModes are the streaming reads compared for a table: every scan mode,
// from-snapshot(-full) from the first, the middle and the last snapshot.
func pkModes(p *pkTable) []pkMode {
	out := []pkMode{{Mode: "latest-full"}, {Mode: "full"}, {Mode: "latest"}}
	if len(p.snapshots) == 0 {
		return out
	}
	first, last := p.snapshots[0].ID, p.snapshots[len(p.snapshots)-1].ID
	ids := []int64{first}
	if mid := (first + last) / 2; mid != first && mid != last {
		ids = append(ids, mid)
	}
	if last != first {
		ids = append(ids, last)
	}
	for _, id := range ids {
		out = append(out, pkMode{Mode: "from-snapshot", Snapshot: id}, pkMode{Mode: "from-snapshot-full", Snapshot: id})
	}
	if len(p.spec.Streams) > 0 {
		var keep []pkMode
		for _, m := range out {
			for _, s := range p.spec.Streams {
				if s == m.Mode {
					keep = append(keep, m)
				}
			}
		}
		out = keep
	}
	return out
}

// javaStream runs the stream command and returns its plans with records.
func javaStream(reader string, ref tableRef, m pkMode) ([]pkPlan, error) {
	args := append(append([]string{"stream"}, ref.flags()...), "--mode", m.Mode)
	if m.Snapshot > 0 {
		args = append(args, "--snapshot", fmt.Sprint(m.Snapshot))
	}
	lines, err := env.oracles[reader].Call(args...)
	if err != nil {
		return nil, err
	}
	var plans []pkPlan
	for _, l := range lines {
		var x struct {
			Plan     *int            `json:"plan"`
			Snapshot int64           `json:"snapshot"`
			Kind     string          `json:"kind"`
			Row      json.RawMessage `json:"row"`
		}
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			return nil, fmt.Errorf("stream line %q: %w", l, err)
		}
		if x.Plan != nil {
			plans = append(plans, pkPlan{Snapshot: x.Snapshot})
			continue
		}
		if len(plans) == 0 || plans[len(plans)-1].Snapshot != x.Snapshot {
			return nil, fmt.Errorf("stream record outside its plan: %q", l)
		}
		last := &plans[len(plans)-1]
		last.Records = append(last.Records, pkRecord{Kind: x.Kind, Row: string(x.Row)})
	}
	return nonEmptyPlans(plans), nil
}

func nonEmptyPlans(plans []pkPlan) []pkPlan {
	var out []pkPlan
	for _, p := range plans {
		if len(p.Records) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// rowKey returns the primary-key values of a canonical row (its raw JSON
// text per key column), for grouping records by key.
func pkRowKey(row string, pks []string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(row), &obj); err != nil {
		return row
	}
	var b strings.Builder
	for _, k := range pks {
		b.Write(obj[k])
		b.WriteByte(0)
	}
	return b.String()
}

// diffPlans compares two streams: the same plans (snapshot ids) in order;
// within a plan the records of each key in order, the keys as a set.
// "" when equal, else a report naming the first difference.
func diffPlans(pks []string, want, got []pkPlan) string {
	var b strings.Builder
	n := max(len(want), len(got))
	for i := 0; i < n; i++ {
		if i >= len(want) {
			fmt.Fprintf(&b, "  unexpected plan %d (snapshot %d, %d records), first: %s %s\n", i+1, got[i].Snapshot,
				len(got[i].Records), got[i].Records[0].Kind, got[i].Records[0].Row)
			continue
		}
		if i >= len(got) {
			fmt.Fprintf(&b, "  missing plan %d (snapshot %d, %d records), first: %s %s\n", i+1, want[i].Snapshot,
				len(want[i].Records), want[i].Records[0].Kind, want[i].Records[0].Row)
			continue
		}
		if want[i].Snapshot != got[i].Snapshot {
			fmt.Fprintf(&b, "  plan %d: expected snapshot %d, got snapshot %d\n", i+1, want[i].Snapshot, got[i].Snapshot)
			continue
		}
		wk, gk := groupByKey(pks, want[i].Records), groupByKey(pks, got[i].Records)
		var keys []string
		for k := range wk {
			keys = append(keys, k)
		}
		for k := range gk {
			if _, ok := wk[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		shown := 0
		for _, k := range keys {
			w, g := wk[k], gk[k]
			if equalRecords(w, g) {
				continue
			}
			if shown < 10 {
				fmt.Fprintf(&b, "  plan %d (snapshot %d), key %s:\n    expected %s\n    actual   %s\n", i+1, want[i].Snapshot,
					strings.ReplaceAll(strings.TrimSuffix(k, "\x00"), "\x00", ","), recordsText(w), recordsText(g))
			}
			shown++
		}
		if shown > 10 {
			fmt.Fprintf(&b, "  plan %d: %d more keys differ\n", i+1, shown-10)
		}
	}
	return b.String()
}

func groupByKey(pks []string, rs []pkRecord) map[string][]pkRecord {
	out := map[string][]pkRecord{}
	for _, r := range rs {
		k := pkRowKey(r.Row, pks)
		out[k] = append(out[k], r)
	}
	return out
}

func equalRecords(a, b []pkRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func recordsText(rs []pkRecord) string {
	if len(rs) == 0 {
		return "(none)"
	}
	var parts []string
	for _, r := range rs {
		parts = append(parts, r.Kind+" "+r.Row)
	}
	return strings.Join(parts, " | ")
}

// foldChangelog applies a stream to a map by key (+I/+U set the row, -U/-D
// remove it) and returns the sorted rows.
func foldChangelog(pks []string, plans []pkPlan) []string {
	state := map[string]string{}
	for _, p := range plans {
		for _, r := range p.Records {
			k := pkRowKey(r.Row, pks)
			if r.Kind == "+I" || r.Kind == "+U" {
				state[k] = r.Row
			} else {
				delete(state, k)
			}
		}
	}
	out := make([]string, 0, len(state))
	for _, r := range state {
		out = append(out, r)
	}
	sortCodePoints(out)
	return out
}

// foldable reports whether folding the stream of mode m gives the merged
// state: a changelog producer other than none, or deduplicate (without
// ignore-delete or sequence.field) whose deltas are an upsert stream; and a
// mode that starts from a full plan or from the first snapshot.
func foldable(p *pkTable, m pkMode) bool {
	o := p.spec.Options
	full := m.Mode == "latest-full" || m.Mode == "full" || m.Mode == "from-snapshot-full" ||
		(m.Mode == "from-snapshot" && len(p.snapshots) > 0 && m.Snapshot == p.snapshots[0].ID)
	if !full || o["bucket"] == "-2" {
		return false
	}
	switch o["changelog-producer"] {
	case "lookup", "full-compaction":
		return true
	}
	e := o["merge-engine"]
	return (e == "" || e == "deduplicate") && o["ignore-delete"] != "true" && o["sequence.field"] == ""
}

// TestPKOracle validates the Java oracle of primary-key tables (above).
func TestPKOracle(t *testing.T) {
	set := pkTables(t)
	for _, n := range set.names {
		t.Run(n, func(t *testing.T) {
			spec := set.specs[n]
			states, modelErr := modelStates(spec)
			if modelErr != nil {
				t.Logf("model does not cover %s (%v): Java 1.4.2 and 2.0.0 are compared with each other only", n, modelErr)
			}
			t1, t2 := set.tables[java1][n], set.tables[java2][n]
			if t1.err == nil && t2.err == nil && !sameSnapshots(t1.snapshots, t2.snapshots) {
				t.Logf("FINDING: java1 and java2 wrote different snapshots:\n  java1 %s\n  java2 %s",
					snapshotsText(t1.snapshots), snapshotsText(t2.snapshots))
			}
			for _, w := range []string{java1, java2} {
				p := set.tables[w][n]
				t.Run("written by "+w, func(t *testing.T) {
					t.Parallel() // the two tables of a spec: one JVM each at a time
					if p.err != nil {
						t.Fatalf("table %s, written by %s: %v", n, w, p.err)
					}
					checkPKSnapshots(t, p, states)
					checkPKStreams(t, p)
				})
			}
		})
	}
}

// level0Invisible reports whether batch reads skip level-0 files
// (deletion vectors, first-row; paimon-pk.md §5.1).
func level0Invisible(s *pkSpec) bool {
	return s.Options["deletion-vectors.enabled"] == "true" || s.Options["merge-engine"] == "first-row"
}

func sameSnapshots(a, b []javaSnapshot) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Kind != b[i].Kind {
			return false
		}
	}
	return true
}

func snapshotsText(s []javaSnapshot) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, fmt.Sprintf("%d:%s", x.ID, x.Kind))
	}
	return strings.Join(parts, " ")
}

// checkPKSnapshots: both Java versions read every snapshot alike, and as
// the model says.
func checkPKSnapshots(t *testing.T, p *pkTable, states [][]string) {
	for _, s := range p.snapshots {
		var first []string
		for i, r := range []string{java1, java2} {
			w := where{table: p.name, snapshot: s.ID, writer: p.writer, reader: r}
			lines, err := oracleRead(r, p.ref, readOpts{snapshot: s.ID})
			if err != nil {
				t.Errorf("%s: %v", w, err)
				continue
			}
			if i == 0 {
				first = lines
			} else if d := diffLines(w, first, lines); d != "" {
				t.Errorf("java1 and java2 read differently: %s", d)
			}
			if states != nil {
				step := p.stepOf(s.ID)
				if step < 0 {
					t.Errorf("%s: no step of pk-write made this snapshot", w)
					continue
				}
				want, what := states[step], fmt.Sprintf("the model after step %d", step)
				if level0Invisible(p.spec) && s.Kind == "APPEND" {
					// readers skip level 0: the APPEND snapshot shows the state
					// before its commit, the COMPACT after it the new one
					want, what = nil, "the model before step 0"
					if step > 0 {
						want, what = states[step-1], fmt.Sprintf("the model after step %d (level 0 is invisible)", step-1)
					}
				}
				wm := w
				wm.reader = r + " (expected: " + what + ")"
				if d := diffLines(wm, want, lines); d != "" {
					t.Errorf("model: %s", d)
				}
			}
		}
	}
}

// checkPKStreams: both Java versions stream every mode alike; a complete
// changelog folds into the merged state of the last snapshot it read.
func checkPKStreams(t *testing.T, p *pkTable) {
	for _, m := range pkModes(p) {
		var first []pkPlan
		for i, r := range []string{java1, java2} {
			plans, err := javaStream(r, p.ref, m)
			if err != nil {
				t.Errorf("table %s, written by %s, read by %s, stream %s: %v", p.name, p.writer, r, m, err)
				continue
			}
			if i == 0 {
				first = plans
			} else if d := diffPlans(p.spec.PrimaryKeys, first, plans); d != "" {
				t.Errorf("table %s, written by %s, stream %s: java1 (expected) and java2 (actual) differ:\n%s", p.name, p.writer, m, d)
			}
			if i == 0 && p.spec.Options["changelog-producer"] == "input" && m.Mode == "from-snapshot" &&
				len(p.snapshots) > 0 && m.Snapshot == p.snapshots[0].ID {
				want, err := inputChangelog(p)
				if err != nil {
					t.Errorf("table %s: %v", p.name, err)
				} else if d := diffPlans(p.spec.PrimaryKeys, want, plans); d != "" {
					t.Errorf("table %s, written by %s, read by %s, stream %s: the input changelog is not the input (expected: the spec's changes):\n%s", p.name, p.writer, r, m, d)
				}
			}
			if i == 0 && foldable(p, m) && len(plans) > 0 {
				last := plans[len(plans)-1].Snapshot
				if level0Invisible(p.spec) {
					// the APPEND's rows show in the COMPACT snapshot after it
					last = p.snapshots[len(p.snapshots)-1].ID
				}
				want, err := oracleRead(r, p.ref, readOpts{snapshot: last})
				if err != nil {
					t.Errorf("%v", err)
					continue
				}
				// from-snapshot N streams in the schema of snapshot N (README
				// finding P5): compare in the stream's columns
				if want, err = projectLines(want, columnsOf(plans[0].Records[0].Row)); err != nil {
					t.Errorf("%v", err)
					continue
				}
				w := where{table: p.name, snapshot: last, writer: p.writer, reader: r + " stream " + m.String() + " folded"}
				if d := diffLines(w, want, foldChangelog(p.spec.PrimaryKeys, plans)); d != "" {
					t.Errorf("the changelog does not fold into the merged state: %s", d)
				}
			}
		}
	}
}

// columnsOf returns the column names of a canonical row, in order.
func columnsOf(row string) []string {
	dec := json.NewDecoder(strings.NewReader(row))
	var cols []string
	if _, err := dec.Token(); err != nil { // {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return cols
		}
		cols = append(cols, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return cols
		}
	}
	return cols
}

// projectLines rewrites canonical lines (objects) to the columns cols, in
// that order, with null for a column a line lacks, and sorts them.
func projectLines(lines []string, cols []string) ([]string, error) {
	out := make([]string, len(lines))
	for i, l := range lines {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			return nil, fmt.Errorf("line %q: %w", l, err)
		}
		var b strings.Builder
		b.WriteByte('{')
		for j, c := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			quote(&b, c)
			b.WriteByte(':')
			if v, ok := obj[c]; ok {
				b.Write(v)
			} else {
				b.WriteString("null")
			}
		}
		b.WriteByte('}')
		out[i] = b.String()
	}
	sortCodePoints(out)
	return out, nil
}

// inputChangelog is what changelog-producer = input must stream from the
// first snapshot: every change of every commit, with its row kind, in the
// APPEND snapshot of its step (schema changes not handled).
func inputChangelog(p *pkTable) ([]pkPlan, error) {
	fields, err := pkFields(p.spec.Schema)
	if err != nil {
		return nil, err
	}
	var plans []pkPlan
	for _, st := range p.steps {
		c := p.spec.Commits[st.Step]
		if c.Kind == "alter" {
			return nil, fmt.Errorf("inputChangelog: schema changes are not handled")
		}
		if c.Kind != "changes" || st.FirstSnapshot == nil {
			continue
		}
		pl := pkPlan{Snapshot: *st.FirstSnapshot}
		for _, ch := range c.Changes {
			row := make([]any, len(fields))
			for j, f := range fields {
				if row[j], err = valueFromJSON(f.Type, ch.Row[j]); err != nil {
					return nil, err
				}
			}
			line, err := canonicalRow(fields, row)
			if err != nil {
				return nil, err
			}
			pl.Records = append(pl.Records, pkRecord{Kind: ch.Kind, Row: line})
		}
		plans = append(plans, pl)
	}
	return nonEmptyPlans(plans), nil
}
