package snapshot_test

import (
	"context"
	"os"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(fixturetest.Files(b, "snapshot/snapshot-*")[0])
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := snapshot.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	s := snap(42, "user", 42, snapshot.CommitAppend, 1700000000000)
	for b.Loop() {
		if _, err := s.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLatestID measures the hint path (read LATEST, stat the next
// snapshot) and the listing path on a local table of 200 snapshots.
func BenchmarkLatestID(b *testing.B) {
	ctx := context.Background()
	fio := newFIO(b)
	m := snapshot.NewManager(fio, table)
	for id := int64(1); id <= 200; id++ {
		if err := m.Commit(ctx, snap(id, "u", id, snapshot.CommitAppend, id)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("hint", func(b *testing.B) {
		for b.Loop() {
			if id, _, err := m.LatestID(ctx); err != nil || id != 200 {
				b.Fatal(id, err)
			}
		}
	})
	b.Run("list", func(b *testing.B) {
		if err := fio.Delete(ctx, table+"/snapshot/LATEST"); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if id, _, err := m.LatestID(ctx); err != nil || id != 200 {
				b.Fatal(id, err)
			}
		}
	})
}
