package commit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// hashFile is the index entry of a (not actually written) HASH file.
func hashFile(name string, rows int64) manifest.IndexEntry {
	return manifest.IndexEntry{IndexType: manifest.IndexTypeHash, FileName: name, FileSize: 4 * rows, RowCount: rows}
}

// indexNames returns "partition/bucket/name" of the latest snapshot's
// index manifest entries.
func indexNames(t *testing.T, fio storage.FileIO) []string {
	t.Helper()
	ctx := context.Background()
	s, err := snapshot.NewManager(fio, tablePath).Latest(ctx)
	if err != nil || s == nil || s.IndexManifest == nil {
		t.Fatalf("latest snapshot %v without index manifest: %v", s, err)
	}
	entries, err := manifest.ReadIndexEntries(ctx, fio, tablePath, *s.IndexManifest)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Kind != manifest.FileKindAdd || e.IndexType != manifest.IndexTypeHash {
			t.Fatalf("entry %+v", e)
		}
		out = append(out, string(rune('0'+e.Partition[12]))+"/"+string(rune('0'+e.Bucket))+"/"+e.FileName)
	}
	slices.Sort(out)
	return out
}

// TestCommitHashIndex commits dynamic-bucket messages: every new HASH file
// replaces its (partition, bucket) entry, others stay, and a writer whose
// index base is no longer the partition's HASH files conflicts with
// ErrIndexConflict.
func TestCommitHashIndex(t *testing.T) {
	ctx := context.Background()
	fio := localFIO(t)
	createTable(t, fio, nil)
	cm := commit.New(fio, tablePath, fastRetries("u"))
	base := func(names ...string) *commit.IndexBase { return &commit.IndexBase{Writer: "w1", Files: names} }
	other := func(names ...string) *commit.IndexBase { return &commit.IndexBase{Writer: "w2", Files: names} }
	m := func(p int32, bucket int32, b *commit.IndexBase, idx ...manifest.IndexEntry) commit.Message {
		x := msg(p, file("d-"+idx[0].FileName, 1))
		x.Bucket, x.NewIndexFiles, x.IndexBase = bucket, idx, b
		return x
	}
	steps := []struct {
		name string
		msgs []commit.Message
		want []string
		err  error
	}{
		{"first files", []commit.Message{m(1, 0, base(), hashFile("i1", 3)), m(1, 1, base(), hashFile("i2", 1)), m(2, 0, base(), hashFile("i3", 2))},
			[]string{"1/0/i1", "1/1/i2", "2/0/i3"}, nil},
		{"replace bucket 1 of partition 1", []commit.Message{m(1, 1, base("i1", "i2"), hashFile("i4", 2))},
			[]string{"1/0/i1", "1/1/i4", "2/0/i3"}, nil},
		{"stale base conflicts", []commit.Message{m(1, 0, base("i1", "i2"), hashFile("i5", 4))},
			[]string{"1/0/i1", "1/1/i4", "2/0/i3"}, commit.ErrIndexConflict},
		{"base of another partition unaffected", []commit.Message{m(2, 3, base("i3"), hashFile("i6", 1))},
			[]string{"1/0/i1", "1/1/i4", "2/0/i3", "2/3/i6"}, nil},
		{"two writers in one partition in one commit", []commit.Message{m(1, 0, base("i1", "i4"), hashFile("i7", 4)), m(1, 1, other("i1", "i4"), hashFile("i8", 3))},
			[]string{"1/0/i1", "1/1/i4", "2/0/i3", "2/3/i6"}, commit.ErrIndexConflict},
		{"two batches of one writer in one commit, the later full file kept", []commit.Message{
			m(1, 0, base("i1", "i4"), hashFile("i9", 4)), m(1, 2, base("i1", "i4"), hashFile("i10", 1)),
			m(1, 0, base("i9", "i4", "i10"), hashFile("i11", 6)), m(2, 3, other("i3", "i6"), hashFile("i12", 2))},
			[]string{"1/0/i11", "1/1/i4", "1/2/i10", "2/0/i3", "2/3/i12"}, nil},
	}
	for i, s := range steps {
		_, err := cm.Commit(ctx, int64(i+1), s.msgs)
		if !errors.Is(err, s.err) {
			t.Fatalf("%s: commit error %v, want %v", s.name, err, s.err)
		}
		if s.err != nil && !errors.Is(err, commit.ErrConflict) {
			t.Fatalf("%s: %v does not wrap ErrConflict", s.name, err)
		}
		if got := indexNames(t, fio); !slices.Equal(got, s.want) {
			t.Fatalf("%s: index entries %v, want %v", s.name, got, s.want)
		}
	}
	// A recovered commit of messages that landed learns it from the index
	// files too (their base is stale by then).
	landed := []commit.Message{m(1, 1, base("i11", "i4", "i10"), hashFile("i20", 5))}
	if _, err := cm.Commit(ctx, 20, landed); err != nil {
		t.Fatal(err)
	}
	if _, err := cm.CommitRecovered(ctx, 20, landed); !errors.Is(err, manifest.ErrDuplicateFile) || !errors.Is(err, commit.ErrConflict) {
		t.Fatalf("recovered commit of landed index files: %v, want ErrDuplicateFile", err)
	}
	// Compact refuses index files.
	x := m(1, 0, nil, hashFile("i7", 1))
	x.NewFiles, x.CompactBefore = nil, []manifest.DataFileMeta{file("d-i1", 1)}
	if _, err := cm.Compact(ctx, 9, []commit.Message{x}); !errors.Is(err, commit.ErrInvalidMessage) {
		t.Fatalf("Compact with index files: %v, want ErrInvalidMessage", err)
	}
}

// TestCommitCompactDeletionVectors commits deletion-vector files with the
// compaction part: they land in the COMPACT snapshot (the APPEND one keeps
// the old index manifest), each replaces its bucket's entry, the later of
// two files of one bucket in one commit wins, and vectors built on a file
// that is no longer the bucket's conflict (ErrCompactionConflict after an
// append part, ErrConflict from Compact) without changing the index.
func TestCommitCompactDeletionVectors(t *testing.T) {
	ctx := context.Background()
	fio := localFIO(t)
	createTable(t, fio, nil)
	cm := commit.New(fio, tablePath, fastRetries("u"))
	dv := func(name string) manifest.IndexEntry {
		return manifest.IndexEntry{IndexType: manifest.IndexTypeDeletionVectors, FileName: name, FileSize: 1, DVRanges: []manifest.DVRange{}}
	}
	base := func(s string) *string { return &s }
	n := 0
	m := func(bucket int32, b *string, idx ...manifest.IndexEntry) commit.Message {
		n++
		x := msg(1, file(fmt.Sprintf("new-%d", n), 1))
		x.Bucket, x.CompactIndexFiles, x.CompactIndexBase = bucket, idx, b
		x.CompactBefore = []manifest.DataFileMeta{x.NewFiles[0]}
		x.CompactAfter = []manifest.DataFileMeta{file(fmt.Sprintf("up-%d", n), 1)}
		x.CompactAfter[0].Level = 5
		return x
	}
	dvNames := func(s *snapshot.Snapshot) []string {
		if s.IndexManifest == nil {
			return nil
		}
		entries, err := manifest.ReadIndexEntries(ctx, fio, tablePath, *s.IndexManifest)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, fmt.Sprintf("%d/%s", e.Bucket, e.FileName))
		}
		slices.Sort(out)
		return out
	}
	steps := []struct {
		name string
		msgs []commit.Message
		want []string
		err  error
	}{
		{"first files", []commit.Message{m(0, base(""), dv("v1")), m(1, base(""), dv("v2"))}, []string{"0/v1", "1/v2"}, nil},
		{"replace bucket 1", []commit.Message{m(1, base("v2"), dv("v3"))}, []string{"0/v1", "1/v3"}, nil},
		{"stale base", []commit.Message{m(1, base("v2"), dv("v4"))}, []string{"0/v1", "1/v3"}, commit.ErrCompactionConflict},
		{"two batches of one writer", []commit.Message{m(0, base("v1"), dv("v5")), m(0, base("v5"), dv("v6"))}, []string{"0/v6", "1/v3"}, nil},
	}
	var committed []string
	for i, s := range steps {
		last, err := cm.Commit(ctx, int64(i+1), s.msgs)
		if !errors.Is(err, s.err) {
			t.Fatalf("%s: commit error %v, want %v", s.name, err, s.err)
		}
		if got := dvNames(last); !slices.Equal(got, s.want) {
			t.Fatalf("%s: index entries %v, want %v", s.name, got, s.want)
		}
		if s.err != nil {
			continue
		}
		if last.CommitKind != snapshot.CommitCompact {
			t.Fatalf("%s: last snapshot is %s", s.name, last.CommitKind)
		}
		prev, err := snapshot.NewManager(fio, tablePath).Get(ctx, last.ID-1)
		if err != nil {
			t.Fatal(err)
		}
		if got := dvNames(prev); prev.CommitKind != snapshot.CommitAppend || !slices.Equal(got, committed) {
			t.Fatalf("%s: the %s snapshot before has index entries %v, want %v", s.name, prev.CommitKind, got, committed)
		}
		committed = s.want
	}
	x := m(0, base("v1"), dv("v7"))
	x.NewFiles = nil
	x.CompactBefore = nil
	if _, err := cm.Compact(ctx, 9, []commit.Message{x}); !errors.Is(err, commit.ErrConflict) {
		t.Fatalf("Compact on a stale deletion-vectors file: %v, want ErrConflict", err)
	}
	x.CompactIndexBase = base("v6")
	s, err := cm.Compact(ctx, 10, []commit.Message{x})
	if err != nil {
		t.Fatal(err)
	}
	if got := dvNames(s); !slices.Equal(got, []string{"0/v7", "1/v3"}) {
		t.Fatalf("Compact: index entries %v", got)
	}
	// A vector must belong to a file live after the commit: one of a file
	// another writer compacted away would delete nothing.
	withVector := func(id int64, base, name, dataFile string) error {
		x := m(0, &base, dv(name))
		x.NewFiles, x.CompactBefore = nil, nil
		x.CompactIndexFiles[0].DVRanges = []manifest.DVRange{{DataFile: dataFile, Offset: 1, Length: 22}}
		_, err := cm.Compact(ctx, id, []commit.Message{x})
		return err
	}
	if err := withVector(11, "v7", "v8", "new-1"); !errors.Is(err, commit.ErrConflict) || !strings.Contains(err.Error(), "new-1") {
		t.Fatalf("vector of a file compacted away: %v, want ErrConflict naming it", err)
	}
	if err := withVector(12, "v7", "v9", "up-1"); err != nil {
		t.Fatalf("vector of a live file: %v", err)
	}
}
