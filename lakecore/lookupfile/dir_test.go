package lookupfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDir: a Dir's files go in a directory of its own, removed on Close;
// a second Dir under the same base leaves a live one alone and removes
// those no process holds (a crashed writer's: its lock file unlocked) and
// old ones without a lock file, but not other directories.
func TestDir(t *testing.T) {
	base := filepath.Join(t.TempDir(), "tmp") // created by OpenDir
	a, err := OpenDir(base)
	if err != nil {
		t.Fatal(err)
	}
	p := a.NewPath("data-1/x.parquet")
	if filepath.Dir(p) != a.Path() || filepath.Base(p) != "1-data-1_x.parquet" {
		t.Fatalf("NewPath: %s in %s", p, a.Path())
	}
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A crashed process's directory: LOCK exists, nobody holds it.
	crashed := filepath.Join(base, DirPrefix+"crashed")
	if err := os.MkdirAll(crashed, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"LOCK", "1-f"} {
		if err := os.WriteFile(filepath.Join(crashed, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Without LOCK: removed when old, kept when young (being created).
	old, young := filepath.Join(base, DirPrefix+"old"), filepath.Join(base, DirPrefix+"young")
	other := filepath.Join(base, "someone-else")
	for _, d := range []string{old, young, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-time.Hour)
	for _, d := range []string{old, other} {
		if err := os.Chtimes(d, past, past); err != nil {
			t.Fatal(err)
		}
	}
	b, err := OpenDir(base)
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool {
		_, err := os.Stat(p)
		return !errors.Is(err, os.ErrNotExist)
	}
	for p, want := range map[string]bool{p: true, crashed: false, old: false, young: true, other: true, b.Path(): true} {
		if exists(p) != want {
			t.Errorf("%s exists %v, want %v", p, !want, want)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(a.Path()) {
		t.Errorf("%s left after Close", a.Path())
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}
