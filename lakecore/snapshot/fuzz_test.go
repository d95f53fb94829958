package snapshot_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// FuzzParseSnapshot feeds snapshot files (seeded with every fixture) to
// Parse: no panics, errors wrap ErrInvalidSnapshot, and whatever parses
// re-marshals to bytes that parse to the same bytes again, both as parsed
// and as a fresh snapshot.
func FuzzParseSnapshot(f *testing.F) {
	for _, p := range fixturetest.Files(f, "snapshot/snapshot-*") {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := snapshot.Parse(data)
		if err != nil {
			if !errors.Is(err, snapshot.ErrInvalidSnapshot) {
				t.Fatalf("error %v does not wrap ErrInvalidSnapshot", err)
			}
			return
		}
		for _, v := range []*snapshot.Snapshot{s, s.Fresh()} {
			out, err := v.Marshal()
			if err != nil {
				t.Fatalf("Marshal of a parsed snapshot: %v", err)
			}
			back, err := snapshot.Parse(out)
			if err != nil {
				t.Fatalf("Marshal output does not parse: %v\n%s", err, out)
			}
			again, err := back.Marshal()
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("round trip differs (%v):\n%s\n%s", err, out, again)
			}
		}
	})
}

// FuzzParseConsumer: no panics, errors wrap ErrInvalidConsumer, and a
// parsed consumer round-trips.
func FuzzParseConsumer(f *testing.F) {
	f.Add([]byte("{\n  \"nextSnapshot\" : 7\n}"))
	f.Add([]byte(`{"nextSnapshot":-1,"x":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := snapshot.ParseConsumer(data)
		if err != nil {
			if !errors.Is(err, snapshot.ErrInvalidConsumer) {
				t.Fatalf("error %v does not wrap ErrInvalidConsumer", err)
			}
			return
		}
		back, err := snapshot.ParseConsumer(c.Marshal())
		if err != nil || back != c {
			t.Fatalf("round trip: %v, %v", back, err)
		}
	})
}
