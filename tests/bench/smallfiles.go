package bench

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// measureSmallFiles writes an hour of 100 ms batches (a minute in a quick
// run; one
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
		// the latest snapshot, and the entries of its manifests
		snapshot     int64
		kind         string
		adds, delete int
		onDisk       int // data files in the table's directory
	}
	observe := func() (*state, error) {
		st := &state{}
		var err error
		if st.files, st.bytes, st.rows, err = liveFiles(ctx, tbl); err != nil {
			return nil, err
		}
		snap, err := tbl.Snapshots().Latest(ctx)
		if err != nil {
			return nil, err
		}
		st.snapshot, st.kind = snap.ID, string(snap.CommitKind)
		if st.adds, st.delete, err = manifestEntryKinds(ctx, tbl, snap); err != nil {
			return nil, err
		}
		if st.onDisk, err = dataFilesOnDisk(wh); err != nil {
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
	s.Intro = fmt.Sprintf(`%s of 100 ms batches: %s batches of %d payment events (%s rows/s), each written by lakecore's table writer and committed as its own APPEND snapshot, as the `+"`paimon`"+` output does when batches close every 100 ms, into one partition of an unaware-bucket table on the local disk (%v to write). Then `+"`Compact`"+`, twice, with the table's defaults (target-file-size %s, compaction.min.file-num 5), as `+"`benthos-paimon paimon compact`"+` or the output's `+"`compaction`"+` run it (first pass: %d tasks, %v). Plan and read times: a full plan, and reading every row with lakecore's TableRead (runs: %d).`,
		fSpan(time.Duration(batches)*100*time.Millisecond), fInt(float64(batches)), rowsPerBatch, fInt(rowsPerBatch*10), build.Round(time.Second), fBytes(defaultTargetFileSize), rep.Tasks, rep.Duration.Round(time.Millisecond), e.Config.runs())
	row := func(label string, st *state) []string {
		return []string{label, fInt(float64(st.files)), fBytes(float64(st.bytes)), fBytes(float64(st.bytes) / float64(max(1, st.files))), st.plan.Fmt(fMs), st.read.Fmt(fMs)}
	}
	s.Tables = []Table{{
		Header: []string{"Partition (1 of 1)", "files", "bytes", "mean file", "full plan ms", "read all rows ms"},
		Rows: [][]string{row("before compaction", before), row("after one compaction", after),
			row("after a second compaction", after2)},
	}}
	s.Notes = append(s.Notes, smallFilesNotes(
		[3]smallFilesState{
			{before.files, before.bytes, before.plan.Median(), before.snapshot, before.kind, before.adds, before.delete, before.onDisk},
			{after.files, after.bytes, after.plan.Median(), after.snapshot, after.kind, after.adds, after.delete, after.onDisk},
			{after2.files, after2.bytes, after2.plan.Median(), after2.snapshot, after2.kind, after2.adds, after2.delete, after2.onDisk},
		},
		[2]*maintain.Report{rep, rep2})...)
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

// Paimon's defaults the compaction of the small-files table runs with
// (CoreOptions target-file-size and source.split.open-file-cost).
const (
	defaultTargetFileSize = 256 << 20
	defaultOpenFileCost   = 4 << 20
)

// smallFilesState is what the notes of the small-files section compare:
// the table before compaction, after one pass and after a second.
type smallFilesState struct {
	files        int
	bytes        int64
	planMs       float64 // median full plan
	snapshot     int64   // the latest snapshot and its kind
	kind         string
	adds, delete int // entries of the latest snapshot's manifests
	onDisk       int // data files in the table's directory
}

// smallFilesNotes states what this run measured: what each pass rewrote,
// the snapshots it committed, whether one pass reached target-file-size,
// how the plan time moved and whether the rewritten files are still on
// disk. Each sentence follows from the figures passed in.
func smallFilesNotes(st [3]smallFilesState, rep [2]*maintain.Report) []string {
	var notes []string
	before, after, after2 := st[0], st[1], st[2]
	n := fmt.Sprintf("The first compaction rewrote %s files (%s) into %s (%s) in %v; the second rewrote %s into %s in %v.",
		fInt(float64(rep[0].Rewritten.Files)), fBytes(float64(rep[0].Rewritten.Bytes)), fInt(float64(rep[0].Written.Files)), fBytes(float64(rep[0].Written.Bytes)), rep[0].Duration.Round(time.Millisecond),
		fInt(float64(rep[1].Rewritten.Files)), fInt(float64(rep[1].Written.Files)), rep[1].Duration.Round(time.Millisecond))
	if after.snapshot == before.snapshot+1 && after2.snapshot == after.snapshot+1 && after.kind == "COMPACT" && after2.kind == "COMPACT" {
		n += fmt.Sprintf(" Each pass committed one COMPACT snapshot (%d and %d).", after.snapshot, after2.snapshot)
	} else {
		n += fmt.Sprintf(" The passes left snapshot %d (%s) and %d (%s) after %d.", after.snapshot, after.kind, after2.snapshot, after2.kind, before.snapshot)
	}
	if written := int64(before.files) + rep[0].Written.Files + rep[1].Written.Files; int64(after2.onDisk) >= written {
		n += fmt.Sprintf(" All %s data files written are still on disk: the rewritten ones stay until snapshot expiry removes the snapshots that reference them.", fInt(float64(after2.onDisk)))
	} else {
		n += fmt.Sprintf(" %s data files are on disk after both passes, %s were written.", fInt(float64(after2.onDisk)), fInt(float64(written)))
	}
	notes = append(notes, n)

	// Files of target-file-size would hold the compacted bytes in ideal.
	ideal := int((after.bytes + defaultTargetFileSize - 1) / defaultTargetFileSize)
	if after.files > max(1, ideal) && rep[0].Written.Files > 0 {
		perFile := float64(rep[0].Rewritten.Files) / float64(rep[0].Written.Files)
		n := fmt.Sprintf("One pass left %s, where files of target-file-size (%s) would need %s: %.0f input files went into each output file, of %s on average. Like Java's AppendCompactCoordinator, bins are packed by file size plus source.split.open-file-cost (%s), so a bin of tiny files closes after about 2 × %s / %s = %d files.",
			files(after.files), fBytes(defaultTargetFileSize), files(max(1, ideal)), perFile, fBytes(float64(after.bytes)/float64(after.files)), fBytes(defaultOpenFileCost),
			fBytes(defaultTargetFileSize), fBytes(defaultOpenFileCost), 2*defaultTargetFileSize/defaultOpenFileCost)
		if after2.files < after.files {
			n += fmt.Sprintf(" The second pass went on to %s: tables fed by small batches need compaction runs in a row (or a smaller open-file-cost) to reach large files.", files(after2.files))
		}
		notes = append(notes, n)
	}

	if before.planMs > 0 && after.planMs > 0 {
		r := after.planMs / before.planMs
		how := "about as fast as"
		switch {
		case r > 1.1:
			how = "slower than"
		case r < 1/1.1:
			how = "faster than"
		}
		n := fmt.Sprintf("The full plan after one compaction (%s ms, %s live files) is %s before it (%s ms, %s files; %.2f×). The latest snapshot's manifests hold %s ADD and %s DELETE entries before, %s and %s after one pass, %s and %s after two.",
			fMs(after.planMs), fInt(float64(after.files)), how, fMs(before.planMs), fInt(float64(before.files)), r,
			fInt(float64(before.adds)), fInt(float64(before.delete)), fInt(float64(after.adds)), fInt(float64(after.delete)), fInt(float64(after2.adds)), fInt(float64(after2.delete)))
		if r > 1.1 && after.delete > before.delete {
			n += " The planner reads the DELETE entries of the rewritten files too, until manifest full compaction folds them away."
		}
		notes = append(notes, n)
	}
	return notes
}

// fSpan renders a span of time in whole hours or minutes when it is one
// ("1 hour", "1 minute").
func fSpan(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "hour"}, {time.Minute, "minute"}} {
		if d >= u.d && d%u.d == 0 {
			if n := int(d / u.d); n != 1 {
				return fmt.Sprintf("%d %ss", n, u.name)
			}
			return "1 " + u.name
		}
	}
	return d.String()
}

// files renders a count of files ("1 file", "282 files").
func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fInt(float64(n)) + " files"
}

// manifestEntryKinds counts the ADD and DELETE entries of the manifests of
// a snapshot (base and delta lists).
func manifestEntryKinds(ctx context.Context, tbl *lakecore.Table, snap *snapshot.Snapshot) (adds, deletes int, err error) {
	for _, l := range []string{snap.BaseManifestList, snap.DeltaManifestList} {
		metas, err := manifest.ReadFileMetas(ctx, tbl.FileIO(), tbl.Path(), l)
		if err != nil {
			return 0, 0, err
		}
		for _, m := range metas {
			entries, err := manifest.ReadEntries(ctx, tbl.FileIO(), tbl.Path(), m.FileName)
			if err != nil {
				return 0, 0, err
			}
			for _, e := range entries {
				if e.Kind == manifest.FileKindDelete {
					deletes++
				} else {
					adds++
				}
			}
		}
	}
	return adds, deletes, nil
}

// dataFilesOnDisk counts the Parquet data files below a local warehouse.
func dataFilesOnDisk(warehouse string) (int, error) {
	n := 0
	err := filepath.WalkDir(warehouse, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "data-") && strings.HasSuffix(d.Name(), ".parquet") {
			n++
		}
		return nil
	})
	return n, err
}
