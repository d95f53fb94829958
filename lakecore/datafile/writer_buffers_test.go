package datafile

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// wManyRows returns n rows of a string column that is near-unique (its
// dictionary falls back to PLAIN) or repeats (it keeps one), an optional
// BIGINT with NULLs and a TIMESTAMP(6).
func wManyRows(n int, unique bool) ([]types.DataField, [][]any) {
	fields := []types.DataField{
		wField(0, "s", types.StringType()),
		wField(1, "n", types.BigIntType()),
		wField(2, "ts", types.TimestampType(6)),
	}
	rows := make([][]any, n)
	for i := range rows {
		s := fmt.Sprintf("merchant-%d", i%17)
		if unique {
			s = fmt.Sprintf("order-%09d-%x", i, i*2654435761)
		}
		var v any
		if i%5 != 0 {
			v = int64(i) * 7919
		}
		rows[i] = []any{s, v, types.Timestamp{Millis: 1_700_000_000_000 + int64(i)*13, NanoOfMilli: int32(i%1000) * 1000}}
	}
	return fields, rows
}

// TestWriteBuffersShareAcrossFiles holds files written with one shared
// WriteBuffers, one after another and from several goroutines, to the
// bytes of the same files written alone: a recycled buffer carries
// nothing of the file it served before, whatever its columns were.
func TestWriteBuffersShareAcrossFiles(t *testing.T) {
	type file struct {
		fields []types.DataField
		rows   [][]any
	}
	var files []file
	files = append(files, file{wAllTypesFields(), wAllTypesRows()})
	for _, n := range []int{3, 2500, 30_000} {
		for _, unique := range []bool{true, false} {
			f, r := wManyRows(n, unique)
			files = append(files, file{f, r})
		}
	}
	files = append(files, file{wAllTypesFields(), wAllTypesRows()})
	want := make([][]byte, len(files))
	for i, f := range files {
		want[i], _ = wWriteFile(t, f.fields, WriterOptions{}, f.rows)
	}

	shared := NewWriteBuffers()
	comp, err := shared.Compressor("zstd", 1)
	if err != nil {
		t.Fatal(err)
	}
	o := WriterOptions{Compressor: comp, Buffers: shared}
	for round := range 2 {
		for i, f := range files {
			got, _ := wWriteFile(t, f.fields, o, f.rows)
			if !bytes.Equal(got, want[i]) {
				t.Fatalf("round %d file %d (%d rows): %d bytes with shared buffers differ from %d bytes written alone",
					round, i, len(f.rows), len(got), len(want[i]))
			}
		}
		runtime.GC() // what a sync.Pool would lose
	}
	if shared.kept == 0 || shared.kept > writeBuffersKeep {
		t.Fatalf("shared buffers keep %d bytes after the files, want some and at most %d", shared.kept, writeBuffersKeep)
	}

	var wg sync.WaitGroup
	errs := make([]string, len(files))
	for i, f := range files {
		wg.Go(func() {
			got, _ := wWriteFile(t, f.fields, o, f.rows)
			if !bytes.Equal(got, want[i]) {
				errs[i] = fmt.Sprintf("file %d written concurrently with shared buffers differs from the one written alone", i)
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
}

// TestWriteBuffersKeepAcrossCollections checks that a returned buffer is
// handed out again after garbage collections, and that what the free
// lists keep stays within writeBuffersKeep.
func TestWriteBuffersKeepAcrossCollections(t *testing.T) {
	b := NewWriteBuffers()
	h := b.held(0, false)
	h.words = append(h.words, make([]uint64, 1000)...)
	b.putHeld(h)
	runtime.GC()
	runtime.GC()
	if got := b.held(3, true); got != h {
		t.Fatalf("held after two collections is a new buffer, want the one returned")
	} else if got.len() != 0 || got.column != 3 || !got.levels {
		t.Fatalf("recycled held not reset: %d values, column %d, levels %v", got.len(), got.column, got.levels)
	}
	if b.kept != 0 {
		t.Fatalf("kept %d bytes with every buffer handed out, want 0", b.kept)
	}

	v := b.get(writeBatchRows)
	b.put(v, 0)
	if got := b.get(writeBatchRows); &got[0] != &v[0] {
		t.Fatalf("values buffer not recycled")
	}

	big := 1 << 20 // words of 8 MiB each
	for range 2 * writeBuffersKeep / (8 * big) {
		b.putHeld(&heldValues{words: make([]uint64, 0, big)})
	}
	if b.kept > writeBuffersKeep || len(b.helds) != writeBuffersKeep/(8*big) {
		t.Fatalf("kept %d bytes in %d helds, want at most %d bytes in %d", b.kept, len(b.helds), writeBuffersKeep, writeBuffersKeep/(8*big))
	}
}
