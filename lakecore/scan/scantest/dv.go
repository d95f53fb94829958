package scantest

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path"
	"slices"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
)

// dvMagic is the magic of a 32-bit bitmap deletion vector
// (BitmapDeletionVector.MAGIC_NUMBER).
const dvMagic = 1581511376

// SerializeDeletionVector returns a deletion vector of the given row
// positions (each below 65536) as it sits in a deletion-vector index file:
// int32 BE size, the bin (magic + portable RoaringBitmap with one array
// container) and the CRC32 of the bin. The size is the DVRange length.
func SerializeDeletionVector(positions ...uint16) (data []byte, length int32) {
	pos := slices.Clone(positions)
	slices.Sort(pos)
	pos = slices.Compact(pos)
	bin := binary.BigEndian.AppendUint32(nil, dvMagic)
	bin = binary.LittleEndian.AppendUint32(bin, 12346) // SERIAL_COOKIE_NO_RUNCONTAINER
	if len(pos) == 0 {
		bin = binary.LittleEndian.AppendUint32(bin, 0)
	} else {
		bin = binary.LittleEndian.AppendUint32(bin, 1)
		bin = binary.LittleEndian.AppendUint16(bin, 0)
		bin = binary.LittleEndian.AppendUint16(bin, uint16(len(pos)-1))
		bin = binary.LittleEndian.AppendUint32(bin, 4+4+4+4) // offset of the container
		for _, p := range pos {
			bin = binary.LittleEndian.AppendUint16(bin, p)
		}
	}
	data = binary.BigEndian.AppendUint32(nil, uint32(len(bin)))
	data = append(data, bin...)
	data = binary.BigEndian.AppendUint32(data, crc32.ChecksumIEEE(bin))
	return data, int32(len(bin))
}

// DeletionVector returns the decoded deletion vector of positions.
func DeletionVector(positions ...uint16) (*manifest.DeletionVector, error) {
	data, length := SerializeDeletionVector(positions...)
	dv, _, err := manifest.DecodeDeletionVector(data, length)
	return dv, err
}

// DeleteRows marks rows of the file of add as deleted from the next commit
// on: every later snapshot gets an index manifest with the deletion vectors
// set so far, as a deletion-vectors.enabled table has.
func (tb *Table) DeleteRows(add manifest.Entry, positions ...uint16) {
	if tb.dvs == nil {
		tb.dvs = map[string]dvOf{}
	}
	tb.dvs[add.File.FileName] = dvOf{entry: add, positions: positions}
}

type dvOf struct {
	entry     manifest.Entry
	positions []uint16
}

// writeIndexManifest writes one deletion-vector index file per partition
// and bucket holding every vector set so far, and an index manifest listing
// them; it returns the index manifest's name.
func (tb *Table) writeIndexManifest(ctx context.Context) (string, error) {
	type pb struct {
		part   string
		bucket int32
	}
	files := map[pb][]string{}
	var order []pb
	for name, d := range tb.dvs {
		k := pb{string(d.entry.Partition), d.entry.Bucket}
		if _, ok := files[k]; !ok {
			order = append(order, k)
		}
		files[k] = append(files[k], name)
	}
	var entries []manifest.IndexEntry
	for _, k := range order {
		names := files[k]
		slices.Sort(names)
		data := []byte{1} // version
		var ranges []manifest.DVRange
		for _, n := range names {
			d := tb.dvs[n]
			b, length := SerializeDeletionVector(d.positions...)
			card := int64(len(slices.Compact(slices.Sorted(slices.Values(d.positions)))))
			ranges = append(ranges, manifest.DVRange{DataFile: n, Offset: int32(len(data)), Length: length, Cardinality: &card})
			data = append(data, b...)
		}
		name := "index-" + uuid.NewString() + "-0"
		if err := tb.FIO.WriteExclusive(ctx, path.Join(tb.Path, "index", name), data); err != nil {
			return "", err
		}
		entries = append(entries, manifest.IndexEntry{
			Kind: manifest.FileKindAdd, Partition: []byte(k.part), Bucket: k.bucket, IndexType: manifest.IndexTypeDeletionVectors,
			FileName: name, FileSize: int64(len(data)), RowCount: int64(len(names)), DVRanges: ranges,
		})
	}
	data, err := manifest.EncodeIndexEntries(entries, manifest.Codec{})
	if err != nil {
		return "", fmt.Errorf("encode index manifest: %w", err)
	}
	name := "index-manifest-" + uuid.NewString() + "-0"
	if err := tb.FIO.WriteExclusive(ctx, path.Join(tb.Path, "manifest", name), data); err != nil {
		return "", err
	}
	return name, nil
}
