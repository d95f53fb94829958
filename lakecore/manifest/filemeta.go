package manifest

import "fmt"

// FileMeta is a manifest-list record, ManifestFileMeta (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/manifest/ManifestFileMeta.java
// and ManifestFileMetaSerializer.java): one manifest file with its exact size,
// entry counts, partition stats and, since 1.1 / 1.4, bucket, level and
// row-id ranges (nil when absent or null). Readers skip whole manifests with
// these, so they must be correct or nil.
type FileMeta struct {
	// FileName is relative to the table's manifest/ directory.
	FileName string
	// FileSize is the exact byte size; Java uses it as the read bound.
	FileSize                       int64
	NumAddedFiles, NumDeletedFiles int64
	// PartitionStats covers the partition columns over all entries.
	PartitionStats       SimpleStats
	SchemaID             int64
	MinBucket, MaxBucket *int32
	MinLevel, MaxLevel   *int32
	MinRowID, MaxRowID   *int64
}

func decodeFileMeta(r *record) (FileMeta, error) {
	var m FileMeta
	var err error
	if err = checkVersion(r, manifestVersion); err != nil {
		return m, err
	}
	if m.FileName, err = r.reqString("_FILE_NAME"); err != nil {
		return m, err
	}
	if m.FileSize, err = r.reqLong("_FILE_SIZE"); err != nil {
		return m, err
	}
	if m.NumAddedFiles, err = r.reqLong("_NUM_ADDED_FILES"); err != nil {
		return m, err
	}
	if m.NumDeletedFiles, err = r.reqLong("_NUM_DELETED_FILES"); err != nil {
		return m, err
	}
	sr, err := r.reqRecord("_PARTITION_STATS")
	if err != nil {
		return m, err
	}
	if m.PartitionStats, err = decodeStats(sr); err != nil {
		return m, fmt.Errorf("_PARTITION_STATS: %w", err)
	}
	if m.SchemaID, err = r.reqLong("_SCHEMA_ID"); err != nil {
		return m, err
	}
	for _, f := range []struct {
		name string
		dst  **int32
	}{{"_MIN_BUCKET", &m.MinBucket}, {"_MAX_BUCKET", &m.MaxBucket}, {"_MIN_LEVEL", &m.MinLevel}, {"_MAX_LEVEL", &m.MaxLevel}} {
		if *f.dst, err = r.optInt(f.name); err != nil {
			return m, err
		}
	}
	if m.MinRowID, err = r.optLong("_MIN_ROW_ID"); err != nil {
		return m, err
	}
	if m.MaxRowID, err = r.optLong("_MAX_ROW_ID"); err != nil {
		return m, err
	}
	return m, nil
}

// EncodeFileMetas encodes metas as a manifest list with exactly Java's current
// ManifestFileMeta schema (paimon-format.md Appendix A) and the Encoder's codec. Zero
// metas give a valid header-only file (the base list of a first commit).
func (e *Encoder) EncodeFileMetas(metas []FileMeta) ([]byte, error) {
	w, err := newContainerWriter(manifestListSchema, e)
	if err != nil {
		return nil, fmt.Errorf("encode manifest list: %w", err)
	}
	for i := range metas {
		m := &metas[i]
		if err := m.PartitionStats.check("partition stats"); err != nil {
			return nil, fmt.Errorf("encode manifest list record %d (%s): %w", i, m.FileName, err)
		}
		b := w.block
		b = appendInt(b, manifestVersion)
		b = appendString(b, m.FileName)
		b = appendLong(b, m.FileSize)
		b = appendLong(b, m.NumAddedFiles)
		b = appendLong(b, m.NumDeletedFiles)
		b = appendStats(b, &m.PartitionStats)
		b = appendLong(b, m.SchemaID)
		b = appendOptInt(b, m.MinBucket)
		b = appendOptInt(b, m.MaxBucket)
		b = appendOptInt(b, m.MinLevel)
		b = appendOptInt(b, m.MaxLevel)
		b = appendOptLong(b, m.MinRowID)
		b = appendOptLong(b, m.MaxRowID)
		w.block = b
		if err := w.endRecord(); err != nil {
			return nil, fmt.Errorf("encode manifest list: %w", err)
		}
	}
	out, err := w.finish()
	if err != nil {
		return nil, fmt.Errorf("encode manifest list: %w", err)
	}
	return out, nil
}
