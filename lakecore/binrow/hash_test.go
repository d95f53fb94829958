package binrow_test

import (
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func TestHashAndBucket(t *testing.T) {
	cases := []struct {
		name    string
		types   []types.DataType
		values  []any
		hash    int32
		buckets int
		bucket  int
	}{
		// paimon-format.md §7.6, checked against the fixed-bucket fixture.
		{"INT 1", []types.DataType{intT}, []any{int32(1)}, 1465514398, 2, 0},
		{"INT 0 (negative hash)", []types.DataType{intT}, []any{int32(0)}, -300363099, 2, 1},
		{"INT 0 in 7 buckets: Java remainder -1", []types.DataType{intT}, []any{int32(0)}, -300363099, 7, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row, err := binrow.Encode(c.types, c.values)
			if err != nil {
				t.Fatal(err)
			}
			if h := binrow.Hash(row); h != c.hash {
				t.Errorf("Hash = %d, want %d", h, c.hash)
			}
			if b := binrow.Bucket(row, c.buckets); b != c.bucket {
				t.Errorf("Bucket(%d) = %d, want %d", c.buckets, b, c.bucket)
			}
		})
	}
}

func TestBucketInvalidCount(t *testing.T) {
	row, _ := binrow.Encode([]types.DataType{intT}, []any{int32(1)})
	for _, n := range []int{0, -1} {
		if b := binrow.Bucket(row, n); b != -1 {
			t.Errorf("Bucket(row, %d) = %d, want -1", n, b)
		}
	}
}

func TestHashUnaligned(t *testing.T) {
	// Rows are multiples of 8 bytes; other lengths must still hash without
	// panicking and must depend on the tail bytes.
	a := binrow.Hash([]byte{1, 2, 3, 4, 5})
	b := binrow.Hash([]byte{1, 2, 3, 4, 6})
	if a == b {
		t.Errorf("tail byte ignored: %d", a)
	}
	if binrow.Hash(nil) == binrow.Hash([]byte{0, 0, 0, 0}) {
		t.Error("length not mixed into the hash")
	}
}
