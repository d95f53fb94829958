package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// measureTail compares reading a whole table through the paimon input with
// lakecore's reader and with parquet-go reading the same data files.
func measureTail(ctx context.Context, e *Env) (*Section, error) {
	rows := e.pick(1_000_000, 20_000)
	const partitions = 4
	perCommit := e.pick(100_000, 5_000)
	wh := e.Dir("tail")
	tbl, err := createBenchTable(ctx, wh, nil, nil)
	if err != nil {
		return nil, err
	}
	if _, err := writeCommits(ctx, tbl, rows, partitions, perCommit, nil); err != nil {
		return nil, err
	}
	files, bytes, n, err := liveFiles(ctx, tbl)
	if err != nil {
		return nil, err
	}
	if n != int64(rows) {
		return nil, fmt.Errorf("table holds %d rows, want %d", n, rows)
	}

	variants := []struct {
		key, label string
		run        func() (int64, error)
	}{
		{"input", "paimon input → Benthos consumer", func() (int64, error) { return tailInput(ctx, e, wh, nil) }},
		{"input-json", "paimon input, `message_format: json` → Benthos consumer", func() (int64, error) { return tailInput(ctx, e, wh, jsonOptions) }},
		{"input-bare", "paimon input, `message_format: json`, `metadata_keys: []` → Benthos consumer", func() (int64, error) { return tailInput(ctx, e, wh, bareOptions) }},
		{"lakecore", "lakecore TableRead (plan + row iterators)", func() (int64, error) { return tailLakecore(ctx, tbl) }},
		{"parquet", "parquet-go GenericReader over the same files", func() (int64, error) { return tailParquetGo(ctx, tbl, false) }},
		{"parquet-msg", "parquet-go, then building the input's messages (one goroutine, no stream)", func() (int64, error) { return tailParquetGo(ctx, tbl, true) }},
	}
	wall, cpu := map[string]Sample{}, map[string]Sample{}
	// Whole processes, start-up included: benthos-paimon (this binary as a
	// child, the paimon input into a counting consumer) and Java Paimon's
	// stream read (tests/interop's AppendTail), when its JVM is there.
	type process struct {
		key, label string
		run        func() (rows int64, cpu time.Duration, err error)
	}
	child := func(options []string) func() (int64, time.Duration, error) {
		return func() (int64, time.Duration, error) {
			r, err := runChild(ctx, e, childSpec{Kind: "tail", Warehouse: wh, InputOptions: options})
			return r.Rows, r.ProcessCPU, err
		}
	}
	procs := []process{
		{"input-proc", "benthos-paimon process: paimon input → counting consumer", child(nil)},
		{"input-json-proc", "benthos-paimon process, `message_format: json`", child(jsonOptions)},
		{"input-bare-proc", "benthos-paimon process, `message_format: json`, `metadata_keys: []`", child(bareOptions)},
	}
	wantSum := int64(rows) * int64(rows+1) / 2
	javaNote := ""
	if o, err := findPeerOracles(); err != nil {
		if testenv.Required(testenv.RequireInterop) {
			return nil, fmt.Errorf("the JVM tail: %w (required by %s=1)", err, testenv.RequireInterop)
		}
		javaNote = fmt.Sprintf(" The JVM's tail was not measured: %v (%s=1 makes this a failure).", err, testenv.RequireInterop)
	} else {
		procs = append(procs, process{"java-proc", "Java Paimon 1.4.2 process: stream scan and read (JVM start-up included)", func() (int64, time.Duration, error) {
			r, err := o.run(ctx, "java", "append-bench-tail", "--warehouse", wh, "--database", "bench", "--table", "events", "--rows", strconv.Itoa(rows))
			if err == nil && (r.Rows != int64(rows) || r.IDSum != wantSum) {
				err = fmt.Errorf("read %d rows with id sum %d, want %d and %d", r.Rows, r.IDSum, rows, wantSum)
			}
			return r.Rows, r.ProcessCPU, err
		}})
	}
	for i := range e.Config.runs() {
		for _, pi := range rotate(len(procs), i) {
			p := procs[pi]
			start := time.Now()
			got, pcpu, err := p.run()
			w := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.label, err)
			}
			if got != int64(rows) {
				return nil, fmt.Errorf("%s read %d rows, want %d", p.label, got, rows)
			}
			wall[p.key] = append(wall[p.key], float64(rows)/w.Seconds())
			cpu[p.key] = append(cpu[p.key], float64(rows)/pcpu.Seconds())
			e.Logf("   run %d %-10s %.0f rows/s (whole process)", i+1, p.key, float64(rows)/w.Seconds())
		}
		for _, vi := range rotate(len(variants), i) {
			v := variants[vi]
			var got int64
			t, err := measure(func() error { var err error; got, err = v.run(); return err })
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.label, err)
			}
			if got != int64(rows) {
				return nil, fmt.Errorf("%s read %d rows, want %d", v.label, got, rows)
			}
			wall[v.key] = append(wall[v.key], float64(rows)/t.Wall.Seconds())
			cpu[v.key] = append(cpu[v.key], float64(rows)/t.CPU.Seconds())
			e.Logf("   run %d %-8s %.0f rows/s", i+1, v.key, float64(rows)/t.Wall.Seconds())
		}
	}
	s := &Section{Title: "Tail throughput"}
	s.Intro = fmt.Sprintf(`Reading all %s rows of the payment-event table (%d partitions, %d data files of %s rows, %s, written by lakecore's table writer) on the local disk. The `+"`paimon`"+` input runs in a Benthos stream (`+"`scan_mode: full`, `bounded: true`"+`, batch_size 1,000) into a consumer that counts messages, so its figure includes rendering each row as a structured message (in the second row as a message whose bytes are the row's JSON text, `+"`message_format: json`"+`, and in the third also without the seven metadata keys, `+"`metadata_keys: []`"+`); lakecore's TableRead yields `+"`[]any`"+` rows; parquet-go's GenericReader decodes the same files into Go structs (1,024 at a time); the last variant also builds from each struct the message the input emits (8 values in the input's forms, 7 metadata values), on one goroutine, to show how much of the input's cost is the message shape itself.`,
		fInt(float64(rows)), partitions, files, fInt(float64(rows/files)), fBytes(float64(bytes)))
	t := Table{Header: []string{"Reader", "rows/s", "rows per CPU-s"}}
	for _, v := range variants {
		t.Rows = append(t.Rows, []string{v.label, wall[v.key].Fmt(fInt), cpu[v.key].Fmt(fInt)})
	}
	for _, p := range procs {
		t.Rows = append(t.Rows, []string{p.label, wall[p.key].Fmt(fInt), cpu[p.key].Fmt(fInt)})
	}
	ip, lp := wall["input"].Over(wall["parquet"]), wall["lakecore"].Over(wall["parquet"])
	jp, bp := wall["input-json"].Over(wall["parquet"]), wall["input-bare"].Over(wall["parquet"])
	r := Table{Header: []string{"Ratio (same run)", "wall time basis", "CPU time basis"}, Rows: [][]string{
		{"paimon input / parquet-go", ip.Fmt(fRatio), cpu["input"].Over(cpu["parquet"]).Fmt(fRatio)},
		{"paimon input with `message_format: json` / parquet-go", jp.Fmt(fRatio), cpu["input-json"].Over(cpu["parquet"]).Fmt(fRatio)},
		{"paimon input with `message_format: json`, `metadata_keys: []` / parquet-go", bp.Fmt(fRatio), cpu["input-bare"].Over(cpu["parquet"]).Fmt(fRatio)},
		{"lakecore TableRead / parquet-go", lp.Fmt(fRatio), cpu["lakecore"].Over(cpu["parquet"]).Fmt(fRatio)},
		{"paimon input / (parquet-go + building the same messages)", wall["input"].Over(wall["parquet-msg"]).Fmt(fRatio), cpu["input"].Over(cpu["parquet-msg"]).Fmt(fRatio)},
	}}
	if _, ok := wall["java-proc"]; ok {
		pj := wall["input-proc"].Over(wall["java-proc"])
		r.Rows = append(r.Rows, []string{"benthos-paimon process / Java Paimon process (whole processes, start-up included)", pj.Fmt(fRatio), cpu["input-proc"].Over(cpu["java-proc"]).Fmt(fRatio)})
		s.figure("ratio_process_java", pj.Median())
		jj := wall["input-json-proc"].Over(wall["java-proc"])
		r.Rows = append(r.Rows, []string{"the same with `message_format: json` / Java Paimon process", jj.Fmt(fRatio), cpu["input-json-proc"].Over(cpu["java-proc"]).Fmt(fRatio)})
		bj := wall["input-bare-proc"].Over(wall["java-proc"])
		r.Rows = append(r.Rows, []string{"the same with `message_format: json`, `metadata_keys: []` / Java Paimon process", bj.Fmt(fRatio), cpu["input-bare-proc"].Over(cpu["java-proc"]).Fmt(fRatio)})
		s.figure("ratio_process_bare_java", bj.Median())
	}
	s.Intro += fmt.Sprintf(` The last rows time whole processes from their start to their exit, over the same table: this binary started again as a child running the paimon input into a counting consumer (with its default structured messages, with `+"`message_format: json`"+`, whose messages are the rows' JSON text, and with JSON text and no metadata, `+"`metadata_keys: []`"+`: the rows alone, as Java's reader gives them), and Java Paimon 1.4.2 (tests/interop's AppendTail in a JVM of its own, `+"`bin/paimon-java paimon1 append-bench-tail`"+`, the full tiered JIT) opening a stream scan from the latest snapshot in full, reading each plan's splits and stopping after %s rows; each checks the count (and Java the id sum). Their CPU time is the whole process's, from its rusage.`, fInt(float64(rows))) + javaNote
	s.Tables = []Table{t, r}
	s.figure("ratio_input_parquet", ip.Median())
	s.figure("ratio_input_bare_parquet", bp.Median())
	s.figure("ratio_lakecore_parquet", lp.Median())
	s.figure("rows", float64(rows))
	s.profile("ratio_input_parquet", func(int) error { _, err := tailInput(ctx, e, wh, nil); return err })
	return s, nil
}

// The tail's input options besides its defaults: messages of JSON text,
// and those without metadata, the rows alone as Java's reader gives them.
var (
	jsonOptions = []string{"message_format: json"}
	bareOptions = []string{"message_format: json", "metadata_keys: []"}
)

// tailInput reads the bench table of warehouse once with the paimon input
// in a stream of this process, with options (tailInputYAML), and returns
// how many messages it consumed.
func tailInput(ctx context.Context, e *Env, warehouse string, options []string) (int64, error) {
	var n atomic.Int64
	st := stream{input: tailInputYAML(warehouse, nil, options), log: e.log,
		consume: func(_ context.Context, b service.MessageBatch) error { n.Add(int64(len(b))); return nil }}
	err := st.run(ctx)
	return n.Load(), err
}

func tailLakecore(ctx context.Context, tbl *lakecore.Table) (int64, error) {
	plan, err := latestPlan(ctx, tbl)
	if err != nil {
		return 0, err
	}
	var n int64
	err = tbl.ReadPlan(ctx, plan, func(rows [][]any) error { n += int64(len(rows)); return nil })
	return n, err
}

// tailParquetGo reads every data file with parquet-go; with messages it
// also builds, per row, the message the paimon input emits (a structured
// object of the 8 columns in the input's value forms and its 7 metadata
// values), to separate the cost of that message shape from the reading.
func tailParquetGo(ctx context.Context, tbl *lakecore.Table, messages bool) (int64, error) {
	plan, err := latestPlan(ctx, tbl)
	if err != nil {
		return 0, err
	}
	snap := plan.Snapshot
	rd, err := tbl.NewRead(nil) // for FilePath only
	if err != nil {
		return 0, err
	}
	buf := make([]pqRow, 1024)
	var n int64
	for i := range plan.Splits {
		sp := &plan.Splits[i]
		for j := range sp.Files {
			path, err := rd.FilePath(sp, &sp.Files[j])
			if err != nil {
				return n, err
			}
			var emit func([]pqRow, int64)
			if messages {
				emit = func(rows []pqRow, pos int64) { buildMessages(rows, snap.ID, path, pos) }
			}
			k, err := readParquetGo(ctx, tbl.FileIO(), path, buf, emit)
			n += k
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func readParquetGo(ctx context.Context, fio storage.FileIO, path string, buf []pqRow, emit func([]pqRow, int64)) (int64, error) {
	f, err := fio.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := parquet.NewGenericReader[pqRow](f)
	defer r.Close()
	var n int64
	for {
		k, err := r.Read(buf)
		if emit != nil {
			emit(buf[:k], n)
		}
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("parquet-go read %s: %w", path, err)
		}
	}
}

// sink keeps the built messages reachable so the compiler cannot drop them.
var sink atomic.Pointer[service.Message]

func buildMessages(rows []pqRow, snapshotID int64, file string, pos int64) {
	for i, r := range rows {
		obj := make(map[string]any, 8)
		obj["id"], obj["user_id"], obj["user"] = r.ID, r.UserID, r.User
		obj["amount"] = strconv.FormatInt(r.Amount/100, 10) + "." + fmt.Sprintf("%02d", r.Amount%100)
		obj["country"], obj["method"] = r.Country, r.Method
		obj["event_time"] = time.UnixMicro(r.EventTime).UTC().Format("2006-01-02T15:04:05.000000")
		obj["dt"] = r.Dt
		m := service.NewMessage(nil)
		m.SetStructuredMut(obj)
		m.MetaSetMut("paimon_snapshot_id", snapshotID)
		m.MetaSetMut("paimon_commit_kind", "APPEND")
		m.MetaSetMut("paimon_commit_time", "2026-01-01T00:00:00.000Z")
		m.MetaSetMut("paimon_partition", "dt="+r.Dt)
		m.MetaSetMut("paimon_bucket", int64(0))
		m.MetaSetMut("paimon_file", file)
		m.MetaSetMut("paimon_row", pos+int64(i))
		sink.Store(m)
	}
}
