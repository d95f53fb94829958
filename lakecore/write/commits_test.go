package write_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Java's Avro schemas of manifests and manifest lists (1.4.x / 2.0),
// paimon-format.md Appendix A.
const (
	javaManifestListSchema = `{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_NUM_ADDED_FILES","type":"long"},{"name":"_NUM_DELETED_FILES","type":"long"},{"name":"_PARTITION_STATS","type":{"type":"record","name":"record__PARTITION_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_SCHEMA_ID","type":"long"},{"name":"_MIN_BUCKET","type":["null","int"],"default":null},{"name":"_MAX_BUCKET","type":["null","int"],"default":null},{"name":"_MIN_LEVEL","type":["null","int"],"default":null},{"name":"_MAX_LEVEL","type":["null","int"],"default":null},{"name":"_MIN_ROW_ID","type":["null","long"],"default":null},{"name":"_MAX_ROW_ID","type":["null","long"],"default":null}]}`
	javaManifestSchema     = `{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},{"name":"_FILE","type":{"type":"record","name":"record__FILE","fields":[{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},{"name":"_KEY_STATS","type":{"type":"record","name":"record__FILE__KEY_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_VALUE_STATS","type":{"type":"record","name":"record__FILE__VALUE_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},{"name":"_FILE_SOURCE","type":["null","int"],"default":null},{"name":"_VALUE_STATS_COLS","type":["null",{"type":"array","items":"string"}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_FIRST_ROW_ID","type":["null","long"],"default":null},{"name":"_WRITE_COLS","type":["null",{"type":"array","items":"string"}],"default":null}]}}]}`
)

// TestTwentyCommits writes 20 commits of several partitions each and checks
// the snapshot chain, record counts, the manifests' Avro schemas and the
// rows read back (TestJavaReadsTwentyCommits has Java read them).
func TestTwentyCommits(t *testing.T) {
	tt, all := twentyCommits(t)
	ctx := context.Background()
	ids, err := tt.tb.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 20 || ids[0] != 1 || ids[19] != 20 {
		t.Fatalf("snapshot ids %v, want 1..20", ids)
	}
	got := tt.readAll()
	sortByID(got)
	assertRows(t, got, all)

	// Sizes recorded in the snapshot and the manifest lists are exact, and
	// the files carry Java's Avro schemas.
	s, err := tt.tb.Snapshots().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mdir := filepath.Join(tt.dir, "db.db/t/manifest")
	for _, l := range []struct {
		name string
		size *int64
	}{{s.BaseManifestList, s.BaseManifestListSize}, {s.DeltaManifestList, s.DeltaManifestListSize}} {
		data, err := os.ReadFile(filepath.Join(mdir, l.name))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) != *l.size {
			t.Errorf("%s: %d bytes, snapshot says %d", l.name, len(data), *l.size)
		}
		if got := avroSchema(t, data); got != javaManifestListSchema {
			t.Errorf("%s: avro.schema\n%s\nwant\n%s", l.name, got, javaManifestListSchema)
		}
		metas, err := manifest.DecodeFileMetas(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range metas {
			md, err := os.ReadFile(filepath.Join(mdir, m.FileName))
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(md)) != m.FileSize {
				t.Errorf("%s: %d bytes, manifest list says %d", m.FileName, len(md), m.FileSize)
			}
			if got := avroSchema(t, md); got != javaManifestSchema {
				t.Errorf("%s: avro.schema\n%s\nwant\n%s", m.FileName, got, javaManifestSchema)
			}
		}
	}
}

// twentyCommits writes 20 commits of several partitions each into a new
// table, checking each commit's snapshot, and returns the table and its rows.
func twentyCommits(t *testing.T) (*testTable, [][]any) {
	t.Helper()
	// merge-min-count 5: Java also reads manifests merged by the committer.
	tt := newTestTable(t, []types.DataField{f("id", types.BigIntType()), f("p", types.StringType()), f("v", types.DoubleType())},
		[]string{"p"}, map[string]string{"manifest.merge-min-count": "5"})
	var all [][]any
	var total int64
	for c := int64(1); c <= 20; c++ {
		var rows [][]any
		parts := 2 + int(c%4)
		for i := 0; i < parts*5; i++ {
			id := c*1000 + int64(i)
			rows = append(rows, []any{id, fmt.Sprintf("part-%d", i%parts), float64(id) / 3})
		}
		msgs, s := tt.writeCommit(c, rows)
		total += int64(len(rows))
		all = append(all, rows...)
		if len(msgs) != parts {
			t.Fatalf("commit %d: %d messages for %d partitions", c, len(msgs), parts)
		}
		if s.ID != c || s.CommitIdentifier != c || s.CommitKind != snapshot.CommitAppend || *s.TotalRecordCount != total ||
			*s.DeltaRecordCount != int64(len(rows)) || s.SchemaID != 0 || s.Version != 3 || s.NextRowID == nil || *s.NextRowID != 0 {
			t.Fatalf("commit %d: snapshot %+v", c, s)
		}
	}
	return tt, all
}

func countWhere(rows [][]any, pred func([]any) bool) int {
	n := 0
	for _, r := range rows {
		if pred(r) {
			n++
		}
	}
	return n
}

// avroSchema returns the avro.schema metadata of an Avro object container.
func avroSchema(t *testing.T, data []byte) string {
	t.Helper()
	if !bytes.HasPrefix(data, []byte("Obj\x01")) {
		t.Fatalf("not an avro container")
	}
	r := bytes.NewReader(data[4:])
	readBytes := func() []byte {
		n, err := binary.ReadVarint(r)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, n)
		if _, err := r.Read(b); err != nil && n > 0 {
			t.Fatal(err)
		}
		return b
	}
	for {
		count, err := binary.ReadVarint(r)
		if err != nil {
			t.Fatal(err)
		}
		if count == 0 {
			break
		}
		if count < 0 {
			count = -count
			if _, err := binary.ReadVarint(r); err != nil {
				t.Fatal(err)
			}
		}
		for i := int64(0); i < count; i++ {
			k, v := readBytes(), readBytes()
			if string(k) == "avro.schema" {
				return string(v)
			}
		}
	}
	t.Fatal("no avro.schema in the container header")
	return ""
}

// TestCompactAndOverwrite reads a table after a COMPACT snapshot (DELETE
// entries, the rows of two partitions rewritten) and an OVERWRITE of one
// partition (TestJavaReadsCompactAndOverwrite has Java read it).
func TestCompactAndOverwrite(t *testing.T) {
	tt, kept := compactAndOverwrite(t)
	got := tt.readAll()
	sortByID(got)
	sortByID(kept)
	assertRows(t, got, kept)
}

// compactAndOverwrite writes 4 commits into a new table, compacts partitions
// 0 and 1 and overwrites partition 2, checking the snapshots, and returns the
// table and the rows it holds.
func compactAndOverwrite(t *testing.T) (*testTable, [][]any) {
	t.Helper()
	tt := newTestTable(t, []types.DataField{f("id", types.BigIntType()), f("p", types.IntType())}, []string{"p"},
		map[string]string{"manifest.merge-min-count": "3"})
	var rows [][]any
	for c := int64(1); c <= 4; c++ {
		var batch [][]any
		for i := int64(0); i < 10; i++ {
			batch = append(batch, []any{c*100 + i, int32(i % 3)})
		}
		tt.writeCommit(c, batch)
		rows = append(rows, batch...)
	}
	ctx := context.Background()
	// Compact partitions 0 and 1: rewrite their rows into one file each.
	before := tt.liveEntries()
	w, err := tt.tb.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var compactRows int
	for _, r := range rows {
		if p := r[1].(int32); p != 2 {
			if err := w.Write(ctx, r); err != nil {
				t.Fatal(err)
			}
			compactRows++
		}
	}
	after, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []commit.Message
	for _, m := range after {
		m.CompactAfter, m.NewFiles = m.NewFiles, nil
		for _, e := range before {
			if bytes.Equal(e.Partition, m.Partition) {
				m.CompactBefore = append(m.CompactBefore, e.File)
			}
		}
		msgs = append(msgs, m)
	}
	c := tt.tb.NewCommitter("test-user")
	s, err := c.Compact(ctx, 5, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if s.CommitKind != snapshot.CommitCompact || *s.TotalRecordCount != int64(len(rows)) || *s.DeltaRecordCount != 0 {
		t.Fatalf("compact snapshot %+v", s)
	}
	// Overwrite partition 2 with 3 new rows.
	w, err = tt.tb.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var kept [][]any
	for _, r := range rows {
		if r[1].(int32) != 2 {
			kept = append(kept, r)
		}
	}
	for i := int64(0); i < 3; i++ {
		r := []any{9000 + i, int32(2)}
		if err := w.Write(ctx, r); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, r)
	}
	om, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = c.Overwrite(ctx, 6, commit.PartitionsOf(om), om); err != nil || s.CommitKind != snapshot.CommitOverwrite {
		t.Fatalf("overwrite: %+v %v", s, err)
	}
	return tt, kept
}

// TestAddColumns evolves the schema through the facade: files written
// before keep their schema id and read back with NULL in the new column.
func TestAddColumns(t *testing.T) {
	tt := newTestTable(t, []types.DataField{f("id", types.BigIntType()), f("a", types.StringType())}, nil, nil)
	tt.writeCommit(1, [][]any{{int64(1), "x"}})
	ctx := context.Background()
	s, err := tt.tb.AddColumns(ctx, []types.DataField{f("b", types.IntType())})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 1 || tt.tb.Schema().ID != 1 || len(tt.tb.Schema().Fields) != 3 {
		t.Fatalf("schema after AddColumns: %+v", s)
	}
	msgs, snap := tt.writeCommit(2, [][]any{{int64(2), "y", int32(7)}})
	if msgs[0].NewFiles[0].SchemaID != 1 || snap.SchemaID != 1 {
		t.Fatalf("file schema %d, snapshot schema %d, want 1", msgs[0].NewFiles[0].SchemaID, snap.SchemaID)
	}
	got := tt.readAll()
	sortByID(got)
	assertRows(t, got, [][]any{{int64(1), "x", nil}, {int64(2), "y", int32(7)}})
}
