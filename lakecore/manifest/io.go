package manifest

import (
	"context"
	"fmt"
	"path"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Codec selects the Avro compression of written files. Name is Paimon's
// manifest.compression value: "zstd" (Avro "zstandard"; "" means zstd),
// "snappy", "deflate" or "null"/"none". ZstdLevel is
// file.compression.zstd-level; 0 means Java's default, 1. The zero Codec is
// therefore zstd level 1, what Java writes by default.
type Codec struct {
	Name      string
	ZstdLevel int
}

// manifestDir is the directory of manifests, manifest lists and index
// manifests inside a table.
const manifestDir = "manifest"

// FilePath returns where a manifest, manifest list or index manifest of the
// table at tablePath lives: <table>/manifest/<fileName>.
func FilePath(tablePath, fileName string) string {
	return path.Join(tablePath, manifestDir, fileName)
}

func readManifestFile[T any](ctx context.Context, fio storage.FileIO, tablePath, fileName, what string,
	decode func([]byte) ([]T, error)) ([]T, error) {
	p := FilePath(tablePath, fileName)
	data, err := fio.ReadFile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, p, err)
	}
	v, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}

// newFileName returns a fresh "<prefix>-<uuid>-0", the shape of Java's
// PathFactory names (FileStorePathFactory.newManifestFile and friends).
func newFileName(prefix string) string {
	return prefix + "-" + uuid.NewString() + "-0"
}

// writeNew writes data to manifest/<name> atomically. Names are fresh UUIDs,
// so WriteExclusive is used only to make a collision loud rather than
// silently replacing another writer's file.
func writeNew(ctx context.Context, fio storage.FileIO, tablePath, name string, data []byte) error {
	p := FilePath(tablePath, name)
	if err := fio.WriteExclusive(ctx, p, data); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// WriteManifestList writes metas as a new manifest list
// manifest/manifest-list-<uuid>-0 and returns its name and exact size (the
// value for the snapshot's base/deltaManifestListSize). Zero metas give the
// valid empty list of a first commit's base.
func (e *Encoder) WriteManifestList(ctx context.Context, fio storage.FileIO, tablePath string, metas []FileMeta) (name string, size int64, err error) {
	data, err := e.EncodeFileMetas(metas)
	if err != nil {
		return "", 0, err
	}
	name = newFileName("manifest-list")
	if err := writeNew(ctx, fio, tablePath, name, data); err != nil {
		return "", 0, err
	}
	return name, int64(len(data)), nil
}

// WriteManifest writes entries as a new manifest file manifest/manifest-<uuid>-0
// of the table and returns its manifest-list record, computed as Java's
// ManifestFile.ManifestEntryWriter does (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/manifest/ManifestFile.java):
// exact size, ADD and DELETE counts, full partition stats over the entries'
// partitions (partitionTypes are the partition fields' types in key order),
// the maximum _SCHEMA_ID of the entries (schemaID when there are none),
// bucket and level ranges, and the row-id range when every entry has a
// _FIRST_ROW_ID. Ranges are nil for an empty manifest. Nothing is written if
// an entry cannot be encoded or its partition does not decode with
// partitionTypes.
func (e *Encoder) WriteManifest(ctx context.Context, fio storage.FileIO, tablePath string, entries []Entry, partitionTypes []types.DataType,
	schemaID int64) (FileMeta, error) {
	meta, err := summarize(entries, partitionTypes, schemaID)
	if err != nil {
		return FileMeta{}, fmt.Errorf("write manifest: %w", err)
	}
	data, err := e.EncodeEntries(entries)
	if err != nil {
		return FileMeta{}, err
	}
	meta.FileName = newFileName("manifest")
	meta.FileSize = int64(len(data))
	if err := writeNew(ctx, fio, tablePath, meta.FileName, data); err != nil {
		return FileMeta{}, err
	}
	return meta, nil
}

// summarize computes the manifest-list record of entries, without name and size.
func summarize(entries []Entry, partitionTypes []types.DataType, schemaID int64) (FileMeta, error) {
	var m FileMeta
	stats := newStatsCollector(partitionTypes)
	rowIDs := true
	var minRow, maxRow int64
	for i := range entries {
		e := &entries[i]
		switch e.Kind {
		case FileKindAdd:
			m.NumAddedFiles++
		case FileKindDelete:
			m.NumDeletedFiles++
		default:
			return m, fmt.Errorf("entry %d (%s): kind %d is neither ADD nor DELETE", i, e.File.FileName, e.Kind)
		}
		part, err := binrow.Deserialize(partitionTypes, e.Partition)
		if err != nil {
			return m, fmt.Errorf("entry %d (%s): partition: %w", i, e.File.FileName, err)
		}
		if err := stats.collect(part); err != nil {
			return m, fmt.Errorf("entry %d (%s): partition stats: %w", i, e.File.FileName, err)
		}
		if i == 0 {
			m.SchemaID = e.File.SchemaID
			m.MinBucket, m.MaxBucket = ptr(e.Bucket), ptr(e.Bucket)
			m.MinLevel, m.MaxLevel = ptr(e.File.Level), ptr(e.File.Level)
		}
		m.SchemaID = max(m.SchemaID, e.File.SchemaID)
		*m.MinBucket, *m.MaxBucket = min(*m.MinBucket, e.Bucket), max(*m.MaxBucket, e.Bucket)
		*m.MinLevel, *m.MaxLevel = min(*m.MinLevel, e.File.Level), max(*m.MaxLevel, e.File.Level)
		if f := e.File.FirstRowID; f == nil {
			rowIDs = false
		} else if rowIDs {
			last := *f + e.File.RowCount - 1
			if i == 0 {
				minRow, maxRow = *f, last
			}
			minRow, maxRow = min(minRow, *f), max(maxRow, last)
		}
	}
	if len(entries) == 0 {
		m.SchemaID = schemaID
	} else if rowIDs {
		m.MinRowID, m.MaxRowID = &minRow, &maxRow
	}
	var err error
	if m.PartitionStats, err = stats.stats(); err != nil {
		return m, fmt.Errorf("partition stats: %w", err)
	}
	return m, nil
}

func ptr[T any](v T) *T { return &v }
