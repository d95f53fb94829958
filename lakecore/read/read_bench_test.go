package read_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
	"github.com/benthos-paimon/benthos-paimon/internal/paymentevent"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// paymentRows of internal/paymentevent's payment events, partitioned by
// dt into 4 partitions, written by lakecore with the table defaults (zstd
// level 1): the rows of tests/bench.
const paymentRows = 1_000_000

// writePaymentTable writes the payment rows into bench.events of a new
// warehouse in one commit and returns the warehouse.
func writePaymentTable(b *testing.B, rows int) string {
	b.Helper()
	ctx := context.Background()
	wh := b.TempDir()
	cat, err := lakecore.OpenCatalog(ctx, wh, storage.S3Config{})
	if err != nil {
		b.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "bench", "events", lakecore.TableSpec{
		Fields: paymentevent.Fields(), PartitionKeys: []string{"dt"},
		Options: map[string]string{"file.compression": "zstd", "file.compression.zstd-level": "1"},
	})
	if err != nil {
		b.Fatal(err)
	}
	w, err := tbl.NewWriter(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for n := int64(1); n <= int64(rows); n++ {
		row := paymentevent.Row(n, 4)
		if err := w.Write(ctx, row); err != nil {
			b.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tbl.NewCommitter("bench").Commit(ctx, 1, msgs); err != nil {
		b.Fatal(err)
	}
	return wh
}

// fullRead reads every row of the latest snapshot of bench.events with
// lakecore (plan, then every split's rows as []any) and returns the count.
func fullRead(b *testing.B, wh string) int {
	ctx := context.Background()
	tbl, err := lakecore.Open(ctx, wh, "bench", "events")
	if err != nil {
		b.Fatal(err)
	}
	snap, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		b.Fatal(err)
	}
	plan, err := tbl.Planner().Full(ctx, snap, nil)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	if err := tbl.ReadPlan(ctx, plan, func(rows [][]any) error { n += len(rows); return nil }); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkFullRead reads the 1,000,000 payment rows (4 partitions, one
// file each) with lakecore and reports rows per CPU-second, the measure of
// issue #19 ("read as fast as Arrow").
func BenchmarkFullRead(b *testing.B) {
	wh := writePaymentTable(b, paymentRows)
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		if n := fullRead(b, wh); n != paymentRows {
			b.Fatalf("read %d rows, want %d", n, paymentRows)
		}
	}
	b.ReportMetric(float64(paymentRows)*float64(b.N)/(cputime.Process()-c0).Seconds(), "rows/cpu-s")
	b.ReportMetric(float64(paymentRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// pypaimonPython is the interpreter of the interop venv
// (tests/interop/setup.sh), or $PYPAIMON_PYTHON.
func pypaimonPython() string {
	if p := os.Getenv("PYPAIMON_PYTHON"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../tests/interop/.venv/bin/python")
	return p
}

// BenchmarkFullReadRatio alternates lakecore's full read of the payment
// table with pypaimon's to_arrow of the same table (one Python process
// started once, its own CPU clock around plan + to_arrow), once each per
// iteration (run with -benchtime 5x or more), and reports the medians of
// rows per CPU-second and the ratio lakecore/pypaimon. Without the interop
// venv it is skipped, saying so.
func BenchmarkFullReadRatio(b *testing.B) {
	python := pypaimonPython()
	if _, err := os.Stat(python); err != nil {
		b.Skipf("pypaimon is not set up (%v): run tests/interop/setup.sh or set PYPAIMON_PYTHON", err)
	}
	wh := writePaymentTable(b, paymentRows)
	cmd := exec.Command(python, "testdata/pypaimon_read.py", wh, "bench.events")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	pyRead := func() (rows int, cpu, wall float64) {
		if _, err := stdin.Write([]byte("read\n")); err != nil {
			b.Fatal(err)
		}
		if !lines.Scan() {
			b.Fatalf("pypaimon exited: %v", lines.Err())
		}
		var r struct {
			Rows      int
			CPU, Wall float64
		}
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			b.Fatalf("pypaimon said %q: %v", lines.Text(), err)
		}
		return r.Rows, r.CPU, r.Wall
	}
	pyRead() // warm-up: first-use imports and caches
	var goCPU, pyCPU, goWall, pyWall []float64
	for b.Loop() {
		t0, c0 := time.Now(), cputime.Process()
		if n := fullRead(b, wh); n != paymentRows {
			b.Fatalf("lakecore read %d rows, want %d", n, paymentRows)
		}
		goCPU = append(goCPU, paymentRows/(cputime.Process()-c0).Seconds())
		goWall = append(goWall, paymentRows/time.Since(t0).Seconds())
		n, cpu, wall := pyRead()
		if n != paymentRows {
			b.Fatalf("pypaimon read %d rows, want %d", n, paymentRows)
		}
		pyCPU, pyWall = append(pyCPU, paymentRows/cpu), append(pyWall, paymentRows/wall)
	}
	b.ReportMetric(median(goCPU), "lakecore-rows/cpu-s")
	b.ReportMetric(median(pyCPU), "pypaimon-rows/cpu-s")
	b.ReportMetric(median(goCPU)/median(pyCPU), "cpu-ratio")
	b.ReportMetric(median(goWall)/median(pyWall), "wall-ratio")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
