package manifest_test

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
)

func positionsRange(lo, hi, step int64) []int64 {
	var out []int64
	for p := lo; p < hi; p += step {
		out = append(out, p)
	}
	return out
}

// TestEncodeDeletionVectorGolden compares each serialized vector with the
// bytes Java 2.0's BitmapDeletionVector.serializeTo writes for the same
// positions (testdata/dvgolden/Gold.java, run against
// paimon-flink-2.0-2.0.0.jar, wrote java20.txt): array, bitmap and run
// containers, with and without the offset header.
func TestEncodeDeletionVectorGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/dvgolden/java20.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	cases := []struct {
		name string
		pos  []int64
	}{
		{"position 0", []int64{0}},
		{"position 4", []int64{4}},
		{"one run", positionsRange(1, 11, 1)},
		{"array", []int64{0, 2, 4, 6, 8}},
		{"three containers", []int64{5, 70000, 70001, 70002, 200000}},
		{"5000 in a row", positionsRange(0, 5000, 1)},
		{"bitmap", positionsRange(0, 10000, 2)},
		{"run across containers", positionsRange(65530, 65545, 1)},
		{"runs with offsets", []int64{0, 1, 2, 3, 10, 11, 12, 13, 100, 101, 102, 103, 131072, 131073, 262144, 327680, 393216}},
	}
	if len(lines) != len(cases) {
		t.Fatalf("%d golden lines for %d cases", len(lines), len(cases))
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := hex.DecodeString(lines[i])
			if err != nil {
				t.Fatal(err)
			}
			// Shuffled and duplicated input: the vector is a set.
			in := slices.Clone(c.pos)
			in = append(in, c.pos[0])
			rand.Shuffle(len(in), func(a, b int) { in[a], in[b] = in[b], in[a] })
			file, ranges, err := manifest.EncodeDeletionVectorsFile([]manifest.DataFileVector{{DataFile: "f", Positions: in}})
			if err != nil {
				t.Fatal(err)
			}
			if got := file[1:]; !slices.Equal(got, want) {
				t.Fatalf("serialized vector differs from Java's:\n got %x\nwant %x", got, want)
			}
			if len(ranges) != 1 || ranges[0].Offset != 1 || int(ranges[0].Length) != len(want)-8 || *ranges[0].Cardinality != int64(len(c.pos)) {
				t.Fatalf("ranges %+v", ranges)
			}
			dv, err := manifest.NewDeletionVector(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Collect(dv.All()); !slices.Equal(got, c.pos) {
				t.Fatalf("decoded %d positions, want %d", len(got), len(c.pos))
			}
		})
	}
}

// TestEncodeDeletionVectorsFileFixture re-encodes the deletion-vector
// files of the Java 0.9 fixture from their decoded positions and compares
// the files byte for byte, the empty file of snapshot 8 included.
func TestEncodeDeletionVectorsFileFixture(t *testing.T) {
	ctx := context.Background()
	fio, table := pk09(t)
	for _, im := range []string{"index-manifest-03e2700b-8409-499b-8c27-a09ccee9348c-0", "index-manifest-03e2700b-8409-499b-8c27-a09ccee9348c-1"} {
		entries, err := manifest.ReadIndexEntries(ctx, fio, table, im)
		if err != nil {
			t.Fatal(err)
		}
		dvs, err := manifest.ReadDeletionVectors(ctx, fio, table, im)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			want, err := fio.ReadFile(ctx, path.Join(table, "index", e.FileName))
			if err != nil {
				t.Fatal(err)
			}
			var vs []manifest.DataFileVector
			for _, r := range e.DVRanges {
				vs = append(vs, manifest.DataFileVector{DataFile: r.DataFile, Positions: slices.Collect(dvs[r.DataFile].All())})
			}
			got, ranges, err := manifest.EncodeDeletionVectorsFile(vs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s:\n got %x\nwant %x", e.FileName, got, want)
			}
			if len(ranges) != len(e.DVRanges) {
				t.Fatalf("%s: %d ranges, want %d", e.FileName, len(ranges), len(e.DVRanges))
			}
			for i, r := range ranges {
				w := e.DVRanges[i]
				if r.DataFile != w.DataFile || r.Offset != w.Offset || r.Length != w.Length {
					t.Errorf("%s: range %d = %+v, want %+v", e.FileName, i, r, w)
				}
			}
		}
	}
}

// TestEncodeDeletionVectorsRoundTrip encodes random vectors (sparse,
// dense, runs, positions up to 2^31-1) and decodes them again.
func TestEncodeDeletionVectorsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		var vs []manifest.DataFileVector
		want := map[string][]int64{}
		for f := range 1 + r.IntN(4) {
			name := "data-" + string(rune('a'+f)) + ".parquet"
			var pos []int64
			switch i % 3 {
			case 0:
				for range r.IntN(100) + 1 {
					pos = append(pos, r.Int64N(1<<31))
				}
			case 1:
				for range r.IntN(20000) + 1 {
					pos = append(pos, r.Int64N(200000))
				}
			default:
				start := r.Int64N(1 << 20)
				pos = positionsRange(start, start+r.Int64N(70000)+1, 1)
			}
			slices.Sort(pos)
			pos = slices.Compact(pos)
			vs = append(vs, manifest.DataFileVector{DataFile: name, Positions: pos})
			want[name] = pos
		}
		data, ranges, err := manifest.EncodeDeletionVectorsFile(vs)
		if err != nil {
			t.Fatal(err)
		}
		for _, rg := range ranges {
			dv, n, err := manifest.DecodeDeletionVector(data[rg.Offset:], rg.Length)
			if err != nil {
				t.Fatalf("case %d, %s: %v", i, rg.DataFile, err)
			}
			if n != int(rg.Length)+8 || *rg.Cardinality != dv.Cardinality() {
				t.Fatalf("case %d, %s: %d bytes, cardinality %d/%d", i, rg.DataFile, n, *rg.Cardinality, dv.Cardinality())
			}
			if got := slices.Collect(dv.All()); !slices.Equal(got, want[rg.DataFile]) {
				t.Fatalf("case %d, %s: positions differ", i, rg.DataFile)
			}
		}
	}
	if _, _, err := manifest.EncodeDeletionVectorsFile([]manifest.DataFileVector{{DataFile: "x", Positions: []int64{1 << 31}}}); err == nil {
		t.Error("position 2^31 encoded in a 32-bit vector")
	}
}
