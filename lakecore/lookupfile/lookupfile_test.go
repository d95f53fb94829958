package lookupfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// key is the big-endian form of n: bytes.Compare orders it as n.
func key(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func searchKey(k []byte) func([]byte) (int, error) {
	return func(e []byte) (int, error) { return bytes.Compare(k, e), nil }
}

// writeFile writes the entries of the even keys 0, 2, ... 2(n-1), each
// value derived from its key (some empty, some longer than a block).
func writeFile(t testing.TB, path string, n, blockSize int) map[uint64][]byte {
	t.Helper()
	w, err := Create(path, blockSize)
	if err != nil {
		t.Fatal(err)
	}
	values := map[uint64][]byte{}
	for i := range n {
		k := uint64(2 * i)
		v := bytes.Repeat([]byte{byte(i)}, i%7*13)
		if i%97 == 5 {
			v = bytes.Repeat([]byte("long"), blockSize)
		}
		values[k] = v
		if err := w.Add(key(k), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return values
}

// TestRoundTrip: every key written is found with its value and ordinal,
// every key between and around them is not, for block sizes from one
// entry per block to one block for the file, and an empty file.
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct{ n, blockSize int }{{0, 64}, {1, 64}, {500, 1}, {500, 100}, {500, 4 << 10}, {2000, DefaultBlockSize}} {
		t.Run(fmt.Sprintf("n%d_block%d", c.n, c.blockSize), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			values := writeFile(t, path, c.n, c.blockSize)
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Entries() != int64(c.n) {
				t.Fatalf("%d entries, want %d", r.Entries(), c.n)
			}
			if c.blockSize == 1 && r.Blocks() != c.n {
				t.Fatalf("%d blocks for block size 1, want one per entry (%d)", r.Blocks(), c.n)
			}
			if c.n > 1 && c.blockSize >= 4<<10 && r.Blocks() == c.n {
				t.Fatalf("one block per entry at block size %d", c.blockSize)
			}
			for k := uint64(0); k < uint64(2*c.n+2); k++ {
				v, ord, found, err := r.Get(searchKey(key(k)))
				if err != nil {
					t.Fatal(err)
				}
				want, ok := values[k]
				if found != ok {
					t.Fatalf("key %d: found %v, want %v", k, found, ok)
				}
				if ok && (!bytes.Equal(v, want) || ord != int64(k/2)) {
					t.Fatalf("key %d: value of %d bytes at %d, want %d bytes at %d", k, len(v), ord, len(want), k/2)
				}
			}
			// Every block starts where the index says, and the blocks
			// hold the entries in order.
			var next int64
			for i := range r.Blocks() {
				b, err := r.ReadBlock(i)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b.Key(0), r.FirstKey(i)) {
					t.Fatalf("block %d: first key %x, index says %x", i, b.Key(0), r.FirstKey(i))
				}
				for j := range b.Len() {
					if b.Ordinal(j) != next || !bytes.Equal(b.Key(j), key(uint64(2*next))) {
						t.Fatalf("block %d entry %d: ordinal %d key %x, want %d", i, j, b.Ordinal(j), b.Key(j), next)
					}
					next++
				}
			}
			if next != int64(c.n) {
				t.Fatalf("blocks hold %d entries, want %d", next, c.n)
			}
		})
	}
}

// TestCorruption: a file cut short anywhere, or with any one byte
// changed, fails to open or to read a block with an error wrapping
// ErrCorrupt, or (a change inside a value the lookup does not touch)
// still answers every lookup correctly; it never panics or answers
// wrongly.
func TestCorruption(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	values := writeFile(t, path, 40, 128)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, "bad")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: open: %v, want ErrCorrupt", name, err)
			}
			return
		}
		defer r.Close()
		for k := uint64(0); k < 82; k++ {
			v, _, found, err := r.Get(searchKey(key(k)))
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s: key %d: %v, want ErrCorrupt", name, k, err)
				}
				continue
			}
			want, ok := values[k]
			if found != ok || !bytes.Equal(v, want) {
				t.Fatalf("%s: key %d: found %v with %d bytes, want %v with %d", name, k, found, len(v), ok, len(want))
			}
		}
	}
	for n := range len(good) {
		check(fmt.Sprintf("cut at %d", n), good[:n])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range len(good) {
		bad := bytes.Clone(good)
		bad[i] ^= byte(1 + rng.IntN(255))
		check(fmt.Sprintf("byte %d changed", i), bad)
	}
}

// TestWriterAbort: an aborted file is gone, and a writer cannot create
// over an existing file.
func TestWriterAbort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	w, err := Create(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(key(1), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path, 0); err == nil {
		t.Fatal("Create over an existing file succeeded")
	}
	w.Abort()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("aborted file: %v, want it removed", err)
	}
	if err := w.Add(key(2), nil); err == nil {
		t.Fatal("Add after Abort succeeded")
	}
}

// FuzzDecodeBlock: DecodeBlock never panics, and a block it accepts has
// entries whose keys and values lie inside it.
func FuzzDecodeBlock(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed")
	writeFile(f, path, 30, 100)
	r, err := Open(path)
	if err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for i := range r.Blocks() {
		h := r.blocks[i]
		f.Add(data[h.offset : h.offset+int64(h.length)])
	}
	_ = r.Close()
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBlock(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		total := 0
		for i := range b.Len() {
			total += len(b.Key(i)) + len(b.Value(i))
		}
		if total > len(data) {
			t.Fatalf("entries of %d bytes in a block of %d", total, len(data))
		}
		_, _ = b.Search(func(k []byte) (int, error) { return bytes.Compare([]byte("m"), k), nil })
	})
}

// FuzzOpen: Open and the reads of every block of whatever file it accepts
// never panic, and every error wraps ErrCorrupt.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	for i, c := range []struct{ n, block int }{{0, 64}, {3, 16}, {20, 100}} {
		p := filepath.Join(dir, fmt.Sprint("seed", i))
		writeFile(f, p, c.n, c.block)
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	path := filepath.Join(dir, "input")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open: %v, want ErrCorrupt", err)
			}
			return
		}
		defer r.Close()
		for i := range r.Blocks() {
			if _, err := r.ReadBlock(i); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("block %d: %v, want ErrCorrupt", i, err)
			}
		}
		_, _, _, _ = r.Get(searchKey(key(4)))
	})
}
