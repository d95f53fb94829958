//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGoWrites: lakecore writes tables, and Java Paimon 1.x and 2.x and
// pypaimon read them (plus DuckDB the Parquet files): every spec of
// testdata/specs that lakecore can run (every type with nulls, MULTISET,
// TIMESTAMP extremes, partitions by INT / escaped STRING / DATE / NULL,
// fixed buckets on STRING and INT keys, compaction, consumers and expiry,
// overwrites) and Go's own cases (20 commits, AddColumns evolution,
// fixed-bucket and unaware compaction with expiry, TIMESTAMP(7-9), partition
// values needing escaping and typed partition keys). Each reader reads the
// latest snapshot, every live snapshot (with that snapshot's schema) and
// every filter of the spec plus an equality filter per partition and
// bucket-key value (pruning must not lose a row); the expected rows are
// what Go wrote, rendered canonically in Go.
func TestGoWrites(t *testing.T) {
	requireOracles(t)
	all := allSpecs(t)
	for _, n := range all.names {
		t.Run(n, func(t *testing.T) {
			s := all.specs[n]
			if why := goStepsUnsupported(s); why != "" {
				t.Skipf("Go cannot run spec %s: %s (Java's tables of it are read by Go in TestTheyWrite)", n, why)
			}
			g := runGoSpec(t, t.TempDir(), n, s)
			checkGoTable(t, g, all.expect[n])
		})
	}
}

// specSet is every spec the suite runs: the testdata specs and Go's own
// (goSpecs), with the file each is read from and spec_expect.py's rows.
type specSet struct {
	names  []string             // sorted
	specs  map[string]*specFile // by name
	paths  map[string]string    // the testdata file, or Go's own written to a temp dir
	expect map[string][]string  // spec_expect.py's rows, by name
}

// allSpecs loads the testdata specs, writes Go's own (goSpecs) to files
// and runs spec_expect.py on all of them.
func allSpecs(t *testing.T) specSet {
	t.Helper()
	all := specSet{specs: map[string]*specFile{}, paths: map[string]string{}}
	for _, n := range specNames(t) {
		s, err := loadSpec(specPath(n))
		if err != nil {
			t.Fatal(err)
		}
		all.specs[n], all.paths[n] = s, specPath(n)
		all.names = append(all.names, n)
	}
	dir := t.TempDir()
	for n, s := range goSpecs(all.specs["all_types"]) {
		p := filepath.Join(dir, n+".json")
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		all.specs[n], all.paths[n] = s, p
		all.names = append(all.names, n)
	}
	slices.Sort(all.names)
	var paths []string
	for _, n := range all.names {
		paths = append(paths, all.paths[n])
	}
	expect, err := specExpect(paths)
	if err != nil {
		t.Fatal(err)
	}
	all.expect = expect
	return all
}

// checkGoTable compares what every reader reads from a Go-written table
// with what Go wrote.
func checkGoTable(t *testing.T, g *goTable, specExpected []string) {
	ctx := ctxT(t)
	if err := g.tb.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	latestFields := g.tb.Schema().Fields
	latestRows := project(g.fields, g.rows, latestFields)
	wantLatest, err := canonicalRows(latestFields, latestRows)
	if err != nil {
		t.Fatal(err)
	}
	ids := g.liveIDs()
	wantSnap := map[int64][]string{}
	// Flink's planner takes a table's columns from the catalog, the latest
	// schema, also when a hint travels to an older snapshot
	wantSnapLatest := map[int64][]string{}
	for _, id := range ids {
		snap, err := g.tb.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatalf("Go's snapshot %d of %s: %v", id, g.name, err)
		}
		sch, err := g.tb.Schemas().Get(ctx, snap.SchemaID)
		if err != nil {
			t.Fatal(err)
		}
		st := g.states[id]
		if wantSnap[id], err = canonicalRows(sch.Fields, project(st.fields, st.rows, sch.Fields)); err != nil {
			t.Fatal(err)
		}
		if wantSnapLatest[id], err = canonicalRows(latestFields, project(st.fields, st.rows, latestFields)); err != nil {
			t.Fatal(err)
		}
	}
	filters := append(slices.Clone(g.spec.Filters), keyFilters(latestFields, latestRows, g.spec.PartitionKeys, g.spec.Options)...)
	filters = slices.Compact(filters)
	wantFilter := map[string][]string{}
	wantSQLFilter := map[string][]string{} // what a SQL engine's WHERE keeps (Flink)
	for _, f := range filters {
		pred, err := compileFilter(f, latestFields)
		if err != nil {
			t.Fatal(err)
		}
		if wantFilter[f], err = canonicalRows(latestFields, filterRows(pred, latestRows)); err != nil {
			t.Fatal(err)
		}
		if pred, err = compileSQLFilter(f, latestFields); err != nil {
			t.Fatal(err)
		}
		if wantSQLFilter[f], err = canonicalRows(latestFields, filterRows(pred, latestRows)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("go", func(t *testing.T) {
		// Go's model of the spec agrees with tools/spec_expect.py, and Go reads its own table back
		if specExpected != nil {
			verdict(t, where{table: g.name, writer: "go", reader: "tools/spec_expect.py (expected) vs Go's model (actual)"}, nil, specExpected, wantLatest, nil)
		}
		fields, rows, err := goReadSnapshot(ctx, g.tb, 0)
		got, rerr := canonicalRows(fields, rows)
		verdict(t, where{table: g.name, writer: "go", reader: "go"}, nil, wantLatest, got, errors2(err, rerr))
		for _, id := range ids {
			fields, rows, err := goReadSnapshot(ctx, g.tb, id)
			got, rerr := canonicalRows(fields, rows)
			verdict(t, where{table: g.name, snapshot: id, writer: "go", reader: "go"}, nil, wantSnap[id], got, errors2(err, rerr))
		}
	})

	t.Run("readers", func(t *testing.T) {
		for _, reader := range []string{java1, java2, py, flink, flink1} {
			t.Run(reader, func(t *testing.T) {
				t.Parallel()
				t.Run("latest", func(t *testing.T) {
					got, err := oracleRead(reader, g.ref, readOpts{})
					verdict(t, where{table: g.name, writer: "go", reader: reader, query: readQuery(reader, g.ref, readOpts{}, nil)},
						known(g.name, reader, ""), wantLatest, got, err)
				})
				if reader == flink1 {
					// the Flink 1.20 line reads the latest snapshot only: the
					// time travel and filters of Paimon's Flink source are
					// checked with Flink 2.0 (CI time)
					return
				}
				for _, id := range ids {
					t.Run(fmt.Sprintf("snapshot-%d", id), func(t *testing.T) {
						got, err := oracleRead(reader, g.ref, readOpts{snapshot: id})
						want := wantSnap[id]
						if reader == flink {
							want = wantSnapLatest[id]
						}
						verdict(t, where{table: g.name, snapshot: id, writer: "go", reader: reader, query: readQuery(reader, g.ref, readOpts{snapshot: id}, nil)},
							known(g.name, reader, ""), want, got, err)
					})
				}
				for _, f := range filters {
					t.Run("filter "+f, func(t *testing.T) {
						got, err := oracleRead(reader, g.ref, readOpts{filter: f})
						want := wantFilter[f]
						if reader == flink {
							want = wantSQLFilter[f]
						}
						verdict(t, where{table: g.name, writer: "go", reader: reader, filter: f, query: readQuery(reader, g.ref, readOpts{filter: f}, latestFields)},
							known(g.name, reader, f), want, got, err)
					})
				}
			})
		}
	})

	t.Run("snapshots", func(t *testing.T) {
		// Java lists the snapshots Go committed, with their kinds and record counts
		var want []string
		for _, id := range ids {
			want = append(want, fmt.Sprintf("%d %s total=%d", id, g.states[id].kind, len(g.states[id].rows)))
		}
		for _, reader := range []string{java1, java2} {
			snaps, err := oracleSnapshots(reader, g.ref)
			var got []string
			for _, s := range snaps {
				total := int64(-1)
				if s.TotalRecordCount != nil {
					total = *s.TotalRecordCount
				}
				got = append(got, fmt.Sprintf("%d %s total=%d", s.ID, s.Kind, total))
			}
			verdict(t, where{table: g.name, writer: "go", reader: reader + " snapshots"}, nil, want, got, err)
		}
	})

	t.Run("duckdb", func(t *testing.T) {
		for _, c := range g.spec.Commits {
			if c.Kind == "alter" {
				t.Skip("the data files have older schemas than the table (DuckDB reads files, not the table)")
			}
		}
		paths, err := oraclePlanPaths(java1, g.ref)
		if err != nil {
			t.Fatal(err)
		}
		got, err := duckdbRead(paths)
		verdict(t, where{table: g.name, writer: "go", reader: "duckdb (files of java1's plan)"}, known(g.name, "duckdb", ""), wantLatest, got, err)
	})
}

func errors2(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// row builds one JSON row of a spec.
func row(kv ...any) json.RawMessage {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	data, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return data
}

func appendStep(rows ...json.RawMessage) specCommit { return specCommit{Kind: "append", Rows: rows} }

// goSpecs are Go's own cases, in the spec form; allTypes is
// testdata/specs/all_types.json.
func goSpecs(allTypes *specFile) map[string]*specFile {
	out := map[string]*specFile{}

	// every type under other file and manifest options: codecs, files
	// rolled at a tiny target size, manifests merged and fully compacted
	// after a few commits
	for name, opts := range map[string]map[string]string{
		"go_opts_snappy":      {"file.compression": "snappy", "manifest.compression": "snappy"},
		"go_opts_gzip":        {"file.compression": "gzip", "manifest.compression": "deflate"},
		"go_opts_lz4":         {"file.compression": "lz4", "manifest.compression": "null"},
		"go_opts_none_zstd9":  {"file.compression": "none", "file.compression.zstd-level": "9"},
		"go_opts_small_files": {"target-file-size": "1 kb", "manifest.target-file-size": "2 kb", "manifest.merge-min-count": "2", "manifest.full-compaction-threshold-size": "4 kb"},
	} {
		s := &specFile{Description: "all_types rows with options", Schema: allTypes.Schema, Options: opts, Filters: allTypes.Filters}
		for k := 0; k < 4; k++ {
			s.Commits = append(s.Commits, allTypes.Commits...)
		}
		out[name] = s
	}

	// many rows in one commit: Java writes several pages and row groups
	// (small parquet.page.size / parquet.block.size), dictionaries
	many := &specFile{
		Description: "3000 rows of every type in one commit",
		Schema:      allTypes.Schema,
		Options:     map[string]string{"parquet.page.size": "4096", "parquet.block.size": "65536", "parquet.page.row-count-limit": "300"},
		Filters:     []string{"id = 2999", "id < 10", "s = 'x'", "i >= 0"},
	}
	var manyRows []json.RawMessage
	for k := 0; k < 500; k++ {
		for _, c := range allTypes.Commits {
			for _, r := range c.Rows {
				v, err := decodeJSON(r)
				if err != nil {
					panic(err)
				}
				obj := v.(map[string]any)
				obj["id"] = len(manyRows)
				data, err := json.Marshal(obj)
				if err != nil {
					panic(err)
				}
				manyRows = append(manyRows, data)
			}
		}
	}
	many.Commits = []specCommit{appendStep(manyRows...)}
	out["go_many_rows"] = many

	// a composite bucket key of many types (BinaryRow's fixed and variable
	// parts: strings up to 7 bytes inline and longer, DECIMAL(20) and
	// TIMESTAMP(6) out of line), each row read back by an equality filter on
	// the whole key (bucket pruning)
	comp := &specFile{
		Description: "bucket 5 on a composite key of many types",
		Schema: []specField{{"bi", "BIGINT"}, {"s", "STRING"}, {"dt", "DATE"}, {"dec", "DECIMAL(20, 4)"}, {"ts", "TIMESTAMP(6)"},
			{"b", "BOOLEAN"}, {"ti", "TINYINT"}, {"f", "FLOAT"}, {"c", "CHAR(40)"}, {"v", "INT"}},
		Options: map[string]string{"bucket": "5", "bucket-key": "bi,s,dt,dec,ts,b,ti,f,c"},
		Filters: []string{"v >= 10", "bi = 7"},
	}
	keyStrs := []string{"", "a", "seven77", "eight888", "a much longer string than sixteen bytes", "日本", "ü"}
	var compRows []json.RawMessage
	for i := 0; i < 28; i++ {
		compRows = append(compRows, row("bi", int64(i*i)-50, "s", keyStrs[i%len(keyStrs)], "dt", fmt.Sprintf("20%02d-0%d-1%d", i, 1+i%9, i%10),
			"dec", fmt.Sprintf("%d.%04d", i*1000003-7000000, i*37%10000), "ts", fmt.Sprintf("2024-01-01T00:00:%02d.%06d", i%60, i*12345%1000000),
			"b", i%2 == 0, "ti", i-14, "f", float64(i)*0.25-3, "c", keyStrs[(i+3)%len(keyStrs)], "v", i))
	}
	comp.Commits = []specCommit{appendStep(compRows[:14]...), appendStep(compRows[14:]...)}
	out["go_bucket_composite"] = comp

	// string statistics (truncated to n code points, max rounded up; emoji,
	// CJK, U+FFFF, U+10FFFF, U+D7FF at the cut) under three stats modes, one
	// file per value so that Java prunes files by them
	strs := []string{
		strings.Repeat("a", 25), strings.Repeat("a", 16) + "b", strings.Repeat("日本語", 6), strings.Repeat("😀", 17),
		strings.Repeat("\uffff", 17), strings.Repeat("\U0010FFFF", 17), strings.Repeat("z", 16) + "\u00ff", strings.Repeat("\ud7ff", 17),
		"short", "", strings.Repeat("a", 15) + "😀" + "tail", "b",
	}
	for name, opts := range map[string]map[string]string{
		"go_stats_strings":       nil,
		"go_stats_strings_t4":    {"metadata.stats-mode": "truncate(4)"},
		"go_stats_strings_full":  {"metadata.stats-mode": "full"},
		"go_stats_strings_mixed": {"metadata.stats-mode": "none", "fields.s.stats-mode": "truncate(2)", "fields.id.stats-mode": "counts"},
	} {
		s := &specFile{
			Description: "string stats", Schema: []specField{{"id", "INT"}, {"s", "STRING"}}, Options: opts,
			Filters: []string{"s >= '" + strings.Repeat("a", 16) + "b'", "s < 'b'", "s > '日本語日本語日本語日本語日本語日本'", "s <= 'short'", "id > 8"},
		}
		for i, v := range strs {
			s.Commits = append(s.Commits, appendStep(row("id", i, "s", v)))
			s.Filters = append(s.Filters, "s = '"+strings.ReplaceAll(v, "'", "''")+"'")
		}
		out[name] = s
	}

	// float statistics: -0.0 and 0.0, NaN, infinities, one file each
	fl := &specFile{
		Description: "float stats",
		Schema:      []specField{{"id", "INT"}, {"f", "FLOAT"}, {"d", "DOUBLE"}},
		Filters:     []string{"d = 0", "d >= 0", "d < 0", "d > 1", "d <= -1", "f = 0", "f > 0", "f < 0", "f >= 1.5", "d = 'NaN'", "d > 'Infinity'", "d < 'Infinity'"},
	}
	for i, v := range []any{"-0.0", 0.0, "NaN", "Infinity", "-Infinity", 1.5, nil, 2.5e-310} {
		fl.Commits = append(fl.Commits, appendStep(row("id", i, "f", v, "d", v)))
	}
	fl.Commits = append(fl.Commits, appendStep(row("id", 100, "f", 1.5, "d", 1.5), row("id", 101, "f", "NaN", "d", "NaN")))
	out["go_stats_floats"] = fl

	// 20 commits into an INT-partitioned table (NULL partition included);
	// every snapshot is read back; filters on the data columns exercise the
	// stats of every file.
	tw := &specFile{
		Description:   "20 commits of 3 rows, partitioned by INT with NULL",
		Schema:        []specField{{"id", "BIGINT NOT NULL"}, {"p", "INT"}, {"name", "STRING"}, {"v", "DOUBLE"}},
		PartitionKeys: []string{"p"},
		Filters:       []string{"id = 31", "id >= 50", "id < 3", "v > 40.0 AND p = 2", "name = 'n17'", "name >= 'n5'", "v IS NULL"},
	}
	parts := []any{0, 1, 2, nil}
	for k := 0; k < 20; k++ {
		var rows []json.RawMessage
		for j := 0; j < 3; j++ {
			id := 3*k + j
			var v any = float64(id) * 1.5
			if id%10 == 9 {
				v = nil
			}
			rows = append(rows, row("id", id, "p", parts[id%4], "name", fmt.Sprintf("n%d", id), "v", v))
		}
		tw.Commits = append(tw.Commits, appendStep(rows...))
	}
	out["go_twenty_commits"] = tw

	// schema evolution by AddColumns: a scalar, then nested types, then a
	// column no snapshot has written yet
	out["go_evolution"] = &specFile{
		Description: "AddColumns between appends",
		Schema:      []specField{{"id", "INT NOT NULL"}, {"s", "STRING"}},
		Filters:     []string{"d IS NULL", "d >= 1.0", "id > 2", "e IS NULL", "s = 'a'"},
		Commits: []specCommit{
			appendStep(row("id", 1, "s", "a"), row("id", 2, "s", nil)),
			{Kind: "alter", AddColumns: []specField{{"d", "DOUBLE"}}},
			appendStep(row("id", 3, "s", "c", "d", 3.5), row("id", 4, "d", nil)),
			{Kind: "alter", AddColumns: []specField{{"r", "ROW<x INT, y ARRAY<STRING>>"}, {"m", "MAP<STRING, BIGINT>"}, {"ts", "TIMESTAMP(6)"}}},
			appendStep(row("id", 5, "s", "e", "d", -0.5, "r", map[string]any{"x": 5, "y": []any{"v", nil}}, "m", [][]any{{"k", 1}}, "ts", "2024-01-01T00:00:00.000001")),
			appendStep(row("id", 6, "r", map[string]any{"x": nil, "y": nil})),
			{Kind: "alter", AddColumns: []specField{{"e", "DECIMAL(10, 2)"}}},
		},
	}

	// fixed buckets on a STRING key in an INT-partitioned table: many small
	// files per bucket, full compaction, more appends, expiry
	names := []string{"alice", "bob", "", "日本", "a/b", "ü", "x y", "carol", "dave", "erin", "O'Brien", "zz"}
	bc := &specFile{
		Description:   "bucket 3 on a STRING key, partitioned by INT; compaction and expiry by Go",
		Schema:        []specField{{"name", "STRING"}, {"id", "INT"}, {"p", "INT"}},
		PartitionKeys: []string{"p"},
		Options:       map[string]string{"bucket": "3", "bucket-key": "name"},
		Filters:       []string{"id >= 30", "id < 5 AND p = 0"},
	}
	id := 0
	for k := 0; k < 10; k++ {
		var rows []json.RawMessage
		for j := 0; j < 5; j++ {
			rows = append(rows, row("name", names[id%len(names)], "id", id, "p", id%2))
			id++
		}
		bc.Commits = append(bc.Commits, appendStep(rows...))
	}
	bc.Commits = append(bc.Commits, specCommit{Kind: "compact"},
		appendStep(row("name", "alice", "id", 100, "p", 0), row("name", nil, "id", 101, "p", 1)),
		appendStep(row("name", "new", "id", 102, "p", 2)),
		specCommit{Kind: "expire", RetainMax: 3})
	out["go_bucket_compact_expire"] = bc

	// unaware-bucket table: compaction (bin packing) and expiry
	uc := &specFile{
		Description:   "bucket -1, partitioned by STRING; compaction and expiry by Go",
		Schema:        []specField{{"id", "BIGINT"}, {"grp", "STRING"}},
		PartitionKeys: []string{"grp"},
		Options:       map[string]string{"compaction.min.file-num": "3"},
		Filters:       []string{"id >= 10", "id = 3"},
	}
	for k := 0; k < 6; k++ {
		uc.Commits = append(uc.Commits, appendStep(row("id", 2*k, "grp", "g1"), row("id", 2*k+1, "grp", []string{"g2", "g3"}[k%2])))
	}
	uc.Commits = append(uc.Commits, specCommit{Kind: "compact"}, appendStep(row("id", 100, "grp", "g1")),
		specCommit{Kind: "expire", RetainMax: 2})
	out["go_unaware_compact_expire"] = uc

	// TIMESTAMP(7..9) and LTZ(9) within int64 nanoseconds (INT96 in Parquet)
	out["go_timestamps9"] = &specFile{
		Description: "TIMESTAMP(7/8/9) and LTZ(7/9) within the int64-nanosecond range",
		Schema:      []specField{{"id", "INT"}, {"ts7", "TIMESTAMP(7)"}, {"ts9", "TIMESTAMP(9)"}, {"ltz7", "TIMESTAMP(7) WITH LOCAL TIME ZONE"}, {"ltz9", "TIMESTAMP(9) WITH LOCAL TIME ZONE"}},
		Filters:     []string{"ts9 > '2000-01-01T00:00:00'", "ts9 < '1970-01-01T00:00:00.000000001'", "ltz9 IS NULL", "ts7 >= '1970-01-01T00:00:00.0000001'"},
		Commits: []specCommit{appendStep(
			row("id", 1, "ts7", "1970-01-01T00:00:00.0000001", "ts9", "1970-01-01T00:00:00.000000001", "ltz7", "1970-01-01T00:00:00.0000001Z", "ltz9", "1970-01-01T00:00:00.000000001Z"),
			row("id", 2, "ts7", "1969-12-31T23:59:59.9999999", "ts9", "1969-12-31T23:59:59.999999999", "ltz7", "1969-12-31T23:59:59.9999999Z", "ltz9", "1969-12-31T23:59:59.999999999Z"),
			row("id", 3, "ts7", "2262-04-11T23:47:16.8547758", "ts9", "2262-04-11T23:47:16.854775807", "ltz7", "2262-04-11T23:47:16.8547758Z", "ltz9", "2262-04-11T23:47:16.854775807Z"),
			row("id", 4, "ts7", "1677-09-21T00:12:43.1452242", "ts9", "1677-09-21T00:12:43.145224192", "ltz7", "1677-09-21T00:12:43.1452242Z", "ltz9", "1677-09-21T00:12:43.145224192Z"),
			row("id", 5, "ts7", "2024-02-29T12:34:56.1234567", "ts9", "2024-02-29T12:34:56.123456789", "ltz7", "2024-02-29T12:34:56.1234567Z", "ltz9", "2024-02-29T12:34:56.123456789Z"),
			row("id", 6),
		)},
	}

	// partition values needing escaping (one STRING key), each read back
	// through an equality filter (keyFilters)
	esc := []any{"a/b", "x=y", "50%", "a b", "日本/ü", nil, "", "#?:*\"<>|\\", "%2F", "a\tb", "emoji😀", "..", "=", "/",
		"UPPER", "~!@$^&()[]{};',", "line\nbreak", "\u0001", "__DEFAULT_PARTITION__x"}
	pe := &specFile{
		Description:   "partition values needing escaping",
		Schema:        []specField{{"region", "STRING"}, {"id", "BIGINT NOT NULL"}},
		PartitionKeys: []string{"region"},
	}
	var rows []json.RawMessage
	for i, v := range esc {
		rows = append(rows, row("region", v, "id", i))
	}
	pe.Commits = []specCommit{appendStep(rows...), appendStep(row("region", "a/b", "id", 100), row("region", nil, "id", 101))}
	out["go_partition_escaping"] = pe

	// typed partition keys: DATE (alone, with NULL and the calendar's ends)
	// and BOOLEAN/BIGINT/DECIMAL/TIMESTAMP/TINYINT/CHAR together
	out["go_partition_date"] = &specFile{
		Description:   "DATE partitions",
		Schema:        []specField{{"day", "DATE"}, {"id", "INT NOT NULL"}},
		PartitionKeys: []string{"day"},
		Commits: []specCommit{appendStep(row("day", "1969-12-31", "id", 1), row("day", "1970-01-01", "id", 2), row("day", "0001-01-01", "id", 3),
			row("day", "9999-12-31", "id", 4), row("day", "2024-02-29", "id", 5), row("day", nil, "id", 6), row("day", "1899-01-01", "id", 7))},
	}
	out["go_partition_types"] = &specFile{
		Description:   "partition keys of several types",
		Schema:        []specField{{"b", "BOOLEAN"}, {"bi", "BIGINT"}, {"dec", "DECIMAL(5, 2)"}, {"ts", "TIMESTAMP(3)"}, {"ti", "TINYINT"}, {"c", "CHAR(3)"}, {"id", "INT NOT NULL"}},
		PartitionKeys: []string{"b", "bi", "dec", "ts", "ti", "c"},
		Commits: []specCommit{appendStep(
			row("b", true, "bi", -9223372036854775808, "dec", "-1.50", "ts", "2024-01-01T12:34:56.789", "ti", -128, "c", "a/b", "id", 1),
			row("b", false, "bi", 0, "dec", "0.00", "ts", "1970-01-01T00:00:00", "ti", 0, "c", "x=y", "id", 2),
			row("b", nil, "bi", nil, "dec", nil, "ts", nil, "ti", nil, "c", nil, "id", 3),
			row("b", true, "bi", 9223372036854775807, "dec", "999.99", "ts", "1969-12-31T23:59:59.999", "ti", 127, "c", "ü", "id", 4),
		)},
	}
	return out
}
