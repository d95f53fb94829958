package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/internal/paymentevent"
	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// The peers section: lakecore, Java Paimon 1.4.2 and pypaimon write the
// same rows into their own append table, then every library reads every
// table. Java and pypaimon are the interop harness's (tests/interop:
// bin/paimon-java with AppendBench, the venv with python/peer_bench.py);
// each of their runs is a process of its own, which warms up on the same
// work, then times its part and reports the CPU time of the whole process
// over that part.

// errPeersUnavailable marks the oracles' absence: the section is skipped
// with the reason, unless REQUIRE_INTEROP=1.
var errPeersUnavailable = errors.New("peers unavailable")

// peerLibs are the three libraries, each a writer and a reader.
var peerLibs = []struct{ key, label string }{
	{"lakecore", "lakecore (benthos-paimon)"},
	{"java", "Java Paimon 1.4.2"},
	{"pypaimon", "pypaimon 2.1.0 (pyarrow)"},
}

// peerOracles is where the interop harness keeps Java Paimon and pypaimon.
type peerOracles struct {
	javaBin string // tests/interop/bin/paimon-java
	python  string // tests/interop/.venv/bin/python
	script  string // tests/interop/python/peer_bench.py
}

// findPeerOracles returns the oracles tests/interop/setup.sh built, or an
// error wrapping errPeersUnavailable that says what is missing or stale.
func findPeerOracles() (*peerOracles, error) {
	root, err := fixturetest.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPeersUnavailable, err)
	}
	here := filepath.Join(root, "tests", "interop")
	o := &peerOracles{
		javaBin: filepath.Join(here, "bin", "paimon-java"),
		python:  filepath.Join(here, ".venv", "bin", "python"),
		script:  filepath.Join(here, "python", "peer_bench.py"),
	}
	if _, err := exec.LookPath("java"); err != nil {
		return nil, fmt.Errorf("%w: java is not on PATH (a JDK 17; tests/interop/setup.sh lists what is missing)", errPeersUnavailable)
	}
	jar := filepath.Join(here, "java", "target", "paimon1", "paimon-interop.jar")
	var missing []string
	for _, p := range []string{jar, filepath.Join(here, "java", "target", "paimon1", "classpath.txt"), o.python, o.script} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, strings.TrimPrefix(p, root+string(filepath.Separator)))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: not built: %s (run bash tests/interop/setup.sh)", errPeersUnavailable, strings.Join(missing, ", "))
	}
	// A jar older than its sources may lack AppendBench: the same staleness
	// rule as setup.sh's.
	ji, err := os.Stat(jar)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPeersUnavailable, err)
	}
	var newer string
	_ = filepath.WalkDir(filepath.Join(here, "java", "src"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || newer != "" {
			return err
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().After(ji.ModTime()) {
			newer = p
		}
		return nil
	})
	if newer != "" {
		return nil, fmt.Errorf("%w: the Java oracle is older than %s (run bash tests/interop/setup.sh)", errPeersUnavailable, strings.TrimPrefix(newer, root+string(filepath.Separator)))
	}
	return o, nil
}

// peerResult is what one oracle process reports of its timed part.
type peerResult struct {
	Rows       int64   `json:"rows"`
	IDSum      int64   `json:"idSum"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"processCpuSeconds"`
	// ProcessCPU is the CPU time of the whole process (start-up included),
	// from its rusage.
	ProcessCPU time.Duration `json:"-"`
}

func (r peerResult) timing() timing {
	return timing{Wall: time.Duration(r.Seconds * float64(time.Second)), CPU: time.Duration(r.CPUSeconds * float64(time.Second))}
}

// run runs one oracle command and parses its JSON line.
func (o *peerOracles) run(ctx context.Context, lib string, args ...string) (peerResult, error) {
	var cmd *exec.Cmd
	switch lib {
	case "java":
		cmd = exec.CommandContext(ctx, o.javaBin, append([]string{"paimon1"}, args...)...)
		// bin/paimon-java stops at C1 for quick oracle calls; a benchmark
		// runs the JIT a user's JVM runs.
		cmd.Env = append(os.Environ(), "PAIMON_INTEROP_JAVA_OPTS=-XX:TieredStopAtLevel=4")
	case "pypaimon":
		cmd = exec.CommandContext(ctx, o.python, append([]string{o.script}, args...)...)
	default:
		return peerResult{}, fmt.Errorf("no oracle %q", lib)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return peerResult{}, fmt.Errorf("%s %s: %w: %s", lib, args[0], err, strings.TrimSpace(stderr.String()))
	}
	var r peerResult
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		return peerResult{}, fmt.Errorf("%s %s: output %q: %w", lib, args[0], out, err)
	}
	r.ProcessCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r, nil
}

// peerDataset is one set of rows the peers write: rows 1..n of a
// generator of internal/paymentevent, which AppendBench.java and
// peer_bench.py mirror under the name key (their --dataset flag).
type peerDataset struct {
	key, label string
	row        func(n int64, partitions int) []any
}

var (
	// paymentRows are the payment events of the write section: 5,000
	// users, 10 countries, sequential times; very repetitive.
	paymentRows = peerDataset{"payments", "payment events", paymentevent.Row}
	// uniqueRows are the same columns with near-unique values: a user
	// string unique to each row (too many for a dictionary: parquet-mr
	// falls back to PLAIN), times in no order, amounts spread widely.
	uniqueRows = peerDataset{"unique", "near-unique rows", paymentevent.UniqueRow}
)

// rows returns rows 1..n of d.
func (d peerDataset) rows(n, partitions int) [][]any {
	out := make([][]any, n)
	for i := range out {
		out[i] = d.row(int64(i+1), partitions)
	}
	return out
}

// peerWrite writes rows (rows 1..len(rows) of d) with lib into a new table
// bench.events of warehouse wh and returns the timing of the write and the
// CPU time of the whole writing process.
func (o *peerOracles) peerWrite(ctx context.Context, lib, wh string, d peerDataset, rows [][]any, partitions int) (timing, time.Duration, error) {
	if lib == "lakecore" {
		t, err := lakecoreWrite(ctx, wh, rows)
		return t, t.CPU, err
	}
	verb := map[string]string{"java": "append-bench-write", "pypaimon": "write"}[lib]
	r, err := o.run(ctx, lib, verb, "--warehouse", wh, "--rows", strconv.Itoa(len(rows)), "--partitions", strconv.Itoa(partitions), "--dataset", d.key)
	if err == nil && r.Rows != int64(len(rows)) {
		err = fmt.Errorf("%s wrote %d rows, want %d", lib, r.Rows, len(rows))
	}
	return r.timing(), r.ProcessCPU, err
}

// lakecoreWrite writes rows with lakecore's table writer, one Prepare and
// one commit, as the Java and Python programs write theirs.
func lakecoreWrite(ctx context.Context, wh string, rows [][]any) (timing, error) {
	tbl, err := createBenchTable(ctx, wh, nil, nil)
	if err != nil {
		return timing{}, err
	}
	return writeOnce(ctx, tbl, rows)
}

// peerRead reads the whole table bench.events of wh with lib and returns
// the rows and the sum of their ids with the timing of the read (plan and
// read).
func (o *peerOracles) peerRead(ctx context.Context, lib, wh string) (peerResult, timing, error) {
	if lib == "lakecore" {
		tbl, err := openBenchTable(ctx, wh, nil)
		if err != nil {
			return peerResult{}, timing{}, err
		}
		var r peerResult
		t, err := measure(func() error { var err error; r.Rows, r.IDSum, err = lakecoreRead(ctx, tbl); return err })
		r.ProcessCPU = t.CPU
		return r, t, err
	}
	verb := map[string]string{"java": "append-bench-read", "pypaimon": "read"}[lib]
	r, err := o.run(ctx, lib, verb, "--warehouse", wh, "--database", "bench", "--table", "events")
	return r, r.timing(), err
}

// lakecoreRead is lakecore's full read: the plan of the latest snapshot and
// every row of it, counted, with the sum of the ids.
func lakecoreRead(ctx context.Context, tbl *lakecore.Table) (rows, idSum int64, err error) {
	plan, err := latestPlan(ctx, tbl)
	if err != nil {
		return 0, 0, err
	}
	err = tbl.ReadPlan(ctx, plan, func(batch [][]any) error {
		rows += int64(len(batch))
		for _, r := range batch {
			id, ok := r[0].(int64)
			if !ok {
				return fmt.Errorf("id is %T, want int64", r[0])
			}
			idSum += id
		}
		return nil
	})
	return rows, idSum, err
}

// lakecoreCheck reads every row of the table bench.events of wh with
// lakecore and compares it with row id of d: the table must hold rows
// 1..n of d, each once, value for value. Run on the Java- and
// Python-written tables, it is what shows that their generators are the Go
// one to the bit (a count and an id sum would not see a wrong user or
// timestamp).
func lakecoreCheck(ctx context.Context, wh string, d peerDataset, n, partitions int) error {
	tbl, err := openBenchTable(ctx, wh, nil)
	if err != nil {
		return err
	}
	plan, err := latestPlan(ctx, tbl)
	if err != nil {
		return err
	}
	seen := make([]bool, n+1)
	rows := 0
	err = tbl.ReadPlan(ctx, plan, func(batch [][]any) error {
		for _, got := range batch {
			id, ok := got[0].(int64)
			if !ok || id < 1 || id > int64(n) {
				return fmt.Errorf("a row with id %v (%T), want 1..%d", got[0], got[0], n)
			}
			if seen[id] {
				return fmt.Errorf("row %d twice", id)
			}
			seen[id] = true
			rows++
			if want := d.row(id, partitions); !sameValues(got, want) {
				return fmt.Errorf("row %d is %v, want %v", id, got, want)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if rows != n {
		return fmt.Errorf("%d rows, want %d", rows, n)
	}
	return nil
}

// sameValues reports whether two rows of lakecore's Go values hold the same
// values: of the same Go types, equal as kv.CompareValues compares keys
// (decimals by value).
func sameValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if reflect.TypeOf(a[i]) != reflect.TypeOf(b[i]) || kv.CompareValues(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// peerWrites is the writes of one dataset over the runs, by library key.
type peerWrites struct {
	wall, cpu, proc, bytes, files map[string]Sample
}

// writeAll writes rows (d's) with every library in the order of run i,
// each into its own new warehouse under e's directory, and measures the
// size of each table; lakecore counts every table's rows. It returns the
// warehouses by library key.
func (o *peerOracles) writeAll(ctx context.Context, e *Env, i int, d peerDataset, rows [][]any, partitions int, w *peerWrites) (map[string]string, error) {
	if w.wall == nil {
		*w = peerWrites{map[string]Sample{}, map[string]Sample{}, map[string]Sample{}, map[string]Sample{}, map[string]Sample{}}
	}
	wh := map[string]string{}
	for _, li := range rotate(len(peerLibs), i) {
		lib := peerLibs[li].key
		wh[lib] = e.Dir(fmt.Sprintf("peers-%s-%s-%d", d.key, lib, i))
		t, proc, err := o.peerWrite(ctx, lib, wh[lib], d, rows, partitions)
		if err != nil {
			return wh, fmt.Errorf("%s writing the %s, run %d: %w", peerLibs[li].label, d.label, i+1, err)
		}
		w.wall[lib] = append(w.wall[lib], t.Wall.Seconds())
		w.cpu[lib] = append(w.cpu[lib], t.CPU.Seconds())
		w.proc[lib] = append(w.proc[lib], proc.Seconds())
		e.Logf("   run %d write %-8s %-8s %6.2f s wall %6.2f s cpu", i+1, d.key, lib, t.Wall.Seconds(), t.CPU.Seconds())
	}
	for _, lib := range peerLibs {
		tbl, err := openBenchTable(ctx, wh[lib.key], nil)
		if err != nil {
			return wh, fmt.Errorf("lakecore opening %s's table of %s: %w", lib.label, d.label, err)
		}
		files, b, got, err := liveFiles(ctx, tbl)
		if err != nil {
			return wh, fmt.Errorf("lakecore planning %s's table of %s: %w", lib.label, d.label, err)
		}
		if got != int64(len(rows)) {
			return wh, fmt.Errorf("%s's table of %s: its live files hold %d rows, want %d", lib.label, d.label, got, len(rows))
		}
		w.bytes[lib.key] = append(w.bytes[lib.key], float64(b))
		w.files[lib.key] = append(w.files[lib.key], float64(files))
	}
	return wh, nil
}

// table is the writes as a report table: one row a library.
func (w *peerWrites) table(caption string, n int) Table {
	t := Table{Caption: caption,
		Header: []string{"Writer", "rows/s", "rows per CPU-s", "data bytes", "data files", "wall s", "CPU s", "CPU s of the whole process"}}
	for _, l := range peerLibs {
		proc := w.proc[l.key].Fmt(fSec)
		if l.key == "lakecore" {
			proc = "– (runs in this process)"
		}
		t.Rows = append(t.Rows, []string{l.label, perRow(n, w.wall[l.key]).Fmt(fInt), perRow(n, w.cpu[l.key]).Fmt(fInt),
			w.bytes[l.key].Fmt(fBytes), w.files[l.key].Fmt(fInt), w.wall[l.key].Fmt(fSec), w.cpu[l.key].Fmt(fSec), proc})
	}
	return t
}

// perRow is n rows over each of the seconds s: rows per second, run by run.
func perRow(n int, s Sample) Sample {
	out := make(Sample, len(s))
	for i, v := range s {
		out[i] = float64(n) / v
	}
	return out
}

func measurePeers(ctx context.Context, e *Env) (*Section, error) {
	o, err := findPeerOracles()
	if err != nil {
		return peersUnavailable(err, testenv.Required(testenv.RequireInterop))
	}
	n := e.pick(1_000_000, 20_000)
	const partitions = 4
	rows, unique := paymentRows.rows(n, partitions), uniqueRows.rows(n, partitions)
	wantSum := int64(n) * int64(n+1) / 2

	type key struct{ reader, table string }
	var writes, uwrites peerWrites
	readWall, readCPU := map[key]Sample{}, map[key]Sample{}
	// the reads of lakecore's table of near-unique rows, by reader
	uReadWall, uReadCPU := map[string]Sample{}, map[string]Sample{}
	var last, stale map[string]string // the warehouses of the last run (the profiles read its lakecore table)
	runs := e.Config.runs()
	for i := range runs {
		for _, m := range []map[string]string{last, stale} {
			for _, wh := range m {
				_ = os.RemoveAll(wh)
			}
		}
		wh, err := o.writeAll(ctx, e, i, paymentRows, rows, partitions, &writes)
		if err != nil {
			return nil, err
		}
		last = wh
		// Every library reads every table: the timing of each, and the
		// count and id sum as a cheap check that all three hold the rows.
		for _, ri := range rotate(len(peerLibs), i) {
			for _, ti := range rotate(len(peerLibs), i) {
				reader, table := peerLibs[ri], peerLibs[ti]
				r, t, err := o.peerRead(ctx, reader.key, wh[table.key])
				if err != nil {
					return nil, fmt.Errorf("%s reading %s's table, run %d: %w", reader.label, table.label, i+1, err)
				}
				if r.Rows != int64(n) || r.IDSum != wantSum {
					return nil, fmt.Errorf("%s reading %s's table: %d rows with id sum %d, want %d and %d", reader.label, table.label, r.Rows, r.IDSum, n, wantSum)
				}
				k := key{reader.key, table.key}
				readWall[k] = append(readWall[k], float64(n)/t.Wall.Seconds())
				readCPU[k] = append(readCPU[k], float64(n)/t.CPU.Seconds())
				e.Logf("   run %d read %-8s of %-8s %6.2f s wall %6.2f s cpu", i+1, reader.key, table.key, t.Wall.Seconds(), t.CPU.Seconds())
			}
		}

		// The near-unique rows: every table compared with the Go generator
		// row by row, then lakecore's table read by every library (a table
		// whose user column is PLAIN, not dictionary, encoded).
		uwh, err := o.writeAll(ctx, e, i, uniqueRows, unique, partitions, &uwrites)
		stale = uwh
		if err != nil {
			return nil, err
		}
		for _, lib := range peerLibs {
			if err := lakecoreCheck(ctx, uwh[lib.key], uniqueRows, n, partitions); err != nil {
				return nil, fmt.Errorf("%s's table of %s, run %d, against internal/paymentevent.UniqueRow: %w", lib.label, uniqueRows.label, i+1, err)
			}
		}
		for _, ri := range rotate(len(peerLibs), i) {
			reader := peerLibs[ri]
			r, t, err := o.peerRead(ctx, reader.key, uwh["lakecore"])
			if err != nil {
				return nil, fmt.Errorf("%s reading lakecore's table of %s, run %d: %w", reader.label, uniqueRows.label, i+1, err)
			}
			if r.Rows != int64(n) || r.IDSum != wantSum {
				return nil, fmt.Errorf("%s reading lakecore's table of %s: %d rows with id sum %d, want %d and %d", reader.label, uniqueRows.label, r.Rows, r.IDSum, n, wantSum)
			}
			uReadWall[reader.key] = append(uReadWall[reader.key], float64(n)/t.Wall.Seconds())
			uReadCPU[reader.key] = append(uReadCPU[reader.key], float64(n)/t.CPU.Seconds())
			e.Logf("   run %d read %-8s of lakecore (unique) %6.2f s wall %6.2f s cpu", i+1, reader.key, t.Wall.Seconds(), t.CPU.Seconds())
		}
	}

	s := &Section{Title: peersTitle}
	writeTable := writes.table("Writing the payment events (one write and one commit, rows in memory before the clock starts).", n)
	uwriteTable := uwrites.table("Writing the near-unique rows (the same columns; a user string unique to each row, times in no order, amounts spread widely).", n)
	reads := Table{Caption: "Reading each table of payment events in full (plan and every row).", Header: []string{"Reader", "table written by", "rows/s", "rows per CPU-s"}}
	for _, r := range peerLibs {
		for _, t := range peerLibs {
			k := key{r.key, t.key}
			reads.Rows = append(reads.Rows, []string{r.label, t.label, readWall[k].Fmt(fInt), readCPU[k].Fmt(fInt)})
		}
	}
	for _, r := range peerLibs {
		reads.Rows = append(reads.Rows, []string{r.label, peerLibs[0].label + ", near-unique rows", uReadWall[r.key].Fmt(fInt), uReadCPU[r.key].Fmt(fInt)})
	}
	ratios := Table{Header: []string{"Ratio (same run), lakecore / peer", "wall time basis", "CPU time basis"}}
	// The datasets' writes, each with its labels' and figures' suffixes.
	datasets := []struct {
		writes        *peerWrites
		label, suffix string
	}{{&writes, "", ""}, {&uwrites, ", near-unique rows", "_unique"}}
	for _, d := range datasets {
		for _, p := range peerLibs[1:] {
			w := d.writes.wall[p.key].Over(d.writes.wall["lakecore"])
			c := d.writes.cpu[p.key].Over(d.writes.cpu["lakecore"])
			ratios.Rows = append(ratios.Rows, []string{"write rows / " + p.label + d.label, w.Fmt(fRatio), c.Fmt(fRatio)})
			s.figure("ratio_write_"+p.key+d.suffix+"_wall", w.Median())
			s.figure("ratio_write_"+p.key+d.suffix, c.Median())
		}
	}
	for _, p := range peerLibs[1:] {
		for _, t := range peerLibs {
			lk, pk := key{"lakecore", t.key}, key{p.key, t.key}
			w, c := readWall[lk].Over(readWall[pk]), readCPU[lk].Over(readCPU[pk])
			ratios.Rows = append(ratios.Rows, []string{fmt.Sprintf("full read rows / %s, both reading %s's table", p.label, t.label), w.Fmt(fRatio), c.Fmt(fRatio)})
			if t.key == "lakecore" {
				s.figure("ratio_read_"+p.key+"_wall", w.Median())
				s.figure("ratio_read_"+p.key, c.Median())
			}
		}
	}
	for _, p := range peerLibs[1:] {
		w, c := uReadWall["lakecore"].Over(uReadWall[p.key]), uReadCPU["lakecore"].Over(uReadCPU[p.key])
		ratios.Rows = append(ratios.Rows, []string{fmt.Sprintf("full read rows / %s, both reading lakecore's table of near-unique rows", p.label), w.Fmt(fRatio), c.Fmt(fRatio)})
		s.figure("ratio_read_"+p.key+"_unique_wall", w.Median())
		s.figure("ratio_read_"+p.key+"_unique", c.Median())
	}
	sizes := Table{Header: []string{"Ratio (same run), lakecore / peer", "data bytes"}}
	for _, d := range datasets {
		for _, p := range peerLibs[1:] {
			b := d.writes.bytes["lakecore"].Over(d.writes.bytes[p.key])
			sizes.Rows = append(sizes.Rows, []string{"data bytes / " + p.label + d.label, b.Fmt(fRatio)})
			s.figure("ratio_bytes_"+p.key+d.suffix, b.Median())
		}
	}
	for _, l := range peerLibs {
		s.figure(l.key+"_write_rows_per_cpu_s", perRow(n, writes.cpu[l.key]).Median())
		s.figure(l.key+"_read_rows_per_cpu_s", readCPU[key{l.key, l.key}].Median())
		s.figure(l.key+"_bytes", writes.bytes[l.key].Median())
		s.figure(l.key+"_unique_write_rows_per_cpu_s", perRow(n, uwrites.cpu[l.key]).Median())
		s.figure(l.key+"_unique_bytes", uwrites.bytes[l.key].Median())
	}
	s.figure("rows", float64(n))
	s.Tables = []Table{writeTable, uwriteTable, reads, ratios, sizes}
	s.profile("ratio_write_pypaimon", func(k int) error {
		_, err := lakecoreWrite(ctx, e.Dir(fmt.Sprintf("peers-profile-%d", k)), rows)
		return err
	})
	s.profile("ratio_read_pypaimon", func(int) error {
		tbl, err := openBenchTable(ctx, last["lakecore"], nil)
		if err != nil {
			return err
		}
		_, _, err = lakecoreRead(ctx, tbl)
		return err
	})
	s.Intro = peersIntro(n, partitions)
	return s, nil
}

// peersIntro is the section's introduction for n rows in partitions
// partitions.
func peersIntro(n, partitions int) string {
	rows := fInt(float64(n))
	intro := fmt.Sprintf(`The same %s rows of the payment event (the write section's 8 columns, ids 1..%s in order, %d partitions) written by each library into its own append table with Paimon's default options (bucket -1, parquet, zstd level 1), on the local disk; then every table read in full by every library. lakecore runs in this process (the table writer, one Prepare and one commit; a full read is the plan of the latest snapshot and `+"`ReadPlan`"+`, rows as `+"`[]any`"+`). Java Paimon 1.4.2 runs tests/interop's AppendBench in a JVM of its own per write or read (`+"`bin/paimon-java paimon1 append-bench-write|append-bench-read`"+`, serial GC, the full tiered JIT): it builds the rows as GenericRows, then times a BatchTableWrite and its commit; a read is `+"`newScan().plan()`"+` and `+"`newRead().createReader(splits)`"+`, counting the rows and summing the ids. pypaimon 2.1.0 runs tests/interop/python/peer_bench.py in a Python process of its own (pyarrow 19): it builds a pyarrow table of the rows, then times `+"`write_arrow`"+` and the commit of a batch write; a read is `+"`to_arrow`"+` of the planned splits. Java and Python do the same work once untimed first (a write of a tenth of the rows into a table of their own; a full read of the table), so that class loading and the first compilations are not counted, then time their part themselves and report the CPU time of the whole process (every thread: GC, JIT, Arrow's pool) over it; the last column of a write table is the CPU time of the whole process, start-up, the warm-up and building the rows included. Every reader must find every table's %s rows and their id sum (a check, not a timing). Ratios are computed inside each run; above 1 lakecore is faster, and for bytes below 1 lakecore's files are smaller.`,
		rows, rows, partitions, rows)
	unique := fmt.Sprintf(`

The payment events are very repetitive (5,000 users, 10 countries, times a millisecond apart), which flatters every writer's dictionaries and deltas. So each run also writes %s near-unique rows (`+"`internal/paymentevent.UniqueRow`"+`, `+"`--dataset unique`"+` in the Java and Python programs, which mirror it with the same 64-bit integer arithmetic): the same table, but a user string unique to each row (`+"`u<id>-<8 hex digits of a hash>`"+`), user ids and amounts from a hash (user ids below 2^20, amounts up to 85.9 million), country and method from a hash, and event_time the payment event's give or take up to 30 s, to the microsecond, so in no order. At 1,000,000 rows a file's user dictionary would be about 5 MiB, past parquet-mr's 1 MiB dictionary page, so Java's writer falls back to PLAIN for that column, and lakecore's mirrors the fallback`, rows)
	if n < 1_000_000 {
		unique += fmt.Sprintf(" (at %s rows the dictionaries still fit: the quick run exercises the code, not the fallback)", rows)
	}
	unique += `. lakecore reads each library's table of near-unique rows back and compares every row with the Go generator, value for value (a mismatch fails the section); then every library reads lakecore's table of them in full.`
	return intro + unique
}

// peersUnavailable is the section when the oracles are not there (err
// says why): skipped with the reason, or, when the environment requires the
// oracles (REQUIRE_INTEROP=1, as CI sets), failed.
func peersUnavailable(err error, required bool) (*Section, error) {
	if required {
		return nil, fmt.Errorf("%w (required by %s=1)", err, testenv.RequireInterop)
	}
	return &Section{Title: peersTitle, Skipped: fmt.Sprintf("%v (%s=1 makes this a failure)", err, testenv.RequireInterop)}, nil
}

const peersTitle = "Against the peers: Java Paimon and pypaimon writing and reading the same rows"
