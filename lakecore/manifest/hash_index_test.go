package manifest_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestHashIndexGolden encodes the HASH index of the trimmed-PK rows INT 1
// and INT 0, whose BinaryRow.hashCode values are Java's (paimon-format.md
// §7.6, checked against the fixed-bucket fixture): big-endian ints, no
// header (IntFileUtils.writeInts).
func TestHashIndexGolden(t *testing.T) {
	intT := types.IntType()
	var hashes []int32
	for _, k := range []int32{1, 0} {
		row, err := binrow.Encode([]types.DataType{intT}, []any{k})
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, binrow.Hash(row))
	}
	got := manifest.EncodeHashIndex(hashes)
	want, _ := hex.DecodeString("5759f99e" + "ee18d2a5")
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeHashIndex = %x, want %x", got, want)
	}
	back, err := manifest.DecodeHashIndex(got)
	if err != nil || !slices.Equal(back, []int32{1465514398, -300363099}) {
		t.Fatalf("DecodeHashIndex = %v, %v", back, err)
	}
}

func TestDecodeHashIndexErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want []int32
		err  error
	}{
		{"empty", nil, []int32{}, nil},
		{"one int", []byte{0x80, 0, 0, 1}, []int32{-2147483647}, nil},
		{"partial tail", []byte{0, 0, 0, 1, 2}, nil, manifest.ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := manifest.DecodeHashIndex(c.in)
			if !errors.Is(err, c.err) || (c.err == nil && !slices.Equal(got, c.want)) {
				t.Fatalf("DecodeHashIndex(%x) = %v, %v; want %v, %v", c.in, got, err, c.want, c.err)
			}
		})
	}
}

// FuzzDecodeHashIndex: any input decodes or fails with ErrCorrupt, and
// what decodes encodes back to the same bytes.
func FuzzDecodeHashIndex(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x57, 0x59, 0xf9, 0x9e, 0xee, 0x18, 0xd2, 0xa5})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		hashes, err := manifest.DecodeHashIndex(b)
		if err != nil {
			if !errors.Is(err, manifest.ErrCorrupt) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if got := manifest.EncodeHashIndex(hashes); !bytes.Equal(got, b) {
			t.Fatalf("round trip %x -> %x", b, got)
		}
	})
}

func TestCombineIndexEntries(t *testing.T) {
	p0, p1 := []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}
	e := func(kind manifest.FileKind, p []byte, bucket int32, typ, name string) manifest.IndexEntry {
		return manifest.IndexEntry{Kind: kind, Partition: p, Bucket: bucket, IndexType: typ, FileName: name}
	}
	const hash, dv = manifest.IndexTypeHash, manifest.IndexTypeDeletionVectors
	add, del := manifest.FileKindAdd, manifest.FileKindDelete
	prev := []manifest.IndexEntry{
		e(add, p0, 0, hash, "h00"), e(add, p0, 1, hash, "h01"), e(add, p1, 0, hash, "h10"), e(add, p0, 0, dv, "d00"), e(add, p0, 0, "btree", "g1"),
	}
	cases := []struct {
		name    string
		changes []manifest.IndexEntry
		want    []string
	}{
		{"nothing", nil, []string{"h00", "h01", "h10", "d00", "g1"}},
		{"replace per bucket and type", []manifest.IndexEntry{e(add, p0, 1, hash, "h01b")}, []string{"h00", "h01b", "h10", "d00", "g1"}},
		{"new bucket appended", []manifest.IndexEntry{e(add, p1, 3, hash, "h13")}, []string{"h00", "h01", "h10", "d00", "g1", "h13"}},
		{"delete then add same bucket", []manifest.IndexEntry{e(add, p0, 0, hash, "h00b"), e(del, p0, 0, hash, "h00")}, []string{"h01", "h10", "d00", "g1", "h00b"}},
		{"delete only", []manifest.IndexEntry{e(del, p1, 0, hash, "h10")}, []string{"h00", "h01", "d00", "g1"}},
		{"global by file name", []manifest.IndexEntry{e(add, p0, 0, "btree", "g2")}, []string{"h00", "h01", "h10", "d00", "g1", "g2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, x := range manifest.CombineIndexEntries(prev, c.changes) {
				got = append(got, x.FileName)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("combined %v, want %v", got, c.want)
			}
		})
	}
}
