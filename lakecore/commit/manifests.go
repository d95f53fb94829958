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
		c.cache.put(m.FileName, chunk)
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

// readEntries returns the entries of a manifest, from the cache when this
// committer wrote or read it before (manifests never change).
func (c *Committer) readEntries(ctx context.Context, m *manifest.FileMeta) ([]manifest.Entry, error) {
	if e, ok := c.cache.get(m.FileName); ok {
		return e, nil
	}
	e, err := c.decoder.ReadEntries(ctx, c.fio, c.tablePath, m.FileName)
	if err != nil {
		return nil, err
	}
	c.cache.put(m.FileName, e)
	return e, nil
}

// liveEntries returns the live files of snap (base then delta manifests,
// merged by file identity, ADDs kept) in the partitions keep accepts (all
// when nil): AbstractFileStoreScan with ScanMode.ALL.
func (c *Committer) liveEntries(ctx context.Context, snap *snapshot.Snapshot, keep func([]byte) bool) ([]manifest.Entry, error) {
	var all []manifest.Entry
	for _, l := range []string{snap.BaseManifestList, snap.DeltaManifestList} {
		metas, err := c.decoder.ReadFileMetas(ctx, c.fio, c.tablePath, l)
		if err != nil {
			return nil, err
		}
		for i := range metas {
			entries, err := c.readEntries(ctx, &metas[i])
			if err != nil {
				return nil, err
			}
			for j := range entries {
				if keep == nil || keep(entries[j].Partition) {
					all = append(all, entries[j])
				}
			}
		}
	}
	merged, err := manifest.MergeEntries(all)
	if err != nil {
		return nil, fmt.Errorf("read live files of snapshot %d: %w", snap.ID, err)
	}
	live := merged[:0]
	for _, e := range merged {
		if e.Kind == manifest.FileKindAdd {
			live = append(live, e)
		}
	}
	return live, nil
}

// defaultCacheEntries bounds the manifest cache of a committer: about
// 50-100 MiB of decoded entries at most.
const defaultCacheEntries = 200_000

// manifestCache keeps decoded manifests by file name, evicting the oldest
// first once it holds more than max entries. Cached slices are shared and
// must not be modified. Like its Committer, it is used by one goroutine at
// a time.
type manifestCache struct {
	max     int
	n       int
	entries map[string][]manifest.Entry
	order   []string
}

func newManifestCache(maxEntries int) *manifestCache {
	return &manifestCache{max: maxEntries, entries: map[string][]manifest.Entry{}}
}

func (m *manifestCache) get(name string) ([]manifest.Entry, bool) {
	e, ok := m.entries[name]
	return e, ok
}

func (m *manifestCache) put(name string, e []manifest.Entry) {
	if len(e) > m.max {
		return
	}
	if _, ok := m.entries[name]; ok {
		return
	}
	for m.n+len(e) > m.max && len(m.order) > 0 {
		old := m.order[0]
		m.order = m.order[1:]
		m.n -= len(m.entries[old])
		delete(m.entries, old)
	}
	m.entries[name] = e
	m.order = append(m.order, name)
	m.n += len(e)
}

func (m *manifestCache) remove(name string) {
	if e, ok := m.entries[name]; ok {
		m.n -= len(e)
		delete(m.entries, name)
		for i, n := range m.order {
			if n == name {
				m.order = append(m.order[:i], m.order[i+1:]...)
				break
			}
		}
	}
}
