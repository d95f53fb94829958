// Test helpers shared by the internal and black-box tests of package snapshot.
package snapshot

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// FixturesDir returns shared/fixtures/paimon beside the repository root (the
// directory holding go.mod), or skips the test when it is absent.
func FixturesDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("fixtures: repository root (go.mod) not found")
		}
		dir = parent
	}
	fx := filepath.Join(dir, "..", "shared", "fixtures", "paimon")
	if _, err := os.Stat(fx); err != nil {
		t.Skipf("fixtures not found at %s (CI keeps them beside the clone)", fx)
	}
	return fx
}

// FixtureFiles returns the fixture files matching the glob below each
// fixture's table directory, e.g. "schema/schema-*".
func FixtureFiles(t testing.TB, glob string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(FixturesDir(t), "*", "warehouse", "*", "*", glob))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no fixture files match %s", glob)
	}
	sort.Strings(files)
	return files
}

// FixtureName shortens a fixture path for sub-test names.
func FixtureName(t testing.TB, path string) string {
	rel, err := filepath.Rel(FixturesDir(t), path)
	if err != nil {
		return path
	}
	return rel
}
