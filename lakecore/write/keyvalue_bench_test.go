package write_test

import (
	"context"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// heapSampler records the largest HeapInuse seen until stop is called.
// It samples on a ticker (a measurement, not synchronization): the true
// peak between two samples can be higher.
type heapSampler struct {
	mu   sync.Mutex
	peak uint64
	stop chan struct{}
	done chan struct{}
}

func startHeapSampler() *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				s.mu.Lock()
				s.peak = max(s.peak, ms.HeapInuse)
				s.mu.Unlock()
			}
		}
	}()
	return s
}

func (s *heapSampler) finish() uint64 {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// BenchmarkKeyValueWritePeakMemory writes PK_MEM_ROWS upserts (default
// 10,000,000; keys cycle over a fifth of that, so every key is upserted
// five times) into a primary-key table with bucket = 4 and one Prepare at
// the end, compaction off, and reports the peak Go heap in use (sampled),
// the process's peak RSS and the level-0 files written: with
// write-buffer-size the bound on the buffered changes of all buckets
// together (Java's MemoryPoolFactory shares one pool of write-buffer-size
// among the writer's buckets), a smaller buffer means more sorted runs
// spilled to local disk and a lower peak. Run one size at a time so that
// peak RSS (a process-wide high-water mark) belongs to it:
//
//	go test ./lakecore/write -run '^$' -bench 'KeyValueWritePeakMemory/256mb' -benchtime=1x
func BenchmarkKeyValueWritePeakMemory(b *testing.B) {
	total := envRows(b, "PK_MEM_ROWS", 10_000_000)
	for _, size := range []string{"256mb", "64mb"} {
		b.Run(size, func(b *testing.B) {
			for b.Loop() {
				benchUpserts(b, total, map[string]string{"bucket": "4", "write-buffer-size": size})
			}
		})
	}
}

// BenchmarkKeyValueWriteSpill writes PK_SPILL_ROWS upserts (default
// 2,000,000, as BenchmarkKeyValueWritePeakMemory) in one commit with a
// 16 MiB write buffer, spilling sorted runs to local disk (the default)
// and flushing level-0 files instead (write-buffer-spillable false): the
// level-0 files, the CPU time and the peak Go heap of each. Peak RSS is
// the process's and belongs to the first run only.
//
//	go test ./lakecore/write -run '^$' -bench KeyValueWriteSpill -benchtime=1x
func BenchmarkKeyValueWriteSpill(b *testing.B) {
	total := envRows(b, "PK_SPILL_ROWS", 2_000_000)
	for _, spill := range []string{"true", "false"} {
		b.Run("spillable="+spill, func(b *testing.B) {
			for b.Loop() {
				benchUpserts(b, total, map[string]string{"bucket": "4", "write-buffer-size": "16mb", "write-buffer-spillable": spill})
			}
		})
	}
}

func envRows(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// benchUpserts writes total upserts of total/5 keys into a new table with
// options and one Prepare, compaction off, and reports the metrics.
func benchUpserts(b *testing.B, total int, options map[string]string) {
	fio, err := storage.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	tbl, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", lakecore.TableSpec{
		Fields: []types.DataField{
			f("id", types.BigIntType().NotNull()),
			f("name", types.StringType()),
			f("v", types.DoubleType()),
			f("ts", types.TimestampType(3)),
			f("flag", types.BooleanType()),
		},
		PrimaryKeys: []string{"id"},
		Options:     options,
	})
	if err != nil {
		b.Fatal(err)
	}
	w, err := tbl.NewKeyValueWriter(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	w.DisableCompaction()
	runtime.GC()
	sampler := startHeapSampler()
	start, cpu := time.Now(), cputime.Process()
	keys := max(total/5, 1)
	for i := 0; i < total; i++ {
		// The writer keeps the row until it flushes: a new slice each.
		row := []any{int64(i % keys), "user-" + strconv.Itoa(i%5000), float64(i) * 0.37,
			types.Timestamp{Millis: 1_717_000_000_000 + int64(i)}, i%3 == 0}
		if err := w.Write(ctx, kv.Insert, row); err != nil {
			b.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		b.Fatal(err)
	}
	elapsed, cpu := time.Since(start), cputime.Process()-cpu
	peak := sampler.finish()
	var files int
	var records int64
	for _, m := range msgs {
		files += len(m.NewFiles)
		for _, nf := range m.NewFiles {
			records += nf.RowCount
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
	b.ReportMetric(float64(total)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(total)/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(cpu.Seconds(), "cpu-s")
	b.ReportMetric(float64(files), "level0-files")
	b.Logf("%d upserts of %d keys, %v: %d level-0 files, %d records, in %v (%v CPU)",
		total, keys, options, files, records, elapsed.Round(time.Millisecond), cpu.Round(time.Millisecond))
}

// BenchmarkLookupChangelogCommits writes 20 commits of 20,000 upserts each
// (keys drawn from 200,000, so later commits mostly update) into a
// primary-key table with bucket = 2 and commits each, with
// changelog-producer none (universal compaction when the runs call for it)
// and lookup (level 0 compacted up at every commit, each key looked up in
// the levels above and its changelog written): the cost of the lookup
// changelog per committed row. The 1mb-cache variants set
// lookup.cache-max-memory-size far below the decoded table: its files
// above level 0 go to local lookup files, read once from the table's
// storage (lookup-1mb-cache), or, without local files
// (lookup.cache-max-disk-size 0, lakecore before local files), are read
// forward from the table's storage at every commit. data-file-opens/commit
// and data-MiB-read/commit count the data files opened from the table's
// storage and the bytes read from them, by compactions and lookups.
//
//	go test ./lakecore/write -run '^$' -bench LookupChangelogCommits -benchtime=1x
func BenchmarkLookupChangelogCommits(b *testing.B) {
	const commits, perCommit, keys = 20, 20_000, 200_000
	for _, variant := range []string{"none", "lookup", "lookup-1mb-cache", "lookup-1mb-cache-no-disk"} {
		producer, options := variant, map[string]string{"bucket": "2"}
		if strings.HasPrefix(variant, "lookup-1mb-cache") {
			producer, options["lookup.cache-max-memory-size"] = "lookup", "1mb"
			if strings.HasSuffix(variant, "no-disk") {
				options["lookup.cache-max-disk-size"] = "0"
			}
		}
		options["changelog-producer"] = producer
		b.Run(variant, func(b *testing.B) {
			for b.Loop() {
				ctx := context.Background()
				fio, w, committer := newLookupBenchTable(b, options)
				start, cpu := time.Now(), cputime.Process()
				var changelog int64
				for c := range commits {
					for i := range perCommit {
						n := int64((c*perCommit + i) * 7919 % keys)
						if err := w.Write(ctx, kv.Insert, []any{n, "user-" + strconv.Itoa(i%5000), int64(c)}); err != nil {
							b.Fatal(err)
						}
					}
					msgs, err := w.Prepare(ctx)
					if err != nil {
						b.Fatal(err)
					}
					for _, m := range msgs {
						for _, cf := range m.CompactChangelog {
							changelog += cf.RowCount
						}
					}
					if _, err := committer.Commit(ctx, int64(c+1), msgs); err != nil {
						b.Fatal(err)
					}
				}
				elapsed, cpu := time.Since(start), cputime.Process()-cpu
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(commits*perCommit)/elapsed.Seconds(), "rows/s")
				b.ReportMetric(float64(commits*perCommit)/cpu.Seconds(), "rows/cpu-s")
				b.ReportMetric(float64(elapsed.Milliseconds())/commits, "ms/commit")
				b.ReportMetric(float64(changelog), "changelog-records")
				b.ReportMetric(float64(fio.dataOpens.Load())/commits, "data-file-opens/commit")
				b.ReportMetric(float64(fio.dataBytes.Load())/commits/(1<<20), "data-MiB-read/commit")
			}
		})
	}
}

// lookupBenchTable creates a primary-key table (id BIGINT, name STRING,
// v BIGINT) with options in a fresh local warehouse, read through an
// openCounter.
func lookupBenchTable(b *testing.B, options map[string]string) (*openCounter, *lakecore.Table) {
	local, err := storage.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	fio := &openCounter{FileIO: local}
	tbl, err := lakecore.NewCatalog(fio).CreateTable(context.Background(), "db", "t", lakecore.TableSpec{
		Fields:      []types.DataField{f("id", types.BigIntType().NotNull()), f("name", types.StringType()), f("v", types.BigIntType())},
		PrimaryKeys: []string{"id"},
		Options:     options,
	})
	if err != nil {
		b.Fatal(err)
	}
	return fio, tbl
}

// newLookupBenchTable creates a lookupBenchTable and returns a writer
// keeping its local lookup files in a temp dir, and a committer.
func newLookupBenchTable(b *testing.B, options map[string]string) (*openCounter, *write.KeyValueWriter, *commit.Committer) {
	fio, tbl := lookupBenchTable(b, options)
	w, err := tbl.NewKeyValueWriter(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	w.SetLocalDir(b.TempDir())
	return fio, w, tbl.NewCommitter("bench")
}

// openCounter counts the data files opened through it and the bytes read
// from them.
type openCounter struct {
	storage.FileIO
	dataOpens, dataBytes atomic.Int64
}

func (o *openCounter) Open(ctx context.Context, p string) (storage.File, error) {
	f, err := o.FileIO.Open(ctx, p)
	if err != nil || !strings.HasPrefix(path.Base(p), "data-") {
		return f, err
	}
	o.dataOpens.Add(1)
	return &countedFile{File: f, bytes: &o.dataBytes}, nil
}

type countedFile struct {
	storage.File
	bytes *atomic.Int64
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.bytes.Add(int64(n))
	return n, err
}

// BenchmarkLookupLargeUpperLevels commits 10 batches of 5,000 upserts into
// a lookup-changelog table (bucket = 2) that already holds 400,000 rows in
// its upper levels: each commit compacts its level-0 file up and looks
// its keys up in those levels. With lookup.cache-max-memory-size 1mb the
// upper levels do not fit memory: local lookup files keep them
// (local-files), or, without them (lookup.cache-max-disk-size 0, lakecore
// before local files), every commit reads them again from the table's
// storage (forward-reads); in-memory has the default 256 MiB, which holds
// them decoded. data-MiB-read/commit is what the commits read from the
// table's storage (an S3 GET each open, and its bytes).
//
//	go test ./lakecore/write -run '^$' -bench LookupLargeUpperLevels -benchtime=1x
func BenchmarkLookupLargeUpperLevels(b *testing.B) {
	const rows, commits, perCommit = 400_000, 10, 5_000
	for _, variant := range []string{"in-memory", "local-files", "forward-reads"} {
		options := map[string]string{"bucket": "2", "changelog-producer": "lookup"}
		switch variant {
		case "local-files":
			options["lookup.cache-max-memory-size"] = "1mb"
		case "forward-reads":
			options["lookup.cache-max-memory-size"] = "1mb"
			options["lookup.cache-max-disk-size"] = "0"
		}
		b.Run(variant, func(b *testing.B) {
			for b.Loop() {
				ctx := context.Background()
				fio, w, committer := newLookupBenchTable(b, options)
				commit := func(id int64) {
					msgs, err := w.Prepare(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := committer.Commit(ctx, id, msgs); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				for n := range int64(rows) {
					if err := w.Write(ctx, kv.Insert, []any{n, "customer name " + strconv.FormatInt(n*7919%100_003, 10), n}); err != nil {
						b.Fatal(err)
					}
				}
				commit(1)
				b.StartTimer()
				opens, read := fio.dataOpens.Load(), fio.dataBytes.Load()
				start, cpu := time.Now(), cputime.Process()
				for c := range int64(commits) {
					for i := range int64(perCommit) {
						n := (c*perCommit + i) * 7919 % rows
						if err := w.Write(ctx, kv.Insert, []any{n, "renamed " + strconv.FormatInt(c, 10), n + c}); err != nil {
							b.Fatal(err)
						}
					}
					commit(c + 2)
				}
				elapsed, cpu := time.Since(start), cputime.Process()-cpu
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(elapsed.Milliseconds())/commits, "ms/commit")
				b.ReportMetric(float64(cpu.Milliseconds())/commits, "cpu-ms/commit")
				b.ReportMetric(float64(fio.dataOpens.Load()-opens)/commits, "data-file-opens/commit")
				b.ReportMetric(float64(fio.dataBytes.Load()-read)/commits/(1<<20), "data-MiB-read/commit")
			}
		})
	}
}

// BenchmarkCompactLookupRuns is the paimon output's pattern on a
// lookup-changelog table (bucket = 2) holding 400,000 rows in its upper
// levels: 8 rounds of a batch of 5,000 upserts written at level 0 by a
// fresh writer, then Table.Compact, which looks the batch's keys up in
// the upper levels. With lookup.cache-max-memory-size 1mb those go to
// local lookup files: kept across the runs in a write.LookupCache
// (shared-cache), or built again by every run (per-run-cache, lakecore
// before LookupCache). data-file-opens/run and data-MiB-read/run are
// what the runs read from the table's storage, compaction inputs included.
//
//	go test ./lakecore/write -run '^$' -bench CompactLookupRuns -benchtime=1x
func BenchmarkCompactLookupRuns(b *testing.B) {
	const rows, runs, perRun = 400_000, 8, 5_000
	for _, variant := range []string{"per-run-cache", "shared-cache"} {
		b.Run(variant, func(b *testing.B) {
			for b.Loop() {
				ctx := context.Background()
				fio, tbl := lookupBenchTable(b, map[string]string{"bucket": "2", "changelog-producer": "lookup", "lookup.cache-max-memory-size": "1mb"})
				var cache *write.LookupCache
				if variant == "shared-cache" {
					lo, err := write.LookupCacheOptionsFromSchema(tbl.Schema())
					if err != nil {
						b.Fatal(err)
					}
					lo.Dir = b.TempDir()
					cache = write.NewLookupCache(lo)
				}
				committer := tbl.NewCommitter("bench")
				round := func(id int64, n int64, row func(i int64) []any) {
					w, err := tbl.NewKeyValueWriter(ctx)
					if err != nil {
						b.Fatal(err)
					}
					w.DisableCompaction()
					for i := range n {
						if err := w.Write(ctx, kv.Insert, row(i)); err != nil {
							b.Fatal(err)
						}
					}
					msgs, err := w.Prepare(ctx)
					if err != nil {
						b.Fatal(err)
					}
					_ = w.Close()
					if _, err := committer.Commit(ctx, id, msgs); err != nil {
						b.Fatal(err)
					}
					if _, err := tbl.Compact(ctx, maintain.CompactOptions{CommitUser: "maintenance", LookupCache: cache}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				round(1, rows, func(n int64) []any {
					return []any{n, "customer name " + strconv.FormatInt(n*7919%100_003, 10), n}
				})
				b.StartTimer()
				opens, read := fio.dataOpens.Load(), fio.dataBytes.Load()
				start, cpu := time.Now(), cputime.Process()
				for r := range int64(runs) {
					round(r+2, perRun, func(i int64) []any {
						n := (r*perRun + i) * 7919 % rows
						return []any{n, "renamed " + strconv.FormatInt(r, 10), n + r}
					})
				}
				elapsed, cpu := time.Since(start), cputime.Process()-cpu
				if cache != nil {
					if err := cache.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(elapsed.Milliseconds())/runs, "ms/run")
				b.ReportMetric(float64(cpu.Milliseconds())/runs, "cpu-ms/run")
				b.ReportMetric(float64(fio.dataOpens.Load()-opens)/runs, "data-file-opens/run")
				b.ReportMetric(float64(fio.dataBytes.Load()-read)/runs/(1<<20), "data-MiB-read/run")
			}
		})
	}
}

// BenchmarkKeyValueUpserts is the lakecore side of the interop
// TestPKUpsertBenchVsJava (tests/interop/pk_bench_test.go), in process for
// profiling: PK_UPSERT_ROWS changes (default 1,000,000; 20 % of them
// update an earlier key, drawn by the same LCG as Java's pk-upsert-bench)
// into a deduplicate table (id BIGINT, a BIGINT, b STRING, c DOUBLE;
// bucket = 4) in 10 commits, with inline universal compaction. One
// variant per write-buffer-spillable value.
//
//	go test ./lakecore/write -run '^$' -bench KeyValueUpserts -benchtime=1x -cpuprofile cpu.out
func BenchmarkKeyValueUpserts(b *testing.B) {
	total := int64(envRows(b, "PK_UPSERT_ROWS", 1_000_000))
	for _, spill := range []string{"true", "false"} {
		b.Run("spillable="+spill, func(b *testing.B) {
			for b.Loop() {
				benchUpsertCommits(b, total, map[string]string{"bucket": "4", "write-buffer-spillable": spill})
			}
		})
	}
}

// benchUpsertCommits writes pk-upsert-bench's changes (see
// BenchmarkKeyValueUpserts) in 10 commits and reports the rates.
func benchUpsertCommits(b *testing.B, total int64, options map[string]string) {
	const commits = 10
	ctx := context.Background()
	fio, err := storage.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tbl, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", lakecore.TableSpec{
		Fields:      []types.DataField{f("id", types.BigIntType()), f("a", types.BigIntType()), f("b", types.StringType()), f("c", types.DoubleType())},
		PrimaryKeys: []string{"id"},
		Options:     options,
	})
	if err != nil {
		b.Fatal(err)
	}
	committer := tbl.NewCommitter("bench")
	runtime.GC()
	start, cpu := time.Now(), cputime.Process()
	state := uint64(42) // PkUpsertBench.Lcg
	next := func(bound uint64) uint64 {
		state = state*6364136223846793005 + 1442695040888963407
		return (state >> 33) % bound
	}
	var nextKey uint64
	perCommit := max(1, total/commits)
	var w *write.KeyValueWriter
	var id int64
	for i := range total {
		if w == nil {
			if w, err = tbl.NewKeyValueWriter(ctx); err != nil {
				b.Fatal(err)
			}
		}
		var k uint64
		if nextKey > 0 && next(1_000_000) < 200_000 {
			k = next(nextKey)
		} else {
			k = nextKey
			nextKey++
		}
		if err := w.Write(ctx, kv.Insert, []any{int64(k), i * 7, "value-" + strconv.FormatInt(i, 10), float64(i) * 0.5}); err != nil {
			b.Fatal(err)
		}
		if (i+1)%perCommit == 0 || i == total-1 {
			msgs, err := w.Prepare(ctx)
			if err != nil {
				b.Fatal(err)
			}
			id++
			if _, err := committer.Commit(ctx, id, msgs); err != nil {
				b.Fatal(err)
			}
		}
	}
	elapsed, cpu := time.Since(start), cputime.Process()-cpu
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(total)/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(cpu.Seconds(), "cpu-s")
}
