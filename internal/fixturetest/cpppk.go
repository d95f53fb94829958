package fixturetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// CppPKTables are the Java-written primary-key tables copied from
// alibaba/paimon-cpp's test data into testdata/cpp; testdata/cpp/PROVENANCE.md
// says where each comes from, which Java Paimon wrote it and what each
// golden file under <table>/expected holds.
var CppPKTables = []string{
	"pk_table_scan_and_read_mor",
	"pk_table_scan_and_read_first_row",
	"pk_table_scan_and_read_dv",
	"pk_table_with_alter_table",
	"pk_table_with_dv_cardinality",
	"pk_with_bitmap_dv",
}

// CppPKRoot returns internal/fixturetest/testdata/cpp of the repository. The
// tables live inside the repository, so unlike Dir it never skips: it fails
// t when the directory is missing.
func CppPKRoot(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoDir(t), "internal", "fixturetest", "testdata", "cpp")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("paimon-cpp primary-key fixtures: %v", err)
	}
	return dir
}

// CppPKWarehouse returns the warehouse of one table of CppPKTables,
// testdata/cpp/<name>/warehouse, which holds the table as database
// "default", table <name>. It fails t for an unknown name. Tests must not
// write into it; see CopyCppPKWarehouse.
func CppPKWarehouse(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(CppPKRoot(t), name, "warehouse")
	if _, err := os.Stat(filepath.Join(dir, "default.db", name)); err != nil {
		t.Fatalf("paimon-cpp primary-key fixture %q: %v", name, err)
	}
	return dir
}

// CppPK returns the table directory of one table of CppPKTables,
// testdata/cpp/<name>/warehouse/default.db/<name>.
func CppPK(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(CppPKWarehouse(t, name), "default.db", name)
}

// CopyCppPKWarehouse copies the warehouse of one table of CppPKTables into a
// new directory under t.TempDir() and returns the copy, for tests that
// write.
func CopyCppPKWarehouse(t testing.TB, name string) string {
	t.Helper()
	return copyToTemp(t, CppPKWarehouse(t, name))
}

// CppPKRow is one line of a golden file testdata/cpp/<table>/expected/*.jsonl.
type CppPKRow struct {
	// Snapshot is the snapshot whose plan emitted the row in a stream.* file;
	// 0 in batch-* files.
	Snapshot int64
	// Phase is "full" (the startup plan of a full scan mode, a merged read)
	// or "delta" (a later snapshot's delta files) in stream.* files; "" in
	// batch-* files.
	Phase string
	// Kind is the row kind of a "delta" row. HasKind is false where the
	// golden does not state one (batch and "full" rows, see PROVENANCE.md).
	Kind    kv.RowKind
	HasKind bool
	// Values maps each column of the read schema to its canonical string
	// (see Canonical); nil is SQL NULL.
	Values map[string]*string
}

// CppPKExpected reads testdata/cpp/<table>/expected/<name>.jsonl, e.g.
// CppPKExpected(t, "pk_table_scan_and_read_mor", "batch-5"). Every value must
// be a JSON string or null; anything else fails t, so that a hand edit
// cannot slip a number in. Rows keep the file's order.
func CppPKExpected(t testing.TB, table, name string) []CppPKRow {
	t.Helper()
	p := filepath.Join(CppPKRoot(t), table, "expected", name+".jsonl")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("golden rows: %v", err)
	}
	rows, err := ParseCppPKRows(data)
	if err != nil {
		t.Fatalf("golden rows %s: %v", p, err)
	}
	return rows
}

// ParseCppPKRows parses the golden format of CppPKExpected: one JSON object
// per line, "_SNAPSHOT", "_PHASE" and "_ROW_KIND" reserved, every other key
// a column with a string or null value. Empty lines are skipped.
func ParseCppPKRows(data []byte) ([]CppPKRow, error) {
	var out []CppPKRow
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		r := CppPKRow{Values: map[string]*string{}}
		for k, v := range obj {
			s, isString := v.(string)
			if v != nil && !isString {
				return nil, fmt.Errorf("line %d: %s is %T, not a string or null", line, k, v)
			}
			switch k {
			case "_SNAPSHOT":
				id, err := strconv.ParseInt(s, 10, 64)
				if err != nil || id <= 0 {
					return nil, fmt.Errorf("line %d: _SNAPSHOT %q is not a snapshot id", line, s)
				}
				r.Snapshot = id
			case "_PHASE":
				if s != "full" && s != "delta" {
					return nil, fmt.Errorf("line %d: _PHASE %q is not full or delta", line, s)
				}
				r.Phase = s
			case "_ROW_KIND":
				k, err := kv.ParseRowKind(s)
				if err != nil {
					return nil, fmt.Errorf("line %d: _ROW_KIND: %w", line, err)
				}
				r.Kind, r.HasKind = k, true
			default:
				if strings.HasPrefix(k, "_") {
					return nil, fmt.Errorf("line %d: unknown reserved key %s", line, k)
				}
				if isString {
					r.Values[k] = &s
				} else {
					r.Values[k] = nil
				}
			}
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Canonical renders a value as the golden files write it: integers in
// decimal, floating point numbers as strconv.FormatFloat(v, 'g', -1, bits)
// (so 11.0 is "11"), booleans as "true"/"false", strings as they are,
// decimals with their scale. It returns nil for nil (SQL NULL). Other types
// do not occur in these goldens and render with Render, which never equals
// a golden value.
func Canonical(v any) *string {
	var s string
	switch x := v.(type) {
	case nil:
		return nil
	case int8:
		s = strconv.FormatInt(int64(x), 10)
	case int16:
		s = strconv.FormatInt(int64(x), 10)
	case int32:
		s = strconv.FormatInt(int64(x), 10)
	case int64:
		s = strconv.FormatInt(x, 10)
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		s = strconv.FormatBool(x)
	case string:
		s = x
	case types.Decimal:
		s = x.String()
	default:
		s = Render(v)
	}
	return &s
}

// CanonicalRow turns a row read with the columns names into the Values
// form of CppPKRow, for comparing with CppPKExpected.
func CanonicalRow(names []string, row []any) map[string]*string {
	out := make(map[string]*string, len(names))
	for i, n := range names {
		out[n] = Canonical(row[i])
	}
	return out
}
