package pgcdc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/lookupfile"
	"github.com/benthos-paimon/benthos-paimon/lakecore/spillfile"
)

// streamMsg is an in-stream pgoutput message: type, the xid of its
// (sub)transaction, body.
func streamMsg(typ byte, sub uint32, body string) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{typ}, sub), body...)
}

// testSpools is a spoolSet of memory limit, spilling into a directory
// under t.TempDir() (base), removed when the test ends.
func testSpools(t testing.TB, limit int64) (*spoolSet, string) {
	t.Helper()
	base := t.TempDir()
	var d *lookupfile.Dir
	ss, err := newSpoolSet(func() (*lookupfile.Dir, error) {
		if d == nil {
			var err error
			if d, err = lookupfile.OpenDir(base); err != nil {
				return nil, err
			}
		}
		return d, nil
	}, limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ss.close()
		if d != nil {
			_ = d.Close()
		}
	})
	return ss, base
}

func replayed(t testing.TB, ss *spoolSet, xid uint32) []string {
	t.Helper()
	sp := ss.take(xid)
	if sp == nil {
		return nil
	}
	var out []string
	if err := sp.replay(ss.codec, func(rec []byte) error { out = append(out, string(rec)); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// spoolFiles lists the spill files under base.
func spoolFiles(t testing.TB, base string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(base, lookupfile.DirPrefix+"*", "*.spool"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSpool: records come back in order in protocol 1 form (the xid taken
// out), from memory and from the spill file alike; rolled back
// subtransactions (nested, overlapping, across the file and memory) drop
// exactly their records; a top-level
// abort and a first segment drop everything; files are removed after the
// replay.
func TestSpool(t *testing.T) {
	for _, limit := range []int64{1 << 20, 64, 1} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			ss, base := testSpools(t, limit)
			add := func(xid uint32, typ byte, sub uint32, body string) {
				t.Helper()
				if err := ss.add(xid, streamMsg(typ, sub, body)); err != nil {
					t.Fatal(err)
				}
			}
			ss.start(100, true)
			ss.start(200, true)
			add(100, 'I', 100, "a1")
			add(200, 'I', 200, "other")
			add(100, 'I', 101, "s1") // SAVEPOINT s1 (xid 101)
			add(100, 'R', 102, "rel")
			add(100, 'I', 102, "s2") // SAVEPOINT s2 inside s1 (xid 102)
			ss.abort(100, 102)       // ROLLBACK TO s2
			add(100, 'I', 101, "s1b")
			ss.abort(100, 101) // ROLLBACK TO s1
			ss.abort(100, 999) // a subtransaction that streamed nothing
			add(100, 'I', 103, "s3")
			add(100, 'U', 100, "a2")
			ss.start(100, false) // a later segment keeps what came before
			add(100, 'D', 100, "a3")
			if limit == 1 && len(spoolFiles(t, base)) == 0 {
				t.Fatal("no spill file with a limit of 1 byte")
			}
			got := strings.Join(replayed(t, ss, 100), " ")
			if want := "Ia1 Is3 Ua2 Da3"; got != want {
				t.Fatalf("replay: %q, want %q", got, want)
			}
			ss.abort(200, 200)
			if ss.open() || replayed(t, ss, 200) != nil {
				t.Fatal("transaction 200 still there after its abort")
			}
			ss.start(300, true)
			add(300, 'I', 300, "old")
			ss.start(300, true) // streamed again from its start
			add(300, 'I', 300, "new")
			if got := strings.Join(replayed(t, ss, 300), " "); got != "Inew" {
				t.Fatalf("replay after a first segment again: %q", got)
			}
			if f := spoolFiles(t, base); len(f) != 0 || ss.mem != 0 {
				t.Fatalf("left behind: files %v, %d bytes in memory", f, ss.mem)
			}
			if err := ss.add(400, streamMsg('I', 400, "x")); err == nil {
				t.Fatal("a change of a transaction without Stream Start was taken")
			}
			if ss.start(400, true); ss.add(400, []byte{'I', 0}) == nil {
				t.Fatal("a message too short for its xid was taken")
			}
		})
	}
}

// TestSpoolMemoryLimit: memory stays within the limit plus one record; the
// largest spool is the one spilled.
func TestSpoolMemoryLimit(t *testing.T) {
	ss, base := testSpools(t, 1000)
	ss.start(1, true)
	ss.start(2, true)
	for i := range 200 {
		if err := ss.add(1, streamMsg('I', 1, fmt.Sprintf("%050d", i))); err != nil {
			t.Fatal(err)
		}
		if i%20 == 0 {
			if err := ss.add(2, streamMsg('I', 2, "small")); err != nil {
				t.Fatal(err)
			}
		}
		if ss.mem > 1000+60 {
			t.Fatalf("%d bytes in memory, limit 1000", ss.mem)
		}
	}
	if ss.spools[2].file != nil {
		t.Fatal("the small transaction was spilled")
	}
	if len(spoolFiles(t, base)) != 1 || ss.bytes() <= ss.mem {
		t.Fatalf("files %v, %d bytes held, %d in memory", spoolFiles(t, base), ss.bytes(), ss.mem)
	}
	if n := len(replayed(t, ss, 1)); n != 200 {
		t.Fatalf("%d records replayed, want 200", n)
	}
}

// TestSpoolCorruptFile: a spill file changed on disk gives an error
// wrapping spillfile.ErrCorrupt at the replay, never a wrong record.
func TestSpoolCorruptFile(t *testing.T) {
	for _, change := range []string{"flip", "truncate", "empty"} {
		t.Run(change, func(t *testing.T) {
			ss, base := testSpools(t, 1)
			ss.start(7, true)
			for i := range 100 {
				if err := ss.add(7, streamMsg('I', 7, fmt.Sprint("row ", i))); err != nil {
					t.Fatal(err)
				}
			}
			sp := ss.take(7)
			if err := sp.file.Close(); err != nil { // as replay does first
				t.Fatal(err)
			}
			data, err := os.ReadFile(sp.path)
			if err != nil {
				t.Fatal(err)
			}
			switch change {
			case "flip":
				data[len(data)/2] ^= 0x40
			case "truncate":
				data = data[:len(data)-5]
			case "empty":
				data = nil
			}
			if err := os.WriteFile(sp.path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			sp.file = nil
			err = sp.replay(ss.codec, func([]byte) error { return nil })
			if !errors.Is(err, spillfile.ErrCorrupt) {
				t.Fatalf("replay of a corrupt file: %v, want ErrCorrupt", err)
			}
			if len(spoolFiles(t, base)) != 0 {
				t.Fatal("corrupt file left behind")
			}
		})
	}
}

// FuzzSpoolReplay: replaying a spool whose spill file holds any bytes
// never panics; it replays the records written or fails with an error
// wrapping spillfile.ErrCorrupt.
func FuzzSpoolReplay(f *testing.F) {
	dir := f.TempDir()
	codec, err := spillfile.NewCodec("lz4", 0)
	if err != nil {
		f.Fatal(err)
	}
	valid := func(n int) []byte {
		path := filepath.Join(dir, fmt.Sprint("seed-", n))
		w, err := spillfile.Create(path, codec)
		if err != nil {
			f.Fatal(err)
		}
		for i := range n {
			_ = w.Add([]byte(fmt.Sprint("Irow ", i)))
		}
		if err := w.Close(); err != nil {
			f.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		return data
	}
	f.Add(valid(3))
	f.Add(valid(0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.spool")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		sp := &spool{xid: 1, path: path, fileRecords: 3}
		n := 0
		err := sp.replay(codec, func(rec []byte) error {
			if len(rec) == 0 {
				t.Fatal("empty record")
			}
			n++
			return nil
		})
		if err != nil && !errors.Is(err, spillfile.ErrCorrupt) {
			t.Fatalf("error not wrapping ErrCorrupt: %v", err)
		}
		if err == nil && n != 3 {
			t.Fatalf("%d records replayed without an error, 3 written", n)
		}
	})
}
