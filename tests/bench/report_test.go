package bench_test

import (
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/tests/bench"
)

func TestMain(m *testing.M) {
	bench.MaybeRunChild() // the memory section re-executes this binary
	os.Exit(m.Run())
}

// TestQuickReport runs every measurement of the harness at smoke-run sizes,
// once each, so CI exercises the code behind `make bench`.
func TestQuickReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark section (about a minute)")
	}
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := bench.Run(ctx, bench.Config{Quick: true, Runs: 1, Dir: t.TempDir(), Log: &log, Command: "go test ./tests/bench"})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if len(r.Sections) != len(bench.Measurements()) {
		t.Fatalf("%d sections, want %d", len(r.Sections), len(bench.Measurements()))
	}
	want := map[string][]string{
		"write":          {"ratio_paimon_file", "ratio_writer_parquet", "paimon_rows_per_s"},
		"write-s3":       {"ratio_paimon_file", "ratio_writer_parquet"},
		"freshness":      {"local_p50_ms", "local_p95_ms"},
		"commit-history": {"ratio_p50", "ratio_p95"},
		"memory":         {"write_rss_bytes", "tail_rss_bytes"},
		"tail":           {"ratio_input_parquet", "ratio_lakecore_parquet"},
		"planning":       {"plan_ms"},
		"small-files":    {"files_before", "files_after"},
		"pipeline":       {"added_us", "ratio_paimon_drop"},
		"peers":          {"ratio_write_pypaimon", "ratio_write_java", "ratio_bytes_java", "ratio_bytes_pypaimon", "ratio_read_pypaimon", "ratio_read_java", "java_write_rows_per_cpu_s", "pypaimon_read_rows_per_cpu_s", "ratio_write_java_unique", "ratio_write_pypaimon_unique", "ratio_bytes_java_unique", "ratio_bytes_pypaimon_unique", "ratio_read_java_unique", "lakecore_unique_bytes"},
	}
	if testenv.Required(testenv.RequireInterop) { // the JVM's tail, beside ours
		want["tail"] = append(want["tail"], "ratio_process_java")
	}
	for _, s := range r.Sections {
		if s.Err != "" {
			if s.Name == "write-s3" && strings.Contains(s.Err, "no S3 server") && !testenv.Required(testenv.RequireS3) {
				t.Logf("write-s3 not measured (%s=1 makes this a failure): %s", testenv.RequireS3, s.Err)
				continue
			}
			t.Errorf("section %s failed: %s", s.Name, s.Err)
			continue
		}
		if s.Skipped != "" {
			// measurePeers fails instead of skipping when REQUIRE_INTEROP=1.
			if s.Name != "peers" || testenv.Required(testenv.RequireInterop) {
				t.Errorf("section %s skipped: %s", s.Name, s.Skipped)
			} else {
				t.Logf("%s not measured (%s=1 makes this a failure): %s", s.Name, testenv.RequireInterop, s.Skipped)
			}
			continue
		}
		for _, k := range want[s.Name] {
			v, ok := s.Figures[k]
			if !ok || v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("section %s: figure %s = %v (present %v), want a positive number", s.Name, k, v, ok)
			}
		}
		if len(s.Tables) == 0 {
			t.Errorf("section %s has no table", s.Name)
		}
	}
	for _, s := range r.Sections {
		if s.Name == "small-files" && s.Err == "" && s.Figures["files_after"] >= s.Figures["files_before"] {
			t.Errorf("compaction left %v files of %v", s.Figures["files_after"], s.Figures["files_before"])
		}
	}
	md := r.Markdown()
	// A missed target brings the profile of one more run (tail, write and
	// planning can profile theirs).
	for _, s := range r.Sections {
		if s.Name == "tail" && s.Err == "" && s.Figures["ratio_input_parquet"] < 0.7 {
			if !strings.Contains(md, "Target not met (#6 paimon input rows/s") || !strings.Contains(md, "CPU profile of ratio_input_parquet") {
				t.Errorf("tail misses its target (ratio %.2f) but the report has no profile of it", s.Figures["ratio_input_parquet"])
			}
		}
	}
	for _, h := range []string{"# Benchmarks", "## Machine and versions", "## Targets", "## Write throughput on a local disk", "## Freshness", "## Commit cost over history", "## Memory", "## Tail throughput", "## Planning", "## Small files and compaction", "## Against the peers", "Quick mode"} {
		if !strings.Contains(md, h) {
			t.Errorf("report lacks %q", h)
		}
	}
	if t.Failed() {
		t.Logf("progress:\n%s\nreport:\n%s", log.String(), md)
	}
}

func TestSampleStats(t *testing.T) {
	for _, tc := range []struct {
		s             bench.Sample
		med, min, max float64
		fmt           string
	}{
		{bench.Sample{3, 1, 2}, 2, 1, 3, "2.00 (1.00–3.00)"},
		{bench.Sample{4, 1, 2, 3}, 2.5, 1, 4, "2.50 (1.00–4.00)"},
		{bench.Sample{7}, 7, 7, 7, "7.00"},
	} {
		if tc.s.Median() != tc.med || tc.s.Min() != tc.min || tc.s.Max() != tc.max {
			t.Errorf("%v: median %v min %v max %v", tc.s, tc.s.Median(), tc.s.Min(), tc.s.Max())
		}
		if got := tc.s.Fmt(fmt2); got != tc.fmt {
			t.Errorf("%v.Fmt = %q, want %q", tc.s, got, tc.fmt)
		}
	}
	if !math.IsNaN(bench.Sample{}.Median()) {
		t.Errorf("median of nothing is not NaN")
	}
}

func fmt2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
