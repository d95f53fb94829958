// Package lookupfile writes and reads local lookup files: the records of
// one remote data file, in key order, in a file on local disk that a
// point lookup reads one block of, as Java Paimon's lookup compactions
// keep them (apache/paimon: paimon-core/.../mergetree/LookupLevels.java,
// LookupFile.java; paimon-common/.../lookup/sort/SortLookupStoreWriter.java).
// Keys and values are opaque bytes to this package: the caller serializes
// them, adds them in ascending key order and searches with its own
// comparator, so the order is always the caller's (lakecore's writer uses
// Java's key comparator on decoded keys). An entry's ordinal (its index
// among the file's entries) is kept too: for a data file read without
// deletion vectors it is the row position a deletion vector marks.
//
// A local file is private to the process that wrote it (Java's are too):
// it is a cache of a remote file, never table state, and the format may
// change between releases. It is nonetheless checked when read: the footer
// and index carry a magic number, lengths and a CRC-32C, and every block its
// own CRC-32C in the index, so a truncated or corrupt file gives an error
// wrapping [ErrCorrupt] (the caller rebuilds it from the remote file),
// never a panic or a wrong answer from a flipped bit.
//
// Layout, all integers little-endian:
//
//	block*  entries (uvarint key length, key, uvarint value length, value),
//	        then each entry's start offset as uint32, then the entry count
//	        as uint32
//	index   uvarint block count, then per block: uvarint offset, uvarint
//	        length, uint32 CRC-32C of the block, uvarint ordinal of its
//	        first entry, uvarint first-key length, first key
//	footer  uint64 index offset, uint32 index length, uint32 CRC-32C of the
//	        index, uint64 entry count, uint64 magic "PMLKUP01"
//
// The index stays in memory while a file is open ([Reader]); a lookup
// finds the one block whose first key is the greatest at or below the key
// and binary-searches that block's entries ([Block.Search]).
//
// [Dir] is the directory a writer keeps its local files in: one per
// writer, under a base directory (os.TempDir by default), removed when the
// writer closes; the directories of dead processes are removed by the next
// Dir opened under the same base.
package lookupfile

import (
	"errors"
	"hash/crc32"
)

// ErrCorrupt is wrapped by the errors of reading a local lookup file that
// is truncated or does not hold what was written: rebuild the file.
var ErrCorrupt = errors.New("corrupt local lookup file")

// DefaultBlockSize is the size a block is closed at. Java's blocks are
// cache-page-size (64 KiB); smaller blocks read less for a lookup that
// misses the block cache, at the price of a larger index (one first key a
// block, kept in memory).
const DefaultBlockSize = 16 << 10

const (
	footerSize = 8 + 4 + 4 + 8 + 8
	magic      = 0x313050554b4c4d50 // "PMLKUP01" little-endian
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
