package memfs_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/memfs"
)

var ctx = context.Background()

func write(t *testing.T, f *memfs.FS, p, data string) {
	t.Helper()
	if err := f.WriteFile(ctx, p, []byte(data)); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

// content is the file at p after a restart, "" when it is missing.
func content(t *testing.T, f *memfs.FS, p string) string {
	t.Helper()
	b, err := f.ReadFile(ctx, p)
	if errors.Is(err, storage.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

// paths lists every file.
func paths(t *testing.T, f *memfs.FS) []string {
	t.Helper()
	infos, err := f.List(ctx, "", true)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fi := range infos {
		out = append(out, fi.Path)
	}
	return out
}

// TestCrashPointsOfWriteFile enumerates the crash points of a WriteFile
// that replaces a file: before the last step the old content survives,
// after the call returned the new one does.
func TestCrashPointsOfWriteFile(t *testing.T) {
	for _, tc := range []struct {
		model memfs.Model
		steps []string // step names, without the temporary file's uuid
	}{
		{memfs.LocalDisk, []string{"create temporary d/.f.", "rename d/.f.", "sync directory d"}},
		{memfs.ObjectStore, []string{"put d/f"}},
	} {
		t.Run(tc.model.String(), func(t *testing.T) {
			base := memfs.New(tc.model)
			write(t, base, "d/f", "old")
			for n := 1; ; n++ {
				f := base.Clone()
				f.CrashAt(n)
				err := f.WriteFile(ctx, "d/f", []byte("new"))
				if !f.Crashed() {
					if err != nil {
						t.Fatalf("no crash at %d, but %v", n, err)
					}
					if n-1 != len(tc.steps) {
						t.Fatalf("%d steps, want %d", n-1, len(tc.steps))
					}
					f.Crash()
					f.Restart()
					if got := content(t, f, "d/f"); got != "new" {
						t.Fatalf("after a completed write and a crash: %q", got)
					}
					break
				}
				if !errors.Is(err, memfs.ErrCrashed) {
					t.Fatalf("crash at %d: %v, want ErrCrashed", n, err)
				}
				if tr := f.Trace(); len(tr) != n || !strings.HasPrefix(tr[n-1], tc.steps[n-1]) {
					t.Fatalf("crash at %d: trace %q, want step %q", n, tr, tc.steps[n-1])
				}
				if _, err := f.ReadFile(ctx, "d/f"); !errors.Is(err, memfs.ErrCrashed) {
					t.Fatalf("read on a crashed FS: %v", err)
				}
				f.Restart()
				if got := content(t, f, "d/f"); got != "old" {
					t.Fatalf("crash at step %d: content %q, want the old one", n, got)
				}
				if got := paths(t, f); !slices.Equal(got, []string{"d/f"}) {
					t.Fatalf("crash at step %d: files %v", n, got)
				}
			}
		})
	}
}

// TestDeleteDurability: on a local disk a deletion is undone by a crash
// until the directory is synced by a later publish into it; on an object
// store it is durable at once.
func TestDeleteDurability(t *testing.T) {
	f := memfs.New(memfs.LocalDisk)
	write(t, f, "d/a", "a")
	write(t, f, "e/b", "b")
	for _, p := range []string{"d/a", "e/b"} {
		if err := f.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	write(t, f, "d/c", "c") // syncs d, not e
	if got := paths(t, f); !slices.Equal(got, []string{"d/c"}) {
		t.Fatalf("before the crash: %v", got)
	}
	f.Crash()
	f.Restart()
	if got := paths(t, f); !slices.Equal(got, []string{"d/c", "e/b"}) {
		t.Fatalf("local disk after the crash: %v, want d/c and the resurrected e/b", got)
	}

	o := memfs.New(memfs.ObjectStore)
	write(t, o, "e/b", "b")
	if err := o.Delete(ctx, "e/b"); err != nil {
		t.Fatal(err)
	}
	o.Crash()
	o.Restart()
	if got := paths(t, o); len(got) != 0 {
		t.Fatalf("object store after the crash: %v", got)
	}
}

// TestWriterTemporaryFile: on a local disk a Writer's temporary file is
// listed while it writes and is lost in a crash; on an object store
// nothing is visible before Close.
func TestWriterTemporaryFile(t *testing.T) {
	for _, m := range []memfs.Model{memfs.LocalDisk, memfs.ObjectStore} {
		t.Run(m.String(), func(t *testing.T) {
			f := memfs.New(m)
			w, err := f.Create(ctx, "d/f")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte("abc")); err != nil {
				t.Fatal(err)
			}
			got := paths(t, f)
			if m == memfs.LocalDisk {
				if len(got) != 1 || !strings.HasPrefix(got[0], "d/.f.") || !strings.HasSuffix(got[0], ".tmp") {
					t.Fatalf("while writing: %v, want the temporary file", got)
				}
			} else if len(got) != 0 {
				t.Fatalf("while writing: %v", got)
			}
			f.Crash()
			if err := w.Close(); !errors.Is(err, memfs.ErrCrashed) {
				t.Fatalf("close after the crash: %v", err)
			}
			f.Restart()
			if got := paths(t, f); len(got) != 0 {
				t.Fatalf("after the crash: %v", got)
			}
			w, err = f.Create(ctx, "d/f")
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("xyz"))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			f.Crash()
			f.Restart()
			if got := content(t, f, "d/f"); got != "xyz" {
				t.Fatalf("closed writer after a crash: %q", got)
			}
		})
	}
}

// TestWriteExclusiveCrashAtSync: the file was visible when the directory
// sync crashed, so the caller learns ErrAmbiguous; the crash loses it.
func TestWriteExclusiveCrashAtSync(t *testing.T) {
	f := memfs.New(memfs.LocalDisk)
	f.CrashAt(3)
	err := f.WriteExclusive(ctx, "s/snapshot-1", []byte("x"))
	if !errors.Is(err, storage.ErrAmbiguous) || !errors.Is(err, memfs.ErrCrashed) {
		t.Fatalf("crash at the sync: %v, want ErrAmbiguous and ErrCrashed", err)
	}
	f.Restart()
	if got := paths(t, f); len(got) != 0 {
		t.Fatalf("after the crash: %v", got)
	}
	write(t, f, "s/snapshot-1", "a")
	if err := f.WriteExclusive(ctx, "s/snapshot-1", []byte("b")); !errors.Is(err, storage.ErrExist) {
		t.Fatalf("second exclusive create: %v", err)
	}
	if got := paths(t, f); !slices.Equal(got, []string{"s/snapshot-1"}) {
		t.Fatalf("the failed exclusive create left %v", got)
	}
}

// TestCloneIsIndependent: a clone keeps the durable state and diverges.
func TestCloneIsIndependent(t *testing.T) {
	f := memfs.New(memfs.LocalDisk)
	write(t, f, "d/a", "a")
	if err := f.Delete(ctx, "d/a"); err != nil { // not durable yet
		t.Fatal(err)
	}
	c := f.Clone()
	write(t, c, "d/b", "b")
	if got := paths(t, f); len(got) != 0 {
		t.Fatalf("original sees the clone's write: %v", got)
	}
	f.Crash()
	f.Restart()
	if got := paths(t, f); !slices.Equal(got, []string{"d/a"}) {
		t.Fatalf("original after a crash: %v", got)
	}
	c.Crash()
	c.Restart()
	if got := paths(t, c); !slices.Equal(got, []string{"d/b"}) {
		t.Fatalf("clone after a crash (its write synced d): %v", got)
	}
	if c.Steps() != 0 {
		t.Fatalf("steps after restart: %d", c.Steps())
	}
}

// TestDeleteNonEmptyDirectory: removeEmptyDirs relies on a directory with
// files not being deleted.
func TestDeleteNonEmptyDirectory(t *testing.T) {
	f := memfs.New(memfs.LocalDisk)
	write(t, f, "d/e/a", "a")
	if err := f.Delete(ctx, "d/e"); err == nil {
		t.Fatal("deleted a directory with a file")
	}
	if got := content(t, f, "d/e/a"); got != "a" {
		t.Fatalf("file below: %q", got)
	}
	if st, err := f.Stat(ctx, "d/e"); err != nil || !st.IsDir {
		t.Fatalf("stat of the directory: %+v, %v", st, err)
	}
}

// TestKeepUnsynced: a crash may keep the oldest unsynced directory
// changes, in order.
func TestKeepUnsynced(t *testing.T) {
	base := memfs.New(memfs.LocalDisk)
	write(t, base, "d/a", "a")
	write(t, base, "e/b", "b")
	for _, p := range []string{"d/a", "e/b"} {
		if err := base.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for keep, want := range [][]string{{"d/a", "e/b"}, {"e/b"}, nil} {
		f := base.Clone()
		f.KeepUnsynced(keep)
		f.Crash()
		if unsynced, kept := f.LastCrash(); unsynced != 2 || kept != keep {
			t.Errorf("keep %d: LastCrash = %d, %d", keep, unsynced, kept)
		}
		f.Restart()
		if got := paths(t, f); !slices.Equal(got, want) {
			t.Errorf("keep %d: files %v, want %v", keep, got, want)
		}
	}
}
