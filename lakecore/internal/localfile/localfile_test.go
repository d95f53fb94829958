package localfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/localfile"
)

// TestFinishAndAbort: a finished file holds what was written and outlives
// a later Abort; an aborted one is gone; Create does not replace a file.
func TestFinishAndAbort(t *testing.T) {
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	f, err := localfile.Create(done, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("more than the buffer")); err != nil {
		t.Fatal(err)
	}
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	if b, err := os.ReadFile(done); err != nil || string(b) != "more than the buffer" {
		t.Fatalf("finished file holds %q, %v", b, err)
	}
	if _, err := localfile.Create(done, 4); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Create over an existing file: %v, want os.ErrExist", err)
	}

	gone := filepath.Join(dir, "gone")
	f, err = localfile.Create(gone, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	f.Abort()
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("aborted file: %v, want it removed", err)
	}
}
