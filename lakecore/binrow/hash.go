package binrow

import (
	"encoding/binary"
	"math/bits"
)

// murmurSeed is MurmurHashUtils.DEFAULT_SEED.
const murmurSeed = 42

// Hash returns BinaryRow.hashCode of a row given without its arity prefix:
// MurmurHashUtils.hashBytesByWords with seed 42 (apache/paimon
// paimon-common/src/main/java/org/apache/paimon/utils/MurmurHashUtils.java),
// a Murmur3 x86_32 variant over little-endian 4-byte words finished by
// fmix(h ^ length). Encoded rows are always a multiple of 8 bytes long; for
// other lengths the trailing bytes are mixed one signed byte at a time, as
// MurmurHashUtils.hashBytes does.
func Hash(row []byte) int32 {
	h := uint32(murmurSeed)
	aligned := len(row) &^ 3
	for i := 0; i < aligned; i += 4 {
		h = mixH1(h, mixK1(binary.LittleEndian.Uint32(row[i:])))
	}
	for _, b := range row[aligned:] {
		h = mixH1(h, mixK1(uint32(int32(int8(b)))))
	}
	return int32(fmix(h ^ uint32(len(row))))
}

// Bucket returns the bucket of a bucket-key row (fields in bucket-key order,
// encoded with Encode) in a table of numBuckets fixed buckets:
// Math.abs(hash % numBuckets) with Java's truncating int remainder
// (apache/paimon paimon-core/.../bucket/DefaultBucketFunction.java). It
// returns -1, never a valid bucket, if numBuckets < 1.
func Bucket(row []byte, numBuckets int) int {
	if numBuckets < 1 {
		return -1
	}
	b := int(Hash(row)) % numBuckets
	if b < 0 {
		b = -b
	}
	return b
}

func mixK1(k uint32) uint32 {
	k *= 0xcc9e2d51
	k = bits.RotateLeft32(k, 15)
	return k * 0x1b873593
}

func mixH1(h, k uint32) uint32 {
	h ^= k
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func fmix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
