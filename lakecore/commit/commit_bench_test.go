package commit_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// BenchmarkCommitLatencyGrowth measures the latency of commits (one
// 1-row file each, 4 partitions) on a table with 10 snapshots and on one
// with BP_BENCH_HISTORY snapshots (default 10,000), and reports p50 and p95
// of 50 commits on each and their ratios: manifest merging must keep the
// work of a commit from growing with history. The two tables are committed
// to alternately so that both see the same machine load. BP_BENCH_DIR puts
// the tables elsewhere than the test's temporary directory (e.g. /dev/shm,
// to leave out disk flush latency). Run with -benchtime=1x; building the
// history takes minutes.
//
//	go test ./lakecore/commit -run '^$' -bench CommitLatencyGrowth -benchtime=1x
func BenchmarkCommitLatencyGrowth(b *testing.B) {
	history := 10_000
	if v := os.Getenv("BP_BENCH_HISTORY"); v != "" {
		history, _ = strconv.Atoi(v)
	}
	const samples = 50
	for b.Loop() {
		ctx := context.Background()
		type table struct {
			fio  storage.FileIO
			c    *commit.Committer
			next int64
			d    []time.Duration
		}
		newTable := func() *table {
			dir := b.TempDir()
			if d := os.Getenv("BP_BENCH_DIR"); d != "" {
				var err error
				if dir, err = os.MkdirTemp(d, "bench-"); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { os.RemoveAll(dir) })
			}
			fio, err := storage.NewLocal(dir)
			if err != nil {
				b.Fatal(err)
			}
			createTable(b, fio, nil)
			return &table{fio: fio, c: commit.New(fio, tablePath, commit.Options{CommitUser: "bench"}), next: 1}
		}
		commitOne := func(t *table) time.Duration {
			start := time.Now()
			m := msg(int32(t.next%4), file(fmt.Sprintf("f%06d", t.next), 1))
			if _, err := t.c.Commit(ctx, t.next, []commit.Message{m}); err != nil {
				b.Fatal(err)
			}
			t.next++
			return time.Since(start)
		}
		long, short := newTable(), newTable()
		buildStart := time.Now()
		for long.next <= int64(history) {
			commitOne(long)
		}
		build := time.Since(buildStart)
		for short.next <= 10 {
			commitOne(short)
		}
		for i := range samples {
			first, second := short, long
			if i%2 == 1 {
				first, second = long, short
			}
			first.d = append(first.d, commitOne(first))
			second.d = append(second.d, commitOne(second))
		}
		pct := func(d []time.Duration, p int) time.Duration {
			d = slices.Clone(d)
			slices.Sort(d)
			return d[len(d)*p/100]
		}
		s, err := long.c.Commit(ctx, long.next, nil)
		if err != nil {
			b.Fatal(err)
		}
		base, err := manifest.ReadFileMetas(ctx, long.fio, tablePath, s.BaseManifestList)
		if err != nil {
			b.Fatal(err)
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(pct(short.d, 50)), "p50-ms@10")
		b.ReportMetric(ms(pct(short.d, 95)), "p95-ms@10")
		b.ReportMetric(ms(pct(long.d, 50)), "p50-ms@history")
		b.ReportMetric(ms(pct(long.d, 95)), "p95-ms@history")
		b.ReportMetric(float64(pct(long.d, 50))/float64(pct(short.d, 50)), "p50-ratio")
		b.ReportMetric(float64(pct(long.d, 95))/float64(pct(short.d, 95)), "p95-ratio")
		b.ReportMetric(float64(len(base)), "base-manifests")
		tail := func(d []time.Duration) []time.Duration {
			d = slices.Clone(d)
			slices.Sort(d)
			return d[len(d)-5:]
		}
		b.Logf("slowest 5 at 10: %v; at history: %v", tail(short.d), tail(long.d))
		b.Logf("history of %d snapshots built in %v (%.1f ms/commit); base list of snapshot %d: %d manifests",
			history, build.Round(time.Millisecond), float64(build.Microseconds())/1000/float64(max(1, history)), s.ID, len(base))
	}
}
