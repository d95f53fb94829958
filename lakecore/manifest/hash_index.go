package manifest

import (
	"encoding/binary"
	"fmt"
)

// IndexTypeHash is the _INDEX_TYPE of the HASH index files of a
// dynamic-bucket table (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/index/HashIndexFile.java,
// HASH_INDEX): per (partition, bucket) the hash codes of the keys the
// bucket holds.
const IndexTypeHash = "HASH"

// HashIndexPrefix starts the name of every index file Paimon writes
// (FileStorePathFactory.INDEX_PREFIX): index-<uuid>-<n>.
const HashIndexPrefix = "index-"

// EncodeHashIndex returns the bytes of a HASH index file holding hashes:
// each a 4-byte big-endian int, no header, no footer
// (paimon-common/src/main/java/org/apache/paimon/utils/IntFileUtils.java
// writeInts). The order is the caller's; readers treat the file as a set.
func EncodeHashIndex(hashes []int32) []byte {
	out := make([]byte, 4*len(hashes))
	for i, h := range hashes {
		binary.BigEndian.PutUint32(out[4*i:], uint32(h))
	}
	return out
}

// DecodeHashIndex returns the hashes of a HASH index file. Java's
// IntFileUtils.readInts stops silently at a partial trailing int; here a
// length that is not a multiple of 4 wraps ErrCorrupt, since only a
// truncated or foreign file has one and restoring bucket assignments
// from it would lose keys.
func DecodeHashIndex(b []byte) ([]int32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: hash index of %d bytes is not a sequence of 4-byte ints", ErrCorrupt, len(b))
	}
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.BigEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// CombineIndexEntries returns the index manifest that follows prev (the
// live ADD entries of the previous snapshot's index manifest) after adds
// and deletes, as IndexManifestFileHandler.write does
// (paimon-core/src/main/java/org/apache/paimon/manifest/IndexManifestFileHandler.java):
// HASH and DELETION_VECTORS entries are combined per (partition, bucket,
// index type) (BucketedCombiner: a DELETE drops the entry of its bucket, an
// ADD replaces it), every other type by file name (GlobalIndexCombiner).
// Java's HashMap orders the result arbitrarily; here the surviving previous
// entries keep their order, replacements take the replaced entry's place
// and new ones follow in the order given. Deletion-vector entries of
// bucket-unaware tables (Java's GlobalCombiner) are not handled: lakecore
// adds no index entries to such tables.
func CombineIndexEntries(prev, changes []IndexEntry) []IndexEntry {
	key := func(e *IndexEntry) string {
		if e.IndexType == IndexTypeHash || e.IndexType == IndexTypeDeletionVectors {
			return fmt.Sprintf("b\x00%x\x00%d\x00%s", e.Partition, e.Bucket, e.IndexType)
		}
		return "f\x00" + e.FileName
	}
	out := make([]IndexEntry, 0, len(prev)+len(changes))
	at := make(map[string]int, len(prev)+len(changes))
	for i := range prev {
		if prev[i].Kind != FileKindAdd {
			continue
		}
		at[key(&prev[i])] = len(out)
		out = append(out, prev[i])
	}
	dropped := make([]bool, 0, cap(out))
	dropped = dropped[:len(out)]
	// Deletes first, so that a DELETE never cancels an ADD of the same commit.
	for i := range changes {
		if e := &changes[i]; e.Kind == FileKindDelete {
			if j, ok := at[key(e)]; ok {
				dropped[j] = true
				delete(at, key(e))
			}
		}
	}
	for i := range changes {
		e := &changes[i]
		if e.Kind != FileKindAdd {
			continue
		}
		if j, ok := at[key(e)]; ok {
			out[j] = *e
			continue
		}
		at[key(e)] = len(out)
		out = append(out, *e)
		dropped = append(dropped, false)
	}
	kept := out[:0]
	for i := range out {
		if !dropped[i] {
			kept = append(kept, out[i])
		}
	}
	return kept
}
