package maintain_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// Small sizes so that bins are predictable: files are ~1 KB, the open cost
// 50 KB, so four files reach 2 x 100 KB; files of 70 KB and more are large.
var unawareOpts = map[string]string{
	"target-file-size":            "100 kb",
	"source.split.open-file-cost": "50 kb",
}

func unawareTable(t *testing.T, partitioned bool, extra map[string]string) *lakeTable {
	opts := map[string]string{}
	for k, v := range unawareOpts {
		opts[k] = v
	}
	for k, v := range extra {
		opts[k] = v
	}
	spec := lakecore.TableSpec{
		Fields:  []types.DataField{{Name: "id", Type: types.IntType()}, {Name: "p", Type: types.StringType()}, {Name: "pad", Type: types.StringType()}},
		Options: opts,
	}
	if partitioned {
		spec.PartitionKeys = []string{"p"}
	}
	return newLakeTable(t, spec)
}

// fileRows reads the rows of each live file, by file name, in file order.
func (l *lakeTable) fileRows() map[string][][]any {
	l.t.Helper()
	ctx := context.Background()
	plan, err := l.tb.Planner().Full(ctx, l.latest(), nil)
	if err != nil {
		l.t.Fatal(err)
	}
	r, err := l.tb.NewRead(nil)
	if err != nil {
		l.t.Fatal(err)
	}
	out := map[string][][]any{}
	for _, sp := range plan.Splits {
		for _, f := range sp.Files {
			one := sp
			one.Files = []manifest.DataFileMeta{f}
			out[f.FileName] = l.splitRows(r, one)
		}
	}
	return out
}

// splitRows reads the rows of one split, in read order, up to the first
// error of its iterator (io.EOF at its end).
func (l *lakeTable) splitRows(r *read.TableRead, sp scan.Split) [][]any {
	l.t.Helper()
	ctx := context.Background()
	it, err := r.Open(ctx, sp)
	if err != nil {
		l.t.Fatal(err)
	}
	defer it.Close()
	var out [][]any
	for {
		next, err := it.Next(ctx)
		rows := next.Rows
		if err != nil {
			return out
		}
		out = append(out, rows...)
	}
}

// compactDelta returns the DELETE and ADD entries of a COMPACT snapshot, in
// manifest order.
func (l *lakeTable) compactDelta(id int64) (before, after []manifest.Entry) {
	l.t.Helper()
	ctx := context.Background()
	s, err := l.tb.Snapshots().Get(ctx, id)
	if err != nil {
		l.t.Fatal(err)
	}
	if s.CommitKind != snapshot.CommitCompact {
		l.t.Fatalf("snapshot %d is %s", id, s.CommitKind)
	}
	metas, err := manifest.ReadFileMetas(ctx, l.fio, l.tb.Path(), s.DeltaManifestList)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, m := range metas {
		es, err := manifest.ReadEntries(ctx, l.fio, l.tb.Path(), m.FileName)
		if err != nil {
			l.t.Fatal(err)
		}
		for _, e := range es {
			if e.Kind == manifest.FileKindDelete {
				before = append(before, e)
			} else {
				after = append(after, e)
			}
		}
	}
	return before, after
}

func TestCompactUnawareBins(t *testing.T) {
	l := unawareTable(t, true, nil)
	// 11 small commits into p=a, 2 into p=b, one large file into p=a.
	for i := 0; i < 11; i++ {
		l.appendRows([]any{int32(i), "a", "x"}, []any{int32(100 + i), "a", "y"})
	}
	for i := 0; i < 2; i++ {
		l.appendRows([]any{int32(200 + i), "b", "z"})
	}
	var big [][]any
	for i := 0; i < 8000; i++ {
		big = append(big, []any{int32(1000 + i), "a", fmt.Sprintf("%08x%08x", i*2654435761, i*40503)})
	}
	// One file larger than 0.7 x target (70 KB; zstd packs the hex text to
	// about 10.8 bytes a row): written with a larger target.
	w, err := write.NewTableWriter(l.fio, l.tb.Path(), l.tb.Schema(), write.Options{TargetFileSize: 64 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range big {
		if err := w.Write(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.ident++
	if _, err := l.c.Commit(context.Background(), l.ident, msgs); err != nil {
		t.Fatal(err)
	}
	live := l.live()
	var small []manifest.Entry
	for _, e := range live {
		if string(e.Partition) == string(live[0].Partition) && e.File.RowCount < 1000 {
			small = append(small, e)
		} else if e.File.RowCount == 8000 && e.File.FileSize < 70<<10 {
			t.Fatalf("the large file has %d bytes; it must reach 70 KB", e.File.FileSize)
		}
	}
	if len(small) != 11 || len(live) != 14 {
		t.Fatalf("%d small files in p=a, %d files", len(small), len(live))
	}
	beforeRows := l.readAll(0)
	fileRows := l.fileRows()

	// Predicted: p=a's 11 small files sorted by (size, seq, name) give bins
	// of 4, 4 and 3 left (3 < compaction.min.file-num 5: stays); p=b has 2
	// files (stays); the large file stays.
	slices.SortStableFunc(small, func(a, b manifest.Entry) int {
		return cmp.Or(cmp.Compare(a.File.FileSize, b.File.FileSize), cmp.Compare(a.File.MinSequenceNumber, b.File.MinSequenceNumber),
			cmp.Compare(a.File.FileName, b.File.FileName))
	})
	wantInputs := names(small[:8]...)

	rep, err := maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tasks != 2 || rep.Rewritten.Files != 8 || rep.Written.Files != 2 || len(rep.Snapshots) != 1 {
		t.Fatalf("report: %s", rep)
	}
	delBefore, added := l.compactDelta(rep.Snapshots[0])
	if got := names(delBefore...); !slices.Equal(got, wantInputs) {
		t.Errorf("compacted %v, predicted %v", got, wantInputs)
	}
	// The new live set: old files minus inputs plus two outputs.
	var wantLive []string
	for _, e := range live {
		if !slices.Contains(wantInputs, e.File.FileName) {
			wantLive = append(wantLive, e.File.FileName)
		}
	}
	wantLive = append(wantLive, names(added...)...)
	if got := names(l.live()...); !slices.Equal(got, sorted(wantLive...)) {
		t.Errorf("live files %v, want %v", got, sorted(wantLive...))
	}
	// Same multiset of rows.
	if !slices.Equal(sortedKeys(beforeRows), sortedKeys(l.readAll(0))) {
		t.Error("rows changed")
	}
	// Each output holds its inputs' rows in read order (sequence order,
	// stable on manifest order), and has COMPACT metadata.
	after := l.fileRows()
	for i, out := range added {
		f := out.File
		if f.FileSource == nil || *f.FileSource != 1 || f.Level != 0 {
			t.Errorf("output %s: source %v level %d", f.FileName, f.FileSource, f.Level)
		}
		var want [][]any
		var minSeq int64
		task := delBefore[i*4 : i*4+4]
		for j, in := range task {
			if j == 0 {
				minSeq = in.File.MinSequenceNumber
			}
			want = append(want, fileRows[in.File.FileName]...)
		}
		if !slices.Equal(rowKeys(after[f.FileName]), rowKeys(want)) {
			t.Errorf("output %d rows %v, want %v", i, rowKeys(after[f.FileName]), rowKeys(want))
		}
		if f.MinSequenceNumber != minSeq || f.MaxSequenceNumber != minSeq+f.RowCount-1 || f.RowCount != 8 {
			t.Errorf("output %d: seq [%d, %d], %d rows; inputs start at %d", i, f.MinSequenceNumber, f.MaxSequenceNumber, f.RowCount, minSeq)
		}
	}
	var pa maintain.PartitionFiles
	for _, p := range rep.Partitions {
		if p.Partition == "p=a" {
			pa = p
		}
	}
	if pa.Before.Files != 12 || pa.After.Files != 6 {
		t.Errorf("p=a files %+v", pa)
	}
	if !strings.Contains(rep.String(), "p=a: 12 files") {
		t.Errorf("report:\n%s", rep)
	}

	// A second run: 3 small leftovers + 2 small outputs = 5 small files:
	// the first four by size make a bin, the fifth stays.
	rep, err = maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{})
	if err != nil || rep.Tasks != 1 || rep.Rewritten.Files != 4 {
		t.Fatalf("second run: %v %s", err, rep)
	}
	if !slices.Equal(sortedKeys(beforeRows), sortedKeys(l.readAll(0))) {
		t.Error("rows changed")
	}
}

func TestCompactDryRunAndNothingToDo(t *testing.T) {
	l := unawareTable(t, false, nil)
	for i := 0; i < 3; i++ {
		l.appendRows([]any{int32(i), "a", "x"})
	}
	// Three files: under 2 x target with their open cost and under
	// compaction.min.file-num.
	rep, err := maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{})
	if err != nil || rep.Tasks != 0 || len(rep.Snapshots) != 0 {
		t.Fatalf("3 small files: %v %s", err, rep)
	}
	l.appendRows([]any{int32(9), "a", "x"})
	before := l.latest()
	files := fixturetest.ListFiles(t, l.dir())
	rep, err = maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{DryRun: true})
	if err != nil || rep.Tasks != 1 || rep.Rewritten.Files != 4 || l.latest().ID != before.ID {
		t.Fatalf("dry run: %v %s", err, rep)
	}
	if d := diff(files, fixturetest.ListFiles(t, l.dir())); d != "" {
		t.Errorf("dry run wrote files:%s", d)
	}
	if !strings.Contains(rep.Summary(), "would rewrite 4 files") {
		t.Errorf("summary %q", rep.Summary())
	}
}

// bucketRows returns the rows of each bucket of the latest snapshot in read
// order.
func (l *lakeTable) bucketRows() map[int32][]string {
	l.t.Helper()
	ctx := context.Background()
	plan, err := l.tb.Planner().Full(ctx, l.latest(), nil)
	if err != nil {
		l.t.Fatal(err)
	}
	r, _ := l.tb.NewRead(nil)
	out := map[int32][]string{}
	for _, sp := range plan.Splits {
		out[sp.Bucket] = append(out[sp.Bucket], rowKeys(l.splitRows(r, sp))...)
	}
	return out
}

func fixedTable(t *testing.T) *lakeTable {
	l := newLakeTable(t, lakecore.TableSpec{
		Fields:  []types.DataField{{Name: "id", Type: types.IntType()}, {Name: "v", Type: types.StringType()}},
		Options: map[string]string{"bucket": "2", "bucket-key": "id", "target-file-size": "100 kb"},
	})
	// 12 commits, each 3 rows, ids spread over both buckets.
	for c := 0; c < 12; c++ {
		var rows [][]any
		for r := 0; r < 3; r++ {
			rows = append(rows, []any{int32(c*3 + r), fmt.Sprintf("c%d-r%d", c, r)})
		}
		l.appendRows(rows...)
	}
	return l
}

func TestCompactFixedBucketWindows(t *testing.T) {
	l := fixedTable(t)
	before := l.bucketRows()
	perBucket := map[int32][]manifest.DataFileMeta{}
	for _, e := range l.live() {
		perBucket[e.Bucket] = append(perBucket[e.Bucket], e.File)
	}
	rep, err := maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Each bucket got a file from most commits; windows of 5 consecutive
	// files (by sequence number): floor(n / 5) windows per bucket.
	wantTasks := 0
	for _, fs := range perBucket {
		wantTasks += len(fs) / 5
	}
	if rep.Tasks != wantTasks || wantTasks == 0 {
		t.Fatalf("tasks %d, want %d: %s", rep.Tasks, wantTasks, rep)
	}
	// Row order within each bucket is unchanged.
	after := l.bucketRows()
	for b, rows := range before {
		if !slices.Equal(rows, after[b]) {
			t.Errorf("bucket %d: order changed:\n%v\n%v", b, rows, after[b])
		}
	}
	// Outputs cover exactly their window's sequence range.
	del, add := l.compactDelta(rep.Snapshots[0])
	for i, a := range add {
		window := del[i*5 : i*5+5]
		if a.Bucket != window[0].Bucket || a.File.MinSequenceNumber != window[0].File.MinSequenceNumber ||
			a.File.MaxSequenceNumber != window[4].File.MaxSequenceNumber {
			t.Errorf("output %d: bucket %d seq [%d, %d]; window bucket %d [%d, %d]", i, a.Bucket, a.File.MinSequenceNumber,
				a.File.MaxSequenceNumber, window[0].Bucket, window[0].File.MinSequenceNumber, window[4].File.MaxSequenceNumber)
		}
		for j := 1; j < 5; j++ {
			if window[j].File.MinSequenceNumber != window[j-1].File.MaxSequenceNumber+1 {
				t.Errorf("window %d is not consecutive", i)
			}
		}
	}
	// New writers continue after the compacted sequence numbers.
	l.appendRows([]any{int32(1000), "new"})
	if got := l.bucketRows(); len(got[0])+len(got[1]) != 37 {
		t.Errorf("rows after append: %d", len(got[0])+len(got[1]))
	}
}

func TestCompactFixedBucketFull(t *testing.T) {
	l := fixedTable(t)
	before := l.bucketRows()
	rep, err := maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tasks != 2 || rep.Written.Files != 2 {
		t.Fatalf("full compaction: %s", rep)
	}
	if got := len(l.live()); got != 2 {
		t.Errorf("%d live files, want one per bucket", got)
	}
	after := l.bucketRows()
	for b, rows := range before {
		if !slices.Equal(rows, after[b]) {
			t.Errorf("bucket %d: order changed", b)
		}
	}
}

// TestCompactWithConcurrentWriter commits appends from another goroutine
// between the compaction's plan and its commit, and while it runs: none is
// lost, and the compaction succeeds because appends never touch its inputs.
func TestCompactWithConcurrentWriter(t *testing.T) {
	l := unawareTable(t, false, nil)
	for i := 0; i < 20; i++ {
		l.appendRows([]any{int32(i), "a", "x"})
	}
	base := l.readAll(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	var appended [][]any
	commits := make(chan struct{}, 1000)
	var wg sync.WaitGroup
	wg.Add(1)
	writerErr := make(chan error, 1)
	go func() {
		defer wg.Done()
		c := l.tb.NewCommitter("concurrent-writer")
		var ident int64
		for n := 0; ctx.Err() == nil; n++ {
			row := []any{int32(10000 + n), "b", "w"}
			if _, err := appendWith(ctx, l.tb, c, &ident, [][]any{row}); err != nil {
				if ctx.Err() == nil {
					writerErr <- err
				}
				return
			}
			mu.Lock()
			appended = append(appended, row)
			mu.Unlock()
			commits <- struct{}{}
		}
	}()
	// Let the writer commit three times after the plan, before the commit.
	waited := false
	rep, err := maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{
		Progress: func(e maintain.Event) {
			if !waited {
				waited = true
				for i := 0; i < 3; i++ {
					<-commits
				}
			}
		},
	})
	cancel()
	wg.Wait()
	select {
	case err := <-writerErr:
		t.Fatalf("writer: %v", err)
	default:
	}
	if err != nil {
		t.Fatalf("compact: %v", err)
	}
	if rep.Conflicts != 0 || rep.Tasks != 5 || len(rep.Snapshots) != 1 {
		t.Errorf("report %s", rep)
	}
	mu.Lock()
	want := append(append([][]any{}, base...), appended...)
	mu.Unlock()
	if len(appended) < 3 {
		t.Fatalf("only %d appends", len(appended))
	}
	got := l.readAll(0)
	if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
		t.Errorf("rows: got %d, want %d (%d appended)", len(got), len(want), len(appended))
	}
	// The compaction's snapshot came after at least three appends.
	s, err := l.tb.Snapshots().Get(context.Background(), rep.Snapshots[0])
	if err != nil || s.CommitKind != snapshot.CommitCompact || s.ID < 24 {
		t.Errorf("compaction snapshot %+v, %v", s, err)
	}
	// A streaming reader from the first snapshot sees every row once: it
	// skips the COMPACT snapshot.
	st := l.tb.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 1, Bounded: true})
	r, _ := l.tb.NewRead(nil)
	var streamed [][]any
	for {
		p, err := st.Next(context.Background())
		if errors.Is(err, scan.ErrEndOfScan) || p == nil {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range p.Splits {
			it, _ := r.Open(context.Background(), sp)
			for {
				next, err := it.Next(context.Background())
				rows := next.Rows
				if err != nil {
					break
				}
				streamed = append(streamed, rows...)
			}
			it.Close()
		}
	}
	if !slices.Equal(sortedKeys(streamed), sortedKeys(got)) {
		t.Errorf("stream read %d rows, table has %d", len(streamed), len(got))
	}
}

// TestCompactConflictRetries races two compactions over the same files:
// the later commit loses, deletes what it wrote and plans again.
func TestCompactConflictRetries(t *testing.T) {
	for _, attempts := range []int{1, 3} {
		t.Run(fmt.Sprint("attempts=", attempts), func(t *testing.T) {
			l := unawareTable(t, false, nil)
			for i := 0; i < 8; i++ {
				l.appendRows([]any{int32(i), "a", "x"})
			}
			rows := l.readAll(0)
			var other *maintain.Report
			done := false
			rep, err := maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{
				MaxAttempts: attempts,
				Progress: func(e maintain.Event) {
					if done {
						return
					}
					done = true
					var err error
					other, err = maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{})
					if err != nil || other.Tasks != 2 {
						t.Errorf("other compaction: %v %s", err, other)
					}
				},
			})
			if attempts == 1 {
				if !errors.Is(err, commit.ErrConflict) {
					t.Fatalf("err = %v, want ErrConflict", err)
				}
			} else if err != nil || rep.Conflicts != 1 || rep.Tasks != 0 {
				// The retry finds the files compacted already: nothing to do.
				t.Fatalf("retry: %v %s", err, rep)
			}
			if !slices.Equal(sortedKeys(rows), sortedKeys(l.readAll(0))) {
				t.Error("rows changed")
			}
			// The loser's files were deleted: every data file on disk is live.
			var live []string
			for _, e := range l.live() {
				live = append(live, e.File.FileName)
			}
			var orphans []string
			for _, p := range fixturetest.ListFiles(t, l.dir()) {
				if strings.HasSuffix(p, ".parquet") && !slices.Contains(live, path.Base(p)) {
					orphans = append(orphans, p)
				}
			}
			// The other compaction's inputs are still on disk (until
			// snapshot expiry); the loser's outputs are not.
			_, otherAdded := l.compactDelta(other.Snapshots[0])
			del, _ := l.compactDelta(other.Snapshots[0])
			if len(orphans) != len(del) || len(otherAdded) != 2 {
				t.Errorf("files on disk that are not live: %v (inputs of the winner: %d)", orphans, len(del))
			}
		})
	}
}

func TestCompactRefusesUnsupportedTables(t *testing.T) {
	l := unawareTable(t, false, map[string]string{"deletion-vectors.enabled": "true"})
	if _, err := maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{}); !errors.Is(err, maintain.ErrUnsupported) {
		t.Errorf("deletion vectors: %v", err)
	}
}

func TestCompactCommitterNeedsIdentifier(t *testing.T) {
	l := unawareTable(t, true, nil)
	l.appendRows([]any{int32(1), "a", "x"})
	_, err := maintain.Compact(context.Background(), l.fio, l.tb.Path(), maintain.CompactOptions{Committer: l.c})
	if !errors.Is(err, maintain.ErrInvalidOptions) {
		t.Errorf("compact: %v", err)
	}
	_, err = maintain.ExpirePartitions(context.Background(), l.fio, l.tb.Path(), maintain.ExpirePartitionsOptions{Committer: l.c, ExpirationTime: 1})
	if !errors.Is(err, maintain.ErrInvalidOptions) || !strings.Contains(err.Error(), "CommitIdentifier") {
		t.Errorf("expire partitions: %v", err)
	}
}
