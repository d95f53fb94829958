package write

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// checkLookupCache fails unless w's lookup cache is consistent
// (checkCache) and, when the cache is the writer's own, holds only live
// files of the writer's buckets (Levels.DropFileCallback; a bucket leaving
// the writer drops its own).
func checkLookupCache(t *testing.T, w *KeyValueWriter) {
	t.Helper()
	if w.ownLookups {
		dirs := map[string]*kvBucket{}
		for _, b := range w.order {
			dirs[b.dir] = b
		}
		for dir, l := range w.lookups.buckets {
			b := dirs[dir]
			if b == nil {
				t.Fatalf("the lookup cache holds files of %s, a bucket no longer in the writer", dir)
			}
			for name := range l.files {
				if !slices.ContainsFunc(b.files, func(f manifest.DataFileMeta) bool { return f.FileName == name.file }) {
					t.Fatalf("bucket %d: the lookup cache holds %s, which left the bucket", b.bucket, name.file)
				}
			}
		}
	}
	checkCache(t, w.lookups)
}

// checkCache fails unless c is consistent: memUsed is the sum of the
// units in memory, each unit is its file's, the memory holds at most
// memBudget unless one unit alone is over it; diskUsed is the sum of the
// local files, which are exactly the files in the cache's directory and
// fit diskBudget unless one alone is over it; every file is in its bucket
// and every bucket in the cache.
func checkCache(t *testing.T, c *LookupCache) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	inCache := func(f *lookupFile) bool {
		return c.buckets[f.owner.dir] == f.owner && f.owner.files[lookupName{f.codec.schemaID, f.name}] == f
	}
	for dir, l := range c.buckets {
		if l.dir != dir || len(l.files) == 0 {
			t.Fatalf("bucket %s of the cache: dir %s, %d files", dir, l.dir, len(l.files))
		}
	}
	var mem, largest int64
	units := 0
	for e := c.mem.Front(); e != nil; e = e.Next() {
		u := e.Value.(*memUnit)
		mem += u.bytes
		largest = max(largest, u.bytes)
		units++
		if (u.block < 0 && u.file.recs != u) || (u.block >= 0 && u.file.blocks[u.block] != u) {
			t.Fatalf("memory unit %s/%d is not its file's", u.file.name, u.block)
		}
		if !inCache(u.file) {
			t.Fatalf("memory unit of %s whose file left its bucket", u.file.name)
		}
	}
	if mem != c.memUsed {
		t.Fatalf("memUsed %d, the units hold %d", c.memUsed, mem)
	}
	if mem > c.memBudget && units > 1 {
		t.Fatalf("%d units hold %d bytes, budget %d", units, mem, c.memBudget)
	}
	var disk int64
	local := map[string]bool{}
	for e := c.disk.Front(); e != nil; e = e.Next() {
		f := e.Value.(*lookupFile)
		disk += f.local.Size()
		local[filepath.Base(f.path)] = true
		if !inCache(f) {
			t.Fatalf("local file of %s whose file left its bucket", f.name)
		}
	}
	if disk != c.diskUsed {
		t.Fatalf("diskUsed %d, the local files hold %d", c.diskUsed, disk)
	}
	if disk > c.diskBudget && len(local) > 1 {
		t.Fatalf("%d local files hold %d bytes, budget %d", len(local), disk, c.diskBudget)
	}
	if c.dir != nil {
		entries, err := os.ReadDir(c.dir.Path())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "LOCK" && !local[e.Name()] {
				t.Fatalf("local directory holds %s, not a cached local file", e.Name())
			}
			delete(local, e.Name())
		}
	}
	if len(local) > 0 {
		t.Fatalf("local files %v missing from the directory", local)
	}
}

// TestLookupCacheAccounting: through compactions, evictions, expiry and
// buckets leaving the writer, the writer's lookup cache stays within
// lookup.cache-max-memory-size and lookup.cache-max-disk-size (but for
// the one unit or file in use) and its accounting matches what it holds
// (checkLookupCache); Close deletes the local directory.
func TestLookupCacheAccounting(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ memory, disk, retention string }{
		{"4kb", "", ""}, {"256mb", "", ""}, {"4kb", "6kb", ""}, {"4kb", "0", ""}, {"1kb", "", "1 ms"},
	} {
		t.Run(fmt.Sprintf("mem%s_disk%s_retention%s", c.memory, c.disk, c.retention), func(t *testing.T) {
			fio, err := storage.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			opts := map[string]string{"bucket": "4", "changelog-producer": "lookup", "lookup.cache-max-memory-size": c.memory}
			if c.disk != "" {
				opts["lookup.cache-max-disk-size"] = c.disk
			}
			if c.retention != "" {
				opts["lookup.cache-file-retention"] = c.retention
			}
			s := &schema.TableSchema{
				Fields:      []types.DataField{{ID: 0, Name: "k", Type: types.BigIntType().NotNull()}, {ID: 1, Name: "v", Type: types.StringType()}},
				PrimaryKeys: []string{"k"}, HighestFieldID: 1, Options: opts,
			}
			if err := schema.NewManager(fio, "t").Commit(ctx, s); err != nil {
				t.Fatal(err)
			}
			committer := commit.New(fio, "t", commit.Options{PrimaryKey: true})
			// No restorer: a bucket that comes back starts without levels,
			// which does not matter for the accounting.
			w, err := NewKeyValueWriter(fio, "t", s, OptionsFromSchema(s), nil)
			if err != nil {
				t.Fatal(err)
			}
			w.SetLocalDir(t.TempDir())
			for id := int64(1); id <= 12; id++ {
				for k := range int64(60) {
					if id%4 == 0 && k%4 != 0 {
						continue // some buckets idle: they leave the writer
					}
					if err := w.Write(ctx, kv.Insert, []any{k, fmt.Sprintf("v%d-%d", id, k)}); err != nil {
						t.Fatal(err)
					}
				}
				msgs, err := w.Prepare(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := committer.Commit(ctx, id, msgs); err != nil {
					t.Fatal(err)
				}
				checkLookupCache(t, w)
			}
			lc := w.lookups
			switch {
			case c.memory == "256mb" && (lc.memUsed == 0 || lc.dir != nil):
				t.Errorf("large budget: %d bytes in memory, local directory %v: want records in memory, no local files", lc.memUsed, lc.dir != nil)
			case c.disk == "0" && lc.dir != nil:
				t.Errorf("lookup.cache-max-disk-size 0 made local files")
			case c.memory == "4kb" && c.disk == "" && lc.diskUsed == 0:
				t.Errorf("small memory budget: no local files")
			}
			if lc.diskErr != nil {
				t.Errorf("local disk failed: %v", lc.diskErr)
			}
			dir := ""
			if lc.dir != nil {
				dir = lc.dir.Path()
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); dir != "" && !os.IsNotExist(err) {
				t.Errorf("local directory %s after Close: %v", dir, err)
			}
		})
	}
}

// TestLookupOptionsInvalid: lookup cache options that do not parse fail
// NewKeyValueWriter naming the option and the value.
func TestLookupOptionsInvalid(t *testing.T) {
	for k, v := range map[string]string{
		"lookup.cache-max-memory-size": "lots", "lookup.cache-max-disk-size": "-3 mb",
		"lookup.cache-file-retention": "soon",
	} {
		s := &schema.TableSchema{
			Fields:      []types.DataField{{ID: 0, Name: "k", Type: types.BigIntType().NotNull()}},
			PrimaryKeys: []string{"k"}, Options: map[string]string{"bucket": "1", "changelog-producer": "lookup", k: v},
		}
		_, err := NewKeyValueWriter(nil, "t", s, OptionsFromSchema(s), nil)
		if err == nil || !errorContains(err, k) || !errorContains(err, v) {
			t.Errorf("%s = %q: %v, want an error naming both", k, v, err)
		}
	}
}

func errorContains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }

// lookupTestFields are the columns of the tables of TestLookupLocalFiles:
// a two-column key and a value of every kind of type.
var lookupTestFields = []types.DataField{
	{ID: 0, Name: "k1", Type: types.IntType().NotNull()},
	{ID: 1, Name: "k2", Type: types.StringType().NotNull()},
	{ID: 2, Name: "d", Type: types.DecimalType(20, 4)},
	{ID: 3, Name: "dc", Type: types.DecimalType(10, 2)},
	{ID: 4, Name: "ts", Type: types.TimestampType(6)},
	{ID: 5, Name: "ts3", Type: types.TimestampType(3)},
	{ID: 6, Name: "dt", Type: types.DateType()},
	{ID: 7, Name: "b", Type: types.BytesType()},
	{ID: 8, Name: "f", Type: types.DoubleType()},
	{ID: 9, Name: "flag", Type: types.BooleanType()},
	{ID: 10, Name: "arr", Type: types.ArrayType(types.IntType())},
	{ID: 11, Name: "m", Type: types.MapType(types.StringType().NotNull(), types.IntType())},
	{ID: 12, Name: "r", Type: types.RowType(types.DataField{ID: 13, Name: "x", Type: types.IntType()}, types.DataField{ID: 14, Name: "y", Type: types.StringType()})},
	{ID: 15, Name: "s", Type: types.StringType()},
}

// lookupTestRow is the row of key n written by commit c.
func lookupTestRow(n, c int) []any {
	row := []any{int32(n % 97), fmt.Sprintf("key-%05d", n),
		types.NewDecimal(int64(n*c)*1_000_003, 4), types.NewDecimal(int64(n-c), 2),
		types.Timestamp{Millis: int64(n) * 86_400_123, NanoOfMilli: int32(c * 7 % 1000)}, types.Timestamp{Millis: int64(c) * 1000},
		types.Date(n - 300), []byte{byte(n), byte(c), 0}, float64(n) / float64(c+1), n%2 == 0,
		[]any{int32(n), nil, int32(c)}, types.Map{Keys: []any{"a", "b"}, Values: []any{int32(c), nil}},
		[]any{int32(c), fmt.Sprint("row", n)}, fmt.Sprintf("commit %d of key %d", c, n)}
	if (n+c)%5 == 0 { // NULLs in every nullable column now and then
		for i := 2; i < len(row); i++ {
			row[i] = nil
		}
	}
	return row
}

// TestLookupLocalFiles writes the same changes, commit by commit, into
// lookup-changelog, deletion-vectors and first-row tables whose upper
// levels are looked up from memory (a large lookup.cache-max-memory-size),
// from local lookup files (a 1 KiB memory budget; with a disk bound that
// keeps evicting them; with the local files cut short halfway, which
// rebuilds them), from memory spilling to local files (a budget that
// holds some decoded files) and by forward reads
// (lookup.cache-max-disk-size 0), and
// checks that every data, changelog and index file is byte for byte the
// same; and that with local files each data file is read from the table's
// storage at most once more than compactions read it as their input (the
// lookup reads it once, while the forward reads read some files again at
// every commit).
func TestLookupLocalFiles(t *testing.T) {
	ctx := context.Background()
	type config struct {
		name            string
		memory, disk    string
		corruptAtCommit int64
	}
	configs := []config{
		{name: "memory", memory: "256mb"},
		{name: "local", memory: "1kb"},
		{name: "local_small_disk", memory: "1kb", disk: "500kb"},
		{name: "local_corrupted", memory: "1kb", corruptAtCommit: 6},
		{name: "memory_spill", memory: "1mb"},
		{name: "forward", memory: "1kb", disk: "0"},
	}
	for _, table := range []struct {
		name    string
		options map[string]string
	}{
		{"lookup_changelog", map[string]string{"changelog-producer": "lookup"}},
		{"deletion_vectors", map[string]string{"deletion-vectors.enabled": "true"}},
		{"first_row", map[string]string{"merge-engine": "first-row", "changelog-producer": "lookup"}},
	} {
		t.Run(table.name, func(t *testing.T) {
			var want map[string][]byte
			for _, cf := range configs {
				fio, err := storage.NewLocal(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				counting := faultfs.New(fio, 1) // no faults: it counts the opens of each file
				opts := map[string]string{"bucket": "2", "target-file-size": "24kb", "lookup.cache-max-memory-size": cf.memory}
				for k, v := range table.options {
					opts[k] = v
				}
				if cf.disk != "" {
					opts["lookup.cache-max-disk-size"] = cf.disk
				}
				s := &schema.TableSchema{Fields: lookupTestFields, PrimaryKeys: []string{"k1", "k2"}, HighestFieldID: 15, Options: opts}
				if err := schema.NewManager(fio, "t").Commit(ctx, s); err != nil {
					t.Fatal(err)
				}
				committer := commit.New(fio, "t", commit.Options{PrimaryKey: true})
				o := OptionsFromSchema(s)
				o.Now = func() time.Time { return time.Unix(1_700_000_000, 0) }
				w, err := NewKeyValueWriter(counting, "t", s, o, nil)
				if err != nil {
					t.Fatal(err)
				}
				w.fileUUID = "fixed"
				w.SetLocalDir(t.TempDir())
				inputs := map[string]int{}
				rng := rand.New(rand.NewPCG(3, 4))
				for c := int64(1); c <= 12; c++ {
					if c == cf.corruptAtCommit {
						truncateLocalFiles(t, w)
					}
					for range 400 {
						n := rng.IntN(3000)
						kind := kv.Insert
						if table.name != "first_row" && rng.IntN(8) == 0 {
							kind = kv.Delete
						}
						if err := w.Write(ctx, kind, lookupTestRow(n, int(c))); err != nil {
							t.Fatal(err)
						}
					}
					msgs, err := w.Prepare(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range msgs {
						for _, f := range m.CompactBefore {
							inputs[f.FileName]++
						}
					}
					if _, err := committer.Commit(ctx, c, msgs); err != nil {
						t.Fatal(err)
					}
					checkLookupCache(t, w)
				}
				lc := w.lookups
				if lc.diskErr != nil {
					t.Fatalf("%s: local disk failed: %v", cf.name, lc.diskErr)
				}
				if cf.name != "memory" && cf.name != "forward" && lc.builtLocal == 0 {
					t.Fatalf("%s: no local lookup file built", cf.name)
				}
				if (cf.name == "memory" || cf.name == "forward") && lc.builtLocal != 0 {
					t.Fatalf("%s: local lookup files built", cf.name)
				}
				// Reads beyond the compactions' own: the lookups'.
				extra, reread := counting.ExtraOpens("data-", inputs)
				t.Logf("%s: %d remote reads for lookups, %d files read by lookups more than once, %d local bytes built", cf.name, extra, reread, lc.builtLocal)
				switch cf.name {
				case "memory", "local", "memory_spill":
					if reread > 0 {
						t.Errorf("%s: %d data files read more than once by lookups", cf.name, reread)
					}
					if cf.name == "memory_spill" && lc.spills == 0 {
						t.Errorf("memory_spill: no decoded file spilled to a local file")
					}
				case "forward":
					if reread == 0 {
						t.Errorf("forward reads read no file twice: the test does not show what local files save")
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got := tableFiles(t, fio)
				if want == nil {
					want = got
					continue
				}
				if len(got) != len(want) {
					t.Fatalf("%s: %d files, %s wrote %d", cf.name, len(got), configs[0].name, len(want))
				}
				for p, b := range want {
					if !bytes.Equal(got[p], b) {
						t.Fatalf("%s: %s differs from the %s run's", cf.name, p, configs[0].name)
					}
				}
			}
		})
	}
}

// truncateLocalFiles cuts every local lookup file of w to half its size.
func truncateLocalFiles(t *testing.T, w *KeyValueWriter) {
	t.Helper()
	n := 0
	for e := w.lookups.disk.Front(); e != nil; e = e.Next() {
		f := e.Value.(*lookupFile)
		if err := os.Truncate(f.path, f.local.Size()/2); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no local lookup file to corrupt")
	}
}

// tableFiles reads the data, changelog and index files of table t.
func tableFiles(t *testing.T, fio storage.FileIO) map[string][]byte {
	t.Helper()
	infos, err := fio.List(context.Background(), "t", true)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range infos {
		if f.IsDir || !(strings.Contains(f.Path, "/bucket-") || strings.HasPrefix(f.Path, "t/index/")) {
			continue
		}
		b, err := fio.ReadFile(context.Background(), f.Path)
		if err != nil {
			t.Fatal(err)
		}
		out[f.Path] = b
	}
	if len(out) == 0 {
		t.Fatal("no files in the table")
	}
	return out
}

// TestLocalLookupKeyTypes writes a local lookup file of every other key
// of a sorted set for each type a primary key can have, in blocks of a
// few entries, and looks every key of the set up: the written ones are
// found with their record and row position, the others are not, whatever
// block boundary they fall on.
func TestLocalLookupKeyTypes(t *testing.T) {
	dec := func(s string, scale int) any {
		n, _ := new(big.Int).SetString(s, 10)
		return types.Decimal{Unscaled: n, Scale: scale}
	}
	for _, c := range []struct {
		typ    types.DataType
		values []any
	}{
		{types.BooleanType(), []any{false, true}},
		{types.TinyIntType(), []any{int8(-128), int8(-1), int8(0), int8(1), int8(127)}},
		{types.SmallIntType(), []any{int16(-32768), int16(-300), int16(0), int16(255), int16(256), int16(32767)}},
		{types.IntType(), []any{int32(math.MinInt32), int32(-65536), int32(-1), int32(0), int32(1), int32(256), int32(math.MaxInt32)}},
		{types.BigIntType(), []any{int64(math.MinInt64), int64(-1 << 40), int64(-1), int64(0), int64(7), int64(1 << 33), int64(math.MaxInt64)}},
		{types.FloatType(), []any{float32(math.Inf(-1)), float32(-2.5), float32(-1e-30), float32(0), float32(1e-30), float32(3.25), float32(math.Inf(1))}},
		{types.DoubleType(), []any{math.Inf(-1), -1e300, -0.5, 0.0, 1e-300, 2.0, math.MaxFloat64}},
		{types.StringType(), []any{"", "A", "a", "ab", "abc", "b", "z", "é", "日本", "\U0001F600"}},
		{types.CharType(3), []any{"a  ", "ab ", "abc", "b  "}},
		{types.BytesType(), []any{[]byte{}, []byte{0}, []byte{0, 0}, []byte{1}, []byte{0x7f}, []byte{0x80}, []byte{0xff, 0xff}}},
		{types.BinaryType(2), []any{[]byte{0, 0}, []byte{0, 1}, []byte{0x80, 0}, []byte{0xff, 0xff}}},
		{types.DecimalType(10, 2), []any{dec("-99999999", 2), dec("-1", 2), dec("0", 2), dec("1", 2), dec("12345678", 2)}},
		{types.DecimalType(38, 4), []any{dec("-99999999999999999999999999999999999999", 4), dec("-1", 4), dec("0", 4), dec("18446744073709551616", 4), dec("99999999999999999999999999999999999999", 4)}},
		{types.DateType(), []any{types.Date(-719162), types.Date(-1), types.Date(0), types.Date(19000), types.Date(2932896)}},
		{types.TimeType(3), []any{types.Time(0), types.Time(1), types.Time(43_200_000), types.Time(86_399_999)}},
		{types.TimestampType(3), []any{types.Timestamp{Millis: -1 << 40}, types.Timestamp{Millis: -1}, types.Timestamp{Millis: 0}, types.Timestamp{Millis: 1_700_000_000_000}}},
		{types.TimestampType(9), []any{types.Timestamp{Millis: -5, NanoOfMilli: 999_999}, types.Timestamp{Millis: 0}, types.Timestamp{Millis: 0, NanoOfMilli: 1}, types.Timestamp{Millis: 0, NanoOfMilli: 999_999}, types.Timestamp{Millis: 1}}},
		{types.LocalZonedTimestampType(6), []any{types.Timestamp{Millis: -1}, types.Timestamp{Millis: 0, NanoOfMilli: 1000}, types.Timestamp{Millis: 86_400_000}}},
	} {
		t.Run(c.typ.String(), func(t *testing.T) {
			for i := 1; i < len(c.values); i++ {
				if kv.CompareValues(c.values[i-1], c.values[i]) >= 0 {
					t.Fatalf("values %v and %v are not ascending", c.values[i-1], c.values[i])
				}
			}
			s := &schema.TableSchema{
				Fields:      []types.DataField{{ID: 0, Name: "k", Type: c.typ.NotNull()}, {ID: 1, Name: "v", Type: types.StringType()}},
				PrimaryKeys: []string{"k"}, HighestFieldID: 1, Options: map[string]string{"bucket": "1", "changelog-producer": "lookup"},
			}
			w, err := NewKeyValueWriter(nil, "t", s, OptionsFromSchema(s), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w.SetLocalDir(t.TempDir())
			w.lookups.blockSize = 24 // a few entries a block
			lc := w.lookups
			meta := &manifest.DataFileMeta{FileName: "data-x-0.parquet", FileSize: 100}
			lc.mu.Lock() // the methods below are called with it held
			locked := true
			defer func() {
				if locked {
					lc.mu.Unlock()
				}
			}()
			f := lc.fileOf("t/bucket-0", w.codec, meta)
			l, err := lc.newLocal(meta.FileName, w.codec)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(c.values); i += 2 {
				rec := &mergetree.KeyValue{Value: []any{c.values[i], fmt.Sprint("v", i)}, Seq: int64(100 + i), Kind: kv.UpdateAfter}
				if err := l.add(rec); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := lc.finish(l, f, 0); err != nil {
				t.Fatal(err)
			}
			for i, v := range c.values {
				rec, pos, err := lc.searchLocal(f, []any{v}, 0)
				if err != nil {
					t.Fatal(err)
				}
				if i%2 == 1 {
					if rec != nil {
						t.Errorf("%v: found %v, want nothing", v, rec.Value)
					}
					continue
				}
				if rec == nil {
					t.Errorf("%v: not found", v)
					continue
				}
				if kv.CompareValues(rec.Value[0], v) != 0 || rec.Value[1] != fmt.Sprint("v", i) || rec.Seq != int64(100+i) || rec.Kind != kv.UpdateAfter || pos != int64(i/2) {
					t.Errorf("%v: got %v seq %d %s at %d, want v%d seq %d +U at %d", v, rec.Value, rec.Seq, rec.Kind, pos, i, 100+i, i/2)
				}
			}
			lc.mu.Unlock()
			locked = false
			checkCache(t, lc)
		})
	}
}

// TestLookupCacheShared: writers of two tables compacting concurrently
// through one LookupCache with small bounds keep it consistent and within
// its bounds together (checkCache, under the race detector too); what they
// cached outlives them (Close of a writer leaves a shared cache open), and
// Close of the cache removes its directory.
func TestLookupCacheShared(t *testing.T) {
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	cache := NewLookupCache(LookupCacheOptions{MemorySize: 4 << 10, DiskSize: 24 << 10, Dir: base})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, table := range []string{"t1", "t2"} {
		s := &schema.TableSchema{
			Fields:      []types.DataField{{ID: 0, Name: "k", Type: types.BigIntType().NotNull()}, {ID: 1, Name: "v", Type: types.StringType()}},
			PrimaryKeys: []string{"k"}, HighestFieldID: 1,
			Options: map[string]string{"bucket": "2", "changelog-producer": "lookup", "lookup.cache-max-memory-size": "256mb"},
		}
		if err := schema.NewManager(fio, table).Commit(ctx, s); err != nil {
			t.Fatal(err)
		}
		w, err := NewKeyValueWriter(fio, table, s, OptionsFromSchema(s), nil)
		if err != nil {
			t.Fatal(err)
		}
		w.SetLookupCache(cache) // its bounds, not the table's 256mb
		committer := commit.New(fio, table, commit.Options{PrimaryKey: true})
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				defer w.Close()
				for id := int64(1); id <= 10; id++ {
					for k := range int64(80) {
						if err := w.Write(ctx, kv.Insert, []any{k * id % 97, fmt.Sprintf("%s v%d-%d", table, id, k)}); err != nil {
							return err
						}
					}
					msgs, err := w.Prepare(ctx)
					if err != nil {
						return err
					}
					if _, err := committer.Commit(ctx, id, msgs); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkCache(t, cache)
	st := cache.Stats()
	if st.Files == 0 || st.DiskBytes == 0 || st.Reads == 0 {
		t.Fatalf("after its writers closed the cache holds %+v: want the files they read, in local files", st)
	}
	if cache.spills == 0 && cache.builtLocal == 0 {
		t.Errorf("no local file built: the bounds were not exercised")
	}
	entries, err := os.ReadDir(base)
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "paimon-lookup-") {
		t.Fatalf("local directory under %s: %v %v, want one directory of the cache", base, entries, err)
	}
	if err := cache.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(base); err != nil || len(entries) != 0 {
		t.Errorf("after Close: %v %v under %s, want nothing", entries, err, base)
	}
	if st := cache.Stats(); st != (LookupCacheStats{Reads: st.Reads}) {
		t.Errorf("closed cache holds %+v", st)
	}
}
