package manifest

import (
	"encoding/binary"
	"fmt"
)

// manifestVersion is the _VERSION of manifest and manifest-list records
// (VersionedObjectSerializer / ManifestSchemaUtils.withFormatIdentifier).
const manifestVersion = 2

// FileKind says whether an entry adds or deletes a file (FileKind.java).
type FileKind int8

// File kinds as stored in _KIND.
const (
	FileKindAdd    FileKind = 0
	FileKindDelete FileKind = 1
)

// String returns "ADD" or "DELETE".
func (k FileKind) String() string {
	switch k {
	case FileKindAdd:
		return "ADD"
	case FileKindDelete:
		return "DELETE"
	}
	return fmt.Sprintf("FileKind(%d)", int8(k))
}

func fileKindOf(v int32) (FileKind, error) {
	switch v {
	case 0:
		return FileKindAdd, nil
	case 1:
		return FileKindDelete, nil
	}
	return 0, fmt.Errorf("%w: _KIND %d is neither 0 (ADD) nor 1 (DELETE)", ErrCorrupt, v)
}

// DataFileMeta is the _FILE record of a manifest entry (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/io/DataFileMeta.java and
// DataFileMetaSerializer.java). Pointer fields are the Avro fields that may be
// null or absent in older files: nil means null.
//
// Decoded []byte and []string fields that are not nullable are never nil
// (an empty value is an empty slice).
type DataFileMeta struct {
	FileName           string
	FileSize, RowCount int64
	// MinKey and MaxKey are serialized BinaryRows; the empty row for append
	// tables.
	MinKey, MaxKey                       []byte
	KeyStats, ValueStats                 SimpleStats
	MinSequenceNumber, MaxSequenceNumber int64
	SchemaID                             int64
	Level                                int32
	ExtraFiles                           []string
	// CreationTimeMillis is _CREATION_TIME: the writer's local wall-clock time
	// stored as if it were UTC (paimon-format.md §9.4).
	CreationTimeMillis *int64
	DeleteRowCount     *int64
	EmbeddedIndex      []byte
	// FileSource is 0 (APPEND) or 1 (COMPACT).
	FileSource *int32
	// ValueStatsCols: nil = ValueStats covers every column of schema
	// SchemaID; otherwise the dense list of columns it covers.
	ValueStatsCols *[]string
	ExternalPath   *string
	FirstRowID     *int64
	WriteCols      *[]string
}

// Entry is a ManifestEntry (ManifestEntry.java): one ADD or DELETE of a data
// file in a partition and bucket.
type Entry struct {
	Kind FileKind
	// Partition is the serialized partition BinaryRow (with arity prefix).
	Partition []byte
	// Bucket is 0 for unaware-bucket tables, where TotalBuckets is -1.
	Bucket, TotalBuckets int32
	File                 DataFileMeta
}

// Identifier returns an opaque key that is equal for two entries exactly when
// Java's FileEntry.Identifier is: partition bytes, bucket, level, file name,
// extra files, embedded index and external path (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/manifest/FileEntry.java). The
// encoding mirrors FileEntry.ReusableIdentifier: length-prefixed, so distinct
// identities never collide.
func (e Entry) Identifier() string {
	f := &e.File
	n := 4 + len(e.Partition) + 12 + len(f.FileName) + 4 + 4 + len(f.EmbeddedIndex) + 4
	for _, x := range f.ExtraFiles {
		n += 4 + len(x)
	}
	if f.ExternalPath != nil {
		n += len(*f.ExternalPath)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.Partition)))
	b = append(b, e.Partition...)
	b = binary.BigEndian.AppendUint32(b, uint32(e.Bucket))
	b = binary.BigEndian.AppendUint32(b, uint32(f.Level))
	b = binary.BigEndian.AppendUint32(b, uint32(len(f.FileName)))
	b = append(b, f.FileName...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(f.ExtraFiles)))
	for _, x := range f.ExtraFiles {
		b = binary.BigEndian.AppendUint32(b, uint32(len(x)))
		b = append(b, x...)
	}
	if f.EmbeddedIndex == nil {
		b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	} else {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f.EmbeddedIndex)))
		b = append(b, f.EmbeddedIndex...)
	}
	if f.ExternalPath == nil {
		b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	} else {
		b = binary.BigEndian.AppendUint32(b, uint32(len(*f.ExternalPath)))
		b = append(b, *f.ExternalPath...)
	}
	return string(b)
}

func checkVersion(r *record, want int32) error {
	v, err := r.reqInt("_VERSION")
	if err != nil {
		return err
	}
	if v != want {
		return fmt.Errorf("%w: _VERSION is %d, want %d", ErrUnsupportedVersion, v, want)
	}
	return nil
}

// decodeKeyFields reads what manifest and index-manifest records share:
// _VERSION (which must be version), _KIND, _PARTITION and _BUCKET.
func decodeKeyFields(r *record, version int32) (kind FileKind, partition []byte, bucket int32, err error) {
	if err = checkVersion(r, version); err != nil {
		return
	}
	k, err := r.reqInt("_KIND")
	if err != nil {
		return
	}
	if kind, err = fileKindOf(k); err != nil {
		return
	}
	if partition, err = r.reqBytes("_PARTITION"); err != nil {
		return
	}
	bucket, err = r.reqInt("_BUCKET")
	return
}

func decodeEntry(r *record) (Entry, error) {
	var e Entry
	var err error
	if e.Kind, e.Partition, e.Bucket, err = decodeKeyFields(r, manifestVersion); err != nil {
		return e, err
	}
	if e.TotalBuckets, err = r.reqInt("_TOTAL_BUCKETS"); err != nil {
		return e, err
	}
	fr, err := r.reqRecord("_FILE")
	if err != nil {
		return e, err
	}
	if e.File, err = decodeDataFileMeta(fr); err != nil {
		return e, fmt.Errorf("_FILE: %w", err)
	}
	return e, nil
}

func decodeDataFileMeta(r *record) (DataFileMeta, error) {
	var f DataFileMeta
	var err error
	if f.FileName, err = r.reqString("_FILE_NAME"); err != nil {
		return f, err
	}
	if f.FileSize, err = r.reqLong("_FILE_SIZE"); err != nil {
		return f, err
	}
	if f.RowCount, err = r.reqLong("_ROW_COUNT"); err != nil {
		return f, err
	}
	if f.MinKey, err = r.reqBytes("_MIN_KEY"); err != nil {
		return f, err
	}
	if f.MaxKey, err = r.reqBytes("_MAX_KEY"); err != nil {
		return f, err
	}
	for _, s := range []struct {
		name string
		dst  *SimpleStats
	}{{"_KEY_STATS", &f.KeyStats}, {"_VALUE_STATS", &f.ValueStats}} {
		sr, err := r.reqRecord(s.name)
		if err != nil {
			return f, err
		}
		if *s.dst, err = decodeStats(sr); err != nil {
			return f, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	if f.MinSequenceNumber, err = r.reqLong("_MIN_SEQUENCE_NUMBER"); err != nil {
		return f, err
	}
	if f.MaxSequenceNumber, err = r.reqLong("_MAX_SEQUENCE_NUMBER"); err != nil {
		return f, err
	}
	if f.SchemaID, err = r.reqLong("_SCHEMA_ID"); err != nil {
		return f, err
	}
	if f.Level, err = r.reqInt("_LEVEL"); err != nil {
		return f, err
	}
	if f.ExtraFiles, err = r.optStrings("_EXTRA_FILES"); err != nil {
		return f, err
	}
	if f.ExtraFiles == nil {
		return f, r.missing("_EXTRA_FILES")
	}
	if f.CreationTimeMillis, err = creationTime(r); err != nil {
		return f, err
	}
	if f.DeleteRowCount, err = r.optLong("_DELETE_ROW_COUNT"); err != nil {
		return f, err
	}
	if f.EmbeddedIndex, err = r.optBytes("_EMBEDDED_FILE_INDEX"); err != nil {
		return f, err
	}
	if f.FileSource, err = r.optInt("_FILE_SOURCE"); err != nil {
		return f, err
	}
	if f.ValueStatsCols, err = optStringsPtr(r, "_VALUE_STATS_COLS"); err != nil {
		return f, err
	}
	if f.ExternalPath, err = r.optString("_EXTERNAL_PATH"); err != nil {
		return f, err
	}
	if f.FirstRowID, err = r.optLong("_FIRST_ROW_ID"); err != nil {
		return f, err
	}
	if f.WriteCols, err = optStringsPtr(r, "_WRITE_COLS"); err != nil {
		return f, err
	}
	return f, nil
}

func optStringsPtr(r *record, name string) (*[]string, error) {
	v, err := r.optStrings(name)
	if err != nil || v == nil {
		return nil, err
	}
	return &v, nil
}

// creationTime reads _CREATION_TIME as epoch milliseconds. Java picks the
// reader from the writer's logical type (AvroSchemaVisitor.primitive):
// timestamp-millis and local-timestamp-millis are millis, the micros
// variants are converted (rounding down, as Timestamp.getMillisecond does).
// A plain long, which Java cannot read, is taken as millis.
func creationTime(r *record) (*int64, error) {
	v, t, _, err := r.get("_CREATION_TIME")
	if err != nil || v == nil {
		return nil, err
	}
	x, ok := v.(int64)
	if !ok || t.kind != kLong {
		return nil, wrongType("_CREATION_TIME", t, "long(timestamp-millis)")
	}
	switch t.logical {
	case "timestamp-micros", "local-timestamp-micros":
		q := x / 1000
		if x%1000 < 0 {
			q--
		}
		x = q
	}
	return &x, nil
}

// EncodeEntries encodes entries as a manifest file: an Avro object container
// with exactly Java's current ManifestEntry schema (paimon-format.md
// Appendix A, _VERSION 2) and the Encoder's codec. Zero entries give a valid header-only
// file. It fails if an entry is not writable in a form Java can read (an
// unknown kind, a BinaryRow without its arity prefix, a nil NullCounts).
func (e *Encoder) EncodeEntries(entries []Entry) ([]byte, error) {
	w, err := newContainerWriter(manifestSchema, e)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	for i := range entries {
		if w.block, err = appendEntry(w.block, &entries[i]); err != nil {
			return nil, fmt.Errorf("encode manifest entry %d (%s): %w", i, entries[i].File.FileName, err)
		}
		if err := w.endRecord(); err != nil {
			return nil, fmt.Errorf("encode manifest: %w", err)
		}
	}
	out, err := w.finish()
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return out, nil
}

func appendEntry(b []byte, e *Entry) ([]byte, error) {
	if e.Kind != FileKindAdd && e.Kind != FileKindDelete {
		return b, fmt.Errorf("kind %d is neither ADD nor DELETE", e.Kind)
	}
	if len(e.Partition) < 4 {
		return b, fmt.Errorf("partition must be a serialized BinaryRow, got %d bytes", len(e.Partition))
	}
	f := &e.File
	if len(f.MinKey) < 4 || len(f.MaxKey) < 4 {
		return b, fmt.Errorf("min/max key must be serialized BinaryRows, got %d and %d bytes", len(f.MinKey), len(f.MaxKey))
	}
	if err := f.KeyStats.check("key stats"); err != nil {
		return b, err
	}
	if err := f.ValueStats.check("value stats"); err != nil {
		return b, err
	}
	b = appendInt(b, manifestVersion)
	b = appendInt(b, int32(e.Kind))
	b = appendBytes(b, e.Partition)
	b = appendInt(b, e.Bucket)
	b = appendInt(b, e.TotalBuckets)
	b = appendString(b, f.FileName)
	b = appendLong(b, f.FileSize)
	b = appendLong(b, f.RowCount)
	b = appendBytes(b, f.MinKey)
	b = appendBytes(b, f.MaxKey)
	b = appendStats(b, &f.KeyStats)
	b = appendStats(b, &f.ValueStats)
	b = appendLong(b, f.MinSequenceNumber)
	b = appendLong(b, f.MaxSequenceNumber)
	b = appendLong(b, f.SchemaID)
	b = appendInt(b, f.Level)
	b = appendStrings(b, f.ExtraFiles)
	b = appendOptLong(b, f.CreationTimeMillis)
	b = appendOptLong(b, f.DeleteRowCount)
	b = appendOptBytes(b, f.EmbeddedIndex)
	b = appendOptInt(b, f.FileSource)
	b = appendOptStrings(b, f.ValueStatsCols)
	b = appendOptString(b, f.ExternalPath)
	b = appendOptLong(b, f.FirstRowID)
	b = appendOptStrings(b, f.WriteCols)
	return b, nil
}
