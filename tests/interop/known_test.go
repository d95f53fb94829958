//go:build interop

package interop

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// knownIssue is an incompatibility of an oracle, listed in README.md
// "Findings" (cited by number). It names exactly the comparisons it covers:
// one table, one role and the reads by filter. A comparison it covers is
// still run, and must fail exactly as recorded in testdata/known (the
// oracle's error text, or the exact rows missing and unexpected): then the
// subtest is skipped with the reason. Any other failure of that comparison,
// one more row or one other value, fails the test, so a KNOWN entry cannot
// hide a Go-side regression in the same table. When the comparison passes
// the log says the issue no longer reproduces.
//
// KNOWN_UPDATE=1 records the failures as they are now (review the diff of
// testdata/known before committing it).
type knownIssue struct {
	table string // the table (spec) name
	// "reader" (Go wrote, that oracle reads: java1, java2, py, duckdb),
	// "writer>go" (they wrote, Go reads) or "writer writes" (their write
	// itself fails)
	role    string
	filters []string // the reads covered: "" the unfiltered ones (latest and each snapshot), else the exact filter
	reason  string
}

// unfiltered is the filters value of an issue of the unfiltered reads only.
var unfiltered = []string{""}

var knownIssues = []knownIssue{
	// pypaimon reading Go's tables
	{"multiset", py, []string{"", "id >= 2"}, "README finding 3: pypaimon 2.1.0 has no Arrow mapping for MULTISET (ValueError: Unsupported data type)"},
	{"timestamp_extremes", py, []string{"", "ts9 > '2262-04-11T23:47:16.854775807'", "ts3 <= '1970-01-01T00:00:00'"}, "README finding 2: pypaimon reads TIMESTAMP(9) through int64 nanoseconds; 0001-01-01 and 9999-12-31 wrap silently"},
	{"all_types", py, []string{"f > 0"}, "README finding 15: NaN with `f > 0`: Paimon's Predicate.test uses Float.compareTo (NaN matches), pypaimon drops the file with NaN from its plan or filters with Arrow semantics"},
	{"go_opts_snappy", py, []string{"f > 0"}, finding15opts},
	{"go_opts_gzip", py, []string{"f > 0"}, finding15opts},
	{"go_opts_lz4", py, []string{"f > 0"}, finding15opts},
	{"go_opts_none_zstd9", py, []string{"f > 0"}, finding15opts},
	{"go_opts_small_files", py, []string{"f > 0"}, finding15opts},
	{"go_stats_floats", py, []string{"d < 0", "d = 'NaN'", "d = 0", "d > 'Infinity'", "d > 1", "d >= 0", "f < 0", "f = 0", "f > 0", "f >= 1.5"}, "README findings 15 and 20: pypaimon drops files holding NaN from filtered plans, and compares -0.0 equal to 0.0 (IEEE) where Paimon's Predicate.test orders -0.0 below 0.0 (Double.compareTo); Java 1.x and 2.x read this table with every filter"},
	// Flink SQL reading Go's tables: WHERE is expected with SQL's float semantics (compileSQLFilter)
	{"go_stats_floats", flink, []string{"d = 0", "d >= 0", "f = 0", "f >= 1.5"}, findingF1},
	// Java reading tables that hold pypaimon's files too (TestMixedWriters)
	{"mixed_unaware", java1, []string{"d > 1.5"}, "README finding 14: pypaimon writes DECIMAL(p <= 18) as FIXED_LEN_BYTE_ARRAY; Java 1.4.2's Parquet filter pushdown then fails on its files (2.0.0 copes)"},
	{"mixed_bucket", java1, []string{"d > 1.5"}, "README finding 14: pypaimon writes DECIMAL(p <= 18) as FIXED_LEN_BYTE_ARRAY; Java 1.4.2's Parquet filter pushdown then fails on its files (2.0.0 copes)"},
	// DuckDB reading Go's Parquet files
	{"timestamp_extremes", "duckdb", unfiltered, "README finding 17: DuckDB reads INT96 (TIMESTAMP(9), written by Java and Go alike) as microseconds without the UTC flag"},
	{"go_timestamps9", "duckdb", unfiltered, "README finding 17: DuckDB reads INT96 (TIMESTAMP(9)/LTZ(9)) as microseconds without the UTC flag"},
	// their writes that are impossible
	{"multiset", py + " writes", unfiltered, "README finding 3: pypaimon cannot write MULTISET"},
	{"timestamp_extremes", py + " writes", unfiltered, "README finding 2: pypaimon cannot write TIMESTAMP(9) outside int64 nanoseconds (OverflowError)"},
	{"overwrite_expire_compact", py + " writes", unfiltered, "README finding 6: pypaimon has no snapshot expiry and no compaction"},
	{"bucketed_string", py + " writes", unfiltered, "README finding 6: pypaimon has no compaction"},
	{"go_bucket_compact_expire", py + " writes", unfiltered, "README finding 6: pypaimon has no compaction and no snapshot expiry"},
	{"go_unaware_compact_expire", py + " writes", unfiltered, "README finding 6: pypaimon has no compaction and no snapshot expiry"},
	// their reads of their own tables (the reference of TestTheyWrite's filters)
	{"go_stats_strings", java1 + ">go", []string{d7ffFilter}, finding21},
	{"go_stats_strings", java2 + ">go", []string{d7ffFilter}, finding21},
	{"go_stats_strings_t4", java1 + ">go", []string{d7ffFilter}, finding21},
	{"go_stats_strings_t4", java2 + ">go", []string{d7ffFilter}, finding21},
	{"go_stats_strings_mixed", java1 + ">go", []string{d7ffFilter}, finding21},
	{"go_stats_strings_mixed", java2 + ">go", []string{d7ffFilter}, finding21},
	{"go_stats_floats", py + ">go", []string{"d = 'NaN'"}, finding22},
	{"go_stats_floats", py + ">go", []string{"d > 'Infinity'"}, finding22},
}

const (
	finding15opts = "README finding 15: NaN with `f > 0` (the all_types rows under other options)"
	finding21     = "README finding 21: Java loses the row from its own file: its truncated string max rounds U+D7FF up to a lone surrogate, encoded as '?', below the value (lakecore rounds to U+E000; Java reads Go's files correctly)"
	findingF1     = "README finding F1: Flink SQL with -0.0 and NaN: Paimon's pushed-down filter (Predicate.test, Float.compareTo) drops -0.0 from `= 0` and `>= 0`, and `f >= 1.5` keeps NaN, where SQL's WHERE (IEEE) would not; the other float filters follow SQL"
	finding22     = "README finding 22: Java 2.0.0 drops the NaN row of pypaimon's file: parquet-mr's row-group filter compares NaN with pyarrow's footer min/max, which exclude NaN"
)

// d7ffFilter is the equality filter on the string of 17 U+D7FF.
var d7ffFilter = "s = '" + strings.Repeat("\ud7ff", 17) + "'"

// known returns the known issue covering a comparison, or nil.
func known(table, role, filter string) *knownIssue {
	for i, k := range knownIssues {
		if k.table == table && k.role == role && slices.Contains(k.filters, filter) {
			return &knownIssues[i]
		}
	}
	return nil
}

// verdict reports one comparison: an error or a diff fails the test,
// unless a known issue covers the comparison and it failed exactly as
// recorded, then it is skipped with the reason.
func verdict(t *testing.T, w where, k *knownIssue, want, got []string, err error) {
	t.Helper()
	if k != nil {
		knownVerdict(t, w, k, want, got, err)
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", w, err)
	}
	if d := diffLines(w, want, got); d != "" {
		t.Error(d)
	}
}

func knownVerdict(t *testing.T, w where, k *knownIssue, want, got []string, err error) {
	t.Helper()
	failure := exactFailure(want, got, err)
	path := filepath.Join(env.here, "testdata", "known", knownFile(w))
	knownFilesUsed.Store(filepath.Base(path), true)
	if failure == "" {
		t.Logf("known issue no longer reproduces here (%s); remove its entry and %s", k.reason, path)
		return
	}
	if os.Getenv("KNOWN_UPDATE") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("# "+w.String()+"\n"+failure), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("KNOWN (recorded in %s): %s", path, k.reason)
	}
	data, rerr := os.ReadFile(path)
	recorded := string(data)
	if i := strings.IndexByte(recorded, '\n'); i >= 0 && strings.HasPrefix(recorded, "# ") {
		recorded = recorded[i+1:]
	}
	switch {
	case rerr != nil:
		t.Errorf("%s: covered by KNOWN (%s) but no failure is recorded (%v; KNOWN_UPDATE=1 records it). It failed with:\n%s", w, k.reason, rerr, failure)
	case recorded != failure:
		t.Errorf("%s: fails otherwise than the KNOWN failure recorded in %s (%s):\nrecorded:\n%s\nnow:\n%s", w, path, k.reason, recorded, failure)
	default:
		if err != nil {
			t.Skipf("KNOWN: %s\n%s: %v", k.reason, w, firstLines(err.Error(), 6))
		}
		t.Skipf("KNOWN: %s\n%s", k.reason, diffLines(w, want, got))
	}
}

// knownFilesUsed holds the names of the files of testdata/known that a
// comparison of this run is covered by.
var knownFilesUsed sync.Map

// checkKnownFilesUsed, after a run of every test, reports the files of
// testdata/known that no comparison is covered by (a KNOWN entry removed,
// a comparison renamed) and returns 1 if there are any: a recorded failure
// that nothing checks would only mislead.
func checkKnownFilesUsed() int {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		return 0 // some tests only
	}
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
		return 0
	}
	entries, err := os.ReadDir(filepath.Join(env.here, "testdata", "known"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "testdata/known: %v\n", err)
		return 1
	}
	code := 0
	for _, e := range entries {
		if _, ok := knownFilesUsed.Load(e.Name()); !ok {
			fmt.Fprintf(os.Stderr, "testdata/known/%s: no comparison of this run covers it; remove it (or restore its KNOWN entry)\n", e.Name())
			code = 1
		}
	}
	return code
}

// exactFailure renders how a comparison failed, exactly and without the
// paths of the run (temporary directories, the clone): "error: " and the error, or the rows missing ("- ")
// and unexpected ("+ "), sorted. "" when it passed.
func exactFailure(want, got []string, err error) string {
	if err != nil {
		msg := tempPath.ReplaceAllString(err.Error(), "<tmp>")
		return "error: " + strings.ReplaceAll(msg, env.root, "<repo>") + "\n"
	}
	missing, extra := multisetDiff(want, got)
	if len(missing)+len(extra) == 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range missing {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range extra {
		b.WriteString("+ " + l + "\n")
	}
	return b.String()
}

// tempPath matches the directories of a run (t.TempDir, the oracles' own
// temporary files) in error messages.
var tempPath = regexp.MustCompile(regexp.QuoteMeta(os.TempDir()) + `/[^\s'":,)\]]*`)

// knownFile names the file of testdata/known that records the failure of
// one comparison: readable parts of its description and a hash of all of it.
func knownFile(w where) string {
	sum := sha256.Sum256([]byte(w.String()))
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '-'
	}, strings.ToLower(w.table+"-"+w.writer+"-"+w.reader))
	slug = strings.Trim(regexp.MustCompile(`-+`).ReplaceAllString(slug, "-"), "-")
	if len(slug) > 80 {
		slug = slug[:80]
	}
	return fmt.Sprintf("%s-%s.txt", slug, hex.EncodeToString(sum[:4]))
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
