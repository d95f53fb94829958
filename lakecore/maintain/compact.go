package maintain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// fullCompactMinFiles is BucketedAppendCompactManager.FULL_COMPACT_MIN_FILE.
const fullCompactMinFiles = 3

// CompactOptions configure Compact; a zero field takes the table option
// named in its comment.
type CompactOptions struct {
	// Filter restricts compaction to some partitions (nil = all), as the
	// compact action's partition argument.
	Filter *partition.Predicate
	// Full selects, for fixed-bucket tables, Java's full compaction
	// (BucketedAppendCompactManager.FullCompactTask, what a batch compact
	// job runs): from the first small file of each bucket on, every file is
	// rewritten if small files outnumber large ones and there are at least
	// three. Without it buckets get best-effort windows of consecutive
	// files (pickCompactBefore). Unaware-bucket tables always bin-pack.
	Full bool
	// TargetFileSize is target-file-size (default 256 MiB): files under 70%
	// of it are small, bins aim at twice it, outputs roll at it.
	TargetFileSize int64
	// MinFileNum is compaction.min.file-num (default 5).
	MinFileNum int
	// OpenFileCost is source.split.open-file-cost (default 4 MiB), added to
	// each file's size when bins are packed.
	OpenFileCost int64
	// FileNumLimit is compaction.file-num-limit (default 100000): at most
	// this many small files of an unaware-bucket table are planned per run.
	FileNumLimit int
	// MaxAttempts is how often to plan and rewrite again after losing a
	// commit conflict to a concurrent compaction or overwrite (default 3;
	// 1 means no retry).
	MaxAttempts int
	// DryRun plans the tasks and reports them without writing anything.
	DryRun bool

	// Committer commits the COMPACT snapshots; nil means a committer with
	// the table's options and CommitUser (a random one when empty).
	Committer  *commit.Committer
	CommitUser string
	// CommitIdentifier of the snapshots; 0 means math.MaxInt64, what
	// Java's batch jobs use, and is refused with a Committer given: a
	// writer's committer must pass the identifier of its current commit
	// (as Java's writers do), or FilterCommitted would later take every
	// identifier of that user for committed.
	CommitIdentifier int64

	// LookupCache, for primary-key tables whose compactions look keys up
	// (changelog-producer lookup, deletion vectors, first-row), is the
	// cache of the upper levels' files to use; nil means one for this call
	// only. A caller that compacts the same table again and again keeps one
	// (its bounds from write.LookupCacheOptionsFromSchema), so that each
	// run reads only the files the last runs did not; it closes it when
	// done. Compact never closes it.
	LookupCache *write.LookupCache

	Progress Progress
	Logger   *slog.Logger
}

// compactTask is one unit of compaction: files of one partition and bucket
// rewritten together (AppendCompactTask, a bucket's compaction window).
type compactTask struct {
	partition            []byte
	partitionValues      []any
	bucket, totalBuckets int32
	files                []manifest.DataFileMeta // in read order
}

// Compact rewrites small data files of the table at tablePath into larger
// ones and commits the result as a COMPACT snapshot, as Java's dedicated
// compact job does (apache/paimon 1.4):
//
//   - unaware-bucket tables (bucket = -1), AppendCompactCoordinator: per
//     partition, the files smaller than 0.7 x TargetFileSize, sorted by
//     size, are packed into bins; a bin is a task once it has more than one
//     file and the sum of size + OpenFileCost over its files reaches
//     2 x TargetFileSize, and what remains at the end is a task if it has
//     at least MinFileNum files;
//   - fixed-bucket tables, BucketedAppendCompactManager: per bucket, files
//     in sequence order; consecutive windows of MinFileNum files, the
//     window sliding forward while its size reaches 2 x TargetFileSize
//     (or the full compaction of CompactOptions.Full).
//
// Each task's files are read in sequence order (as a reader of the bucket
// sees them) and written to new files rolled at TargetFileSize, whose
// sequence numbers count on from the first input's (compactRewrite), with
// _FILE_SOURCE = COMPACT and level 0. All tasks are committed in one
// COMPACT snapshot with conflict detection: files appended meanwhile are
// never inputs (the plan reads one snapshot) and are untouched; if another
// compaction or overwrite removed an input meanwhile, the new files are
// deleted and Compact plans again from the latest snapshot, up to
// MaxAttempts times, then fails with an error wrapping commit.ErrConflict.
// Streaming readers skip COMPACT snapshots. The replaced files are deleted
// physically when snapshot expiry removes the snapshots that used them.
//
// Tables with primary keys, deletion vectors, row tracking or data
// evolution wrap ErrUnsupported.
func Compact(ctx context.Context, fio storage.FileIO, tablePath string, o CompactOptions) (*Report, error) {
	start := time.Now()
	rep := newReport(OpCompact, tablePath, o.DryRun)
	defer rep.finish(start)
	t, err := loadTable(ctx, fio, tablePath, o.Logger)
	if err != nil {
		return rep, fmt.Errorf("compact: %w", err)
	}
	rep.Table = t.path
	c, err := newCompactor(t, o, rep)
	if err != nil {
		return rep, fmt.Errorf("compact %s: %w", t.path, err)
	}
	if err := c.run(ctx); err != nil {
		return rep, fmt.Errorf("compact %s: %w", t.path, err)
	}
	return rep, rep.incomplete()
}

type compactor struct {
	t                         *table
	o                         CompactOptions
	rep                       *Report
	buckets                   int // -1 unaware
	target, small, openCost   int64
	minFiles, limit, attempts int
}

func newCompactor(t *table, o CompactOptions, rep *Report) (*compactor, error) {
	c := &compactor{t: t, o: o, rep: rep}
	opts := t.opts
	if len(t.schema.PrimaryKeys) > 0 {
		return nil, fmt.Errorf("%w: primary-key table", ErrUnsupported)
	}
	for _, f := range []func() (bool, error){opts.DeletionVectorsEnabled, opts.RowTrackingEnabled, opts.DataEvolutionEnabled} {
		on, err := f()
		if err != nil {
			return nil, err
		}
		if on {
			return nil, fmt.Errorf("%w: tables with deletion vectors, row tracking or data evolution", ErrUnsupported)
		}
	}
	var err error
	if c.buckets, err = opts.Bucket(); err != nil {
		return nil, err
	}
	if c.buckets == 0 || c.buckets < -1 {
		return nil, fmt.Errorf("%w: bucket = %d", ErrUnsupported, c.buckets)
	}
	if c.target, err = optionOr(o.TargetFileSize, opts.TargetFileSize); err != nil {
		return nil, err
	}
	if c.minFiles, err = optionOr(o.MinFileNum, opts.CompactionMinFileNum); err != nil {
		return nil, err
	}
	if c.openCost, err = optionOr(o.OpenFileCost, opts.SourceSplitOpenFileCost); err != nil {
		return nil, err
	}
	if c.limit, err = optionOr(o.FileNumLimit, opts.CompactionFileNumLimit); err != nil {
		return nil, err
	}
	if o.Committer != nil && o.CommitIdentifier == 0 {
		return nil, fmt.Errorf("%w: a Committer needs its CommitIdentifier", ErrInvalidOptions)
	}
	if c.attempts = o.MaxAttempts; c.attempts == 0 {
		c.attempts = 3
	}
	if c.target <= 0 || c.minFiles < 1 || c.openCost < 0 || c.limit < 1 || c.attempts < 1 {
		return nil, fmt.Errorf("%w: target-file-size %d, compaction.min.file-num %d, open-file-cost %d, file-num-limit %d, attempts %d",
			ErrInvalidOptions, c.target, c.minFiles, c.openCost, c.limit, c.attempts)
	}
	c.small = c.target / 10 * 7 // CoreOptions.compactionFileSize
	return c, nil
}

func (c *compactor) run(ctx context.Context) error {
	committer := c.o.Committer
	if committer == nil && !c.o.DryRun {
		user := c.o.CommitUser
		if user == "" {
			user = "compact-" + uuid.NewString()
		}
		committer = commit.New(c.t.fio, c.t.path, commit.OptionsFromSchema(c.t.schema, user))
	}
	ident := c.o.CommitIdentifier
	if ident == 0 {
		ident = math.MaxInt64
	}
	var lastErr error
	for attempt := 1; attempt <= c.attempts; attempt++ {
		snap, err := c.t.snapshots.Latest(ctx)
		if err != nil || snap == nil {
			return err
		}
		live, err := scan.NewPlanner(c.t.fio, c.t.path).LiveEntries(ctx, snap, c.o.Filter)
		if err != nil {
			return err
		}
		tasks, err := c.plan(live)
		if err != nil {
			return err
		}
		before := c.partitionCounts(live)
		if len(tasks) == 0 {
			c.rep.Partitions = before.list()
			return nil
		}
		if c.o.DryRun {
			for _, tk := range tasks {
				pt := PlannedTask{Partition: c.t.partitionName(tk.partition), Bucket: tk.bucket}
				for _, f := range tk.files {
					c.rep.Rewritten.add(f.FileSize)
					before.remove(pt.Partition, f.FileSize)
					pt.Files = append(pt.Files, f.FileName)
					pt.In.add(f.FileSize)
					pt.Rows += f.RowCount
				}
				// The rewrite rolls a new file at target-file-size; the
				// sizes of the inputs bound the count.
				pt.ExpectedOut = max(1, int((pt.In.Bytes+c.target-1)/c.target))
				c.rep.Planned = append(c.rep.Planned, pt)
				// Written and the partitions' after-counts are estimates
				// in a dry run: the expected files, as large as the inputs.
				for i := range pt.ExpectedOut {
					size := pt.In.Bytes / int64(pt.ExpectedOut)
					if i == pt.ExpectedOut-1 {
						size = pt.In.Bytes - size*int64(pt.ExpectedOut-1)
					}
					c.rep.Written.add(size)
					before.addFile(pt.Partition, size)
				}
			}
			c.rep.Tasks = len(tasks)
			c.rep.Partitions = before.list()
			return nil
		}
		msgs, written, err := c.rewriteAll(ctx, tasks)
		if err != nil {
			c.deleteOutputs(ctx, written)
			return err
		}
		s, err := committer.Compact(ctx, ident, msgs)
		if err != nil {
			if errors.Is(err, commit.ErrCommitAmbiguous) {
				return err // the new files may be committed: keep them
			}
			c.deleteOutputs(ctx, written)
			if errors.Is(err, commit.ErrConflict) {
				c.rep.Conflicts++
				lastErr = err
				c.t.log.Info("compaction lost a conflict; planning again", "table", c.t.path, "attempt", attempt, "error", err)
				continue
			}
			return err
		}
		if s != nil {
			c.rep.Snapshots = append(c.rep.Snapshots, s.ID)
		}
		c.rep.Tasks += len(tasks)
		for _, m := range msgs {
			name := c.t.partitionName(m.Partition)
			for _, f := range m.CompactBefore {
				c.rep.Rewritten.add(f.FileSize)
				before.remove(name, f.FileSize)
			}
			for _, f := range m.CompactAfter {
				c.rep.Written.add(f.FileSize)
				before.addFile(name, f.FileSize)
			}
		}
		c.rep.Partitions = before.list()
		return nil
	}
	return lastErr
}

// partitionCounts tracks per-partition files before and after.
type partitionCounts map[string]*PartitionFiles

func (c *compactor) partitionCounts(live []manifest.Entry) partitionCounts {
	pc := partitionCounts{}
	for i := range live {
		name := c.t.partitionName(live[i].Partition)
		p := pc[name]
		if p == nil {
			p = &PartitionFiles{Partition: name}
			pc[name] = p
		}
		p.Before.add(live[i].File.FileSize)
		p.After.add(live[i].File.FileSize)
	}
	return pc
}

func (pc partitionCounts) remove(name string, size int64) {
	if p := pc[name]; p != nil {
		p.After.Files--
		p.After.Bytes -= size
	}
}

func (pc partitionCounts) addFile(name string, size int64) {
	if p := pc[name]; p != nil {
		p.After.add(size)
	}
}

func (pc partitionCounts) list() []PartitionFiles {
	out := make([]PartitionFiles, 0, len(pc))
	for _, p := range pc {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// plan groups the live files by partition and bucket and picks the tasks.
func (c *compactor) plan(live []manifest.Entry) ([]compactTask, error) {
	type group struct {
		task  compactTask
		files []manifest.DataFileMeta
	}
	var order []*group
	groups := map[string]*group{}
	for i := range live {
		e := &live[i]
		if c.buckets > 0 && int(e.TotalBuckets) != c.buckets {
			continue // written before a rescale; Java refuses to compact it too
		}
		key := fmt.Sprintf("%x/%d", e.Partition, e.Bucket)
		g := groups[key]
		if g == nil {
			vals, err := c.t.decodePartition(e.Partition)
			if err != nil {
				return nil, err
			}
			g = &group{task: compactTask{partition: e.Partition, partitionValues: vals, bucket: e.Bucket, totalBuckets: e.TotalBuckets}}
			groups[key] = g
			order = append(order, g)
		}
		g.files = append(g.files, e.File)
	}
	var tasks []compactTask
	budget := c.limit
	for _, g := range order {
		// Sequence order, stable on manifest order: how the bucket reads.
		slices.SortStableFunc(g.files, func(a, b manifest.DataFileMeta) int {
			return cmp.Compare(a.MinSequenceNumber, b.MinSequenceNumber)
		})
		var bins [][]manifest.DataFileMeta
		if c.buckets == -1 {
			var small []manifest.DataFileMeta
			for _, f := range g.files {
				if f.FileSize < c.small && budget > 0 {
					small = append(small, f)
					budget--
				}
			}
			bins = packBins(small, c.target, c.openCost, c.minFiles)
			for _, b := range bins {
				// Read in sequence order, as the bucket is read.
				slices.SortStableFunc(b, func(x, y manifest.DataFileMeta) int {
					return cmp.Compare(seqRank(g.files, x), seqRank(g.files, y))
				})
			}
		} else if c.o.Full {
			if b := fullCompaction(g.files, c.small); b != nil {
				bins = append(bins, b)
			}
		} else {
			bins = slidingWindows(g.files, c.target, c.minFiles)
		}
		for _, b := range bins {
			t := g.task
			t.files = b
			tasks = append(tasks, t)
		}
	}
	return tasks, nil
}

// seqRank is the position of f in files (sorted for reading).
func seqRank(files []manifest.DataFileMeta, f manifest.DataFileMeta) int {
	for i := range files {
		if files[i].FileName == f.FileName {
			return i
		}
	}
	return len(files)
}

// packBins is AppendCompactCoordinator.SubCoordinator.pack: files sorted by
// size (ties by sequence number, then name, for a deterministic plan).
func packBins(files []manifest.DataFileMeta, target, openCost int64, minFiles int) [][]manifest.DataFileMeta {
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b manifest.DataFileMeta) int {
		return cmp.Or(cmp.Compare(a.FileSize, b.FileSize), cmp.Compare(a.MinSequenceNumber, b.MinSequenceNumber), cmp.Compare(a.FileName, b.FileName))
	})
	var out [][]manifest.DataFileMeta
	var bin []manifest.DataFileMeta
	var total int64
	for _, f := range files {
		bin = append(bin, f)
		total += f.FileSize + openCost
		if len(bin) > 1 && total >= 2*target { // FileBin.enoughContent
			out = append(out, bin)
			bin, total = nil, 0
		}
	}
	if len(bin) >= minFiles { // FileBin.enoughInputFiles
		out = append(out, bin)
	}
	return out
}

// slidingWindows applies BucketedAppendCompactManager.pickCompactBefore
// until it finds nothing more: a window of consecutive files (in sequence
// order) is picked once it has minFiles files; while its size reaches
// 2 x target it slides forward by dropping its first file.
func slidingWindows(files []manifest.DataFileMeta, target int64, minFiles int) [][]manifest.DataFileMeta {
	var out [][]manifest.DataFileMeta
	queue := files
	for len(queue) > 0 {
		var window []manifest.DataFileMeta
		var total int64
		picked := false
		for len(queue) > 0 {
			f := queue[0]
			queue = queue[1:]
			window = append(window, f)
			total += f.FileSize
			if len(window) >= minFiles {
				out = append(out, slices.Clone(window))
				picked = true
				break
			} else if total >= 2*target {
				total -= window[0].FileSize
				window = window[1:]
			}
		}
		if !picked {
			break
		}
	}
	return out
}

// fullCompaction is BucketedAppendCompactManager.FullCompactTask without
// deletion vectors: the leading large files are kept; the rest is
// rewritten if small files outnumber large ones and there are at least
// three files.
func fullCompaction(files []manifest.DataFileMeta, small int64) []manifest.DataFileMeta {
	if len(files) < fullCompactMinFiles {
		return nil
	}
	i := 0
	for i < len(files) && files[i].FileSize >= small {
		i++
	}
	rest := files[i:]
	nSmall := 0
	for _, f := range rest {
		if f.FileSize < small {
			nSmall++
		}
	}
	if nSmall > len(rest)-nSmall && len(rest) >= fullCompactMinFiles {
		return slices.Clone(rest)
	}
	return nil
}

// outputFile is a file written by a task, for deletion after a failure.
type outputFile struct {
	partition []byte
	bucket    int32
	meta      manifest.DataFileMeta
}

// rewriteAll rewrites every task, returning one commit message per task
// and the files written (also on error, for cleanup).
func (c *compactor) rewriteAll(ctx context.Context, tasks []compactTask) ([]commit.Message, []outputFile, error) {
	reader, err := read.NewTableRead(c.t.fio, c.t.path, c.t.schema, nil)
	if err != nil {
		return nil, nil, err
	}
	wo := write.OptionsFromSchema(c.t.schema)
	wo.TargetFileSize = c.target
	var msgs []commit.Message
	var written []outputFile
	for i, tk := range tasks {
		after, err := c.rewrite(ctx, reader, wo, tk)
		for _, f := range after {
			written = append(written, outputFile{partition: tk.partition, bucket: tk.bucket, meta: f})
		}
		if err != nil {
			return nil, written, fmt.Errorf("compaction task %d (partition %s, bucket %d): %w", i, c.t.partitionName(tk.partition), tk.bucket, err)
		}
		msgs = append(msgs, commit.Message{Partition: tk.partition, Bucket: tk.bucket, TotalBuckets: tk.totalBuckets,
			CompactBefore: tk.files, CompactAfter: after})
		if c.o.Progress != nil {
			c.o.Progress(Event{Operation: OpCompact, Phase: "rewrite", Done: i + 1, Total: len(tasks)})
		}
	}
	return msgs, written, nil
}

// rewrite reads a task's files in order and writes them anew
// (BaseAppendFileStoreWrite.compactRewrite).
func (c *compactor) rewrite(ctx context.Context, reader *read.TableRead, wo write.Options, tk compactTask) ([]manifest.DataFileMeta, error) {
	w, err := write.NewTableWriter(c.t.fio, c.t.path, c.t.schema, wo, nil)
	if err != nil {
		return nil, err
	}
	it, err := reader.Open(ctx, scan.Split{Partition: tk.partition, PartitionValues: tk.partitionValues,
		Bucket: tk.bucket, TotalBuckets: tk.totalBuckets, Files: tk.files})
	if err != nil {
		return nil, err
	}
	var rows int64
	for {
		next, err := it.Next(ctx)
		batch := next.Rows
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			for _, row := range batch {
				if err = w.Write(ctx, row); err != nil {
					break
				}
			}
			rows += int64(len(batch))
		}
		if err != nil {
			_ = it.Close()
			_ = w.Abort(ctx)
			return nil, err
		}
	}
	if err := it.Close(); err != nil {
		_ = w.Abort(ctx)
		return nil, err
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		_ = w.Abort(ctx)
		return nil, err
	}
	var after []manifest.DataFileMeta
	for _, m := range msgs {
		after = append(after, m.NewFiles...)
		if string(m.Partition) != string(tk.partition) || m.Bucket != tk.bucket {
			return after, fmt.Errorf("rows of partition %x bucket %d were routed to partition %x bucket %d; the table's partitioning or bucketing changed",
				tk.partition, tk.bucket, m.Partition, m.Bucket)
		}
	}
	var in int64
	for _, f := range tk.files {
		in += f.RowCount
	}
	var out int64
	seq := tk.files[0].MinSequenceNumber
	compactSource := int32(1)
	for i := range after {
		f := &after[i]
		out += f.RowCount
		f.MinSequenceNumber, f.MaxSequenceNumber = seq, seq+f.RowCount-1
		seq += f.RowCount
		f.FileSource = &compactSource
		f.Level = 0
	}
	if out != rows {
		return after, fmt.Errorf("wrote %d rows of the %d read", out, rows)
	}
	if rows != in && c.deletionFree(tk) {
		return after, fmt.Errorf("read %d rows, the manifests say %d", rows, in)
	}
	return after, nil
}

// deletionFree reports whether no input has deleted rows recorded.
func (c *compactor) deletionFree(tk compactTask) bool {
	for _, f := range tk.files {
		if f.DeleteRowCount != nil && *f.DeleteRowCount > 0 {
			return false
		}
	}
	return true
}

// deleteOutputs removes files written by a compaction that was not
// committed.
func (c *compactor) deleteOutputs(ctx context.Context, files []outputFile) {
	var refs []fileRef
	for _, f := range files {
		p, extras, ok, err := c.t.dataFilePaths(f.partition, f.bucket, &f.meta)
		if err != nil || !ok {
			continue
		}
		refs = append(refs, fileRef{path: p, size: f.meta.FileSize, data: true})
		for _, x := range extras {
			refs = append(refs, fileRef{path: x, size: -1, data: true})
		}
	}
	scratch := newReport(OpCompact, c.t.path, false)
	if err := newDeleter(c.t.fio, scratch, false, nil).delete(context.WithoutCancel(ctx), "delete uncommitted files", refs); err != nil || scratch.FailedDeletes > 0 {
		c.t.log.Warn("could not delete the files of an uncommitted compaction; they are orphans", "table", c.t.path, "first", scratch.FirstFailure)
		c.rep.failed(scratch.FirstFailure, fmt.Errorf("%d files left", scratch.FailedDeletes))
	}
}
