package lakecore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/lakecore/write"
)

// compactKeyValue compacts every (partition, bucket) of a primary-key
// table that o.Filter allows, as a dedicated compaction job does: with
// o.Full each bucket's runs are merged into the top level (Java's full
// compaction), otherwise each bucket gets the universal compaction its
// sorted runs call for. The results are committed as one COMPACT
// snapshot; a conflict with another writer's compaction of the same files
// is retried from a fresh plan up to o.MaxAttempts times. With o.DryRun
// nothing is written and the report lists, per bucket, the compaction
// that would run (planKeyValueCompaction).
//
// Lookup compactions use o.LookupCache, or a cache of the call's own that
// its attempts share: the upper levels a run reads stay for the next run
// only in a cache the caller keeps.
func (t *Table) compactKeyValue(ctx context.Context, o maintain.CompactOptions) (*maintain.Report, error) {
	if o.TargetFileSize != 0 || o.MinFileNum != 0 || o.OpenFileCost != 0 || o.FileNumLimit != 0 {
		// Silently ignored overrides would plan another compaction than
		// the user asked for.
		return nil, fmt.Errorf("compact %s.%s: %w: the target-file-size, min-file-num, open-file-cost and file-num-limit overrides are for append tables; "+
			"a primary-key table compacts with its own options (target-file-size, num-sorted-run.compaction-trigger, compaction.max-size-amplification-percent, compaction.size-ratio): alter the table to change them",
			t.db, t.name, maintain.ErrInvalidOptions)
	}
	start := time.Now()
	lookups := o.LookupCache
	if lookups == nil && !o.DryRun {
		lo, err := write.LookupCacheOptionsFromSchema(t.Schema())
		if err != nil {
			return nil, fmt.Errorf("compact %s.%s: %w", t.db, t.name, err)
		}
		lookups = write.NewLookupCache(lo)
		defer lookups.Close()
	}
	rep := &maintain.Report{Operation: maintain.OpCompact, Table: t.path, DryRun: o.DryRun}
	attempts := o.MaxAttempts
	if attempts <= 0 {
		attempts = 3
	}
	committer := o.Committer
	if committer == nil {
		committer = t.NewCommitter(o.CommitUser)
	}
	identifier := o.CommitIdentifier
	if identifier == 0 {
		identifier = math.MaxInt64 // what Java's batch jobs use
	}
	for attempt := 1; ; attempt++ {
		snap, err := t.snapshots.Latest(ctx)
		if err != nil || snap == nil {
			rep.Duration = time.Since(start)
			return rep, err
		}
		live, err := t.planner.LiveEntries(ctx, snap, o.Filter)
		if err != nil {
			return nil, err
		}
		var order []bucketKey
		seen := map[bucketKey]bool{}
		for _, e := range live {
			k := bucketKey{string(e.Partition), e.Bucket}
			if e.Bucket >= 0 && !seen[k] {
				seen[k] = true
				order = append(order, k)
			}
		}
		w, err := t.NewKeyValueWriter(ctx)
		if err != nil {
			return nil, err
		}
		if o.DryRun {
			err := t.planKeyValueCompaction(ctx, w, order, o.Full, rep)
			_ = w.Close()
			rep.Duration = time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("compact %s.%s: %w", t.db, t.name, err)
			}
			return rep, nil
		}
		w.SetLookupCache(lookups) // set whenever not a dry run
		var msgs []commit.Message
		for _, k := range order {
			m, err := w.CompactBucket(ctx, []byte(k.partition), k.bucket, o.Full)
			if err != nil {
				_ = w.Abort(ctx)
				_ = w.Close()
				return nil, fmt.Errorf("compact %s.%s: %w", t.db, t.name, err)
			}
			if m != nil {
				msgs = append(msgs, *m)
			}
		}
		_ = w.Close() // leaves lookups open: the call's or the caller's
		if len(msgs) == 0 {
			rep.Duration = time.Since(start)
			return rep, nil
		}
		s, err := committer.Compact(ctx, identifier, msgs)
		if errors.Is(err, commit.ErrConflict) && attempt < attempts {
			rep.Conflicts++
			deleteOutputs(ctx, t, msgs)
			continue
		}
		if err != nil {
			if errors.Is(err, commit.ErrConflict) {
				deleteOutputs(ctx, t, msgs)
			}
			return nil, fmt.Errorf("compact %s.%s: %w", t.db, t.name, err)
		}
		for _, m := range msgs {
			rep.Tasks++
			for _, f := range m.CompactBefore {
				rep.Rewritten.Files++
				rep.Rewritten.Bytes += f.FileSize
			}
			for _, f := range m.CompactAfter {
				rep.Written.Files++
				rep.Written.Bytes += f.FileSize
			}
		}
		rep.Snapshots = append(rep.Snapshots, s.ID)
		rep.Duration = time.Since(start)
		return rep, nil
	}
}

// bucketKey names one bucket of a partition.
type bucketKey struct {
	partition string
	bucket    int32
}

// planKeyValueCompaction is compactKeyValue's dry run: for each bucket of
// order, in order, the compaction CompactBucket would run
// (write.KeyValueWriter.PlanCompactBucket, the same plan), added to rep as
// a planned task with its inputs. Written and ExpectedOut are estimates:
// the merged inputs rolled at target-file-size, plus the files moved up.
func (t *Table) planKeyValueCompaction(ctx context.Context, w *write.KeyValueWriter, order []bucketKey, full bool, rep *maintain.Report) error {
	sch := t.Schema()
	po, err := sch.Opts().PartitionOptions()
	if err != nil {
		return err
	}
	namer := binrow.NewPartitionNamer(sch.PartitionFields(), po)
	target := w.TargetFileSize()
	for _, k := range order {
		plan, err := w.PlanCompactBucket(ctx, []byte(k.partition), k.bucket, full)
		if err != nil {
			return err
		}
		if plan == nil {
			continue
		}
		p, err := namer.Of([]byte(k.partition))
		if err != nil {
			return err
		}
		pt := maintain.PlannedTask{Partition: p.Name, Bucket: k.bucket, OutputLevel: plan.OutputLevel, Inputs: []maintain.PlannedFile{}}
		for _, st := range plan.Steps {
			var merged int64
			for _, f := range st.Files {
				pt.Files = append(pt.Files, f.FileName)
				pt.Inputs = append(pt.Inputs, maintain.PlannedFile{Name: f.FileName, Level: f.Level, Bytes: f.FileSize, Rows: f.RowCount, Rewrite: st.Rewrite})
				pt.In.Files++
				pt.In.Bytes += f.FileSize
				pt.Rows += f.RowCount
				if st.Rewrite {
					merged += f.FileSize
				} else {
					pt.ExpectedOut++
					rep.Written.Files++
					rep.Written.Bytes += f.FileSize
				}
			}
			if st.Rewrite {
				n := max(1, (merged+target-1)/target)
				pt.ExpectedOut += int(n)
				rep.Written.Files += n
				rep.Written.Bytes += merged
			}
		}
		rep.Rewritten.Files += pt.In.Files
		rep.Rewritten.Bytes += pt.In.Bytes
		rep.Tasks++
		rep.Planned = append(rep.Planned, pt)
	}
	return nil
}

// deleteOutputs deletes the files a compaction that was not committed
// wrote (not the upgraded ones, which are the inputs at a new level), best
// effort: what remains is an orphan for RemoveOrphanFiles.
func deleteOutputs(ctx context.Context, t *Table, msgs []commit.Message) {
	ctx = context.WithoutCancel(ctx)
	r, err := t.NewRead(nil)
	if err != nil {
		return
	}
	for _, m := range msgs {
		inputs := map[string]bool{}
		for _, f := range m.CompactBefore {
			inputs[f.FileName] = true
		}
		outputs := append(slices.Clone(m.CompactAfter), m.CompactChangelog...)
		for i := range outputs {
			f := &outputs[i]
			if inputs[f.FileName] {
				continue
			}
			if p, err := filePath(t, r, m, f); err == nil {
				_ = t.fio.Delete(ctx, p)
			}
		}
		for _, e := range m.CompactIndexFiles { // deletion vectors
			if e.ExternalPath == nil {
				_ = t.fio.Delete(ctx, path.Join(t.path, "index", e.FileName))
			}
		}
	}
}

func filePath(t *Table, r *read.TableRead, m commit.Message, f *manifest.DataFileMeta) (string, error) {
	parts := t.Schema().PartitionFields()
	ts := make([]types.DataType, len(parts))
	for i, p := range parts {
		ts[i] = p.Type
	}
	vals, err := binrow.Deserialize(ts, m.Partition)
	if err != nil {
		return "", err
	}
	return r.FilePath(&scan.Split{Partition: m.Partition, PartitionValues: vals, Bucket: m.Bucket}, f)
}
