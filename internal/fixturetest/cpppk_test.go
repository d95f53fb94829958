package fixturetest_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestCppPKSources checks that testdata/cpp holds exactly the files
// SOURCES.tsv lists, byte for byte as upstream: each file's git blob sha1
// must be the one of the upstream tree.
func TestCppPKSources(t *testing.T) {
	root := fixturetest.CppPKRoot(t)
	f, err := os.Open(filepath.Join(root, "SOURCES.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("SOURCES.tsv: %d columns in %q", len(cols), line)
		}
		if _, dup := listed[cols[0]]; dup {
			t.Fatalf("SOURCES.tsv lists %s twice", cols[0])
		}
		listed[cols[0]] = cols[2]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var present []string
	for _, name := range fixturetest.CppPKTables {
		for _, p := range fixturetest.ListFiles(t, fixturetest.CppPKWarehouse(t, name)) {
			present = append(present, name+"/warehouse/"+p)
		}
	}
	for _, p := range present {
		want, ok := listed[p]
		if !ok {
			t.Errorf("%s is not in SOURCES.tsv", p)
			continue
		}
		delete(listed, p)
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if got := gitBlobSHA1(data); got != want {
			t.Errorf("%s: git blob %s, upstream %s", p, got, want)
		}
	}
	for p := range listed {
		t.Errorf("SOURCES.tsv lists %s, which is missing", p)
	}
}

func gitBlobSHA1(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// cppPKShape is what PROVENANCE.md says of each table, checked against the
// files: snapshot ids, latest schema, merge engine, the live files and the
// deleted positions of the latest snapshot.
var cppPKShape = map[string]struct {
	snapshots     int64
	latestSchema  int64
	primaryKeys   []string
	dv            bool
	liveFiles     int
	deletedRows   int64
	levels        []int32 // distinct levels of the latest live files, sorted
	schemaColumns []string
	// orphans are data files that no snapshot lists (left upstream by the
	// writer; a reader must never see them).
	orphans []string
}{
	"pk_table_scan_and_read_mor": {
		snapshots: 5, primaryKeys: []string{"f0", "f1", "f2"}, liveFiles: 6, levels: []int32{0, 5},
		schemaColumns: []string{"f0", "f1", "f2", "f3"},
	},
	"pk_table_scan_and_read_first_row": {
		snapshots: 5, primaryKeys: []string{"f0", "f1", "f2"}, liveFiles: 5, levels: []int32{0, 5},
		schemaColumns: []string{"f0", "f1", "f2", "f3"},
		orphans:       []string{"data-3ed044c5-30ac-496b-b6f1-25757a052504-0.parquet"},
	},
	"pk_table_scan_and_read_dv": {
		snapshots: 6, primaryKeys: []string{"f0", "f1", "f2"}, dv: true, liveFiles: 6, deletedRows: 2, levels: []int32{0, 4, 5},
		schemaColumns: []string{"f0", "f1", "f2", "f3"},
	},
	"pk_table_with_alter_table": {
		snapshots: 6, latestSchema: 1, primaryKeys: []string{"key0", "key1", "key_2"}, dv: true, liveFiles: 3, deletedRows: 3, levels: []int32{4, 5},
		schemaColumns: []string{"key1", "k", "key_2", "c", "d", "a", "key0", "e"},
	},
	"pk_table_with_dv_cardinality": {
		snapshots: 4, primaryKeys: []string{"f0", "f1", "f2"}, dv: true, liveFiles: 3, deletedRows: 3, levels: []int32{4, 5},
		schemaColumns: []string{"f0", "f1", "f2", "f3"},
	},
	"pk_with_bitmap_dv": {
		snapshots: 4, primaryKeys: []string{"key"}, dv: true, liveFiles: 1, deletedRows: 2, levels: []int32{5},
		schemaColumns: []string{"key", "f0", "f1", "f2", "f3"},
	},
}

// TestCppPKTablesReadable opens every imported table with lakecore's own
// packages: every schema parses, every snapshot loads, every manifest list,
// manifest and index manifest decodes, each snapshot's live files (the
// ADD/DELETE merge of its base and delta lists) exist and add up to its
// totalRecordCount, and its deletion vectors decode.
func TestCppPKTablesReadable(t *testing.T) {
	if len(cppPKShape) != len(fixturetest.CppPKTables) {
		t.Fatalf("%d shapes for %d tables", len(cppPKShape), len(fixturetest.CppPKTables))
	}
	for _, name := range fixturetest.CppPKTables {
		t.Run(name, func(t *testing.T) {
			want, ok := cppPKShape[name]
			if !ok {
				t.Fatalf("no shape for %s", name)
			}
			ctx := context.Background()
			fio, err := storage.NewLocal(fixturetest.CppPKWarehouse(t, name))
			if err != nil {
				t.Fatal(err)
			}
			tablePath := path.Join("default.db", name)
			tableDir := fixturetest.CppPK(t, name)

			schemas, err := schema.NewManager(fio, tablePath).List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			latestSchema := schemas[len(schemas)-1]
			if latestSchema.ID != want.latestSchema || !slices.Equal(latestSchema.PrimaryKeys, want.primaryKeys) {
				t.Errorf("latest schema %d with primary keys %v, want %d with %v", latestSchema.ID, latestSchema.PrimaryKeys, want.latestSchema, want.primaryKeys)
			}
			if got := fieldNames(latestSchema.Fields); !slices.Equal(got, want.schemaColumns) {
				t.Errorf("latest schema columns %v, want %v", got, want.schemaColumns)
			}
			if dv := latestSchema.Options["deletion-vectors.enabled"] == "true"; dv != want.dv {
				t.Errorf("deletion vectors %v, want %v", dv, want.dv)
			}

			// Data, index and extra files by base name; names are unique.
			files := map[string]string{}
			for _, p := range fixturetest.ListFiles(t, tableDir) {
				files[path.Base(p)] = p
			}
			referenced := map[string]bool{}
			everLive := map[string]bool{}

			snaps := snapshot.NewManager(fio, tablePath)
			ids, err := snaps.ListIDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(ids)) != want.snapshots || ids[0] != 1 || ids[len(ids)-1] != want.snapshots {
				t.Fatalf("snapshots %v, want 1..%d", ids, want.snapshots)
			}
			if id, ok, err := snaps.LatestID(ctx); err != nil || !ok || id != want.snapshots {
				t.Errorf("LatestID %d %v %v, want %d", id, ok, err, want.snapshots)
			}
			if id, ok, err := snaps.EarliestID(ctx); err != nil || !ok || id != 1 {
				t.Errorf("EarliestID %d %v %v, want 1", id, ok, err)
			}
			dec := manifest.NewDecoder()
			for _, id := range ids {
				s, err := snaps.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				var entries []manifest.Entry
				for _, list := range []string{s.BaseManifestList, s.DeltaManifestList} {
					referenced[list] = true
					metas, err := manifest.ReadFileMetas(ctx, fio, tablePath, list)
					if err != nil {
						t.Fatalf("snapshot %d: %v", id, err)
					}
					for _, m := range metas {
						referenced[m.FileName] = true
						es, err := manifest.ReadEntries(ctx, fio, tablePath, m.FileName)
						if err != nil {
							t.Fatalf("snapshot %d: %v", id, err)
						}
						entries = append(entries, es...)
					}
				}
				live, err := manifest.MergeEntries(entries)
				if err != nil {
					t.Fatalf("snapshot %d: %v", id, err)
				}
				var rows int64
				levels := map[int32]bool{}
				for _, e := range live {
					if e.Kind != manifest.FileKindAdd {
						t.Errorf("snapshot %d: a DELETE of %s is left after the merge", id, e.File.FileName)
					}
					if _, ok := files[e.File.FileName]; !ok {
						t.Errorf("snapshot %d: live file %s is missing", id, e.File.FileName)
					}
					for _, x := range e.File.ExtraFiles {
						if _, ok := files[x]; !ok {
							t.Errorf("snapshot %d: extra file %s of %s is missing", id, x, e.File.FileName)
						}
					}
					rows += e.File.RowCount
					levels[e.File.Level] = true
					everLive[e.File.FileName] = true
				}
				if s.TotalRecordCount == nil || rows != *s.TotalRecordCount {
					t.Errorf("snapshot %d: live files hold %d rows, totalRecordCount %v", id, rows, s.TotalRecordCount)
				}
				var deleted int64
				if s.IndexManifest != nil {
					referenced[*s.IndexManifest] = true
					ies, err := dec.ReadIndexEntries(ctx, fio, tablePath, *s.IndexManifest)
					if err != nil {
						t.Fatalf("snapshot %d: %v", id, err)
					}
					for _, ie := range ies {
						if _, ok := files[ie.FileName]; !ok {
							t.Errorf("snapshot %d: index file %s is missing", id, ie.FileName)
						}
					}
					dvs, err := dec.ReadDeletionVectors(ctx, fio, tablePath, *s.IndexManifest)
					if err != nil {
						t.Fatalf("snapshot %d: %v", id, err)
					}
					for file, dv := range dvs {
						if !slices.ContainsFunc(live, func(e manifest.Entry) bool { return e.File.FileName == file }) {
							t.Errorf("snapshot %d: deletion vector of %s, which is not live", id, file)
						}
						deleted += dv.Cardinality()
					}
				}
				if id == want.snapshots {
					if len(live) != want.liveFiles || deleted != want.deletedRows {
						t.Errorf("latest snapshot: %d live files with %d deleted rows, want %d with %d", len(live), deleted, want.liveFiles, want.deletedRows)
					}
					var lv []int32
					for l := range levels {
						lv = append(lv, l)
					}
					slices.Sort(lv)
					if !slices.Equal(lv, want.levels) {
						t.Errorf("latest snapshot: levels %v, want %v", lv, want.levels)
					}
				}
			}

			var orphans []string
			for base := range files {
				if strings.HasPrefix(base, "data-") && strings.HasSuffix(base, ".parquet") && !everLive[base] {
					orphans = append(orphans, base)
				}
			}
			slices.Sort(orphans)
			if !slices.Equal(orphans, want.orphans) {
				t.Errorf("data files in no snapshot %v, want %v", orphans, want.orphans)
			}

			// Every manifest file decodes, including any no snapshot uses.
			for _, p := range fixturetest.ListFiles(t, filepath.Join(tableDir, "manifest")) {
				data, err := os.ReadFile(filepath.Join(tableDir, "manifest", p))
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case strings.HasPrefix(p, "manifest-list-"):
					_, err = dec.DecodeFileMetas(data)
				case strings.HasPrefix(p, "index-manifest-"):
					_, err = dec.DecodeIndexEntries(data)
				case strings.HasPrefix(p, "manifest-"):
					_, err = dec.DecodeEntries(data)
				default:
					err = fmt.Errorf("unexpected file")
				}
				if err != nil {
					t.Errorf("manifest/%s: %v", p, err)
				}
				if !referenced[p] {
					t.Errorf("manifest/%s is used by no snapshot", p)
				}
			}

			// The data files were written by Java (parquet-mr), not by
			// paimon-cpp (parquet-cpp-arrow).
			for base, p := range files {
				if !strings.HasSuffix(base, ".parquet") {
					continue
				}
				data, err := os.ReadFile(filepath.Join(tableDir, filepath.FromSlash(p)))
				if err != nil {
					t.Fatal(err)
				}
				if got := parquetCreatedBy(t, data); !strings.HasPrefix(got, "parquet-mr version 1.15.1") {
					t.Errorf("%s: created_by %q, want parquet-mr 1.15.1", p, got)
				}
			}
		})
	}
}

// parquetCreatedBy finds the created_by string in a Parquet footer
// (FileMetaData field 6) by its text, which is enough for files whose
// writer is known to be one of two.
func parquetCreatedBy(t *testing.T, data []byte) string {
	t.Helper()
	n := len(data)
	if n < 12 || string(data[n-4:]) != "PAR1" {
		t.Fatalf("not a Parquet file")
	}
	size := int(binary.LittleEndian.Uint32(data[n-8 : n-4]))
	if size > n-12 {
		t.Fatalf("footer of %d bytes in a %d-byte file", size, n)
	}
	footer := data[n-8-size : n-8]
	for _, writer := range []string{"parquet-mr version ", "parquet-cpp-arrow version "} {
		if i := bytes.Index(footer, []byte(writer)); i >= 0 {
			end := i + bytes.IndexFunc(footer[i:], func(r rune) bool { return r < ' ' || r > '~' })
			if end < i {
				end = len(footer)
			}
			return string(footer[i:end])
		}
	}
	return ""
}

func fieldNames(fields []types.DataField) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

// TestCppPKExpected checks the golden files: each parses, each table has
// one for its latest snapshot, every row names exactly the columns of the
// schema it was read with, batch files carry no stream keys, and stream
// files carry a snapshot and phase on every row and a row kind on every
// delta row.
func TestCppPKExpected(t *testing.T) {
	for _, name := range fixturetest.CppPKTables {
		t.Run(name, func(t *testing.T) {
			want := cppPKShape[name]
			dir := filepath.Join(fixturetest.CppPKRoot(t), name, "expected")
			goldens := fixturetest.ListFiles(t, dir)
			if !slices.Contains(goldens, fmt.Sprintf("batch-%d.jsonl", want.snapshots)) {
				t.Errorf("no golden for the latest snapshot %d in %v", want.snapshots, goldens)
			}
			for _, g := range goldens {
				base, ok := strings.CutSuffix(g, ".jsonl")
				if !ok {
					t.Errorf("%s: not a .jsonl file", g)
					continue
				}
				rows := fixturetest.CppPKExpected(t, name, base)
				batch := strings.HasPrefix(base, "batch-")
				if !batch && !strings.HasPrefix(base, "stream.") {
					t.Errorf("%s: neither batch-* nor stream.*", g)
				}
				if batch {
					id, _, _ := strings.Cut(strings.TrimPrefix(base, "batch-"), ".")
					if n, err := strconv.ParseInt(id, 10, 64); err != nil || n < 1 || n > want.snapshots {
						t.Errorf("%s: snapshot %q is not one of 1..%d", g, id, want.snapshots)
					}
				}
				last := int64(0)
				for i, r := range rows {
					cols := slices.Sorted(maps.Keys(r.Values))
					wantCols := slices.Sorted(slices.Values(want.schemaColumns))
					if !slices.Equal(cols, wantCols) {
						t.Errorf("%s row %d: columns %v, want %v", g, i, cols, wantCols)
					}
					switch {
					case batch && (r.Snapshot != 0 || r.Phase != "" || r.HasKind):
						t.Errorf("%s row %d: stream keys in a batch golden", g, i)
					case !batch && (r.Snapshot == 0 || r.Phase == ""):
						t.Errorf("%s row %d: no _SNAPSHOT or _PHASE", g, i)
					case !batch && r.HasKind != (r.Phase == "delta"):
						t.Errorf("%s row %d: phase %s with row kind %v", g, i, r.Phase, r.HasKind)
					case !batch && r.Snapshot < last:
						t.Errorf("%s row %d: snapshot %d after %d", g, i, r.Snapshot, last)
					}
					last = r.Snapshot
				}
			}
		})
	}
}

func TestParseCppPKRows(t *testing.T) {
	rows, err := fixturetest.ParseCppPKRows([]byte(`{"_SNAPSHOT":"3","_PHASE":"delta","_ROW_KIND":"-D","f0":"Tony","f3":null}` + "\n\n" + `{"f0":"Bob"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.Snapshot != 3 || r.Phase != "delta" || !r.HasKind || r.Kind != kv.Delete || *r.Values["f0"] != "Tony" || r.Values["f3"] != nil {
		t.Errorf("row 0 = %+v", r)
	}
	if _, present := r.Values["f3"]; !present {
		t.Error("a null column is absent from Values")
	}
	if r := rows[1]; r.Snapshot != 0 || r.HasKind || *r.Values["f0"] != "Bob" {
		t.Errorf("row 1 = %+v", r)
	}
	for _, bad := range []string{
		`{"f1":10}`,
		`{"_SNAPSHOT":"x","f0":"a"}`,
		`{"_PHASE":"later"}`,
		`{"_ROW_KIND":"+X"}`,
		`{"_OTHER":"a"}`,
		`[1]`,
	} {
		if _, err := fixturetest.ParseCppPKRows([]byte(bad)); err == nil {
			t.Errorf("ParseCppPKRows(%s) accepted", bad)
		}
	}
}

func TestCanonical(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{int8(-1), "-1"},
		{int16(2), "2"},
		{int32(10), "10"},
		{int64(math.MaxInt64), "9223372036854775807"},
		{11.0, "11"},
		{11.1, "11.1"},
		{float32(0.1), "0.1"},
		{true, "true"},
		{"Alice", "Alice"},
		{types.Decimal{Unscaled: big.NewInt(1050), Scale: 3}, "1.050"},
	}
	for _, tc := range cases {
		if got := fixturetest.Canonical(tc.v); got == nil || *got != tc.want {
			t.Errorf("Canonical(%#v) = %v, want %s", tc.v, got, tc.want)
		}
	}
	if got := fixturetest.Canonical(nil); got != nil {
		t.Errorf("Canonical(nil) = %q", *got)
	}
	row := fixturetest.CanonicalRow([]string{"f0", "f3"}, []any{"Skye", nil})
	if len(row) != 2 || *row["f0"] != "Skye" || row["f3"] != nil {
		t.Errorf("CanonicalRow = %v", row)
	}
}

// TestCopyCppPKWarehouse checks that the copy holds the table's files and is
// writable where the imported table is not to be written.
func TestCopyCppPKWarehouse(t *testing.T) {
	const name = "pk_with_bitmap_dv"
	src := fixturetest.CppPKWarehouse(t, name)
	dst := fixturetest.CopyCppPKWarehouse(t, name)
	if got, want := fixturetest.ListFiles(t, dst), fixturetest.ListFiles(t, src); !slices.Equal(got, want) || len(got) == 0 {
		t.Fatalf("copy has %v, table %v", got, want)
	}
	if err := os.WriteFile(filepath.Join(dst, "default.db", name, "snapshot", "LATEST"), []byte("5"), 0o644); err != nil {
		t.Fatalf("copy not writable: %v", err)
	}
	if got := fixturetest.CppPK(t, name); got != filepath.Join(src, "default.db", name) {
		t.Errorf("CppPK = %s", got)
	}
}
