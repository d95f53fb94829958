package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
)

// measureSmallFiles writes an hour-equivalent of 100 ms batches (one
// snapshot each, as the output commits them when batches arrive every
// 100 ms) into one partition, then compacts it, and compares files, bytes,
// planning and reading before and after.
func measureSmallFiles(ctx context.Context, e *Env) (*Section, error) {
	batches := e.pick(36_000, 600)
	const rowsPerBatch = 100 // 1,000 rows/s
	wh := e.Dir("small")
	tbl, err := createBenchTable(ctx, wh, nil, nil)
	if err != nil {
		return nil, err
	}
	buildStart := time.Now()
	_, err = writeCommits(ctx, tbl, batches*rowsPerBatch, 1, rowsPerBatch, func(b int64) {
		if b%3000 == 0 {
			e.Logf("   %d of %d batches (%v)", b, batches, time.Since(buildStart).Round(time.Second))
		}
	})
	if err != nil {
		return nil, err
	}
	build := time.Since(buildStart)
	type state struct {
		files       int
		bytes, rows int64
		plan, read  Sample
	}
	observe := func() (*state, error) {
		st := &state{}
		var err error
		if st.files, st.bytes, st.rows, err = liveFiles(ctx, tbl); err != nil {
			return nil, err
		}
		for range e.Config.runs() {
			t, err := measure(func() error { _, err := planAll(ctx, tbl); return err })
			if err != nil {
				return nil, err
			}
			st.plan = append(st.plan, ms(t.Wall))
			var got int64
			t, err = measure(func() error { var err error; got, err = tailLakecore(ctx, tbl); return err })
			if err != nil {
				return nil, err
			}
			if got != st.rows {
				return nil, fmt.Errorf("read %d rows, want %d", got, st.rows)
			}
			st.read = append(st.read, ms(t.Wall))
		}
		return st, nil
	}
	before, err := observe()
	if err != nil {
		return nil, err
	}
	if want := int64(batches * rowsPerBatch); before.rows != want {
		return nil, fmt.Errorf("table holds %d rows, want %d", before.rows, want)
	}
	rep, err := tbl.Compact(ctx, maintain.CompactOptions{})
	if err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	after, err := observe()
	if err != nil {
		return nil, err
	}
	if after.rows != before.rows {
		return nil, fmt.Errorf("compaction changed the row count from %d to %d", before.rows, after.rows)
	}
	// Java's bin packing counts each file as its size plus
	// source.split.open-file-cost (4 MiB), so one pass over tiny files
	// closes a bin every ~128 files; a second pass shows where it converges.
	rep2, err := tbl.Compact(ctx, maintain.CompactOptions{})
	if err != nil {
		return nil, fmt.Errorf("second compact: %w", err)
	}
	after2, err := observe()
	if err != nil {
		return nil, err
	}
	if after2.rows != before.rows {
		return nil, fmt.Errorf("the second compaction changed the row count from %d to %d", before.rows, after2.rows)
	}
	s := &Section{Title: "Small files and compaction"}
	s.Intro = fmt.Sprintf(`An hour-equivalent of 100 ms batches: %s batches of %d payment events (1,000 rows/s), each written by lakecore's table writer and committed as its own APPEND snapshot, as the `+"`paimon`"+` output does when batches close every 100 ms, into one partition (the hour) of an unaware-bucket table on the local disk (%v to write). Then `+"`Compact`"+`, twice, with the table's defaults (target-file-size 256 MiB, compaction.min.file-num 5), as `+"`benthos-paimon paimon compact`"+` or the output's `+"`compaction`"+` run it (first pass: %d tasks, %v). Plan and read times: a full plan, and reading every row with lakecore's TableRead (runs: %d).`,
		fInt(float64(batches)), rowsPerBatch, build.Round(time.Second), rep.Tasks, rep.Duration.Round(time.Millisecond), e.Config.runs())
	row := func(label string, st *state) []string {
		return []string{label, fInt(float64(st.files)), fBytes(float64(st.bytes)), fBytes(float64(st.bytes) / float64(max(1, st.files))), st.plan.Fmt(fMs), st.read.Fmt(fMs)}
	}
	s.Tables = []Table{{
		Header: []string{"Partition (1 of 1)", "files", "bytes", "mean file", "full plan ms", "read all rows ms"},
		Rows: [][]string{row("before compaction", before), row("after one compaction", after),
			row("after a second compaction", after2)},
	}}
	s.Notes = append(s.Notes,
		fmt.Sprintf("The first compaction rewrote %s files (%s) into %s (%s) in %v; the second rewrote %s into %s in %v. Each pass is one COMPACT snapshot; streaming readers skip it, so they do not read the rows twice. The rewritten files stay on disk until snapshot expiry removes the snapshots that reference them.",
			fInt(float64(rep.Rewritten.Files)), fBytes(float64(rep.Rewritten.Bytes)), fInt(float64(rep.Written.Files)), fBytes(float64(rep.Written.Bytes)), rep.Duration.Round(time.Millisecond),
			fInt(float64(rep2.Rewritten.Files)), fInt(float64(rep2.Written.Files)), rep2.Duration.Round(time.Millisecond)),
		"One pass does not reach target-file-size: like Java's AppendCompactCoordinator, bins are packed by file size plus source.split.open-file-cost (4 MiB), so a bin of tiny files closes after about 2 × 256 MiB / 4 MiB = 128 files. Tables fed by 100 ms batches need compaction runs in a row (or a smaller open-file-cost) to reach large files.",
		"The full plan is slower right after compaction: the manifests now also hold a DELETE entry for every rewritten file until manifest full compaction folds them away.")
	s.figure("files_before", float64(before.files))
	s.figure("files_after", float64(after.files))
	s.figure("files_after_second", float64(after2.files))
	return s, nil
}

func planAll(ctx context.Context, tbl *lakecore.Table) (int, error) {
	plan, err := latestPlan(ctx, tbl)
	if err != nil {
		return 0, err
	}
	return len(plan.Splits), nil
}
