package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/datafile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// pkModel is a map model of a primary-key table (k BIGINT, pt STRING,
// s STRING, v BIGINT; key (k, pt)) fed the same changes as the table, for
// one merge engine. Aggregation is not associative for every function
// (a retracted last_non_null_value is NULL, a later NULL does not bring
// it back), so its model folds as Paimon does: the records of one key in
// one commit into one record (the write buffer's merge), then the commits'
// records; a key with a single record keeps it as it is.
type pkModel struct {
	engine  string
	rows    map[string][]any
	pending map[string][]aggRecord // aggregation: this commit's records per key
	batches map[string][]aggRecord // aggregation: one folded record per commit
}

type aggRecord struct {
	kind kv.RowKind
	row  []any
}

func newPKModel(engine string) *pkModel {
	return &pkModel{engine: engine, rows: map[string][]any{}, pending: map[string][]aggRecord{}, batches: map[string][]aggRecord{}}
}

func (m *pkModel) apply(kind kv.RowKind, row []any) {
	key := fmt.Sprint(row[0], "/", row[1])
	switch m.engine {
	case "deduplicate":
		switch kind {
		case kv.Delete:
			delete(m.rows, key)
		case kv.UpdateBefore: // dropped by the writer: -U of a deduplicate table
		default:
			m.rows[key] = slices.Clone(row)
		}
	case "partial-update":
		cur, ok := m.rows[key]
		if !ok {
			cur = make([]any, len(row))
		}
		for i, v := range row {
			if v != nil {
				cur[i] = v
			}
		}
		m.rows[key] = cur
	case "aggregation":
		m.pending[key] = append(m.pending[key], aggRecord{kind, slices.Clone(row)})
	}
}

// commit ends a commit: aggregation folds the commit's records per key.
func (m *pkModel) commit() {
	for key, recs := range m.pending {
		m.batches[key] = append(m.batches[key], foldAgg(recs))
	}
	clear(m.pending)
}

// foldAgg merges the records of one key: v sum (retracts subtract), s
// last_non_null_value (a retract of a value nulls it); a single record is
// returned as it is (ReducerMergeFunctionWrapper).
func foldAgg(recs []aggRecord) aggRecord {
	if len(recs) == 1 {
		return recs[0]
	}
	out := []any{recs[0].row[0], recs[0].row[1], nil, nil}
	for _, r := range recs {
		v := r.row[3].(int64)
		if r.kind.IsRetract() {
			v = -v
		}
		if out[3] == nil {
			out[3] = v
		} else {
			out[3] = out[3].(int64) + v
		}
		switch {
		case r.kind.IsRetract() && r.row[2] != nil:
			out[2] = nil
		case !r.kind.IsRetract() && r.row[2] != nil:
			out[2] = r.row[2]
		}
	}
	return aggRecord{kv.Insert, out}
}

func (m *pkModel) expected() [][]any {
	var out [][]any
	for _, r := range m.rows {
		out = append(out, r)
	}
	for _, batches := range m.batches {
		if r := foldAgg(batches); r.kind.IsAdd() {
			out = append(out, r.row)
		}
	}
	return out
}

// TestPrimaryKeyWriteRoundTrip writes random change streams with
// KeyValueWriter (repeated keys within and across commits, updates and
// deletes) into fixed-bucket tables of each merge engine, partitioned and
// not, commits after each batch, and checks after every commit that the
// merged read equals the model and that every level-0 file keeps Paimon's
// invariants: keys strictly ascending, one record per key, _MIN_KEY and
// _MAX_KEY the first and last key, _DELETE_ROW_COUNT the retracts in the
// file, and sequence numbers above every number committed before in its
// bucket.
func TestPrimaryKeyWriteRoundTrip(t *testing.T) {
	for _, c := range []struct {
		engine      string
		partitioned bool
		buckets     string
		options     map[string]string
	}{
		{"deduplicate", false, "1", nil},
		{"deduplicate", true, "4", nil},
		{"partial-update", true, "2", nil},
		{"aggregation", false, "3", map[string]string{"fields.v.aggregate-function": "sum"}},
	} {
		t.Run(fmt.Sprintf("%s/partitioned=%v/bucket=%s", c.engine, c.partitioned, c.buckets), func(t *testing.T) {
			ctx := context.Background()
			fio, err := storage.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			opts := map[string]string{"bucket": c.buckets, "merge-engine": c.engine}
			for k, v := range c.options {
				opts[k] = v
			}
			spec := lakecore.TableSpec{
				Fields: []types.DataField{
					{Name: "k", Type: types.BigIntType()}, {Name: "pt", Type: types.StringType()},
					{Name: "s", Type: types.StringType()}, {Name: "v", Type: types.BigIntType()},
				},
				PrimaryKeys: []string{"k", "pt"}, Options: opts,
			}
			if c.partitioned {
				spec.PartitionKeys = []string{"pt"}
			}
			tbl, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", spec)
			if err != nil {
				t.Fatal(err)
			}
			committer := tbl.NewCommitter("test")
			model := newPKModel(c.engine)
			rng := rand.New(rand.NewPCG(7, uint64(len(c.engine))))
			maxSeq := map[string]int64{} // partition/bucket -> highest sequence number of its live files
			seen := map[string]bool{}
			for commitID := int64(1); commitID <= 12; commitID++ {
				w, err := tbl.NewKeyValueWriter(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for range 40 + rng.IntN(60) {
					k := int64(rng.IntN(50))
					pt := []string{"a", "b"}[rng.IntN(2)]
					kind := kv.Insert
					switch r := rng.IntN(10); {
					case c.engine == "partial-update":
						if r < 4 {
							kind = kv.UpdateAfter
						}
					case r < 2:
						kind = kv.Delete
					case r < 3:
						kind = kv.UpdateBefore
					case r < 6:
						kind = kv.UpdateAfter
					}
					var s any = fmt.Sprintf("s%d", rng.IntN(1000))
					if rng.IntN(4) == 0 {
						s = nil
					}
					var v any = int64(rng.IntN(100))
					if c.engine == "partial-update" && rng.IntN(3) == 0 {
						v = nil
					}
					row := []any{k, pt, s, v}
					if key := fmt.Sprint(k, "/", pt); c.engine == "aggregation" {
						// A key whose only records are retracts is dropped by
						// a compaction to the top level and kept otherwise, as
						// in Java; the model does not follow compactions, so
						// retract only keys that hold a row.
						if kind.IsRetract() && !seen[key] {
							kind = kv.Insert
						}
						seen[key] = true
					}
					if err := w.Write(ctx, kind, row); err != nil {
						t.Fatal(err)
					}
					model.apply(kind, row)
				}
				msgs, err := w.Prepare(ctx)
				if err != nil {
					t.Fatal(err)
				}
				checkKeyValueFiles(t, tbl, msgs, maxSeq)
				if _, err := committer.Commit(ctx, commitID, msgs); err != nil {
					t.Fatal(err)
				}
				model.commit()
				liveMaxSeq(t, tbl, maxSeq)
				checkLevels(t, tbl, 5)
				got, err := tbl.ReadAll(ctx, 0)
				if err != nil {
					t.Fatal(err)
				}
				assertRows(t, got, model.expected())
				if t.Failed() {
					t.Fatalf("after commit %d", commitID)
				}
			}
			var compacts int
			ids, _ := tbl.Snapshots().ListIDs(ctx)
			for _, id := range ids {
				if s, _ := tbl.Snapshots().Get(ctx, id); s != nil && s.CommitKind == "COMPACT" {
					compacts++
				}
			}
			if compacts == 0 {
				t.Errorf("%d snapshots, none COMPACT: the writer never compacted", len(ids))
			}
			t.Logf("%d snapshots, %d COMPACT", len(ids), compacts)
		})
	}
}

// checkLevels checks every bucket of the latest snapshot: at most trigger
// sorted runs, and the files of each level above 0 do not overlap.
func checkLevels(t *testing.T, tbl *lakecore.Table, trigger int) {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tbl.Planner().Full(ctx, snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := tbl.Schema()
	trimmed, _ := kv.TrimmedPrimaryKeys(s.PrimaryKeys, s.PartitionKeys)
	idx, _ := kv.FieldIndexes(s.Fields, trimmed)
	keyTypes := make([]types.DataType, len(idx))
	for i, j := range idx {
		keyTypes[i] = s.Fields[j].Type
	}
	for _, sp := range plan.Splits {
		if runs := mergetree.SortedRuns(sp.Files); len(runs) > trigger {
			t.Errorf("snapshot %d, bucket %d: %d sorted runs, above the trigger %d", snap.ID, sp.Bucket, len(runs), trigger)
		}
		byLevel := map[int32][][2][]any{}
		for _, f := range sp.Files {
			if f.Level == 0 {
				continue
			}
			lo, _ := binrow.Deserialize(keyTypes, f.MinKey)
			hi, _ := binrow.Deserialize(keyTypes, f.MaxKey)
			byLevel[f.Level] = append(byLevel[f.Level], [2][]any{lo, hi})
		}
		for level, ranges := range byLevel {
			slices.SortFunc(ranges, func(a, b [2][]any) int { return kv.CompareKeys(a[0], b[0]) })
			for i := 1; i < len(ranges); i++ {
				if kv.CompareKeys(ranges[i-1][1], ranges[i][0]) >= 0 {
					t.Errorf("snapshot %d, bucket %d, level %d: files overlap: %v and %v", snap.ID, sp.Bucket, level, ranges[i-1], ranges[i])
				}
			}
		}
	}
}

// checkKeyValueFiles checks the invariants of the new level-0 files by
// reading each file's records in file order.
func checkKeyValueFiles(t *testing.T, tbl *lakecore.Table, msgs []commit.Message, maxSeq map[string]int64) {
	t.Helper()
	ctx := context.Background()
	s := tbl.Schema()
	keyIdx, _ := kv.FieldIndexes(s.Fields, []string{"k"})
	if len(s.PartitionKeys) == 0 {
		keyIdx, _ = kv.FieldIndexes(s.Fields, []string{"k", "pt"})
	}
	keyTypes := make([]types.DataType, len(keyIdx))
	for i, j := range keyIdx {
		keyTypes[i] = s.Fields[j].Type
	}
	for _, m := range msgs {
		bk := fmt.Sprintf("%x/%d", m.Partition, m.Bucket)
		for _, f := range m.NewFiles {
			if f.Level != 0 || f.DeleteRowCount == nil || f.FileSource == nil || *f.FileSource != 0 {
				t.Fatalf("file %s: level %d, delete count %v, file source %v", f.FileName, f.Level, f.DeleteRowCount, f.FileSource)
			}
			if prev, ok := maxSeq[bk]; ok && f.MinSequenceNumber <= prev {
				t.Errorf("file %s: sequence numbers from %d, at or below %d of the bucket's live files", f.FileName, f.MinSequenceNumber, prev)
			}
			recs := readFileRecords(t, ctx, tbl, m, f)
			if int64(len(recs)) != f.RowCount {
				t.Fatalf("file %s: %d records, _ROW_COUNT %d", f.FileName, len(recs), f.RowCount)
			}
			var deletes int64
			for i, r := range recs {
				if r.kind.IsRetract() {
					deletes++
				}
				if i > 0 && kv.CompareKeys(project(recs[i-1].row, keyIdx), project(r.row, keyIdx)) >= 0 {
					t.Errorf("file %s: keys not strictly ascending at record %d", f.FileName, i)
				}
				if r.seq < f.MinSequenceNumber || r.seq > f.MaxSequenceNumber {
					t.Errorf("file %s: sequence number %d outside [%d, %d]", f.FileName, r.seq, f.MinSequenceNumber, f.MaxSequenceNumber)
				}
			}
			if deletes != *f.DeleteRowCount {
				t.Errorf("file %s: %d retracts, _DELETE_ROW_COUNT %d", f.FileName, deletes, *f.DeleteRowCount)
			}
			checkFileStats(t, s, f, recs, keyIdx)
			minKey, _ := binrow.Deserialize(keyTypes, f.MinKey)
			maxKey, _ := binrow.Deserialize(keyTypes, f.MaxKey)
			if kv.CompareKeys(minKey, project(recs[0].row, keyIdx)) != 0 || kv.CompareKeys(maxKey, project(recs[len(recs)-1].row, keyIdx)) != 0 {
				t.Errorf("file %s: key range %v..%v, records %v..%v", f.FileName, minKey, maxKey, project(recs[0].row, keyIdx), project(recs[len(recs)-1].row, keyIdx))
			}
		}
	}
}

// checkFileStats checks that a KeyValue file's sequence range, key stats
// and value stats are exactly those of its records: the minimum and
// maximum of each column and its NULL count (the tests' strings are
// shorter than the stats' truncation).
func checkFileStats(t *testing.T, s *schema.TableSchema, f manifest.DataFileMeta, recs []fileRecord, keyIdx []int) {
	t.Helper()
	minSeq, maxSeq := recs[0].seq, recs[0].seq
	for _, r := range recs {
		minSeq, maxSeq = min(minSeq, r.seq), max(maxSeq, r.seq)
	}
	if f.MinSequenceNumber != minSeq || f.MaxSequenceNumber != maxSeq {
		t.Errorf("file %s: sequence range [%d, %d], records [%d, %d]", f.FileName, f.MinSequenceNumber, f.MaxSequenceNumber, minSeq, maxSeq)
	}
	check := func(what string, stats manifest.SimpleStats, idx []int) {
		ts := make([]types.DataType, len(idx))
		for i, j := range idx {
			ts[i] = s.Fields[j].Type
		}
		mins, maxs, nulls, err := stats.Decode(ts)
		if err != nil {
			t.Fatalf("file %s: %s stats: %v", f.FileName, what, err)
		}
		for i, j := range idx {
			var lo, hi any
			var n int64
			for _, r := range recs {
				v := r.row[j]
				switch {
				case v == nil:
					n++
				case lo == nil:
					lo, hi = v, v
				default:
					if kv.CompareValues(v, lo) < 0 {
						lo = v
					}
					if kv.CompareValues(v, hi) > 0 {
						hi = v
					}
				}
			}
			if kv.CompareValues(mins[i], lo) != 0 || kv.CompareValues(maxs[i], hi) != 0 || nulls[i] == nil || *nulls[i] != n {
				t.Errorf("file %s: %s stats of %s: min %v max %v nulls %v, records: %v %v %d",
					f.FileName, what, s.Fields[j].Name, mins[i], maxs[i], nulls[i], lo, hi, n)
			}
		}
	}
	check("key", f.KeyStats, keyIdx)
	if f.ValueStatsCols != nil {
		t.Fatalf("file %s: value stats of columns %v only", f.FileName, *f.ValueStatsCols)
	}
	all := make([]int, len(s.Fields))
	for i := range all {
		all[i] = i
	}
	check("value", f.ValueStats, all)
}

func project(row []any, idx []int) []any {
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = row[j]
	}
	return out
}

type fileRecord struct {
	row  []any
	seq  int64
	kind kv.RowKind
}

// readFileRecords reads one level-0 file as it is: every record in file
// order with its sequence number and row kind (the _KEY_ columns skipped).
func readFileRecords(t *testing.T, ctx context.Context, tbl *lakecore.Table, m commit.Message, f manifest.DataFileMeta) []fileRecord {
	t.Helper()
	s := tbl.Schema()
	partVals, err := binrow.Deserialize(typesOfFields(s.PartitionFields()), m.Partition)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tbl.NewRead(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.FilePath(&scan.Split{Partition: m.Partition, PartitionValues: partVals, Bucket: m.Bucket}, &f)
	if err != nil {
		t.Fatal(err)
	}
	file, err := tbl.FileIO().Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	fields := append(slices.Clone(s.Fields), kv.SequenceNumberField, kv.ValueKindField)
	dr, err := datafile.NewReader(file, fields, fields, datafile.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dr.Close()
	n := len(s.Fields)
	var out []fileRecord
	for {
		rows, err := dr.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			out = append(out, fileRecord{row: row[:n], seq: row[n].(int64), kind: kv.RowKind(row[n+1].(int8))})
		}
	}
}

func typesOfFields(fields []types.DataField) []types.DataType {
	out := make([]types.DataType, len(fields))
	for i, f := range fields {
		out[i] = f.Type
	}
	return out
}

// liveMaxSeq sets, per partition and bucket, the largest sequence number
// of the live files: the number a writer continues after (compaction may
// have dropped records with larger ones, which Java then reuses too).
func liveMaxSeq(t *testing.T, tbl *lakecore.Table, maxSeq map[string]int64) {
	t.Helper()
	ctx := context.Background()
	snap, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	live, err := tbl.Planner().LiveEntries(ctx, snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	clear(maxSeq)
	for _, e := range live {
		bk := fmt.Sprintf("%x/%d", e.Partition, e.Bucket)
		if cur, ok := maxSeq[bk]; !ok || e.File.MaxSequenceNumber > cur {
			maxSeq[bk] = e.File.MaxSequenceNumber
		}
	}
}
