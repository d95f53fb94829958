package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/parquet-go/parquet-go"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// writeSetup is what the write variants share within one section.
type writeSetup struct {
	rows       int
	partitions int
	s3         *s3Server // nil: local disk
	bucket     string
	pq         []pqRow     // rows 1..rows, grouped by partition (parquet-go baseline)
	pqDict     []pqDictRow // the same, strings dictionary-encoded
	lake       [][]any     // the same rows as lakecore values, in id order
	jsonBytes  int64       // size of the rows as JSON lines (from the file variant)
	tableBytes int64       // data files of one paimon run
	tableFiles int
}

func newWriteSetup(e *Env, s3 *s3Server, bucket string) *writeSetup {
	w := &writeSetup{rows: e.pick(1_000_000, 20_000), partitions: 4, s3: s3, bucket: bucket}
	w.pq = make([]pqRow, w.rows)
	w.lake = make([][]any, w.rows)
	for i := range w.pq {
		w.pq[i] = pqRowAt(int64(i+1), w.partitions)
		w.lake[i] = anyRow(w.pq[i])
	}
	sort.SliceStable(w.pq, func(i, j int) bool { return w.pq[i].Dt < w.pq[j].Dt })
	w.pqDict = make([]pqDictRow, w.rows)
	for i, r := range w.pq {
		w.pqDict[i] = pqDictRow(r)
	}
	return w
}

// warehouse returns a fresh warehouse location for run i of variant v.
func (w *writeSetup) warehouse(e *Env, v string, i int) string {
	if w.s3 != nil {
		return fmt.Sprintf("%s/%s-%d", w.s3.warehouse(w.bucket), v, i)
	}
	return e.Dir(fmt.Sprintf("%s-%d", v, i))
}

// paimonPipeline runs generate -> paimon and checks the table holds every row.
func (w *writeSetup) paimonPipeline(ctx context.Context, e *Env, i int) (timing, error) {
	wh := w.warehouse(e, "paimon", i)
	st := stream{input: generateYAML(w.rows, w.partitions, 1000), output: paimonOutputYAML(wh, w.s3, 10_000, "1s"), log: e.log}
	t, err := measure(func() error { return st.run(ctx) })
	if err != nil {
		return t, err
	}
	tbl, err := openBenchTable(ctx, wh, w.s3)
	if err != nil {
		return t, err
	}
	files, bytes, rows, err := liveFiles(ctx, tbl)
	if err != nil {
		return t, err
	}
	if rows != int64(w.rows) {
		return t, fmt.Errorf("generate -> paimon: table holds %d rows, want %d", rows, w.rows)
	}
	w.tableFiles, w.tableBytes = files, bytes
	return t, nil
}

// filePipeline runs generate -> file (JSON lines) on the local disk.
func (w *writeSetup) filePipeline(ctx context.Context, e *Env, i int) (timing, error) {
	path := filepath.Join(e.Dir(fmt.Sprintf("file-%d", i)), "events.jsonl")
	st := stream{input: generateYAML(w.rows, w.partitions, 1000), output: fmt.Sprintf("file: { path: %q, codec: lines }", path), log: e.log}
	t, err := measure(func() error { return st.run(ctx) })
	if err != nil {
		return t, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return t, err
	}
	w.jsonBytes = fi.Size()
	return t, nil
}

// tableWriter writes the rows with lakecore's TableWriter (one Prepare
// and one commit, as parquet-go writes one file per partition).
func (w *writeSetup) tableWriter(ctx context.Context, e *Env, i int) (timing, error) {
	wh := w.warehouse(e, "writer", i)
	tbl, err := createBenchTable(ctx, wh, w.s3, nil)
	if err != nil {
		return timing{}, err
	}
	t, err := writeOnce(ctx, tbl, w.lake)
	if err != nil {
		return t, err
	}
	if _, _, rows, err := liveFiles(ctx, tbl); err != nil || rows != int64(w.rows) {
		return t, fmt.Errorf("table writer: table holds %d rows (%v), want %d", rows, err, w.rows)
	}
	return t, nil
}

// writeOnce times writing rows into tbl with lakecore's TableWriter: one
// Prepare and one commit (identifier 1).
func writeOnce(ctx context.Context, tbl *lakecore.Table, rows [][]any) (timing, error) {
	return measure(func() error {
		tw, err := tbl.NewWriter(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := tw.Write(ctx, r); err != nil {
				return err
			}
		}
		msgs, err := tw.Prepare(ctx)
		if err != nil {
			return err
		}
		_, err = tbl.NewCommitter("bench").Commit(ctx, 1, msgs)
		return err
	})
}

// parquetGo writes the same rows with parquet-go directly, one file per
// partition, through the same storage layer (local disk or S3).
func (w *writeSetup) parquetGo(ctx context.Context, e *Env, i int) (timing, error) {
	return w.parquetGoVariant(ctx, e, "parquet", i, func(fio storage.FileIO) (int, error) {
		return writeParquetGo(ctx, fio, w.pq, func(r *pqRow) string { return r.Dt })
	})
}

func (w *writeSetup) parquetGoDict(ctx context.Context, e *Env, i int) (timing, error) {
	return w.parquetGoVariant(ctx, e, "parquet-dict", i, func(fio storage.FileIO) (int, error) {
		return writeParquetGo(ctx, fio, w.pqDict, func(r *pqDictRow) string { return r.Dt })
	})
}

// parquetGoVariant times write into a fresh directory named for v and run
// i and checks it wrote every row.
func (w *writeSetup) parquetGoVariant(ctx context.Context, e *Env, v string, i int, write func(storage.FileIO) (int, error)) (timing, error) {
	var fio storage.FileIO
	var err error
	if w.s3 != nil {
		fio, err = storage.Open(ctx, fmt.Sprintf("%s/%s-%d", w.s3.warehouse(w.bucket), v, i), w.s3.cfg)
	} else {
		fio, err = storage.NewLocal(e.Dir(fmt.Sprintf("%s-%d", v, i)))
	}
	if err != nil {
		return timing{}, err
	}
	var n int
	t, err := measure(func() error { var err error; n, err = write(fio); return err })
	if err == nil && n != w.rows {
		err = fmt.Errorf("parquet-go (%s) wrote %d rows, want %d", v, n, w.rows)
	}
	return t, err
}

// writeParquetGo writes rows (grouped by partition, which dt gives) to one
// file per partition, in slices of 1,024 rows, and returns the number of
// rows written.
func writeParquetGo[T any](ctx context.Context, fio storage.FileIO, rows []T, dt func(*T) string) (int, error) {
	written := 0
	for start := 0; start < len(rows); {
		end := start
		for end < len(rows) && dt(&rows[end]) == dt(&rows[start]) {
			end++
		}
		f, err := fio.Create(ctx, "dt="+dt(&rows[start])+"/data-0.parquet")
		if err != nil {
			return written, err
		}
		pw := parquet.NewGenericWriter[T](f, parquetWriterOptions()...)
		for s := start; s < end; s += 1024 {
			n, err := pw.Write(rows[s:min(s+1024, end)])
			written += n
			if err != nil {
				_ = f.Abort()
				return written, err
			}
		}
		if err := pw.Close(); err != nil {
			_ = f.Abort()
			return written, err
		}
		if err := f.Close(); err != nil {
			return written, err
		}
		start = end
	}
	return written, nil
}

// writeCommits writes rows 1..rows (pqRowAt over partitions) with
// lakecore's TableWriter, committing every perCommit rows as its own APPEND
// snapshot with identifiers 1, 2, ...; after, when set, is called with each
// identifier once it is committed. It returns the rows written or being
// written when it stopped.
func writeCommits(ctx context.Context, tbl *lakecore.Table, rows, partitions, perCommit int, after func(id int64)) (int64, error) {
	c := tbl.NewCommitter("bench")
	var n int64
	for id := int64(1); n < int64(rows); id++ {
		tw, err := tbl.NewWriter(ctx)
		if err != nil {
			return n, err
		}
		for k := 0; k < perCommit && n < int64(rows); k++ {
			n++
			if err := tw.Write(ctx, anyRow(pqRowAt(n, partitions))); err != nil {
				return n, err
			}
		}
		msgs, err := tw.Prepare(ctx)
		if err != nil {
			return n, err
		}
		if _, err := c.Commit(ctx, id, msgs); err != nil {
			return n, fmt.Errorf("commit %d: %w", id, err)
		}
		if after != nil {
			after(id)
		}
	}
	return n, nil
}

// latestPlan plans the live files of the latest snapshot.
func latestPlan(ctx context.Context, tbl *lakecore.Table) (*scan.Plan, error) {
	snap, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		return nil, err
	}
	return tbl.Planner().Full(ctx, snap, nil)
}

// liveFiles counts the live data files, their bytes and rows.
func liveFiles(ctx context.Context, tbl *lakecore.Table) (files int, bytes, rows int64, err error) {
	plan, err := latestPlan(ctx, tbl)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, sp := range plan.Splits {
		for _, f := range sp.Files {
			files++
			bytes += f.FileSize
			rows += f.RowCount
		}
	}
	return files, bytes, rows, nil
}

type writeVariant struct {
	key, label string
	run        func(ctx context.Context, e *Env, i int) (timing, error)
}

func measureWriteLocal(ctx context.Context, e *Env) (*Section, error) {
	return measureWrite(ctx, e, false)
}

func measureWriteS3(ctx context.Context, e *Env) (*Section, error) {
	return measureWrite(ctx, e, true)
}

func measureWrite(ctx context.Context, e *Env, onS3 bool) (*Section, error) {
	var srv *s3Server
	var bucket string
	where := "local disk"
	if onS3 {
		_, b, err := e.S3("bench-write")
		if err != nil {
			return nil, err
		}
		srv, bucket = e.s3, b
		where = "S3 (versitygw on loopback)"
	}
	w := newWriteSetup(e, srv, bucket)
	variants := []writeVariant{
		{"paimon", "generate → paimon (" + where + ")", w.paimonPipeline},
		{"file", "generate → file, JSON lines (local disk)", w.filePipeline},
		{"writer", "lakecore table writer (" + where + ")", w.tableWriter},
		{"parquet", "parquet-go directly, its default encodings (" + where + ")", w.parquetGo},
		{"parquet-dict", "parquet-go directly, strings dictionary-encoded as the table writer does (" + where + ")", w.parquetGoDict},
	}
	wall := map[string]Sample{}
	cpu := map[string]Sample{}
	runs := e.Config.runs()
	for i := range runs {
		for _, vi := range rotate(len(variants), i) {
			v := variants[vi]
			t, err := v.run(ctx, e, i)
			if err != nil {
				return nil, fmt.Errorf("%s, run %d: %w", v.label, i+1, err)
			}
			wall[v.key] = append(wall[v.key], t.Wall.Seconds())
			cpu[v.key] = append(cpu[v.key], t.CPU.Seconds())
			e.Logf("   run %d %-8s %6.2f s wall %6.2f s cpu", i+1, v.key, t.Wall.Seconds(), t.CPU.Seconds())
		}
		_ = removeChildren(e.dir)
	}
	mb := float64(w.jsonBytes) / 1e6
	n := float64(w.rows)
	rate := func(s Sample, per float64) Sample {
		out := make(Sample, len(s))
		for i, v := range s {
			out[i] = per / v
		}
		return out
	}
	ratio := func(num, den Sample) Sample { // time ratio den/num = rate ratio num/den
		out := make(Sample, len(num))
		for i := range num {
			out[i] = den[i] / num[i]
		}
		return out
	}
	tbl := Table{Header: []string{"Variant", "rows/s", "rows per CPU-s", "MB/s", "MB per CPU-s", "wall s", "CPU s"}}
	for _, v := range variants {
		tbl.Rows = append(tbl.Rows, []string{v.label,
			rate(wall[v.key], n).Fmt(fInt), rate(cpu[v.key], n).Fmt(fInt),
			rate(wall[v.key], mb).Fmt(fMB), rate(cpu[v.key], mb).Fmt(fMB),
			wall[v.key].Fmt(fSec), cpu[v.key].Fmt(fSec)})
	}
	ratios := Table{Header: []string{"Ratio (same run)", "wall time basis", "CPU time basis"}}
	add := func(label, a, b string) Sample {
		r := ratio(wall[a], wall[b])
		ratios.Rows = append(ratios.Rows, []string{label, r.Fmt(fRatio), ratio(cpu[a], cpu[b]).Fmt(fRatio)})
		return r
	}
	s := &Section{}
	pf := add("generate→paimon / generate→file", "paimon", "file")
	wp := add("table writer / parquet-go", "writer", "parquet")
	wd := add("table writer / parquet-go with dictionary strings", "writer", "parquet-dict")
	add("generate→paimon / parquet-go", "paimon", "parquet")
	add("generate→paimon / table writer", "paimon", "writer")
	s.figure("ratio_paimon_file", pf.Median())
	s.figure("ratio_writer_parquet", wp.Median())
	s.figure("ratio_writer_parquet_dict", wd.Median())
	s.figure("paimon_rows_per_s", rate(wall["paimon"], n).Median())
	s.figure("paimon_rows_per_cpu_s", rate(cpu["paimon"], n).Median())
	s.figure("rows", n)
	s.Tables = []Table{tbl, ratios}
	s.profile("ratio_paimon_file", func(k int) error { _, err := w.paimonPipeline(ctx, e, runs+k); return err })
	// Against the dictionary baseline the ratio is the higher one, so
	// profiling the writer for the plain baseline's miss covers both.
	s.profile("ratio_writer_parquet", func(k int) error { _, err := w.tableWriter(ctx, e, runs+k); return err })
	s.Intro = fmt.Sprintf(`%s rows of a payment event (8 columns: BIGINT ×2, STRING ×4, DECIMAL(10, 2), TIMESTAMP(6); %s as JSON lines, %.0f bytes a row) into %d partitions, on %s. The Benthos pipelines run in-process: `+"`generate`"+` (count %s, batch_size 1,000, the same Bloblang mapping for both) into the `+"`paimon`"+` output (batching count 10,000 or 1 s, max_in_flight 4, zstd level 1: %d data files, %s) or into the `+"`file`"+` output (codec lines). The table writer and parquet-go write the same rows, built in memory before the clock starts, one Prepare/commit and one file per partition respectively (parquet-go: GenericWriter, zstd SpeedFastest, default row groups, through the same storage layer; once with its default encodings, which write strings plain, and once with the strings dictionary-encoded as the table writer, like Java Paimon, encodes them). MB are MB of JSON input (10^6 bytes), the same for every variant; *per CPU-s* divides by the CPU time of the process during the run (rows per core-second).`,
		fInt(n), fBytes(float64(w.jsonBytes)), float64(w.jsonBytes)/n, w.partitions, where, fInt(n), w.tableFiles, fBytes(float64(w.tableBytes)))
	if onS3 {
		s.Title = "Write throughput on S3"
		s.Notes = append(s.Notes, "benthos/v4 has no S3 output, so the JSON-lines baseline stays on the local disk; the table writer and parquet-go write through lakecore's S3 FileIO (multipart uploads) to the same server.")
	} else {
		s.Title = "Write throughput on a local disk"
	}
	return s, nil
}
