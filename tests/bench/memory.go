package bench

import (
	"context"
	"fmt"
	"os"
)

// measureMemory is the peak RSS of a child process writing rows into
// partitions through generate -> paimon, and of one tailing them all with
// the paimon input.
func measureMemory(ctx context.Context, e *Env) (*Section, error) {
	rows := e.pick(10_000_000, 50_000)
	parts := e.pick(100, 10)
	batch := e.pick(100_000, 10_000)
	runs := e.Config.runs()
	var wh string
	var idle, wRSS, wRate, lRSS, lRate, tRSS, tRate Sample
	for range runs {
		res, err := runChild(ctx, e, childSpec{Kind: "idle"})
		if err != nil {
			return nil, err
		}
		idle = append(idle, float64(res.HWMKiB)*1024)
	}
	for i := range runs {
		lwh := e.Dir(fmt.Sprintf("mem-writer-%d", i))
		res, err := runChild(ctx, e, childSpec{Kind: "writer", Warehouse: lwh, Rows: rows, Partitions: parts, BatchCount: batch})
		if err != nil {
			return nil, err
		}
		_ = os.RemoveAll(lwh)
		lRSS = append(lRSS, float64(res.HWMKiB)*1024)
		lRate = append(lRate, float64(rows)/res.Seconds)
		e.Logf("   table writer run %d: %s peak RSS, %.0f rows/s", i+1, fBytes(lRSS[i]), lRate[i])
		if wh != "" {
			_ = os.RemoveAll(wh)
		}
		wh = e.Dir(fmt.Sprintf("mem-%d", i))
		res, err = runChild(ctx, e, childSpec{Kind: "write", Warehouse: wh, Rows: rows, Partitions: parts, BatchCount: batch})
		if err != nil {
			return nil, err
		}
		wRSS = append(wRSS, float64(res.HWMKiB)*1024)
		wRate = append(wRate, float64(rows)/res.Seconds)
		e.Logf("   write run %d: %s peak RSS, %.0f rows/s", i+1, fBytes(wRSS[i]), wRate[i])
	}
	tbl, err := openBenchTable(ctx, wh, nil)
	if err != nil {
		return nil, err
	}
	files, bytes, n, err := liveFiles(ctx, tbl)
	if err != nil {
		return nil, err
	}
	if n != int64(rows) {
		return nil, fmt.Errorf("table holds %d rows, want %d", n, rows)
	}
	for i := range runs {
		res, err := runChild(ctx, e, childSpec{Kind: "tail", Warehouse: wh})
		if err != nil {
			return nil, err
		}
		if res.Rows != int64(rows) {
			return nil, fmt.Errorf("tail read %d rows, want %d", res.Rows, rows)
		}
		tRSS = append(tRSS, float64(res.HWMKiB)*1024)
		tRate = append(tRate, float64(rows)/res.Seconds)
		e.Logf("   tail run %d: %s peak RSS, %.0f rows/s", i+1, fBytes(tRSS[i]), tRate[i])
	}
	s := &Section{Title: "Memory"}
	s.Intro = fmt.Sprintf(`Peak RSS (VmHWM of a child process that runs only the pipeline) while writing %s rows of the payment event into %d partitions with `+"`generate → paimon`"+` (batching count %s or 10 s, max_in_flight 4), and while tailing all of them with the `+"`paimon`"+` input (`+"`scan_mode: full`, `bounded: true`"+`, default batch_size) into a counting consumer. The table: %s data files, %s. Go's default GOGC=100, no GOMEMLIMIT.`,
		fInt(float64(rows)), parts, fInt(float64(batch)), fInt(float64(files)), fBytes(float64(bytes)))
	s.Tables = []Table{{
		Header: []string{"Process", "peak RSS", "rows/s"},
		Rows: [][]string{
			{"baseline: the same binary running generate (1 message) → drop", idle.Fmt(fBytes), "–"},
			{"writing (generate → paimon)", wRSS.Fmt(fBytes), wRate.Fmt(fInt)},
			{fmt.Sprintf("writing with lakecore's table writer alone (rows made on the fly, a commit every %s rows)", fInt(float64(batch))), lRSS.Fmt(fBytes), lRate.Fmt(fInt)},
			{"tailing (paimon input)", tRSS.Fmt(fBytes), tRate.Fmt(fInt)},
		},
	}}
	// How much of the pipeline's peak the table writer alone explains:
	// Benthos holds up to max_in_flight batches in memory while they are
	// written, the writer one open Parquet file per partition of a batch.
	if w, l := wRSS.Median(), lRSS.Median(); l > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("Writing through the pipeline peaked at %s, %.1f× the %s of lakecore's table writer alone on the same rows: the %s above it is the pipeline's (Benthos holds up to max_in_flight 4 batches of up to %s messages while they are written); the writer's own bound is 4 MiB row groups per open file, one file per partition of a batch.",
			fBytes(w), w/l, fBytes(l), fBytes(max(0, w-l)), fInt(float64(batch))))
	}
	s.figure("write_rss_bytes", wRSS.Median())
	s.figure("tail_rss_bytes", tRSS.Median())
	s.figure("writer_rss_bytes", lRSS.Median())
	return s, nil
}
