package lakecore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// pk09Rows are the rows of pk_09 (f0 STRING, f1 INT partition, f2 INT,
// f3 DOUBLE; primary key f0, f1, f2), by name; twoRoads and whether are
// the two long keys.
const (
	twoRoads = "Two roads diverged in a wood, and I took the one less traveled by, And that has made all the difference."
	whether  = "Whether I shall turn out to be the hero of my own life."
)

func pk09(rows ...[]any) [][]any { return rows }

func r09(f0 string, f1, f2 int32, f3 float64) []any { return []any{f0, f1, f2, f3} }

var (
	pk09Initial = pk09(r09("Alice", 10, 1, 11.1), r09(twoRoads, 10, 1, 11), r09("Alex", 10, 0, 16.1), r09("Bob", 10, 0, 12.1),
		r09("David", 10, 0, 17.1), r09("Emily", 10, 0, 13.1), r09("Tony", 10, 0, 14.1), r09("Lucy", 20, 1, 14.1), r09("Paul", 20, 1, 18.1))
	pk09WithLily = append(pk09(r09("Lily", 10, 1, 20.1), r09(whether, 10, 1, 19.1)), pk09Initial...)
	// After snapshot 5's changes: Alice updated to 19.1, Lily and Tony deleted.
	pk09Deleted = pk09(r09("Alice", 10, 1, 19.1), r09(twoRoads, 10, 1, 11), r09(whether, 10, 1, 19.1), r09("Alex", 10, 0, 16.1),
		r09("Bob", 10, 0, 12.1), r09("David", 10, 0, 17.1), r09("Emily", 10, 0, 13.1), r09("Lucy", 20, 1, 14.1), r09("Paul", 20, 1, 18.1))
	pk09Final = pk09(r09("Alice", 10, 1, 21.1), r09(twoRoads, 10, 1, 11), r09(whether, 10, 1, 19.1), r09("Alex", 10, 0, 16.1),
		r09("Bob", 10, 0, 12.1), r09("David", 10, 0, 17.1), r09("Emily", 10, 0, 13.1), r09("Lucy", 20, 1, 14.1), r09("Paul", 20, 1, 18.1))
)

func rGolden(ids ...int32) [][]any {
	var out [][]any
	for _, id := range ids {
		cat := "odd"
		if id%2 == 0 {
			cat = "even"
		}
		out = append(out, []any{id, "name-" + string(rune('0'+id)), cat})
	}
	return out
}

// TestFixturePrimaryKeyReads reads every snapshot of the two Java-written
// primary-key fixtures as Java's batch scan does (paimon-pk.md Appendix B):
// deletion vectors are on, so level-0 files stay invisible until a
// COMPACT snapshot moves them up, and the rows deleted by deletion vectors
// are gone.
func TestFixturePrimaryKeyReads(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		fixture, table string
		want           map[int64][][]any
	}{
		{"cpp-java09-pk-table-avro-manifest-reference", "pk_09", map[int64][][]any{
			1: nil, 2: pk09Initial, 3: pk09Initial, 4: pk09WithLily, 5: pk09WithLily,
			6: pk09Deleted, 7: pk09Deleted, 8: pk09Final,
		}},
		{"paimon-java20snap-pk-table-manifest-reference", "test_pk_global_index_golden", map[int64][][]any{
			1: nil, 2: rGolden(1, 2), 3: rGolden(1, 2), 4: rGolden(1, 2, 3, 4), 5: rGolden(1, 2, 3, 4), 6: rGolden(1, 2, 3, 4, 5, 6),
		}},
	} {
		t.Run(c.table, func(t *testing.T) {
			tbl := openFixture(t, c.fixture, c.table)
			if !tbl.HasPrimaryKey() {
				t.Fatal("HasPrimaryKey is false")
			}
			for id, want := range c.want {
				got, err := tbl.ReadAll(ctx, id)
				if err != nil {
					t.Fatalf("snapshot %d: %v", id, err)
				}
				t.Logf("snapshot %d: %d rows", id, len(got))
				assertRows(t, got, want)
			}
		})
	}
}

// TestFixturePrimaryKeyMergeOnRead reads pk_09 with deletion vectors
// switched off in a copy of its schema, so that level-0 files are merged
// with the levels above them (merge-on-read): snapshot 5 then already
// shows what snapshot 6's compaction made of its level-0 files (Alice
// updated, Lily and Tony deleted by -D records), and snapshot 3 shows
// Lily and Whether from level 0.
func TestFixturePrimaryKeyMergeOnRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := fixturetest.Warehouse(t, "cpp-java09-pk-table-avro-manifest-reference")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	schemaPath := filepath.Join(dir, "default.db", "pk_09", "schema", "schema-0")
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	delete(s.Options, "deletion-vectors.enabled")
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(schemaPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
	fio, err := storage.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := lakecore.NewCatalog(fio).OpenTable(ctx, "default", "pk_09")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64][][]any{
		1: pk09Initial, 2: pk09Initial, 3: pk09WithLily, 4: pk09WithLily, 5: pk09Deleted, 7: pk09Final, 8: pk09Final,
	} {
		got, err := tbl.ReadAll(ctx, id)
		if err != nil {
			t.Fatalf("snapshot %d: %v", id, err)
		}
		assertRows(t, got, want)
	}
}
