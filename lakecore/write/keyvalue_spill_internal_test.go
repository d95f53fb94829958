package write

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/spillfile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// newBufferTestWriter returns a writer of a fresh table (k BIGINT key,
// v STRING, n INT) with options, keeping its spill directory under
// localDir.
func newBufferTestWriter(t testing.TB, options map[string]string, localDir string) *KeyValueWriter {
	t.Helper()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := schema.NewTableSchema([]types.DataField{
		{Name: "k", Type: types.BigIntType().NotNull()},
		{Name: "v", Type: types.StringType()},
		{Name: "n", Type: types.IntType()},
	}, nil, options, nil)
	s.PrimaryKeys = []string{"k"}
	if s, err = schema.NewManager(fio, "db.db/t").Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	w, err := NewKeyValueWriter(fio, "db.db/t", s, OptionsFromSchema(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.DisableCompaction()
	w.SetLocalDir(localDir)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// spillTestRows writes n random upserts and deletes of 500 keys.
func spillTestRows(t testing.TB, w *KeyValueWriter, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	for range n {
		kind := kv.Insert
		if rng.IntN(6) == 0 {
			kind = kv.Delete
		}
		row := []any{int64(rng.IntN(500)), fmt.Sprintf("value-%d", rng.IntN(1e6)), int32(rng.IntN(100))}
		if err := w.Write(context.Background(), kind, row); err != nil {
			t.Fatal(err)
		}
	}
}

// withoutNames returns the files of msgs without names and creation times.
func withoutNames(msgs []commit.Message) [][]any {
	var out [][]any
	for _, m := range msgs {
		for _, f := range m.NewFiles {
			f.FileName, f.CreationTimeMillis = "", nil
			out = append(out, []any{m.Bucket, f})
		}
	}
	return out
}

// dirEntries lists what is under dir, recursively.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKeyValueSpillMergePasses: with more runs than
// local-sort.max-num-file-handles the runs are merged in passes, never
// reading more than that many spill files at once, into the files a large
// buffer writes; the spill directory is gone after Prepare.
func TestKeyValueSpillMergePasses(t *testing.T) {
	ctx := context.Background()
	want := func() [][]any {
		w := newBufferTestWriter(t, map[string]string{"bucket": "2"}, t.TempDir())
		spillTestRows(t, w, 6000, 1)
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return withoutNames(msgs)
	}()
	for _, fan := range []int{2, 3, 7, 128} {
		t.Run(fmt.Sprintf("max-num-file-handles=%d", fan), func(t *testing.T) {
			local := t.TempDir()
			w := newBufferTestWriter(t, map[string]string{"bucket": "2", "write-buffer-size": "8kb",
				"local-sort.max-num-file-handles": fmt.Sprint(fan)}, local)
			spillTestRows(t, w, 6000, 1)
			if len(dirEntries(t, local)) == 0 {
				t.Fatal("nothing spilled")
			}
			msgs, err := w.Prepare(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sp := w.spills
			t.Logf("%d runs, %d merges in %d passes, at most %d spill files read at once", sp.runs, sp.merges, sp.passes, sp.maxOpen)
			if sp.runs < 4*fan && fan < 128 {
				t.Errorf("%d runs: too few for the test", sp.runs)
			}
			if sp.maxOpen > fan || (sp.runs > 2*fan) != (sp.passes > 0) || sp.open != 0 {
				t.Errorf("%d runs, %d passes, %d spill files read at once (%d open now), limit %d", sp.runs, sp.passes, sp.maxOpen, sp.open, fan)
			}
			if got := withoutNames(msgs); !reflect.DeepEqual(got, want) {
				t.Errorf("files differ from a large buffer's:\n%v\nwant\n%v", got, want)
			}
			if left := dirEntries(t, local); len(left) > 0 {
				t.Errorf("after Prepare: %v", left)
			}
		})
	}
}

// TestKeyValueSpillMaxDiskSize: a bucket whose runs reach
// write-buffer-spill.max-disk-size flushes level-0 files instead of
// spilling again, and its rows are all there.
func TestKeyValueSpillMaxDiskSize(t *testing.T) {
	ctx := context.Background()
	local := t.TempDir()
	w := newBufferTestWriter(t, map[string]string{"bucket": "1", "write-buffer-size": "8kb", "write-buffer-spill.max-disk-size": "10kb"}, local)
	spillTestRows(t, w, 3000, 2)
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var files int
	for _, m := range msgs {
		files += len(m.NewFiles)
	}
	if w.spills.runs == 0 || files < 2 || files > w.spills.runs {
		t.Errorf("%d runs spilled and %d level-0 files", w.spills.runs, files)
	}
	t.Logf("%d runs spilled, %d level-0 files", w.spills.runs, files)
}

// TestKeyValueSpillCleanup: Abort and Close remove the spill files and
// their directory, and the writer spills again afterwards.
func TestKeyValueSpillCleanup(t *testing.T) {
	ctx := context.Background()
	local := t.TempDir()
	w := newBufferTestWriter(t, map[string]string{"bucket": "2", "write-buffer-size": "8kb"}, local)
	spillTestRows(t, w, 2000, 3)
	if len(dirEntries(t, local)) == 0 {
		t.Fatal("nothing spilled")
	}
	if err := w.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if left := dirEntries(t, local); len(left) > 0 {
		t.Errorf("after Abort: %v", left)
	}
	spillTestRows(t, w, 2000, 3)
	if len(dirEntries(t, local)) == 0 {
		t.Fatal("nothing spilled after Abort")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if left := dirEntries(t, local); len(left) > 0 {
		t.Errorf("after Close: %v", left)
	}
}

// TestKeyValueSpillCorrupt: a spill file changed on disk fails the flush
// with an error wrapping spillfile.ErrCorrupt, never a panic or wrong
// files.
func TestKeyValueSpillCorrupt(t *testing.T) {
	ctx := context.Background()
	for _, damage := range []string{"truncate", "flip"} {
		t.Run(damage, func(t *testing.T) {
			local := t.TempDir()
			w := newBufferTestWriter(t, map[string]string{"bucket": "1", "write-buffer-size": "8kb"}, local)
			spillTestRows(t, w, 2000, 4)
			var run string
			for _, p := range dirEntries(t, local) {
				if filepath.Base(p) != "LOCK" && !isDir(p) {
					run = p
					break
				}
			}
			data, err := os.ReadFile(run)
			if err != nil {
				t.Fatal(err)
			}
			if damage == "truncate" {
				data = data[:len(data)-3]
			} else {
				data[len(data)/2] ^= 0x40
			}
			if err := os.WriteFile(run, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Prepare(ctx); !errors.Is(err, spillfile.ErrCorrupt) || !errors.Is(err, ErrWriterFailed) {
				t.Fatalf("Prepare: %v, want ErrCorrupt and ErrWriterFailed", err)
			}
			if err := w.Abort(ctx); err != nil {
				t.Fatal(err)
			}
			if left := dirEntries(t, local); len(left) > 0 {
				t.Errorf("after Abort: %v", left)
			}
		})
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
