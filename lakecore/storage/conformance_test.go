package storage_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/memfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
)

// factory returns a fresh, empty FileIO for one subtest.
type factory func(t *testing.T) storage.FileIO

// TestConformance runs the FileIO contract against every implementation:
// Local, S3 on a real server (under a prefix and at the bucket root) and
// a faultfs.FS without rules (which must be transparent) and memfs in both
// of its durability models.
func TestConformance(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		conformance(t, func(t *testing.T) storage.FileIO { return newLocal(t) })
	})
	t.Run("faulty-local", func(t *testing.T) {
		conformance(t, func(t *testing.T) storage.FileIO { return faultfs.New(newLocal(t), 1) })
	})
	for _, m := range []memfs.Model{memfs.LocalDisk, memfs.ObjectStore} {
		t.Run("memfs-"+m.String(), func(t *testing.T) {
			conformance(t, func(t *testing.T) storage.FileIO { return memfs.New(m) })
		})
	}
	t.Run("s3", func(t *testing.T) {
		cfg := s3test.Endpoint(t)
		cfg.ListPageSize = 7 // make the pagination tests page
		for _, prefix := range []string{"warehouse/root", ""} {
			t.Run(fmt.Sprintf("prefix=%q", prefix), func(t *testing.T) {
				conformance(t, func(t *testing.T) storage.FileIO {
					s, err := storage.NewS3(context.Background(), s3test.NewBucket(t, cfg), prefix, cfg)
					if err != nil {
						t.Fatal(err)
					}
					return s
				})
			})
		}
	})
}

func newLocal(t *testing.T) *storage.Local {
	l, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func conformance(t *testing.T, newFS factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, fio storage.FileIO)
	}{
		{"RoundTrip", testRoundTrip},
		{"Missing", testMissing},
		{"Writer", testWriter},
		{"WriterAbort", testWriterAbort},
		{"Multipart", testMultipart},
		{"Exclusive", testExclusive},
		{"ExclusiveRace", testExclusiveRace},
		{"List", testList},
		{"ListPagination", testListPagination},
		{"ListVersioned", testListVersioned},
		{"SpecialNames", testSpecialNames},
		{"RangedReads", testRangedReads},
		{"InvalidPaths", testInvalidPaths},
		{"CanceledContext", testCanceledContext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newFS(t)) })
	}
}

// testListVersioned: only dir/<prefix><digits> files count, in numeric
// order; hints, temporary files, other prefixes, signs and subdirectories
// do not.
func testListVersioned(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	for _, name := range []string{"snapshot-10", "snapshot-2", "snapshot-1", "LATEST", "EARLIEST", ".snapshot-3.0b1c.tmp",
		"snapshot-", "snapshot-+4", "snapshot--5", "snapshot-6a", "schema-8", "snapshot-7/inner", "snapshot-99999999999999999999"} {
		mustWrite(t, fio, "t/snapshot/"+name, []byte("x"))
	}
	mustWrite(t, fio, "t/snapshot-11", []byte("x")) // beside the directory, not in it
	ids, err := storage.ListVersioned(ctx, fio, "t/snapshot", "snapshot-")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []int64{1, 2, 10}) {
		t.Fatalf("ids %v, want [1 2 10]", ids)
	}
	if ids, err := storage.ListVersioned(ctx, fio, "t/missing", "snapshot-"); err != nil || len(ids) != 0 {
		t.Fatalf("missing directory: %v, %v", ids, err)
	}
}

// payload is n deterministic pseudo-random bytes.
func payload(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func mustWrite(t *testing.T, fio storage.FileIO, p string, data []byte) {
	t.Helper()
	if err := fio.WriteFile(context.Background(), p, data); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

func mustRead(t *testing.T, fio storage.FileIO, p string) []byte {
	t.Helper()
	b, err := fio.ReadFile(context.Background(), p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return b
}

func testRoundTrip(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	for _, n := range []int{0, 1, 4096, 100_003} {
		p := fmt.Sprintf("db.db/t/f-%d", n)
		data := payload(uint64(n), n)
		mustWrite(t, fio, p, data)
		if got := mustRead(t, fio, p); !bytes.Equal(got, data) {
			t.Fatalf("%s: read %d bytes, want %d equal bytes", p, len(got), len(data))
		}
		st, err := fio.Stat(ctx, p)
		if err != nil || st.Size != int64(n) || st.IsDir || st.Path != p || st.ModTime.IsZero() {
			t.Fatalf("stat %s = %+v, %v; want size %d", p, st, err, n)
		}
		f, err := fio.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if f.Size() != int64(n) {
			t.Fatalf("open %s: size %d, want %d", p, f.Size(), n)
		}
		buf := make([]byte, n)
		if k, err := f.ReadAt(buf, 0); k != n || (err != nil && err != io.EOF) || !bytes.Equal(buf, data) {
			t.Fatalf("ReadAt all of %s = %d, %v", p, k, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if ok, err := storage.Exists(ctx, fio, p); !ok || err != nil {
			t.Fatalf("Exists %s = %v, %v", p, ok, err)
		}
	}
	// WriteFile replaces.
	mustWrite(t, fio, "db.db/t/f-1", []byte("replaced"))
	if got := mustRead(t, fio, "db.db/t/f-1"); string(got) != "replaced" {
		t.Fatalf("after replace: %q", got)
	}
	// Delete removes; deleting again is fine.
	for range 2 {
		if err := fio.Delete(ctx, "db.db/t/f-1"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fio.Stat(ctx, "db.db/t/f-1"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("stat after delete: %v, want ErrNotExist", err)
	}
}

func testMissing(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	mustWrite(t, fio, "dir/present", []byte("x"))
	for _, p := range []string{"absent", "dir/absent", "nodir/absent"} {
		if _, err := fio.Open(ctx, p); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Open %s: %v, want ErrNotExist", p, err)
		}
		if _, err := fio.ReadFile(ctx, p); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("ReadFile %s: %v, want ErrNotExist", p, err)
		}
		_, err := fio.Stat(ctx, p)
		if !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Stat %s: %v, want ErrNotExist", p, err)
		}
		if err != nil && !bytes.Contains([]byte(err.Error()), []byte(p)) {
			t.Errorf("Stat error %q does not name %s", err, p)
		}
		if ok, err := storage.Exists(ctx, fio, p); ok || err != nil {
			t.Errorf("Exists %s = %v, %v", p, ok, err)
		}
		if err := fio.Delete(ctx, p); err != nil {
			t.Errorf("Delete %s: %v", p, err)
		}
	}
	for _, d := range []string{"nodir", "dir/sub", "dir/present"} {
		for _, rec := range []bool{false, true} {
			got, err := fio.List(ctx, d, rec)
			if err != nil || len(got) != 0 {
				t.Errorf("List(%s, %v) = %v, %v; want empty", d, rec, got, err)
			}
		}
	}
}

func testWriter(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	w, err := fio.Create(ctx, "a/b/c.parquet")
	if err != nil {
		t.Fatal(err)
	}
	data := payload(3, 70_000)
	for i := 0; i < len(data); i += 999 {
		n, err := w.Write(data[i:min(i+999, len(data))])
		if err != nil || n != min(999, len(data)-i) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if w.Written() != int64(len(data)) {
		t.Fatalf("Written = %d, want %d", w.Written(), len(data))
	}
	if _, err := fio.Stat(ctx, "a/b/c.parquet"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("visible before Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, fio, "a/b/c.parquet"); !bytes.Equal(got, data) {
		t.Fatalf("content differs (%d bytes)", len(got))
	}
	if err := w.Close(); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("second Close: %v, want ErrClosed", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("Write after Close: %v, want ErrClosed", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Close: %v", err)
	}
	if got := mustRead(t, fio, "a/b/c.parquet"); !bytes.Equal(got, data) {
		t.Fatal("Abort after Close changed the file")
	}
	// An empty file and a replacing Create.
	for _, content := range [][]byte{{}, []byte("second")} {
		w, err := fio.Create(ctx, "a/b/c.parquet")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(content); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, fio, "a/b/c.parquet"); !bytes.Equal(got, content) {
			t.Fatalf("got %q, want %q", got, content)
		}
	}
	// Only the published file remains: no temporary files.
	got, err := fio.List(ctx, "", true)
	if err != nil || len(got) != 1 || got[0].Path != "a/b/c.parquet" {
		t.Fatalf("List = %+v, %v", got, err)
	}
}

func testWriterAbort(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	mustWrite(t, fio, "keep/old", []byte("old"))
	for _, n := range []int{0, 10, 9 << 20} { // 9 MiB: a multipart upload on S3
		w, err := fio.Create(ctx, "keep/old")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(payload(uint64(n), n)); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Fatalf("second Abort: %v", err)
		}
		if err := w.Close(); !errors.Is(err, storage.ErrClosed) {
			t.Fatalf("Close after Abort: %v, want ErrClosed", err)
		}
		if got := mustRead(t, fio, "keep/old"); string(got) != "old" {
			t.Fatalf("aborted write of %d bytes changed the file to %d bytes", n, len(got))
		}
	}
	got, err := fio.List(ctx, "", true)
	if err != nil || len(got) != 1 {
		t.Fatalf("List after aborts = %+v, %v; want only keep/old", got, err)
	}
}

func testMultipart(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	const size = 20 << 20
	data := payload(20, size)
	w, err := fio.Create(ctx, "bucket-0/data-big.parquet")
	if err != nil {
		t.Fatal(err)
	}
	// Odd write sizes, so part boundaries fall inside writes.
	for i, step := 0, 1<<20+17; i < size; i += step {
		if _, err := w.Write(data[i:min(i+step, size)]); err != nil {
			t.Fatal(err)
		}
	}
	if w.Written() != size {
		t.Fatalf("Written = %d", w.Written())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, fio, "bucket-0/data-big.parquet")
	if sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("content of %d bytes differs from the %d written", len(got), size)
	}
	st, err := fio.Stat(ctx, "bucket-0/data-big.parquet")
	if err != nil || st.Size != size {
		t.Fatalf("Stat = %+v, %v", st, err)
	}
}

func testExclusive(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	p := "t/snapshot/snapshot-1"
	if err := fio.WriteExclusive(ctx, p, []byte("first")); err != nil {
		t.Fatal(err)
	}
	err := fio.WriteExclusive(ctx, p, []byte("second"))
	if !errors.Is(err, storage.ErrExist) || errors.Is(err, storage.ErrAmbiguous) {
		t.Fatalf("second WriteExclusive: %v, want ErrExist only", err)
	}
	if got := mustRead(t, fio, p); string(got) != "first" {
		t.Fatalf("existing file changed to %q", got)
	}
	if err := fio.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := fio.WriteExclusive(ctx, p, nil); err != nil {
		t.Fatalf("after delete: %v", err)
	}
	if got := mustRead(t, fio, p); len(got) != 0 {
		t.Fatalf("empty exclusive file reads %q", got)
	}
	got, err := fio.List(ctx, "t/snapshot", false)
	if err != nil || len(got) != 1 || got[0].Path != p {
		t.Fatalf("List = %+v, %v; want only %s (no temporary files)", got, err, p)
	}
}

// testExclusiveRace: writers race WriteExclusive on one path, round after
// round; exactly one wins, the others get ErrExist, and the file holds the
// winner's complete content.
func testExclusiveRace(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	const writers, rounds = 8, 15
	for round := range rounds {
		p := fmt.Sprintf("snapshot/snapshot-%d", round)
		var wins atomic.Int32
		var winner atomic.Int32
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				<-start
				err := fio.WriteExclusive(ctx, p, racePayload(round, w))
				if err == nil {
					wins.Add(1)
					winner.Store(int32(w))
				}
				errs[w] = err
			})
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d winners, want 1 (errors %v)", round, wins.Load(), errs)
		}
		for w, err := range errs {
			if err != nil && (!errors.Is(err, storage.ErrExist) || errors.Is(err, storage.ErrAmbiguous)) {
				t.Fatalf("round %d writer %d: %v, want ErrExist", round, w, err)
			}
		}
		if got := mustRead(t, fio, p); !bytes.Equal(got, racePayload(round, int(winner.Load()))) {
			t.Fatalf("round %d: content is not the winner's", round)
		}
	}
}

func racePayload(round, writer int) []byte {
	return bytes.Repeat(fmt.Appendf(nil, "round %d writer %d;", round, writer), 500)
}

func paths(infos []storage.FileInfo) []string {
	var out []string
	for _, fi := range infos {
		p := fi.Path
		if fi.IsDir {
			p += "/"
		}
		out = append(out, p)
	}
	return out
}

func testList(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	files := map[string]int{
		"db.db/t/schema/schema-0":               10,
		"db.db/t/snapshot/LATEST":               1,
		"db.db/t/snapshot/snapshot-1":           20,
		"db.db/t/snapshot/snapshot-2":           30,
		"db.db/t/dt=2024-01-01/bucket-0/data-a": 40,
		"db.db/t/dt=2024-01-01/bucket-1/data-b": 50,
		"db.db/t.x":                             3, // sorts between "db.db/t" and "db.db/t/..." by byte
		"top":                                   2,
	}
	for p, n := range files {
		mustWrite(t, fio, p, payload(uint64(n), n))
	}
	check := func(dir string, rec bool, want ...string) {
		t.Helper()
		got, err := fio.List(ctx, dir, rec)
		if err != nil {
			t.Fatalf("List(%q, %v): %v", dir, rec, err)
		}
		if !slices.Equal(paths(got), want) {
			t.Fatalf("List(%q, %v) = %q, want %q", dir, rec, paths(got), want)
		}
		for _, fi := range got {
			if !fi.IsDir && fi.Size != int64(files[fi.Path]) {
				t.Fatalf("List(%q): %s size %d, want %d", dir, fi.Path, fi.Size, files[fi.Path])
			}
			if fi.IsDir && fi.Size != 0 {
				t.Fatalf("List(%q): directory %s has size %d", dir, fi.Path, fi.Size)
			}
		}
	}
	check("", false, "db.db/", "top")
	// Sorted by Path, which has no trailing slash: "db.db/t" < "db.db/t.x".
	check("db.db", false, "db.db/t/", "db.db/t.x")
	check("db.db/", false, "db.db/t/", "db.db/t.x")
	check("db.db/t", false, "db.db/t/dt=2024-01-01/", "db.db/t/schema/", "db.db/t/snapshot/")
	check("db.db/t/snapshot", false, "db.db/t/snapshot/LATEST", "db.db/t/snapshot/snapshot-1", "db.db/t/snapshot/snapshot-2")
	check("db.db/t", true,
		"db.db/t/dt=2024-01-01/bucket-0/data-a", "db.db/t/dt=2024-01-01/bucket-1/data-b",
		"db.db/t/schema/schema-0", "db.db/t/snapshot/LATEST", "db.db/t/snapshot/snapshot-1", "db.db/t/snapshot/snapshot-2")
	check("", true,
		"db.db/t.x",
		"db.db/t/dt=2024-01-01/bucket-0/data-a", "db.db/t/dt=2024-01-01/bucket-1/data-b",
		"db.db/t/schema/schema-0", "db.db/t/snapshot/LATEST", "db.db/t/snapshot/snapshot-1", "db.db/t/snapshot/snapshot-2",
		"top")
	check("db.db/t/snap", false) // a prefix of a name is not a directory
	check("db.db/t.x", true)     // a file is not a directory
}

func testListPagination(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	// 23 files and 9 subdirectories, interleaved by name, so pages of 7
	// (the S3 knob set above) split files and common prefixes.
	var wantFlat, wantRec []string
	for i := range 23 {
		p := fmt.Sprintf("manifest/m-%02d", i)
		mustWrite(t, fio, p, []byte{byte(i)})
		wantFlat = append(wantFlat, p)
		wantRec = append(wantRec, p)
		if i%3 == 0 {
			q := fmt.Sprintf("manifest/m-%02d-dir/x", i)
			mustWrite(t, fio, q, []byte{byte(i)})
			wantFlat = append(wantFlat, fmt.Sprintf("manifest/m-%02d-dir/", i))
			wantRec = append(wantRec, q)
		}
	}
	byPath := func(a, b string) int { return strings.Compare(strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/")) }
	slices.SortFunc(wantFlat, byPath)
	slices.Sort(wantRec)
	got, err := fio.List(ctx, "manifest", false)
	if err != nil || !slices.Equal(paths(got), wantFlat) {
		t.Fatalf("List flat = %q, %v;\nwant %q", paths(got), err, wantFlat)
	}
	got, err = fio.List(ctx, "manifest", true)
	if err != nil || !slices.Equal(paths(got), wantRec) {
		t.Fatalf("List recursive = %q, %v;\nwant %q", paths(got), err, wantRec)
	}
}

func testSpecialNames(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	names := []string{
		"db.db/t/dt=2024-01-01/hr=0 5/bucket-0/data.parquet",
		"db.db/t/name=a%3Ab%20c/f",
		"db.db/t/p=100%/f+plus",
		"db.db/t/city=Zürich/日本語-ファイル.orc",
		"db.db/t/emoji=🙂/f'quote\"&$#@!(),;~",
		`db.db/t/back\slash/f`,
	}
	for i, p := range names {
		mustWrite(t, fio, p, []byte(p))
		if got := mustRead(t, fio, p); string(got) != p {
			t.Fatalf("%d: read %q", i, got)
		}
		st, err := fio.Stat(ctx, p)
		if err != nil || st.Path != p || st.Size != int64(len(p)) {
			t.Fatalf("%d: Stat = %+v, %v", i, st, err)
		}
		if err := fio.WriteExclusive(ctx, p, nil); !errors.Is(err, storage.ErrExist) {
			t.Fatalf("%d: WriteExclusive on existing: %v", i, err)
		}
		f, err := fio.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 3)
		if n, err := f.ReadAt(b, 2); n != 3 || err != nil || string(b) != p[2:5] {
			t.Fatalf("%d: ReadAt = %d %v %q", i, n, err, b)
		}
		f.Close()
	}
	got, err := fio.List(ctx, "db.db/t", true)
	want := slices.Sorted(slices.Values(names))
	if err != nil || !slices.Equal(paths(got), want) {
		t.Fatalf("List = %q, %v;\nwant %q", paths(got), err, want)
	}
	got, err = fio.List(ctx, "db.db/t/dt=2024-01-01/hr=0 5", false)
	if err != nil || len(got) != 1 || got[0].Path != "db.db/t/dt=2024-01-01/hr=0 5/bucket-0" || !got[0].IsDir {
		t.Fatalf("List with a space = %+v, %v", got, err)
	}
	for _, p := range names {
		if err := fio.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := fio.List(ctx, "db.db/t", true); err != nil || len(got) != 0 {
		t.Fatalf("after deletes: %q, %v", paths(got), err)
	}
}

func testRangedReads(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	const size = 300_007
	data := payload(99, size)
	mustWrite(t, fio, "r/file", data)
	f, err := fio.Open(ctx, "r/file")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases := []struct {
		off int64
		n   int
	}{
		{0, 1}, {1, 7}, {size - 8, 8}, {size - 1, 1}, {65535, 3}, {65536, 65536}, {131071, 70001},
		{12345, 200_000}, {7, 0}, {size - 5000, 4999}, {0, size},
	}
	for _, c := range cases {
		buf := make([]byte, c.n)
		n, err := f.ReadAt(buf, c.off)
		if n != c.n || err != nil || !bytes.Equal(buf, data[c.off:c.off+int64(c.n)]) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v (content equal: %v)", c.n, c.off, n, err, bytes.Equal(buf[:n], data[c.off:c.off+int64(n)]))
		}
	}
	// Reads reaching past the end return what is there and io.EOF.
	buf := make([]byte, 100)
	if n, err := f.ReadAt(buf, size-30); n != 30 || err != io.EOF || !bytes.Equal(buf[:30], data[size-30:]) {
		t.Fatalf("ReadAt past end = %d, %v", n, err)
	}
	if n, err := f.ReadAt(buf, size); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at end = %d, %v", n, err)
	}
	if n, err := f.ReadAt(buf, size+10); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt beyond end = %d, %v", n, err)
	}
	if _, err := f.ReadAt(buf, -1); err == nil {
		t.Fatal("ReadAt at -1: no error")
	}
	// A sequential scan in small reads, and concurrent random reads.
	var scan []byte
	chunk := make([]byte, 4093)
	for off := int64(0); off < size; off += int64(len(chunk)) {
		n, err := f.ReadAt(chunk, off)
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		scan = append(scan, chunk[:n]...)
	}
	if !bytes.Equal(scan, data) {
		t.Fatal("sequential scan differs")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 50 {
				off := r.Int64N(size)
				n := r.IntN(20000)
				b := make([]byte, n)
				k, err := f.ReadAt(b, off)
				want := data[off:min(off+int64(n), size)]
				if k != len(want) || !bytes.Equal(b[:k], want) || (err != nil && err != io.EOF) {
					errs <- fmt.Errorf("goroutine %d: ReadAt(%d at %d) = %d, %v", g, n, off, k, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func testInvalidPaths(t *testing.T, fio storage.FileIO) {
	ctx := context.Background()
	bad := []string{"", "/abs", "a/../b", "..", ".", "./a", "a/.", "a//b", "a/", "nul\x00byte", "bad\xffutf8"}
	for _, p := range bad {
		ops := map[string]error{}
		_, ops["Open"] = fio.Open(ctx, p)
		_, ops["ReadFile"] = fio.ReadFile(ctx, p)
		_, ops["Create"] = fio.Create(ctx, p)
		ops["WriteFile"] = fio.WriteFile(ctx, p, []byte("x"))
		ops["WriteExclusive"] = fio.WriteExclusive(ctx, p, []byte("x"))
		_, ops["Stat"] = fio.Stat(ctx, p)
		ops["Delete"] = fio.Delete(ctx, p)
		for op, err := range ops {
			if !errors.Is(err, storage.ErrInvalidPath) {
				t.Errorf("%s(%q): %v, want ErrInvalidPath", op, p, err)
			}
		}
	}
	for _, d := range []string{"/", "/abs", "a//b", "a/../b", "../x"} {
		if _, err := fio.List(ctx, d, false); !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("List(%q): %v, want ErrInvalidPath", d, err)
		}
	}
	if got, err := fio.List(ctx, "", true); err != nil || len(got) != 0 {
		t.Fatalf("something was written: %q, %v", paths(got), err)
	}
}

func testCanceledContext(t *testing.T, fio storage.FileIO) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := fio.WriteExclusive(ctx, "c/x", []byte("x")); !errors.Is(err, context.Canceled) || errors.Is(err, storage.ErrAmbiguous) {
		t.Errorf("WriteExclusive: %v, want context.Canceled and not ambiguous", err)
	}
	if err := fio.WriteFile(ctx, "c/y", []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteFile: %v", err)
	}
	if _, err := fio.List(ctx, "c", true); !errors.Is(err, context.Canceled) {
		t.Errorf("List: %v", err)
	}
	// A writer whose context ends before Close publishes nothing.
	wctx, wcancel := context.WithCancel(context.Background())
	w, err := fio.Create(wctx, "c/z")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	wcancel()
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close after cancel: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after failed Close: %v", err)
	}
	if got, err := fio.List(context.Background(), "", true); err != nil || len(got) != 0 {
		t.Fatalf("something was written: %q, %v", paths(got), err)
	}
}
