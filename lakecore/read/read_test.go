package read_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan/scantest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

var bg = context.Background()

// trackingFIO counts open files and can make Open wait for a signal.
type trackingFIO struct {
	storage.FileIO
	mu    sync.Mutex
	open  int
	opens int
	gate  chan struct{} // when non-nil, Open waits for it or ctx
}

type trackedFile struct {
	storage.File
	fio  *trackingFIO
	once sync.Once
}

func (f *trackedFile) Close() error {
	f.once.Do(func() {
		f.fio.mu.Lock()
		f.fio.open--
		f.fio.mu.Unlock()
	})
	return f.File.Close()
}

func (t *trackingFIO) Open(ctx context.Context, p string) (storage.File, error) {
	t.mu.Lock()
	gate := t.gate
	t.opens++
	t.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f, err := t.FileIO.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.open++
	t.mu.Unlock()
	return &trackedFile{File: f, fio: t}, nil
}

func (t *trackingFIO) stats() (open, opens int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open, t.opens
}

func newTable(t *testing.T) (*trackingFIO, *scantest.Table) {
	t.Helper()
	local, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fio := &trackingFIO{FileIO: local}
	tb := scantest.New(t, fio, "db.db/t", []types.DataField{
		{Name: "p", Type: types.StringType()},
		{Name: "v", Type: types.BigIntType()},
		{Name: "s", Type: types.StringType()},
	}, []string{"p"}, map[string]string{"deletion-vectors.enabled": "true"})
	return fio, tb
}

func rowsOf(p any, from, n int) [][]any {
	out := make([][]any, n)
	for i := range out {
		out[i] = []any{p, int64(from + i), fmt.Sprintf("s%d", from+i)}
	}
	return out
}

func plan(t *testing.T, fio storage.FileIO, tb *scantest.Table, s *snapshot.Snapshot) *scan.Plan {
	t.Helper()
	p, err := scan.NewPlanner(fio, tb.Path).Full(bg, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// batch is one Next result in short: "file#row:v,v,v".
func readAll(t *testing.T, r *read.TableRead, sp scan.Split, names map[string]string) []string {
	t.Helper()
	it, err := r.Open(bg, sp)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for {
		next, err := it.Next(bg)
		rows, pos := next.Rows, next.Pos
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]string, len(rows))
		for i, r := range rows {
			vals[i] = fmt.Sprint(r[0])
		}
		out = append(out, fmt.Sprintf("%s#%d:%s", names[pos.File], pos.Row, strings.Join(vals, ",")))
	}
}

// TestDeletionVectorsSplitBatches: deleted rows never come out, and every
// batch is a run of consecutive rows of one file at its position.
func TestDeletionVectorsSplitBatches(t *testing.T) {
	fio, tb := newTable(t)
	f1 := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 0, 10))
	f2 := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 10, 3))
	f3 := tb.WriteFile([]any{"a"}, 0, rowsOf("a", 20, 2))
	tb.Commit(snapshot.CommitAppend, f1, f2, f3)
	tb.DeleteRows(f1, 2, 3, 7)
	tb.DeleteRows(f2, 0, 1, 2) // every row
	s := tb.Commit(snapshot.CommitAppend)
	names := map[string]string{f1.File.FileName: "f1", f2.File.FileName: "f2", f3.File.FileName: "f3"}

	r, err := read.NewTableRead(fio, tb.Path, tb.Schema, []string{"v"})
	if err != nil {
		t.Fatal(err)
	}
	r.SetBatchSize(4)
	p := plan(t, fio, tb, s)
	if len(p.Splits) != 1 {
		t.Fatalf("%d splits", len(p.Splits))
	}
	got := strings.Join(readAll(t, r, p.Splits[0], names), " ")
	want := "f1#0:0,1 f1#4:4,5,6 f1#8:8,9 f3#0:20,21"
	if got != want {
		t.Errorf("batches %q, want %q", got, want)
	}
	if open, _ := fio.stats(); open != 0 {
		t.Errorf("%d files left open", open)
	}
}

// TestReadPartitionsAndProjection reads a NULL partition (its directory is
// __DEFAULT_PARTITION__) and projects columns by name.
func TestReadPartitionsAndProjection(t *testing.T) {
	fio, tb := newTable(t)
	tb.Append([]any{nil}, rowsOf(nil, 0, 2)...)
	s := tb.Append([]any{"b"}, rowsOf("b", 5, 1)...)
	r, err := read.NewTableRead(fio, tb.Path, tb.Schema, []string{"s", "p"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Fields(); len(got) != 2 || got[0].Name != "s" || got[1].Name != "p" {
		t.Errorf("fields %v", got)
	}
	var rows []string
	for _, sp := range plan(t, fio, tb, s).Splits {
		p, err := r.FilePath(&sp, &sp.Files[0])
		if err != nil {
			t.Fatal(err)
		}
		if sp.PartitionValues[0] == nil && !strings.HasPrefix(p, "db.db/t/p=__DEFAULT_PARTITION__/bucket-0/") {
			t.Errorf("NULL partition file at %s", p)
		}
		it, err := r.Open(bg, sp)
		if err != nil {
			t.Fatal(err)
		}
		for {
			next, err := it.Next(bg)
			batch := next.Rows
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range batch {
				rows = append(rows, fmt.Sprint(row))
			}
		}
		it.Close()
	}
	if got := strings.Join(rows, " "); got != "[s0 <nil>] [s1 <nil>] [s5 b]" {
		t.Errorf("rows %s", got)
	}
	if _, err := read.NewTableRead(fio, tb.Path, tb.Schema, []string{"x"}); !errors.Is(err, read.ErrUnknownColumn) {
		t.Errorf("unknown column: %v", err)
	}
}

// TestFilePath follows FileStorePathFactory: data-file.path-directory,
// escaped partition values, the bucket directory; external paths and other
// formats are refused.
func TestFilePath(t *testing.T) {
	fio, tb := newTable(t)
	s := tb.Schema.Clone()
	s.Options["data-file.path-directory"] = "data"
	r, err := read.NewTableRead(fio, tb.Path, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	sp := scan.Split{PartitionValues: []any{"x/y=z"}, Bucket: 3}
	f := manifest.DataFileMeta{FileName: "data-1-0.parquet"}
	if p, err := r.FilePath(&sp, &f); err != nil || p != "db.db/t/data/p=x%2Fy%3Dz/bucket-3/data-1-0.parquet" {
		t.Errorf("path %q, %v", p, err)
	}
	f.FileName = "data-1-0.zstd.parquet"
	if _, err := r.FilePath(&sp, &f); err != nil {
		t.Errorf("compression suffix: %v", err)
	}
	f.FileName = "data-1-0.orc"
	if _, err := r.FilePath(&sp, &f); !errors.Is(err, read.ErrUnsupportedFile) || !strings.Contains(err.Error(), "orc") {
		t.Errorf("orc file: %v", err)
	}
	ext := "s3://elsewhere/data-1-0.parquet"
	f = manifest.DataFileMeta{FileName: "data-1-0.parquet", ExternalPath: &ext}
	if _, err := r.FilePath(&sp, &f); !errors.Is(err, read.ErrUnsupportedFile) || !strings.Contains(err.Error(), "_EXTERNAL_PATH") {
		t.Errorf("external path: %v", err)
	}
}

// TestCorruptDataFiles: a data file that disagrees with its manifest entry
// or is damaged fails with an error naming it; rows are never silently
// fewer.
func TestCorruptDataFiles(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, fio storage.FileIO, p string, sp *scan.Split)
		is     error
	}{
		{"cut short", func(t *testing.T, fio storage.FileIO, p string, sp *scan.Split) {
			data, err := fio.ReadFile(bg, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := fio.WriteFile(bg, p, data[:len(data)/2]); err != nil {
				t.Fatal(err)
			}
		}, read.ErrFileMismatch},
		{"cut short and size patched", func(t *testing.T, fio storage.FileIO, p string, sp *scan.Split) {
			data, err := fio.ReadFile(bg, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := fio.WriteFile(bg, p, data[:len(data)/2]); err != nil {
				t.Fatal(err)
			}
			sp.Files[0].FileSize = int64(len(data) / 2)
		}, nil},
		{"row count differs", func(t *testing.T, fio storage.FileIO, p string, sp *scan.Split) {
			sp.Files[0].RowCount++
		}, read.ErrFileMismatch},
		{"missing", func(t *testing.T, fio storage.FileIO, p string, sp *scan.Split) {
			if err := fio.Delete(bg, p); err != nil {
				t.Fatal(err)
			}
		}, storage.ErrNotExist},
	} {
		t.Run(c.name, func(t *testing.T) {
			fio, tb := newTable(t)
			tb.Append([]any{"a"}, rowsOf("a", 0, 50)...)
			s := tb.Append([]any{"a"}, rowsOf("a", 50, 50)...)
			sp := plan(t, fio, tb, s).Splits[0]
			r, err := read.NewTableRead(fio, tb.Path, tb.Schema, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.FilePath(&sp, &sp.Files[1])
			if err != nil {
				t.Fatal(err)
			}
			sp.Files = []manifest.DataFileMeta{sp.Files[1], sp.Files[0]}
			c.damage(t, fio, p, &sp)
			it, err := r.Open(bg, sp)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			var n int
			for {
				next, err := it.Next(bg)
				rows := next.Rows
				if errors.Is(err, io.EOF) {
					t.Fatalf("read %d rows without an error", n)
				}
				if err != nil {
					if c.is != nil && !errors.Is(err, c.is) {
						t.Errorf("error %v, want %v", err, c.is)
					}
					if !strings.Contains(err.Error(), path.Base(p)) {
						t.Errorf("error does not name the file: %v", err)
					}
					// The error is sticky.
					if _, again := it.Next(bg); again == nil {
						t.Error("Next after an error succeeded")
					}
					return
				}
				n += len(rows)
			}
		})
	}
}

// TestIteratorCloseStopsPrefetch: Close while the next file is being
// opened in the background waits for that work and leaves no file open;
// a cancelled ctx while waiting for a file returns promptly.
func TestIteratorCloseStopsPrefetch(t *testing.T) {
	fio, tb := newTable(t)
	var last *snapshot.Snapshot
	for i := range 3 {
		last = tb.Append([]any{"a"}, rowsOf("a", i*10, 10)...)
	}
	sp := plan(t, fio, tb, last).Splits[0]
	r, err := read.NewTableRead(fio, tb.Path, tb.Schema, nil)
	if err != nil {
		t.Fatal(err)
	}

	// Read one batch, then close while file 2 is prefetched.
	it, err := r.Open(bg, sp)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := it.Next(bg); err != nil || len(b.Rows) != 10 || b.Pos.Row != 0 || b.Pos.File != sp.Files[0].FileName {
		t.Fatalf("first batch: %d rows at %+v, %v", len(b.Rows), b.Pos, err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if open, _ := fio.stats(); open != 0 {
		t.Errorf("%d files open after Close", open)
	}
	if _, err := it.Next(bg); err == nil {
		t.Error("Next after Close succeeded")
	}

	// Opens blocked: Next gives up with its ctx, Close stops the open.
	fio.mu.Lock()
	fio.gate = make(chan struct{})
	fio.mu.Unlock()
	it, err = r.Open(bg, sp)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	if _, err := it.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next with a blocked open: %v", err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if open, _ := fio.stats(); open != 0 {
		t.Errorf("%d files open after Close", open)
	}

	// Unblocked, every file is opened once and closed.
	fio.mu.Lock()
	fio.gate = nil
	fio.mu.Unlock()
	_, before := fio.stats()
	got := readAll(t, r, sp, map[string]string{sp.Files[0].FileName: "a", sp.Files[1].FileName: "b", sp.Files[2].FileName: "c"})
	if len(got) != 3 || !strings.HasPrefix(got[2], "c#0:") {
		t.Errorf("batches %v", got)
	}
	if open, opens := fio.stats(); open != 0 || opens-before != 3 {
		t.Errorf("%d open, %d opens", open, opens-before)
	}
}
