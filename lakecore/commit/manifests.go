package commit

import (
	"context"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// rollCheckEntries is how often a rolling manifest writer looks at its size:
// RollingFileWriterImpl.CHECK_ROLLING_RECORD_CNT.
const rollCheckEntries = 1000

// writeManifests writes entries as manifests rolling at
// ManifestTargetFileSize, as ManifestFile.write does with its rolling writer
// (the size is looked at every 1000 entries). No entries, no manifest. On
// error the manifests written so far are deleted.
func (c *Committer) writeManifests(ctx context.Context, entries []manifest.Entry, schemaID int64) ([]manifest.FileMeta, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	chunks, err := c.rollingChunks(entries)
	if err != nil {
		return nil, err
	}
	metas := make([]manifest.FileMeta, 0, len(chunks))
	for _, chunk := range chunks {
		m, err := c.encoder.WriteManifest(ctx, c.fio, c.tablePath, chunk, c.partTypes, schemaID)
		if err != nil {
			c.deleteManifests(context.WithoutCancel(ctx), fileNames(metas))
			return nil, err
		}
		c.manifests.Remember(m.FileName, chunk)
		metas = append(metas, m)
	}
	return metas, nil
}

// rollingChunks splits entries where Java's rolling writer would start a
// new file: after a multiple of 1000 entries once the file reached the
// target size. The size of a block of entries is measured by encoding it.
func (c *Committer) rollingChunks(entries []manifest.Entry) ([][]manifest.Entry, error) {
	if len(entries) <= rollCheckEntries {
		return [][]manifest.Entry{entries}, nil
	}
	header, err := c.encoder.EncodeEntries(nil)
	if err != nil {
		return nil, err
	}
	var chunks [][]manifest.Entry
	start, size := 0, int64(len(header))
	for i := 0; i < len(entries); i += rollCheckEntries {
		end := min(i+rollCheckEntries, len(entries))
		block, err := c.encoder.EncodeEntries(entries[i:end])
		if err != nil {
			return nil, err
		}
		size += int64(len(block) - len(header))
		if size >= c.o.ManifestTargetFileSize && end < len(entries) {
			chunks = append(chunks, entries[start:end])
			start, size = end, int64(len(header))
		}
	}
	return append(chunks, entries[start:]), nil
}

// readEntries returns the entries of a manifest, from the reader's cache
// when this committer wrote or read it before (manifests never change).
func (c *Committer) readEntries(ctx context.Context, m *manifest.FileMeta) ([]manifest.Entry, error) {
	return c.manifests.ReadManifest(ctx, m)
}

// liveEntries returns the live files of snap (base then delta manifests,
// merged by file identity, ADDs kept) in the partitions keep accepts (all
// when nil): AbstractFileStoreScan with ScanMode.ALL.
func (c *Committer) liveEntries(ctx context.Context, snap *snapshot.Snapshot, keep func([]byte) bool) ([]manifest.Entry, error) {
	live, err := c.manifests.LiveEntries(ctx, snap, manifest.PartitionFunc(keep))
	if err != nil {
		return nil, fmt.Errorf("read live files of %w", err)
	}
	return live, nil
}

// defaultCacheEntries bounds the manifest cache of a committer: about
// 50-100 MiB of decoded entries at most.
const defaultCacheEntries = 200_000
