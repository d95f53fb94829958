package reliability

import (
	"context"
	"fmt"
	"math"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// File classes of a table directory (audit.classes).
const (
	classSnapshot        = "snapshot file"
	classHint            = "LATEST/EARLIEST hint"
	classSchema          = "schema file"
	classConsumer        = "consumer file"
	classTag             = "tag file"
	classRefList         = "referenced manifest list"
	classRefManifest     = "referenced manifest"
	classRefIndex        = "referenced index manifest"
	classRefData         = "referenced data file"
	classFailedList      = "manifest list of a failed commit attempt"
	classFailedManifest  = "manifest of a failed commit attempt"
	classUncommittedData = "uncommitted data file"
	classTemp            = "temporary file of an interrupted write"
	classJournal         = "journal of an interrupted expiry"
)

// audit is what auditTable found in a table: its snapshots, the rows of
// the latest one and every file of the directory classified.
type audit struct {
	tbl       *lakecore.Table
	snapshots []*snapshot.Snapshot // earliest to latest, contiguous ids
	latest    [][]any              // rows of the latest snapshot
	// deltaRows are the rows each APPEND snapshot added, by snapshot id.
	deltaRows map[int64][][]any
	classes   map[string][]string // class -> paths
	// unreferencedLists are the failed attempts' manifest lists by name.
	unreferencedLists []string
	// expired: unreferenced files may also be what an interrupted expiry
	// left (classes say so).
	expired bool
}

// auditOptions tune auditTable.
type auditOptions struct {
	// readEvery reads every snapshot in full when the table has at most
	// this many (else every tenth, the first and the last); the deltas of
	// all snapshots are always read.
	readEvery int
	// expired: snapshot expiry ran, possibly interrupted: unreferenced
	// files and an expiry journal may be what it left. Every listed
	// snapshot must still read: expiry deletes snapshot files before the
	// files they use (lakecore/maintain/expire_journal.go).
	expired bool
}

// auditTable checks the invariants every table must keep whatever happened
// to its writers, failing t for each broken one:
//   - snapshot ids are contiguous from the earliest to the latest and every
//     snapshot file parses;
//   - every snapshot plans (its manifest lists and manifests decode), every
//     file it references exists with the size its manifest records, the
//     rows of its live files add up to its totalRecordCount and its delta
//     reads back with deltaRecordCount rows; the latest (and every, or a
//     sample of the) snapshots read in full with totalRecordCount rows;
//   - (commit user, identifier, kind) is unique among the snapshots: no
//     commit landed twice;
//   - every file of the directory is a snapshot, hint, schema, consumer or
//     tag file, a file some snapshot references, a manifest or manifest list
//     of a failed commit attempt, an uncommitted data file, a temporary
//     file of an interrupted write or (with expiry) the journal of an
//     interrupted expiry. Anything else fails the test.
func auditTable(t testing.TB, ctx context.Context, tbl *lakecore.Table, o auditOptions) *audit {
	t.Helper()
	if o.readEvery == 0 {
		o.readEvery = 200
	}
	fio, root := tbl.FileIO(), tbl.Path()
	a := &audit{tbl: tbl, deltaRows: map[int64][][]any{}, classes: map[string][]string{}, expired: o.expired}
	if err := tbl.Refresh(ctx); err != nil {
		t.Fatalf("audit %s: refresh: %v", root, err)
	}
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatalf("audit %s: list snapshots: %v", root, err)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			t.Errorf("audit %s: snapshot ids not contiguous: %d after %d", root, ids[i], ids[i-1])
		}
	}
	if len(ids) > 0 && ids[0] != 1 && !o.expired {
		t.Errorf("audit %s: the earliest snapshot is %d, and nothing expired snapshots", root, ids[0])
	}
	if latestID, ok, err := tbl.Snapshots().LatestID(ctx); err != nil || (len(ids) > 0 && (!ok || latestID != ids[len(ids)-1])) {
		t.Errorf("audit %s: LatestID = %d, %v, %v; listing ends at %v", root, latestID, ok, err, ids)
	}

	s := tbl.Schema()
	partFields := s.PartitionFields()
	partTypes := make([]types.DataType, len(partFields))
	for i, f := range partFields {
		partTypes[i] = f.Type
	}
	legacy, _ := s.Opts().PartitionLegacyName()
	partOpts := binrow.PartitionOptions{DefaultName: s.Opts().PartitionDefaultName(), LegacyName: legacy}

	refs := map[string]string{}     // path -> class
	dataSizes := map[string]int64{} // data file path -> size in its manifest entry
	commits := map[string]int64{}   // user/identifier/kind -> snapshot id
	metaCache := map[string][]manifest.FileMeta{}
	entryCache := map[string][]manifest.Entry{}
	readList := func(name string) ([]manifest.FileMeta, error) {
		if m, ok := metaCache[name]; ok {
			return m, nil
		}
		m, err := manifest.ReadFileMetas(ctx, fio, root, name)
		if err == nil {
			metaCache[name] = m
		}
		return m, err
	}
	dataPath := func(e manifest.Entry) string {
		elems := []string{root}
		if len(partFields) > 0 {
			vals, err := binrow.Deserialize(partTypes, e.Partition)
			if err != nil {
				t.Errorf("audit %s: partition of %s: %v", root, e.File.FileName, err)
				return ""
			}
			pp, err := binrow.PartitionPath(partFields, vals, partOpts)
			if err != nil {
				t.Errorf("audit %s: partition path of %s: %v", root, e.File.FileName, err)
				return ""
			}
			elems = append(elems, pp)
		}
		return path.Join(append(elems, fmt.Sprintf("bucket-%d", e.Bucket), e.File.FileName)...)
	}

	step := 1
	if len(ids) > o.readEvery {
		step = 10
	}
	for i, id := range ids {
		snap, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Errorf("audit %s: snapshot %d: %v", root, id, err)
			continue
		}
		a.snapshots = append(a.snapshots, snap)
		// Batch jobs (and maintenance) commit under Long.MAX_VALUE every
		// time; only streaming identifiers are unique.
		key := fmt.Sprintf("%s/%d/%s", snap.CommitUser, snap.CommitIdentifier, snap.CommitKind)
		if prev, dup := commits[key]; dup && snap.CommitIdentifier != math.MaxInt64 {
			t.Errorf("audit %s: snapshots %d and %d are both commit %s: a commit landed twice", root, prev, id, key)
		}
		commits[key] = id
		// Read problems of this snapshot.
		var problems []string
		problem := func(format string, args ...any) {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		srefs := map[string]string{tbl.Snapshots().Path(id): classSnapshot}
		sizes := map[string]int64{}
		lists := []string{snap.BaseManifestList, snap.DeltaManifestList}
		if snap.ChangelogManifestList != nil {
			lists = append(lists, *snap.ChangelogManifestList)
		}
		if snap.IndexManifest != nil {
			srefs[path.Join(root, "manifest", *snap.IndexManifest)] = classRefIndex
		}
		for _, l := range lists {
			srefs[path.Join(root, "manifest", l)] = classRefList
			metas, err := readList(l)
			if err != nil {
				problem("manifest list %s: %v", l, err)
			}
			for _, m := range metas {
				srefs[path.Join(root, "manifest", m.FileName)] = classRefManifest
				entries, ok := entryCache[m.FileName]
				if !ok {
					if entries, err = manifest.ReadEntries(ctx, fio, root, m.FileName); err != nil {
						problem("manifest %s: %v", m.FileName, err)
						continue
					}
					entryCache[m.FileName] = entries
				}
				for _, e := range entries {
					if p := dataPath(e); p != "" {
						srefs[p] = classRefData
						sizes[p] = e.File.FileSize
					}
				}
			}
		}
		// The live files plan and add up to totalRecordCount.
		plan, err := tbl.Planner().Full(ctx, snap, nil)
		if err != nil {
			problem("plan: %v", err)
		} else {
			if snap.TotalRecordCount != nil && plan.RowCount() != *snap.TotalRecordCount {
				t.Errorf("audit %s: snapshot %d: live files hold %d rows, totalRecordCount %d", root, id, plan.RowCount(), *snap.TotalRecordCount)
			}
			// In a fixed bucket the files number their rows without overlap
			// (readers and compaction order a bucket's files by them).
			for _, sp := range plan.Splits {
				if sp.TotalBuckets <= 0 {
					continue
				}
				for j := 1; j < len(sp.Files); j++ {
					prev, cur := sp.Files[j-1], sp.Files[j]
					if cur.MinSequenceNumber <= prev.MaxSequenceNumber {
						t.Errorf("audit %s: snapshot %d, bucket %d of partition %v: sequence numbers of %s [%d, %d] overlap %s [%d, %d]",
							root, id, sp.Bucket, sp.PartitionValues, cur.FileName, cur.MinSequenceNumber, cur.MaxSequenceNumber,
							prev.FileName, prev.MinSequenceNumber, prev.MaxSequenceNumber)
					}
				}
			}
		}
		if snap.CommitKind == snapshot.CommitAppend && len(problems) == 0 {
			rows, err := tbl.ReadDelta(ctx, id)
			if err != nil {
				problem("read the delta: %v", err)
			} else if snap.DeltaRecordCount != nil && int64(len(rows)) != *snap.DeltaRecordCount {
				t.Errorf("audit %s: snapshot %d: delta reads %d rows, deltaRecordCount %d", root, id, len(rows), *snap.DeltaRecordCount)
			}
			a.deltaRows[id] = rows
		}
		if (i == len(ids)-1 || i == 0 || i%step == 0) && len(problems) == 0 {
			rows, err := tbl.ReadAll(ctx, id)
			switch {
			case err != nil:
				problem("read: %v", err)
			case snap.TotalRecordCount != nil && int64(len(rows)) != *snap.TotalRecordCount:
				t.Errorf("audit %s: snapshot %d reads %d rows, totalRecordCount %d", root, id, len(rows), *snap.TotalRecordCount)
			}
			if i == len(ids)-1 {
				a.latest = rows
			}
		}
		if len(problems) > 0 {
			for _, p := range problems {
				t.Errorf("audit %s: snapshot %d: %s", root, id, p)
			}
			continue
		}
		for p, c := range srefs {
			refs[p] = c
		}
		for p, n := range sizes {
			dataSizes[p] = n
		}
	}
	// Every file of the directory has a reason to be there.
	files, err := fio.List(ctx, root, true)
	if err != nil {
		t.Fatalf("audit %s: list: %v", root, err)
	}
	present := map[string]int64{}
	for _, f := range files {
		present[f.Path] = f.Size
		a.classify(t, root, f.Path, refs)
	}
	for p, class := range refs {
		size, ok := present[p]
		switch {
		case !ok:
			// Data files of expired snapshots may be gone legitimately only
			// when they were deleted by a later snapshot; the live files of
			// the retained snapshots were planned and read above.
			if !(o.expired && class == classRefData) {
				t.Errorf("audit %s: %s %s is missing", root, class, p)
			}
		case class == classRefData && dataSizes[p] != size:
			t.Errorf("audit %s: data file %s has %d bytes, its manifest entry says %d", root, p, size, dataSizes[p])
		}
	}
	return a
}

// classify files one path of the table directory.
func (a *audit) classify(t testing.TB, root, p string, refs map[string]string) {
	t.Helper()
	rel := strings.TrimPrefix(p, root+"/")
	base := path.Base(rel)
	class := refs[p]
	switch {
	case class != "":
	case strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".tmp"):
		class = classTemp
	case rel == "snapshot/LATEST" || rel == "snapshot/EARLIEST":
		class = classHint
	case a.expired && strings.HasPrefix(rel, "snapshot/EXPIRING-"):
		class = classJournal
	case strings.HasPrefix(rel, "snapshot/snapshot-"):
		t.Errorf("audit %s: %s is not a snapshot of the listing", root, rel)
		class = "unexplained"
	case strings.HasPrefix(rel, "schema/schema-"):
		class = classSchema
	case strings.HasPrefix(rel, "consumer/consumer-"):
		class = classConsumer
	case strings.HasPrefix(rel, "tag/tag-"):
		class = classTag
	case strings.HasPrefix(rel, "manifest/manifest-list-"):
		class = classFailedList
		a.unreferencedLists = append(a.unreferencedLists, base)
	case strings.HasPrefix(rel, "manifest/manifest-") || strings.HasPrefix(rel, "manifest/index-manifest-"):
		class = classFailedManifest
	case strings.Contains(rel, "bucket-") && strings.HasPrefix(base, "data-") && strings.HasSuffix(base, ".parquet"):
		class = classUncommittedData
	default:
		t.Errorf("audit %s: unexplained file %s", root, rel)
		class = "unexplained"
	}
	if a.expired && (class == classFailedList || class == classFailedManifest || class == classUncommittedData) {
		class += " (or left by an interrupted expiry)"
	}
	a.classes[class] = append(a.classes[class], p)
}

// summary is one line with the number of files per class.
func (a *audit) summary() string {
	var names []string
	for c := range a.classes {
		names = append(names, c)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, c := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", c, len(a.classes[c]))
	}
	return b.String()
}

// openTable opens db.table of the warehouse fio serves.
func openTable(t testing.TB, ctx context.Context, fio storage.FileIO, db, name string) *lakecore.Table {
	t.Helper()
	tbl, err := lakecore.NewCatalog(fio).OpenTable(ctx, db, name)
	if err != nil {
		t.Fatalf("open table %s.%s: %v", db, name, err)
	}
	return tbl
}
