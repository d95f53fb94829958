package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/internal/paymentevent"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The commit-history and planning measurements build table history with
// the real committer but without writing data files: each commit carries
// the metadata of files (names, sizes, row counts, value stats of the 8
// columns as the writer records them) that are never read. Commit and
// planning cost depend only on that metadata.

// synthTable commits synthetic files to bench.events.
type synthTable struct {
	tbl        *lakecore.Table
	c          *commit.Committer
	partTypes  []types.DataType
	valueTypes []types.DataType
	stats      manifest.SimpleStats
	parts      map[string][]byte
	next       int64 // next commit identifier
	seq        int64
}

func newSynthTable(ctx context.Context, warehouse string) (*synthTable, error) {
	tbl, err := createBenchTable(ctx, warehouse, nil, nil)
	if err != nil {
		return nil, err
	}
	fields := paymentevent.Fields()
	st := &synthTable{tbl: tbl, c: tbl.NewCommitter("bench"), partTypes: []types.DataType{types.StringType()}, parts: map[string][]byte{}, next: 1}
	for _, f := range fields {
		st.valueTypes = append(st.valueTypes, f.Type)
	}
	lo, hi := anyRow(pqRowAt(1, 4)), anyRow(pqRowAt(999, 4))
	zero := int64(0)
	nulls := make([]*int64, len(fields))
	for i := range nulls {
		nulls[i] = &zero
	}
	if st.stats, err = manifest.NewStats(st.valueTypes, lo, hi, nulls); err != nil {
		return nil, err
	}
	return st, nil
}

func (st *synthTable) partition(dt string) ([]byte, error) {
	if p, ok := st.parts[dt]; ok {
		return p, nil
	}
	p, err := binrow.Serialize(st.partTypes, []any{dt})
	if err != nil {
		return nil, err
	}
	st.parts[dt] = p
	return p, nil
}

// commit commits one snapshot adding files files of rows rows each,
// partition i of the commit's files being dt(i).
func (st *synthTable) commit(ctx context.Context, files int, rows int64, dt func(i int) string) (time.Duration, error) {
	created := time.Now().UnixMilli()
	zero := int64(0)
	src := int32(0)
	byPart := map[string]*commit.Message{}
	var order []string
	for i := range files {
		d := dt(i)
		m, ok := byPart[d]
		if !ok {
			p, err := st.partition(d)
			if err != nil {
				return 0, err
			}
			m = &commit.Message{Partition: p, TotalBuckets: -1}
			byPart[d] = m
			order = append(order, d)
		}
		m.NewFiles = append(m.NewFiles, manifest.DataFileMeta{
			FileName: "data-" + uuid.NewString() + "-0.parquet", FileSize: 2000 + 40*rows, RowCount: rows,
			MinKey: binrow.EmptyRow, MaxKey: binrow.EmptyRow, KeyStats: manifest.EmptyStats(), ValueStats: st.stats,
			MinSequenceNumber: st.seq, MaxSequenceNumber: st.seq + rows - 1, SchemaID: st.tbl.Schema().ID,
			ExtraFiles: []string{}, CreationTimeMillis: &created, DeleteRowCount: &zero, FileSource: &src,
		})
		st.seq += rows
	}
	msgs := make([]commit.Message, 0, len(order))
	for _, d := range order {
		msgs = append(msgs, *byPart[d])
	}
	start := time.Now()
	_, err := st.c.Commit(ctx, st.next, msgs)
	st.next++
	return time.Since(start), err
}

// measureCommitHistory compares commit latency on a table with 10
// snapshots and on one with 10,000 (300 in a quick run).
func measureCommitHistory(ctx context.Context, e *Env) (*Section, error) {
	history := e.pick(10_000, 300)
	const samples = 50 // commits per table per run
	dt := func(n int64) func(int) string {
		return func(int) string { return fmt.Sprintf("d%03d", n%4) }
	}
	long, err := newSynthTable(ctx, e.Dir("history-long"))
	if err != nil {
		return nil, err
	}
	buildStart := time.Now()
	for long.next <= int64(history) {
		if _, err := long.commit(ctx, 1, 100, dt(long.next)); err != nil {
			return nil, fmt.Errorf("build history, commit %d: %w", long.next, err)
		}
		if long.next%1000 == 0 {
			e.Logf("   history: %d snapshots", long.next)
		}
	}
	build := time.Since(buildStart)
	var p50s, p95s, p50l, p95l, r50, r95 Sample
	for i := range e.Config.runs() {
		short, err := newSynthTable(ctx, e.Dir(fmt.Sprintf("history-short-%d", i)))
		if err != nil {
			return nil, err
		}
		for short.next <= 10 {
			if _, err := short.commit(ctx, 1, 100, dt(short.next)); err != nil {
				return nil, err
			}
		}
		var ds, dl []time.Duration
		for j := range samples {
			// Alternate which table commits first, so both see the same load.
			tables := []*synthTable{short, long}
			if j%2 == 1 {
				tables[0], tables[1] = long, short
			}
			for _, t := range tables {
				d, err := t.commit(ctx, 1, 100, dt(t.next))
				if err != nil {
					return nil, err
				}
				if t == short {
					ds = append(ds, d)
				} else {
					dl = append(dl, d)
				}
			}
		}
		p50s = append(p50s, ms(percentile(ds, 50)))
		p95s = append(p95s, ms(percentile(ds, 95)))
		p50l = append(p50l, ms(percentile(dl, 50)))
		p95l = append(p95l, ms(percentile(dl, 95)))
		r50 = append(r50, p50l[i]/p50s[i])
		r95 = append(r95, p95l[i]/p95s[i])
		e.Logf("   run %d: at 10 p50 %.1f p95 %.1f ms; at %d p50 %.1f p95 %.1f ms", i+1, p50s[i], p95s[i], history, p50l[i], p95l[i])
	}
	snap, err := long.tbl.Snapshots().Latest(ctx)
	if err != nil {
		return nil, err
	}
	base, err := manifest.ReadFileMetas(ctx, long.tbl.FileIO(), long.tbl.Path(), snap.BaseManifestList)
	if err != nil {
		return nil, err
	}
	s := &Section{Title: "Commit cost over history"}
	s.Intro = fmt.Sprintf(`Latency of `+"`commit.Committer.Commit`"+` (what the output's group committer calls once per snapshot) adding one file of 100 rows, with the 8 columns' value stats, to a 4-partition table on the local disk: on a fresh table at snapshot 10 and on a table with %s snapshots (and as many live files). Each run alternates %d commits on each table (%d ms per commit on average to build the history: %v). Default table options: manifest.merge-min-count 30, manifest.target-file-size 8 MiB, zstd manifests; after the runs the long table's base manifest list holds %d manifests.`,
		fInt(float64(history)), samples, build.Milliseconds()/int64(history), build.Round(time.Second), len(base))
	s.Tables = []Table{{
		Header: []string{"", "p50 ms", "p95 ms"},
		Rows: [][]string{
			{"at snapshot 10", p50s.Fmt(fMs), p95s.Fmt(fMs)},
			{fmt.Sprintf("at snapshot %s", fInt(float64(history))), p50l.Fmt(fMs), p95l.Fmt(fMs)},
			{"ratio (same run)", r50.Fmt(fRatio), r95.Fmt(fRatio)},
		},
	}}
	s.figure("ratio_p95", r95.Median())
	s.figure("ratio_p50", r50.Median())
	s.figure("history_snapshots", float64(history))
	return s, nil
}

// measurePlanning times a full plan of a table with 100,000 live files
// (5,000 in a quick run).
func measurePlanning(ctx context.Context, e *Env) (*Section, error) {
	commits := e.pick(1000, 50)
	const perCommit = 100
	const partitions = 100
	st, err := newSynthTable(ctx, e.Dir("planning"))
	if err != nil {
		return nil, err
	}
	buildStart := time.Now()
	for st.next <= int64(commits) {
		if _, err := st.commit(ctx, perCommit, 1000, func(i int) string { return fmt.Sprintf("d%03d", i%partitions) }); err != nil {
			return nil, err
		}
	}
	build := time.Since(buildStart)
	files := commits * perCommit
	snap, err := st.tbl.Snapshots().Latest(ctx)
	if err != nil {
		return nil, err
	}
	metas, err := manifestCount(ctx, st)
	if err != nil {
		return nil, err
	}
	filter, err := partition.In(st.tbl.Schema().PartitionFields(), map[string][]any{"dt": {"d007"}})
	if err != nil {
		return nil, err
	}
	var full, fullCPU, one, oneCPU Sample
	for i := range e.Config.runs() {
		filters := []*partition.Predicate{nil, filter}
		for _, fi := range rotate(len(filters), i) {
			f := filters[fi]
			var n int
			t, err := measure(func() error {
				plan, err := scan.NewPlanner(st.tbl.FileIO(), st.tbl.Path()).Full(ctx, snap, f)
				if err != nil {
					return err
				}
				for _, sp := range plan.Splits {
					n += len(sp.Files)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			want := files
			if f != nil {
				want = files / partitions
			}
			if n != want {
				return nil, fmt.Errorf("plan has %d files, want %d", n, want)
			}
			if f == nil {
				full, fullCPU = append(full, ms(t.Wall)), append(fullCPU, ms(t.CPU))
			} else {
				one, oneCPU = append(one, ms(t.Wall)), append(oneCPU, ms(t.CPU))
			}
		}
		e.Logf("   run %d: full %.0f ms, one partition %.0f ms", i+1, full[i], one[i])
	}
	s := &Section{Title: "Planning"}
	s.Intro = fmt.Sprintf(`A full scan plan (`+"`scan.Planner.Full`"+`: manifest list, manifests, ADD/DELETE merge, splits) of a table with %s live files in %d partitions on the local disk, built by %d real commits of %d files each (%v), which left %d manifests in the latest snapshot's lists. A fresh planner each time (no manifest cache). Also the plan of one partition: every commit touched all partitions, so every manifest's partition stats span them all and no manifest can be skipped; the filter only drops entries.`,
		fInt(float64(files)), partitions, commits, perCommit, build.Round(time.Second), metas)
	s.Tables = []Table{{
		Header: []string{"Plan", "wall ms", "CPU ms"},
		Rows: [][]string{
			{fmt.Sprintf("full, %s files", fInt(float64(files))), full.Fmt(fMs), fullCPU.Fmt(fMs)},
			{fmt.Sprintf("one partition, %s files", fInt(float64(files/partitions))), one.Fmt(fMs), oneCPU.Fmt(fMs)},
		},
	}}
	s.figure("plan_ms", full.Median())
	s.figure("plan_cpu_ms", fullCPU.Median())
	s.figure("plan_files", float64(files))
	s.profile("plan_ms", func(int) error {
		_, err := scan.NewPlanner(st.tbl.FileIO(), st.tbl.Path()).Full(ctx, snap, nil)
		return err
	})
	return s, nil
}

func manifestCount(ctx context.Context, st *synthTable) (int, error) {
	snap, err := st.tbl.Snapshots().Latest(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range []string{snap.BaseManifestList, snap.DeltaManifestList} {
		m, err := manifest.ReadFileMetas(ctx, st.tbl.FileIO(), st.tbl.Path(), l)
		if err != nil {
			return 0, err
		}
		n += len(m)
	}
	return n, nil
}
