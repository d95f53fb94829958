// Package fixturetest locates the repository and the Java-written Paimon
// tables the tests compare lakecore with (shared/fixtures/paimon beside the
// repository clone; its README lists the expected rows), copies them for
// tests that write, lists a table's files and renders rows for exact
// comparison. It also holds, in testdata/cpp, the Java-written primary-key
// tables of paimon-cpp's test data with their golden rows (CppPK,
// CppPKExpected; testdata/cpp/PROVENANCE.md). It is imported by tests only:
// the lakecore packages' own, the plugins', tests/ and the CLI's.
package fixturetest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// RepoRoot returns the repository root: the nearest directory at or above
// the working directory (a test's package directory) that holds go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// RepoDir is RepoRoot for a test: it fails t when there is no go.mod above
// the working directory.
func RepoDir(t testing.TB) string {
	t.Helper()
	dir, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Root returns shared/fixtures/paimon beside the repository root, or an
// error when it is absent. Tests use Dir, or Available when they go on
// without the fixtures.
func Root() (string, error) {
	repo, err := RepoRoot()
	if err != nil {
		return "", err
	}
	root := filepath.Join(repo, "..", "shared", "fixtures", "paimon")
	if _, err := os.Stat(root); err != nil {
		return "", fmt.Errorf("fixtures not found at %s (CI keeps them beside the clone)", root)
	}
	return root, nil
}

// Dir returns shared/fixtures/paimon beside the repository root. When the
// fixtures are absent it skips the test, or fails it under
// REQUIRE_FIXTURES=1 (as CI runs).
func Dir(t testing.TB) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		testenv.Missing(t, testenv.RequireFixtures, err.Error())
	}
	return root
}

// Available reports whether the fixtures are there, for tests that use
// them when they can and go on without (fuzz seeds). Under
// REQUIRE_FIXTURES=1 their absence fails t instead.
func Available(t testing.TB) bool {
	t.Helper()
	_, err := Root()
	if err != nil && testenv.Required(testenv.RequireFixtures) {
		t.Fatalf("%v (required by %s=1)", err, testenv.RequireFixtures)
	}
	return err == nil
}

// Warehouse returns the warehouse directory of one fixture,
// shared/fixtures/paimon/<fixture>/warehouse. When it is absent it skips
// the test, or fails it under REQUIRE_FIXTURES=1. Tests must not write
// into it.
func Warehouse(t testing.TB, fixture string) string {
	t.Helper()
	dir := filepath.Join(Dir(t), fixture, "warehouse")
	if _, err := os.Stat(dir); err != nil {
		testenv.Missingf(t, testenv.RequireFixtures, "Paimon fixture %s not found at %s", fixture, dir)
	}
	return dir
}

// CopyWarehouse copies the warehouse of one fixture (see Warehouse) into a
// new directory under t.TempDir() and returns the copy, writable, for tests
// that commit, expire or write consumer files. A missing fixture ends the
// test as in Warehouse.
func CopyWarehouse(t testing.TB, fixture string) string {
	t.Helper()
	return copyToTemp(t, Warehouse(t, fixture))
}

// copyToTemp copies the tree src into a new directory under t.TempDir()
// and returns that directory.
func copyToTemp(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}

// ListFiles returns, sorted, every file below dir as a slash-separated path
// relative to dir.
func ListFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// Files returns, sorted, the files matching glob below the table directory
// of every fixture (<fixture>/warehouse/<db>.db/<table>/<glob>, e.g.
// "schema/schema-*"). Without fixtures it ends the test as Dir does; it
// fails it when nothing matches.
func Files(t testing.TB, glob string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(Dir(t), "*", "warehouse", "*", "*", glob))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no fixture files match %s", glob)
	}
	sort.Strings(files)
	return files
}

// Name shortens a fixture file path to its path below the fixtures, for
// sub-test names.
func Name(t testing.TB, path string) string {
	rel, err := filepath.Rel(Dir(t), path)
	if err != nil {
		return path
	}
	return rel
}

// Render writes a value with its Go type, exactly, for comparing rows:
// decimals with their scale, timestamps to the nanosecond, nested values
// recursively. Two values render alike only if they are the same value of
// the same Go type.
func Render(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case types.Decimal:
		return "dec:" + x.String()
	case types.Timestamp:
		return fmt.Sprintf("ts:%s(%d+%d)", x.Time().Format("2006-01-02T15:04:05.000000000"), x.Millis, x.NanoOfMilli)
	case types.Date:
		return fmt.Sprintf("date:%d", int32(x))
	case types.Time:
		return fmt.Sprintf("time:%d", int32(x))
	case []byte:
		return fmt.Sprintf("bytes:%q", x)
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = Render(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case types.Map:
		parts := make([]string, len(x.Keys))
		for i := range x.Keys {
			parts[i] = Render(x.Keys[i]) + ": " + Render(x.Values[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprintf("%T:%v", v, v)
}
