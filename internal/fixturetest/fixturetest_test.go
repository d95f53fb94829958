package fixturetest_test

import (
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func TestRepoRoot(t *testing.T) {
	root, err := fixturetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "fixturetest")); err != nil {
		t.Fatalf("root %s does not hold this package: %v", root, err)
	}
}

func TestRepoDir(t *testing.T) {
	root, err := fixturetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if got := fixturetest.RepoDir(t); got != root {
		t.Fatalf("RepoDir %s, RepoRoot %s", got, root)
	}
}

func TestListFiles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"b/2", "a", "b/1", "c/d/e"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := fixturetest.ListFiles(t, dir), []string{"a", "b/1", "b/2", "c/d/e"}; !slices.Equal(got, want) {
		t.Fatalf("ListFiles %v, want %v", got, want)
	}
}

// TestCopyWarehouse checks that the copy holds the fixture's files and is
// writable where the fixtures are not.
func TestCopyWarehouse(t *testing.T) {
	const fixture = "cpp-java11-append-fixed-bucket-complex-types"
	src := fixturetest.Warehouse(t, fixture)
	dst := fixturetest.CopyWarehouse(t, fixture)
	if got, want := fixturetest.ListFiles(t, dst), fixturetest.ListFiles(t, src); !slices.Equal(got, want) || len(got) == 0 {
		t.Fatalf("copy has %v, fixture %v", got, want)
	}
	consumer := filepath.Join(dst, "default.db", "append_complex_data", "consumer", "consumer-x")
	if err := os.MkdirAll(filepath.Dir(consumer), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(consumer, []byte("{}"), 0o644); err != nil {
		t.Fatalf("copy not writable: %v", err)
	}
}

func TestFiles(t *testing.T) {
	files := fixturetest.Files(t, "schema/schema-0")
	for _, f := range files {
		if filepath.Base(f) != "schema-0" || fixturetest.Name(t, f) == f {
			t.Errorf("file %s, name %s", f, fixturetest.Name(t, f))
		}
	}
}

func TestRender(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{int32(1), "int32:1"},
		{int64(1), "int64:1"},
		{"a", `"a"`},
		{[]byte("a"), `bytes:"a"`},
		{types.Decimal{Unscaled: big.NewInt(1050), Scale: 3}, "dec:1.050"},
		{types.Timestamp{Millis: 1, NanoOfMilli: 2}, "ts:1970-01-01T00:00:00.001000002(1+2)"},
		{types.Date(3), "date:3"},
		{types.Time(4), "time:4"},
		{[]any{int8(1), nil}, "[int8:1, null]"},
		{types.Map{Keys: []any{"k"}, Values: []any{true}}, `{"k": bool:true}`},
	}
	for _, tc := range cases {
		if got := fixturetest.Render(tc.v); got != tc.want {
			t.Errorf("Render(%#v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

// TestMissingFixtures runs Dir, Warehouse and Available in a repository
// without shared/fixtures beside it: they skip, or fail under
// REQUIRE_FIXTURES=1.
func TestMissingFixtures(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	for _, require := range []string{"", "1"} {
		t.Setenv(testenv.RequireFixtures, require)
		for name, call := range map[string]func(testing.TB){
			"Dir":       func(r testing.TB) { fixturetest.Dir(r) },
			"Warehouse": func(r testing.TB) { fixturetest.Warehouse(r, "append_basic") },
			"Available": func(r testing.TB) {
				if fixturetest.Available(r) {
					t.Errorf("Available without fixtures")
				}
			},
		} {
			r := &testenv.Recorder{TB: t}
			call(r)
			switch {
			case require == "1" && (r.FatalMessage == "" || r.SkipMessage != ""):
				t.Errorf("%s with REQUIRE_FIXTURES=1: failed %q, skipped %q", name, r.FatalMessage, r.SkipMessage)
			case require == "" && name == "Available" && (r.FatalMessage != "" || r.SkipMessage != ""):
				t.Errorf("%s: failed %q, skipped %q; want neither", name, r.FatalMessage, r.SkipMessage)
			case require == "" && name != "Available" && (r.SkipMessage == "" || r.FatalMessage != ""):
				t.Errorf("%s: skipped %q, failed %q; want a skip", name, r.SkipMessage, r.FatalMessage)
			}
			if msg := r.FatalMessage + r.SkipMessage; msg != "" && !strings.Contains(msg, "fixtures not found") {
				t.Errorf("%s: message %q does not say what is missing", name, msg)
			}
		}
	}
}
