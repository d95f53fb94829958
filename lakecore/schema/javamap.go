package schema

import (
	"slices"
	"sort"
	"unicode/utf16"
)

// Java writes a schema's options by iterating a java.util.HashMap
// (SchemaSerializer.serialize over TableSchema.options(), a HashMap built by
// Schema's constructor or by SchemaManager.generateTableSchema as
// new HashMap<>(old)). The order is therefore the order of HashMap's bucket
// table: keys sorted by (spread(hashCode) & (capacity-1)), keys in one bucket
// in insertion order. These helpers reproduce that order so that a schema
// written by Go is byte-identical to the one Java would write; it is
// verified against every fixture schema (schema_test.go).

// javaStringHash is java.lang.String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}

// javaBucket is HashMap's bucket index: (h ^ h>>>16) & (capacity-1).
func javaBucket(key string, capacity int) int {
	h := uint32(javaStringHash(key))
	return int((h ^ h>>16) & uint32(capacity-1))
}

func tableSizeFor(c int) int {
	n := 1
	for n < c && n < 1<<30 {
		n <<= 1
	}
	return n
}

// copyCapacity is the table size of new HashMap<>(m) with len(m) == n
// (HashMap.putMapEntries on JDK 8 to 17: tableSizeFor((int)(n/0.75f + 1))).
func copyCapacity(n int) int {
	return tableSizeFor(int(float32(n)/0.75 + 1))
}

// putCapacity is the table size of new HashMap<>() after n puts: 16,
// doubled whenever the size passes three quarters of it.
func putCapacity(n int) int {
	c := 16
	for n > c*3/4 && c < 1<<30 {
		c <<= 1
	}
	return c
}

// javaHashOrder returns keys (given in insertion order) in the order a
// HashMap of the given capacity iterates them.
func javaHashOrder(keys []string, capacity int) []string {
	out := slices.Clone(keys)
	sort.SliceStable(out, func(i, j int) bool {
		return javaBucket(out[i], capacity) < javaBucket(out[j], capacity)
	})
	return out
}

// javaCopyOrder is the iteration order of new HashMap<>(m) where m iterates
// keys in the given order.
func javaCopyOrder(keys []string) []string { return javaHashOrder(keys, copyCapacity(len(keys))) }

// javaParsedOrder is the iteration order of the HashMap that
// SchemaSerializer.deserialize fills by putting keys in file order.
func javaParsedOrder(keys []string) []string { return javaHashOrder(keys, putCapacity(len(keys))) }
