package manifest

import (
	"context"
	"fmt"
	"path"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
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

func manifestPath(tablePath, fileName string) string {
	return path.Join(tablePath, manifestDir, fileName)
}

// ReadEntries reads and decodes manifest/<fileName> of the table at tablePath
// (relative to fio's root). Errors name the file; a missing file wraps
// storage.ErrNotExist.
func ReadEntries(ctx context.Context, fio storage.FileIO, tablePath, fileName string) ([]Entry, error) {
	p := manifestPath(tablePath, fileName)
	data, err := fio.ReadFile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", p, err)
	}
	entries, err := DecodeEntries(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return entries, nil
}

// ReadFileMetas reads and decodes the manifest list manifest/<fileName>.
func ReadFileMetas(ctx context.Context, fio storage.FileIO, tablePath, fileName string) ([]FileMeta, error) {
	p := manifestPath(tablePath, fileName)
	data, err := fio.ReadFile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read manifest list %s: %w", p, err)
	}
	metas, err := DecodeFileMetas(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return metas, nil
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
	p := manifestPath(tablePath, name)
	if err := fio.WriteExclusive(ctx, p, data); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// WriteManifestList writes metas as a new manifest list
// manifest/manifest-list-<uuid>-0 and returns its name and exact size (the
// value for the snapshot's base/deltaManifestListSize). Zero metas give the
// valid empty list of a first commit's base.
func WriteManifestList(ctx context.Context, fio storage.FileIO, tablePath string, metas []FileMeta, c Codec) (name string, size int64, err error) {
	data, err := EncodeFileMetas(metas, c)
	if err != nil {
		return "", 0, err
	}
	name = newFileName("manifest-list")
	if err := writeNew(ctx, fio, tablePath, name, data); err != nil {
		return "", 0, err
	}
	return name, int64(len(data)), nil
}
