package snapshot

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// changelogPrefix names the long-lived changelogs (ChangelogManager.CHANGELOG_PREFIX).
const changelogPrefix = "changelog-"

// ChangelogManager reads and writes the long-lived changelogs of one
// table: changelog/changelog-<id>, the metadata of a snapshot that expired
// while its changelog is retained longer (changelog.num-retained.*,
// changelog.time-retained), with the same JSON as the snapshot (Java's
// Changelog extends Snapshot), and the LATEST and EARLIEST hints of that
// directory (apache/paimon: paimon-core/.../utils/ChangelogManager.java).
// It keeps no state besides its arguments and is safe for concurrent use.
type ChangelogManager struct {
	fio       storage.FileIO
	tablePath string
}

// NewChangelogManager returns the changelog manager of the table at
// tablePath (relative to fio's root).
func NewChangelogManager(fio storage.FileIO, tablePath string) *ChangelogManager {
	return &ChangelogManager{fio: fio, tablePath: strings.TrimSuffix(tablePath, "/")}
}

// Dir is the table's changelog directory.
func (m *ChangelogManager) Dir() string { return path.Join(m.tablePath, "changelog") }

// Path is the path of changelog-<id>.
func (m *ChangelogManager) Path(id int64) string {
	return m.Dir() + "/" + changelogPrefix + strconv.FormatInt(id, 10)
}

// ListIDs returns the ids of the changelog-<n> files in ascending order.
func (m *ChangelogManager) ListIDs(ctx context.Context) ([]int64, error) {
	ids, err := storage.ListVersioned(ctx, m.fio, m.Dir(), changelogPrefix)
	if err != nil {
		return nil, fmt.Errorf("list changelogs of %s: %w", m.tablePath, err)
	}
	return ids, nil
}

// Get reads changelog-<id>; a missing one wraps ErrSnapshotNotFound.
func (m *ChangelogManager) Get(ctx context.Context, id int64) (*Snapshot, error) {
	return readSnapshotFile(ctx, m.fio, "changelog", m.Path(id), id)
}

// Commit writes changelog-<id> with data, the JSON of snapshot id
// (ChangelogManager.commitChangelog, which overwrites), and then the
// LATEST hint of the changelog directory (commitLongLivedChangelogLatestHint).
func (m *ChangelogManager) Commit(ctx context.Context, id int64, data []byte) error {
	p := m.Path(id)
	if err := m.fio.WriteFile(ctx, p, data); err != nil {
		return fmt.Errorf("write changelog %s: %w", p, err)
	}
	return writeHint(ctx, m.fio, m.Dir(), LatestHint, id)
}

// WriteEarliestHint writes the EARLIEST hint of the changelog directory
// (commitLongLivedChangelogEarliestHint).
func (m *ChangelogManager) WriteEarliestHint(ctx context.Context, id int64) error {
	return writeHint(ctx, m.fio, m.Dir(), EarliestHint, id)
}
