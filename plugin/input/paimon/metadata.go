package paimon

import (
	"fmt"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// MetadataKeys is a set of the metadata keys the input sets on each
// message (metadata_keys): the zero value is none, AllMetadataKeys every
// one. Each key costs CPU per message (a map entry of the message), so a
// pipeline that reads none of them runs faster without them.
type MetadataKeys uint16

// metadataKeyNames are the keys in the order of their bits in a
// MetadataKeys, as the docs list them.
var metadataKeyNames = [...]string{
	rowconv.MetaSnapshotID,
	rowconv.MetaCommitKind,
	rowconv.MetaCommitTime,
	rowconv.MetaPartition,
	rowconv.MetaBucket,
	rowconv.MetaFile,
	rowconv.MetaRow,
	rowconv.MetaRowKind,
	rowconv.MetaOperation,
}

// The bits of MetadataKeys, one per key of metadataKeyNames.
const (
	metaSnapshotID MetadataKeys = 1 << iota
	metaCommitKind
	metaCommitTime
	metaPartition
	metaBucket
	metaFile
	metaRow
	metaRowKind
	metaOperation
)

// AllMetadataKeys is every key: the default.
const AllMetadataKeys MetadataKeys = 1<<len(metadataKeyNames) - 1

// ParseMetadataKeys returns the set of names, each one of the input's
// metadata keys (paimon_snapshot_id, paimon_commit_kind,
// paimon_commit_time, paimon_partition, paimon_bucket, paimon_file,
// paimon_row, paimon_row_kind, operation); an unknown name is an error
// that names it.
func ParseMetadataKeys(names []string) (MetadataKeys, error) {
	var s MetadataKeys
	for _, n := range names {
		found := false
		for i, k := range metadataKeyNames {
			if n == k {
				s |= 1 << i
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("metadata key %q is not one of %s", n, strings.Join(metadataKeyNames[:], ", "))
		}
	}
	return s, nil
}

// Names returns the keys of s in the order the docs list them.
func (s MetadataKeys) Names() []string {
	var out []string
	for i, k := range metadataKeyNames {
		if s&(1<<i) != 0 {
			out = append(out, k)
		}
	}
	return out
}
