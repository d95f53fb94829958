package manifest

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"iter"
	"math/bits"
	"path"
	"sort"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// indexManifestVersion is the _VERSION of index-manifest records
// (IndexManifestEntrySerializer.FORMAT_IDENTIFIER).
const indexManifestVersion = 1

// IndexTypeDeletionVectors is the _INDEX_TYPE of deletion-vector index files
// (DeletionVectorsIndexFile.DELETION_VECTORS_INDEX). Other types ("HASH" for
// dynamic buckets, "btree", "bitmap" and other global indexes) only speed up
// lookups and never change what a scan returns.
const IndexTypeDeletionVectors = "DELETION_VECTORS"

// IndexEntry is an IndexManifestEntry (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/manifest/IndexManifestEntry.java,
// IndexManifestEntrySerializer.java, index/IndexFileMeta.java): one index
// file of a partition and bucket.
type IndexEntry struct {
	Kind FileKind
	// Partition is the serialized partition BinaryRow (with arity prefix).
	Partition []byte
	Bucket    int32
	IndexType string
	// FileName is relative to the table's index/ directory unless
	// ExternalPath is set.
	FileName           string
	FileSize, RowCount int64
	// DVRanges lists, for a DELETION_VECTORS file, where each data file's
	// vector sits; nil when null.
	DVRanges     []DVRange
	ExternalPath *string
	GlobalIndex  *GlobalIndexMeta
}

// DVRange is a DeletionVectorMeta: the deletion vector of DataFile starts at
// byte Offset of the index file (at its 4-byte length) and its serialized
// bitmap is Length bytes. Cardinality (1.4+) is the number of deleted rows,
// nil when unknown.
type DVRange struct {
	DataFile       string
	Offset, Length int32
	Cardinality    *int64
}

// GlobalIndexMeta is the _GLOBAL_INDEX record of 1.4+ index manifests
// (index/GlobalIndexMeta.java), kept so such entries round-trip.
type GlobalIndexMeta struct {
	RowRangeStart, RowRangeEnd int64
	IndexFieldID               int32
	ExtraFieldIDs              []int32
	IndexMeta, SourceMeta      []byte
}

func decodeIndexEntry(r *record) (IndexEntry, error) {
	var e IndexEntry
	var err error
	if e.Kind, e.Partition, e.Bucket, err = decodeKeyFields(r, indexManifestVersion); err != nil {
		return e, err
	}
	if e.IndexType, err = r.reqString("_INDEX_TYPE"); err != nil {
		return e, err
	}
	if e.FileName, err = r.reqString("_FILE_NAME"); err != nil {
		return e, err
	}
	if e.FileSize, err = r.reqLong("_FILE_SIZE"); err != nil {
		return e, err
	}
	if e.RowCount, err = r.reqLong("_ROW_COUNT"); err != nil {
		return e, err
	}
	items, it, err := r.optArray("_DELETIONS_VECTORS_RANGES")
	if err != nil {
		return e, err
	}
	if items != nil {
		if it.kind != kRecord {
			return e, wrongType("_DELETIONS_VECTORS_RANGES", it, "array of records")
		}
		e.DVRanges = make([]DVRange, 0, len(items))
		for i, v := range items {
			rr, ok := v.(*record)
			if !ok {
				return e, fmt.Errorf("%w: _DELETIONS_VECTORS_RANGES[%d] is null", ErrMissingField, i)
			}
			var d DVRange
			if d.DataFile, err = rr.reqString("f0"); err == nil {
				if d.Offset, err = rr.reqInt("f1"); err == nil {
					if d.Length, err = rr.reqInt("f2"); err == nil {
						d.Cardinality, err = rr.optLong("_CARDINALITY")
					}
				}
			}
			if err != nil {
				return e, fmt.Errorf("_DELETIONS_VECTORS_RANGES[%d]: %w", i, err)
			}
			e.DVRanges = append(e.DVRanges, d)
		}
	}
	if e.ExternalPath, err = r.optString("_EXTERNAL_PATH"); err != nil {
		return e, err
	}
	gr, err := r.optRecord("_GLOBAL_INDEX")
	if err != nil {
		return e, err
	}
	if gr != nil {
		if e.GlobalIndex, err = decodeGlobalIndex(gr); err != nil {
			return e, fmt.Errorf("_GLOBAL_INDEX: %w", err)
		}
	}
	return e, nil
}

func decodeGlobalIndex(r *record) (*GlobalIndexMeta, error) {
	g := &GlobalIndexMeta{}
	var err error
	if g.RowRangeStart, err = r.reqLong("_ROW_RANGE_START"); err != nil {
		return nil, err
	}
	if g.RowRangeEnd, err = r.reqLong("_ROW_RANGE_END"); err != nil {
		return nil, err
	}
	if g.IndexFieldID, err = r.reqInt("_INDEX_FIELD_ID"); err != nil {
		return nil, err
	}
	items, it, err := r.optArray("_EXTRA_FIELD_IDS")
	if err != nil {
		return nil, err
	}
	if items != nil {
		if it.kind != kInt {
			return nil, wrongType("_EXTRA_FIELD_IDS", it, "array<int>")
		}
		g.ExtraFieldIDs = make([]int32, len(items))
		for i, v := range items {
			x, ok := v.(int32)
			if !ok {
				return nil, fmt.Errorf("%w: _EXTRA_FIELD_IDS[%d] is null", ErrMissingField, i)
			}
			g.ExtraFieldIDs[i] = x
		}
	}
	if g.IndexMeta, err = r.optBytes("_INDEX_META"); err != nil {
		return nil, err
	}
	if g.SourceMeta, err = r.optBytes("_SOURCE_META"); err != nil {
		return nil, err
	}
	return g, nil
}

// EncodeIndexEntries encodes entries as an index manifest with exactly the
// schema Java 1.4+/2.0 writes (_VERSION 1).
func (e *Encoder) EncodeIndexEntries(entries []IndexEntry) ([]byte, error) {
	w, err := newContainerWriter(indexManifestSchema, e)
	if err != nil {
		return nil, fmt.Errorf("encode index manifest: %w", err)
	}
	for i := range entries {
		e := &entries[i]
		if e.Kind != FileKindAdd && e.Kind != FileKindDelete {
			return nil, fmt.Errorf("encode index manifest entry %d (%s): kind %d is neither ADD nor DELETE", i, e.FileName, e.Kind)
		}
		if len(e.Partition) < 4 {
			return nil, fmt.Errorf("encode index manifest entry %d (%s): partition must be a serialized BinaryRow", i, e.FileName)
		}
		b := w.block
		b = appendInt(b, indexManifestVersion)
		b = appendInt(b, int32(e.Kind))
		b = appendBytes(b, e.Partition)
		b = appendInt(b, e.Bucket)
		b = appendString(b, e.IndexType)
		b = appendString(b, e.FileName)
		b = appendLong(b, e.FileSize)
		b = appendLong(b, e.RowCount)
		if e.DVRanges == nil {
			b = appendNull(b)
		} else {
			b = appendNotNull(b)
			if len(e.DVRanges) > 0 {
				b = appendLong(b, int64(len(e.DVRanges)))
				for _, d := range e.DVRanges {
					b = appendNotNull(b)
					b = appendString(b, d.DataFile)
					b = appendInt(b, d.Offset)
					b = appendInt(b, d.Length)
					b = appendOptLong(b, d.Cardinality)
				}
			}
			b = append(b, 0)
		}
		b = appendOptString(b, e.ExternalPath)
		if g := e.GlobalIndex; g == nil {
			b = appendNull(b)
		} else {
			b = appendNotNull(b)
			b = appendLong(b, g.RowRangeStart)
			b = appendLong(b, g.RowRangeEnd)
			b = appendInt(b, g.IndexFieldID)
			if g.ExtraFieldIDs == nil {
				b = appendNull(b)
			} else {
				b = appendNotNull(b)
				if len(g.ExtraFieldIDs) > 0 {
					b = appendLong(b, int64(len(g.ExtraFieldIDs)))
					for _, x := range g.ExtraFieldIDs {
						b = appendInt(b, x)
					}
				}
				b = append(b, 0)
			}
			b = appendOptBytes(b, g.IndexMeta)
			b = appendOptBytes(b, g.SourceMeta)
		}
		w.block = b
		if err := w.endRecord(); err != nil {
			return nil, fmt.Errorf("encode index manifest: %w", err)
		}
	}
	out, err := w.finish()
	if err != nil {
		return nil, fmt.Errorf("encode index manifest: %w", err)
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Deletion vectors

// Deletion-vector file constants (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/deletionvectors/
// DeletionVectorsIndexFile.java, BitmapDeletionVector.java,
// Bitmap64DeletionVector.java; docs/docs/concepts/spec/tableindex.md).
const (
	dvFileVersion = 1
	// dvMagic32 precedes a 32-bit RoaringBitmap, big-endian.
	dvMagic32 = 1581511376
	// dvMagic64 precedes a 64-bit bitmap (deletion-vectors.bitmap64),
	// little-endian.
	dvMagic64 = 1681511377
)

// DeletionVector is the set of deleted row positions of one data file.
// Methods are safe for concurrent use; the vector is immutable.
type DeletionVector struct {
	// maps holds one 32-bit roaring bitmap per high 32 bits of a position,
	// sorted by high; the 32-bit format has only high 0.
	maps []highBitmap
}

type highBitmap struct {
	high uint32
	bm   roaring32
}

// IsDeleted reports whether row position pos of the data file is deleted.
func (dv *DeletionVector) IsDeleted(pos int64) bool {
	if pos < 0 {
		return false
	}
	hi, lo := uint32(uint64(pos)>>32), uint32(pos)
	i := sort.Search(len(dv.maps), func(i int) bool { return dv.maps[i].high >= hi })
	return i < len(dv.maps) && dv.maps[i].high == hi && dv.maps[i].bm.contains(lo)
}

// Cardinality returns the number of deleted positions.
func (dv *DeletionVector) Cardinality() int64 {
	var n int64
	for _, m := range dv.maps {
		n += m.bm.cardinality()
	}
	return n
}

// All yields the deleted positions in increasing order.
func (dv *DeletionVector) All() iter.Seq[int64] {
	return func(yield func(int64) bool) {
		for _, m := range dv.maps {
			base := int64(m.high) << 32
			for lo := range m.bm.all() {
				if !yield(base | int64(lo)) {
					return
				}
			}
		}
	}
}

// DecodeDeletionVector decodes one serialized deletion vector as it sits in a
// deletion-vector file at the start of a DVRange: int32 BE length, the bin
// (magic + bitmap) and an int32 BE CRC32 of the bin. length is DVRange.Length.
// It returns the vector and the bytes consumed. Both the default 32-bit
// RoaringBitmap bins and the 64-bit (deletion-vectors.bitmap64) bins are
// read; the checksum is verified.
func DecodeDeletionVector(b []byte, length int32) (*DeletionVector, int, error) {
	if len(b) < 8 {
		return nil, 0, fmt.Errorf("%w: deletion vector truncated: %d bytes", ErrCorrupt, len(b))
	}
	size := int64(int32(binary.BigEndian.Uint32(b)))
	magicBE := binary.BigEndian.Uint32(b[4:])
	var is64 bool
	switch {
	case magicBE == dvMagic32:
		// DeletionVector.read: the recorded length is the bin's size.
		if size != int64(length) {
			return nil, 0, fmt.Errorf("%w: deletion vector size %d, index manifest says %d", ErrCorrupt, size, length)
		}
	case binary.LittleEndian.Uint32(b[4:]) == dvMagic64:
		// Bitmap64DeletionVector.serializeTo: the recorded length covers the
		// 4-byte size and CRC as well.
		is64 = true
		if size != int64(length)-8 {
			return nil, 0, fmt.Errorf("%w: 64-bit deletion vector size %d, index manifest says %d", ErrCorrupt, size, length)
		}
	default:
		return nil, 0, fmt.Errorf("%w: deletion vector magic %d is neither %d (32-bit) nor %d (64-bit)", ErrUnsupportedIndex, int32(magicBE), dvMagic32, dvMagic64)
	}
	if size < 4 || size > int64(len(b)-8) {
		return nil, 0, fmt.Errorf("%w: deletion vector of %d bytes with %d available", ErrCorrupt, size, len(b)-8)
	}
	bin := b[4 : 4+size]
	if got, want := crc32.ChecksumIEEE(bin), binary.BigEndian.Uint32(b[4+size:]); got != want {
		return nil, 0, fmt.Errorf("%w: deletion vector checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	dv := &DeletionVector{}
	body := bin[4:]
	if !is64 {
		bm, n, err := parseRoaring32(body)
		if err != nil {
			return nil, 0, err
		}
		if n != len(body) {
			return nil, 0, fmt.Errorf("%w: %d bytes after the deletion vector bitmap", ErrCorrupt, len(body)-n)
		}
		if bm.cardinality() > 0 {
			dv.maps = []highBitmap{{high: 0, bm: bm}}
		}
		return dv, int(size) + 8, nil
	}
	// OptimizedRoaringBitmap64.deserialize: int64 LE count, then per bitmap
	// an int32 LE key (increasing) and a portable 32-bit RoaringBitmap.
	if len(body) < 8 {
		return nil, 0, fmt.Errorf("%w: 64-bit deletion vector truncated", ErrCorrupt)
	}
	count := binary.LittleEndian.Uint64(body)
	pos := 8
	if count > uint64(len(body)-pos)/8 {
		return nil, 0, fmt.Errorf("%w: 64-bit deletion vector claims %d bitmaps in %d bytes", ErrCorrupt, count, len(body))
	}
	last := int64(-1)
	for range count {
		if len(body)-pos < 4 {
			return nil, 0, fmt.Errorf("%w: 64-bit deletion vector truncated", ErrCorrupt)
		}
		key := int64(int32(binary.LittleEndian.Uint32(body[pos:])))
		pos += 4
		if key <= last {
			return nil, 0, fmt.Errorf("%w: 64-bit deletion vector key %d after %d", ErrCorrupt, key, last)
		}
		last = key
		bm, n, err := parseRoaring32(body[pos:])
		if err != nil {
			return nil, 0, err
		}
		pos += n
		if bm.cardinality() > 0 {
			dv.maps = append(dv.maps, highBitmap{high: uint32(key), bm: bm})
		}
	}
	if pos != len(body) {
		return nil, 0, fmt.Errorf("%w: %d bytes after the 64-bit deletion vector", ErrCorrupt, len(body)-pos)
	}
	return dv, int(size) + 8, nil
}

// ReadDeletionVectors reads the index manifest manifest/<indexManifestName>
// of the table and returns the deletion vector of every data file that has
// one, keyed by data file name. Only DELETION_VECTORS entries are read; other
// index types do not change scan results and are ignored. Index files are
// index/<name> under the table, or their external path when it lies inside
// fio (errors wrap ErrUnsupportedIndex otherwise).
func (d *Decoder) ReadDeletionVectors(ctx context.Context, fio storage.FileIO, tablePath, indexManifestName string) (map[string]*DeletionVector, error) {
	entries, err := d.ReadIndexEntries(ctx, fio, tablePath, indexManifestName)
	if err != nil {
		return nil, err
	}
	// The index manifest of a snapshot lists the live index files as ADD
	// entries (IndexManifestFileHandler); a DELETE cancels an earlier ADD.
	live := make([]*IndexEntry, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		if e.IndexType != IndexTypeDeletionVectors {
			continue
		}
		if e.Kind == FileKindDelete {
			for j, l := range live {
				if l != nil && l.FileName == e.FileName && l.Bucket == e.Bucket && string(l.Partition) == string(e.Partition) {
					live[j] = nil
				}
			}
			continue
		}
		live = append(live, e)
	}
	out := map[string]*DeletionVector{}
	for _, e := range live {
		if e == nil {
			continue
		}
		if err := readIndexDeletionVectors(ctx, fio, tablePath, e, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadIndexDeletionVectors reads the deletion vectors of one
// DELETION_VECTORS index entry (index/<name> under the table, or its
// external path when it lies inside fio), keyed by data file name, checking
// each vector against the entry's range (length, cardinality).
func ReadIndexDeletionVectors(ctx context.Context, fio storage.FileIO, tablePath string, e *IndexEntry) (map[string]*DeletionVector, error) {
	out := map[string]*DeletionVector{}
	if err := readIndexDeletionVectors(ctx, fio, tablePath, e, out); err != nil {
		return nil, err
	}
	return out, nil
}

// readIndexDeletionVectors adds the vectors of e to out; a data file
// already in out is corrupt.
func readIndexDeletionVectors(ctx context.Context, fio storage.FileIO, tablePath string, e *IndexEntry, out map[string]*DeletionVector) error {
	if len(e.DVRanges) == 0 {
		return nil
	}
	p, err := indexFilePath(fio, tablePath, e)
	if err != nil {
		return err
	}
	data, err := fio.ReadFile(ctx, p)
	if err != nil {
		return fmt.Errorf("read deletion vectors %s: %w", p, err)
	}
	if len(data) < 1 || data[0] != dvFileVersion {
		return fmt.Errorf("deletion vectors %s: %w: version byte is not %d", p, ErrUnsupportedIndex, dvFileVersion)
	}
	for _, r := range e.DVRanges {
		if r.Offset < 1 || int64(r.Offset) >= int64(len(data)) {
			return fmt.Errorf("deletion vectors %s: %w: offset %d of %s outside the %d-byte file", p, ErrCorrupt, r.Offset, r.DataFile, len(data))
		}
		dv, _, err := DecodeDeletionVector(data[r.Offset:], r.Length)
		if err != nil {
			return fmt.Errorf("deletion vectors %s, data file %s: %w", p, r.DataFile, err)
		}
		if r.Cardinality != nil && *r.Cardinality != dv.Cardinality() {
			return fmt.Errorf("deletion vectors %s, data file %s: %w: %d positions, index manifest says %d", p, r.DataFile, ErrCorrupt, dv.Cardinality(), *r.Cardinality)
		}
		if _, dup := out[r.DataFile]; dup {
			return fmt.Errorf("deletion vectors %s: %w: data file %s has two deletion vectors", p, ErrCorrupt, r.DataFile)
		}
		out[r.DataFile] = dv
	}
	return nil
}

// ReadDeletionVectors is Decoder.ReadDeletionVectors with a new Decoder.
func ReadDeletionVectors(ctx context.Context, fio storage.FileIO, tablePath, indexManifestName string) (map[string]*DeletionVector, error) {
	return new(Decoder).ReadDeletionVectors(ctx, fio, tablePath, indexManifestName)
}

// indexFilePath resolves an index file: index/<name> under the table
// (IndexPathFactory), or its external path if that lies under fio's root.
func indexFilePath(fio storage.FileIO, tablePath string, e *IndexEntry) (string, error) {
	if e.ExternalPath == nil {
		return path.Join(tablePath, "index", e.FileName), nil
	}
	root := strings.TrimSuffix(fio.String(), "/") + "/"
	ext := *e.ExternalPath
	if strings.HasPrefix(ext, root) {
		return strings.TrimPrefix(ext, root), nil
	}
	return "", fmt.Errorf("deletion vector file %s: %w: external path %s is outside %s", e.FileName, ErrUnsupportedIndex, ext, fio)
}

// ---------------------------------------------------------------------------
// A reader of the portable 32-bit RoaringBitmap format
// (https://github.com/RoaringBitmap/RoaringFormatSpec), what
// org.roaringbitmap.RoaringBitmap.serialize writes. Reading needs only this
// much, so no dependency is taken for it.

const (
	roaringCookieNoRun = 12346
	roaringCookieRun   = 12347
	roaringNoOffsetMax = 4    // NO_OFFSET_THRESHOLD
	roaringArrayMax    = 4096 // DEFAULT_MAX_SIZE
)

type roaring32 struct {
	keys  []uint16
	conts []roaringContainer
}

// roaringContainer holds the low 16 bits of the values sharing one high key. Exactly
// one of array (sorted values), bitmap (1024 words) or runs (start, length-1
// pairs) is set.
type roaringContainer struct {
	array  []uint16
	bitmap []uint64
	runs   []uint16
	card   int
}

func (c *roaringContainer) contains(v uint16) bool {
	switch {
	case c.bitmap != nil:
		return c.bitmap[v>>6]&(1<<(v&63)) != 0
	case c.runs != nil:
		n := len(c.runs) / 2
		i := sort.Search(n, func(i int) bool { return c.runs[2*i] > v }) - 1
		return i >= 0 && uint32(v) <= uint32(c.runs[2*i])+uint32(c.runs[2*i+1])
	default:
		i := sort.Search(len(c.array), func(i int) bool { return c.array[i] >= v })
		return i < len(c.array) && c.array[i] == v
	}
}

func (r *roaring32) contains(v uint32) bool {
	hi := uint16(v >> 16)
	i := sort.Search(len(r.keys), func(i int) bool { return r.keys[i] >= hi })
	return i < len(r.keys) && r.keys[i] == hi && r.conts[i].contains(uint16(v))
}

func (r *roaring32) cardinality() int64 {
	var n int64
	for i := range r.conts {
		n += int64(r.conts[i].card)
	}
	return n
}

func (r *roaring32) all() iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for i, k := range r.keys {
			base := uint32(k) << 16
			c := &r.conts[i]
			switch {
			case c.bitmap != nil:
				for w, word := range c.bitmap {
					for word != 0 {
						t := bits.TrailingZeros64(word)
						if !yield(base | uint32(w*64+t)) {
							return
						}
						word &= word - 1
					}
				}
			case c.runs != nil:
				for j := 0; j < len(c.runs); j += 2 {
					for v := uint32(c.runs[j]); v <= uint32(c.runs[j])+uint32(c.runs[j+1]); v++ {
						if !yield(base | v) {
							return
						}
					}
				}
			default:
				for _, v := range c.array {
					if !yield(base | uint32(v)) {
						return
					}
				}
			}
		}
	}
}

// parseRoaring32 reads one portable RoaringBitmap from b and returns it with
// the bytes it took. Keys must increase and containers must be well formed.
func parseRoaring32(b []byte) (roaring32, int, error) {
	var r roaring32
	bad := func(format string, args ...any) (roaring32, int, error) {
		return roaring32{}, 0, fmt.Errorf("%w: roaring bitmap: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(b) < 4 {
		return bad("truncated cookie")
	}
	cookie := binary.LittleEndian.Uint32(b)
	pos := 4
	var size int
	var runFlags []byte
	switch {
	case cookie&0xffff == roaringCookieRun:
		size = int(cookie>>16) + 1
		n := (size + 7) / 8
		if len(b)-pos < n {
			return bad("truncated run flags")
		}
		runFlags = b[pos : pos+n]
		pos += n
	case cookie == roaringCookieNoRun:
		if len(b)-pos < 4 {
			return bad("truncated size")
		}
		s := binary.LittleEndian.Uint32(b[pos:])
		pos += 4
		if s > 1<<16 {
			return bad("%d containers", s)
		}
		size = int(s)
	default:
		return bad("unknown cookie %d", cookie)
	}
	if len(b)-pos < 4*size {
		return bad("truncated header of %d containers", size)
	}
	header := b[pos : pos+4*size]
	pos += 4 * size
	if runFlags == nil || size >= roaringNoOffsetMax {
		if len(b)-pos < 4*size {
			return bad("truncated offsets")
		}
		pos += 4 * size
	}
	r.keys = make([]uint16, size)
	r.conts = make([]roaringContainer, size)
	for i := range size {
		key := binary.LittleEndian.Uint16(header[4*i:])
		card := int(binary.LittleEndian.Uint16(header[4*i+2:])) + 1
		if i > 0 && key <= r.keys[i-1] {
			return bad("key %d after %d", key, r.keys[i-1])
		}
		r.keys[i] = key
		c := &r.conts[i]
		switch {
		case runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0:
			if len(b)-pos < 2 {
				return bad("truncated run count")
			}
			n := int(binary.LittleEndian.Uint16(b[pos:]))
			pos += 2
			if len(b)-pos < 4*n {
				return bad("truncated runs")
			}
			c.runs = make([]uint16, 2*n)
			next := 0 // smallest allowed start
			total := 0
			for j := range 2 * n {
				c.runs[j] = binary.LittleEndian.Uint16(b[pos+2*j:])
			}
			for j := 0; j < 2*n; j += 2 {
				start, end := int(c.runs[j]), int(c.runs[j])+int(c.runs[j+1])
				if start < next || end > 0xffff {
					return bad("run [%d,%d] overlaps or overflows", start, end)
				}
				next = end + 1
				total += end - start + 1
			}
			pos += 4 * n
			if total != card {
				return bad("run container holds %d values, header says %d", total, card)
			}
			c.card = total
		case card > roaringArrayMax:
			if len(b)-pos < 8192 {
				return bad("truncated bitmap container")
			}
			c.bitmap = make([]uint64, 1024)
			total := 0
			for j := range c.bitmap {
				c.bitmap[j] = binary.LittleEndian.Uint64(b[pos+8*j:])
				total += bits.OnesCount64(c.bitmap[j])
			}
			pos += 8192
			if total != card {
				return bad("bitmap container holds %d values, header says %d", total, card)
			}
			c.card = total
		default:
			if len(b)-pos < 2*card {
				return bad("truncated array container")
			}
			c.array = make([]uint16, card)
			for j := range c.array {
				c.array[j] = binary.LittleEndian.Uint16(b[pos+2*j:])
				if j > 0 && c.array[j] <= c.array[j-1] {
					return bad("array container not increasing")
				}
			}
			pos += 2 * card
			c.card = card
		}
	}
	return r, pos, nil
}
