// Package snapshot reads and writes Paimon's snapshot files
// (<table>/snapshot/snapshot-<id>), the LATEST and EARLIEST hint files, the
// consumer files that record streaming progress, and tags.
//
// The JSON follows apache/paimon
// paimon-api/src/main/java/org/apache/paimon/Snapshot.java and is printed as
// Jackson's DefaultPrettyPrinter prints it (paimon-format.md §3). The
// manager follows paimon-core/src/main/java/org/apache/paimon/utils/
// SnapshotManager.java and HintFileUtils.java; the commit point is the
// exclusive creation of snapshot-<id> (paimon-format.md §10).
package snapshot

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/jackson"
)

// CurrentVersion is Snapshot.CURRENT_VERSION, unchanged since Paimon 0.4.
const CurrentVersion = 3

// CommitKind is the kind of change a snapshot records (Snapshot.CommitKind).
type CommitKind string

// The commit kinds Java knows; any other value fails Java's reader.
const (
	// CommitAppend adds files (and is what a streaming reader consumes).
	CommitAppend CommitKind = "APPEND"
	// CommitCompact replaces files by compacted ones; readers skip it.
	CommitCompact CommitKind = "COMPACT"
	// CommitOverwrite deletes and adds files (INSERT OVERWRITE, partition
	// expiry, an APPEND that deletes).
	CommitOverwrite CommitKind = "OVERWRITE"
	// CommitAnalyze only adds a statistics file.
	CommitAnalyze CommitKind = "ANALYZE"
)

// Valid reports whether k is one of the four kinds Java knows.
func (k CommitKind) Valid() bool {
	switch k {
	case CommitAppend, CommitCompact, CommitOverwrite, CommitAnalyze:
		return true
	}
	return false
}

// Snapshot is one snapshot-<id> file (or the snapshot part of a tag).
//
// A Snapshot returned by Parse remembers which keys its file had, so that
// Marshal writes the same keys in the same order, e.g. the logOffsets and
// "changelogManifestList" : null of Paimon 0.9–1.3 files, and keys unknown
// to lakecore at the end. A Snapshot built as a Go literal (or cleaned with
// Fresh) is written in the shape paimon-format.md §3.2 recommends, in Paimon
// 1.4's key order: the always-written keys plus the non-nil optional ones,
// never logOffsets. Build new snapshots that way; do not copy a parsed one.
type Snapshot struct {
	// Version is 3; 0 is written as 3 in a new snapshot.
	Version int
	// UUID is a random id per snapshot (Paimon 2.0+); optional.
	UUID *string
	// ID equals N of snapshot-N; ids start at 1 and are consecutive.
	ID int64
	// SchemaID is the schema the commit was made with.
	SchemaID int64
	// BaseManifestList names the manifest list of the table state before
	// this commit.
	BaseManifestList string
	// BaseManifestListSize is that file's exact size (Paimon 1.1+).
	BaseManifestListSize *int64
	// DeltaManifestList names the manifest list of this commit's changes.
	DeltaManifestList string
	// DeltaManifestListSize is that file's exact size (Paimon 1.1+).
	DeltaManifestListSize *int64
	// ChangelogManifestList is nil for append tables.
	ChangelogManifestList *string
	// ChangelogManifestListSize is that file's size.
	ChangelogManifestListSize *int64
	// IndexManifest names the index manifest (deletion vectors, indexes).
	IndexManifest *string
	// CommitUser identifies the writing job; with CommitIdentifier and
	// CommitKind it de-duplicates retried commits.
	CommitUser string
	// WriterVersion is the Paimon build that wrote it (Paimon 2.1+).
	WriterVersion *string
	// CommitIdentifier is the checkpoint id, or math.MaxInt64 for batch.
	CommitIdentifier int64
	// CommitKind must be Valid.
	CommitKind CommitKind
	// TimeMillis is the commit time (epoch ms).
	TimeMillis int64
	// TotalRecordCount is the row count of all live files; nil is written
	// as 0 in a new snapshot.
	TotalRecordCount *int64
	// DeltaRecordCount is added minus deleted rows of this commit; nil is
	// written as 0 in a new snapshot.
	DeltaRecordCount *int64
	// ChangelogRecordCount is written only when non-nil (Paimon 1.4).
	ChangelogRecordCount *int64
	// Watermark is carried forward from the previous snapshot.
	Watermark *int64
	// Statistics names a file in statistics/.
	Statistics *string
	// Properties are free-form; written only when non-empty.
	Properties map[string]string
	// NextRowID is the next row id with row tracking (Paimon 1.3+).
	NextRowID *int64
	// Operation is the SQL operation (Paimon 2.0+).
	Operation *string

	// keys is the set of keys of the parsed file; nil for a new snapshot.
	keys map[string]bool
	// logOffsets is the raw value of the removed logOffsets key.
	logOffsets json.RawMessage
	// extras are keys unknown to lakecore, in file order.
	extras []jackson.Member
	// propertyOrder is the order of the properties in the parsed file.
	propertyOrder []string
}

// Fresh returns a copy of s that forgets the keys of the file it was
// parsed from, so that Marshal writes the recommended shape of a new
// snapshot. Unknown keys and logOffsets are dropped.
func (s *Snapshot) Fresh() *Snapshot {
	c := *s
	c.keys, c.logOffsets, c.extras, c.propertyOrder = nil, nil, nil, nil
	c.Properties = maps.Clone(s.Properties)
	return &c
}

// Extra returns the raw JSON of a key lakecore does not model (such as a
// tag's "tagCreateTime"), and whether the parsed file had it.
func (s *Snapshot) Extra(key string) (json.RawMessage, bool) {
	for _, m := range s.extras {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// key names in Java's declaration order (Snapshot.java from 0.9 to 2.1),
// which is the order Jackson writes them in.
const (
	kVersion                   = "version"
	kUUID                      = "uuid"
	kID                        = "id"
	kSchemaID                  = "schemaId"
	kBaseManifestList          = "baseManifestList"
	kBaseManifestListSize      = "baseManifestListSize"
	kDeltaManifestList         = "deltaManifestList"
	kDeltaManifestListSize     = "deltaManifestListSize"
	kChangelogManifestList     = "changelogManifestList"
	kChangelogManifestListSize = "changelogManifestListSize"
	kIndexManifest             = "indexManifest"
	kCommitUser                = "commitUser"
	kWriterVersion             = "writerVersion"
	kCommitIdentifier          = "commitIdentifier"
	kCommitKind                = "commitKind"
	kTimeMillis                = "timeMillis"
	kLogOffsets                = "logOffsets"
	kTotalRecordCount          = "totalRecordCount"
	kDeltaRecordCount          = "deltaRecordCount"
	kChangelogRecordCount      = "changelogRecordCount"
	kWatermark                 = "watermark"
	kStatistics                = "statistics"
	kProperties                = "properties"
	kNextRowID                 = "nextRowId"
	kOperation                 = "operation"
)

// Parse reads a snapshot file. Unknown keys are kept for Marshal but
// otherwise ignored, as Java's @JsonIgnoreProperties(ignoreUnknown = true)
// does. "id", "schemaId", "baseManifestList", "deltaManifestList",
// "commitUser" and "commitKind" are required (paimon-format.md §3.2) and
// commitKind must be APPEND, COMPACT, OVERWRITE or ANALYZE; missing numbers
// are 0 as in Java. Errors wrap ErrInvalidSnapshot.
func Parse(data []byte) (*Snapshot, error) {
	members, err := jackson.Members(data)
	if err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrInvalidSnapshot, err)
	}
	s := &Snapshot{keys: make(map[string]bool, len(members))}
	for _, m := range members {
		s.keys[m.Key] = true
		if err := s.set(m.Key, m.Value); err != nil {
			return nil, err
		}
	}
	for _, k := range []string{kID, kSchemaID, kBaseManifestList, kDeltaManifestList, kCommitUser, kCommitKind} {
		if !s.keys[k] {
			return nil, fmt.Errorf("%w: missing required key %q", ErrInvalidSnapshot, k)
		}
	}
	if !s.CommitKind.Valid() {
		return nil, fmt.Errorf("%w: unknown commitKind %q (want APPEND, COMPACT, OVERWRITE or ANALYZE)", ErrInvalidSnapshot, s.CommitKind)
	}
	return s, nil
}

func (s *Snapshot) set(key string, raw json.RawMessage) error {
	var err error
	switch key {
	case kVersion:
		var v *int64
		if v, err = optInt(key, raw); err == nil && v != nil {
			if int64(int32(*v)) != *v {
				return fmt.Errorf("%w: %q = %d is out of range", ErrInvalidSnapshot, key, *v)
			}
			s.Version = int(*v)
		}
	case kUUID:
		s.UUID, err = optString(key, raw)
	case kID:
		s.ID, err = reqInt(key, raw)
	case kSchemaID:
		s.SchemaID, err = reqInt(key, raw)
	case kBaseManifestList:
		s.BaseManifestList, err = reqString(key, raw)
	case kBaseManifestListSize:
		s.BaseManifestListSize, err = optInt(key, raw)
	case kDeltaManifestList:
		s.DeltaManifestList, err = reqString(key, raw)
	case kDeltaManifestListSize:
		s.DeltaManifestListSize, err = optInt(key, raw)
	case kChangelogManifestList:
		s.ChangelogManifestList, err = optString(key, raw)
	case kChangelogManifestListSize:
		s.ChangelogManifestListSize, err = optInt(key, raw)
	case kIndexManifest:
		s.IndexManifest, err = optString(key, raw)
	case kCommitUser:
		s.CommitUser, err = reqString(key, raw)
	case kWriterVersion:
		s.WriterVersion, err = optString(key, raw)
	case kCommitIdentifier:
		s.CommitIdentifier, err = zeroInt(key, raw)
	case kCommitKind:
		var k string
		k, err = reqString(key, raw)
		s.CommitKind = CommitKind(k)
	case kTimeMillis:
		s.TimeMillis, err = zeroInt(key, raw)
	case kLogOffsets:
		s.logOffsets = raw
	case kTotalRecordCount:
		s.TotalRecordCount, err = optInt(key, raw)
	case kDeltaRecordCount:
		s.DeltaRecordCount, err = optInt(key, raw)
	case kChangelogRecordCount:
		s.ChangelogRecordCount, err = optInt(key, raw)
	case kWatermark:
		s.Watermark, err = optInt(key, raw)
	case kStatistics:
		s.Statistics, err = optString(key, raw)
	case kProperties:
		if string(raw) == "null" {
			return nil
		}
		ms, perr := jackson.Members(raw)
		if perr != nil {
			return fmt.Errorf("%w: %q is not a JSON object", ErrInvalidSnapshot, key)
		}
		s.Properties = make(map[string]string, len(ms))
		for _, m := range ms {
			var v string
			if json.Unmarshal(m.Value, &v) != nil || string(m.Value) == "null" {
				return fmt.Errorf("%w: property %q is not a string", ErrInvalidSnapshot, m.Key)
			}
			s.Properties[m.Key] = v
			s.propertyOrder = append(s.propertyOrder, m.Key)
		}
	case kNextRowID:
		s.NextRowID, err = optInt(key, raw)
	case kOperation:
		s.Operation, err = optString(key, raw)
	default:
		s.extras = append(s.extras, jackson.Member{Key: key, Value: raw})
	}
	return err
}

func optInt(key string, raw json.RawMessage) (*int64, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return nil, fmt.Errorf("%w: %q must be an integer, got %s", ErrInvalidSnapshot, key, abbreviate(raw))
	}
	v, err := n.Int64()
	if err != nil {
		return nil, fmt.Errorf("%w: %q must be a 64-bit integer, got %s", ErrInvalidSnapshot, key, abbreviate(raw))
	}
	return &v, nil
}

// zeroInt reads a Java primitive long: null is 0.
func zeroInt(key string, raw json.RawMessage) (int64, error) {
	v, err := optInt(key, raw)
	if v == nil {
		return 0, err
	}
	return *v, err
}

func reqInt(key string, raw json.RawMessage) (int64, error) {
	v, err := optInt(key, raw)
	if err == nil && v == nil {
		err = fmt.Errorf("%w: %q is null", ErrInvalidSnapshot, key)
	}
	if err != nil {
		return 0, err
	}
	return *v, nil
}

func optString(key string, raw json.RawMessage) (*string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return nil, fmt.Errorf("%w: %q must be a string, got %s", ErrInvalidSnapshot, key, abbreviate(raw))
	}
	return &v, nil
}

func reqString(key string, raw json.RawMessage) (string, error) {
	v, err := optString(key, raw)
	if err == nil && v == nil {
		err = fmt.Errorf("%w: %q is null", ErrInvalidSnapshot, key)
	}
	if err != nil {
		return "", err
	}
	return *v, nil
}

func abbreviate(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// Marshal writes the snapshot as Java's Snapshot.toJson does (Jackson bean
// serialization, pretty printed, no trailing newline), with keys in Java's
// declaration order. See Snapshot for which keys are written. CommitKind
// must be Valid.
func (s *Snapshot) Marshal() ([]byte, error) {
	if !s.CommitKind.Valid() {
		return nil, fmt.Errorf("marshal snapshot %d: %w: unknown commitKind %q", s.ID, ErrInvalidSnapshot, s.CommitKind)
	}
	parsed := s.keys != nil
	var o jackson.Object
	// always: a key Java writes in every version (primitive or non-null).
	always := func(k string) bool { return !parsed || s.keys[k] }
	// optional: a nullable key Java writes when non-null; a parsed file
	// keeps it even when null (changelogManifestList in 0.9-1.3).
	optional := func(k string, isSet bool) bool { return isSet || (parsed && s.keys[k]) }
	str := func(k string, v *string) {
		if optional(k, v != nil) {
			if v == nil {
				o.Null(k)
			} else {
				o.String(k, *v)
			}
		}
	}
	num := func(k string, v *int64) {
		if optional(k, v != nil) {
			if v == nil {
				o.Null(k)
			} else {
				o.Int(k, *v)
			}
		}
	}
	count := func(k string, v *int64) {
		if v != nil && (always(k) || parsed) {
			o.Int(k, *v)
		} else if always(k) {
			if parsed {
				o.Null(k)
			} else {
				o.Int(k, 0)
			}
		}
	}

	if always(kVersion) {
		v := s.Version
		if v == 0 && !parsed {
			v = CurrentVersion
		}
		o.Int(kVersion, int64(v))
	}
	str(kUUID, s.UUID)
	if always(kID) {
		o.Int(kID, s.ID)
	}
	if always(kSchemaID) {
		o.Int(kSchemaID, s.SchemaID)
	}
	if always(kBaseManifestList) {
		o.String(kBaseManifestList, s.BaseManifestList)
	}
	num(kBaseManifestListSize, s.BaseManifestListSize)
	if always(kDeltaManifestList) {
		o.String(kDeltaManifestList, s.DeltaManifestList)
	}
	num(kDeltaManifestListSize, s.DeltaManifestListSize)
	str(kChangelogManifestList, s.ChangelogManifestList)
	num(kChangelogManifestListSize, s.ChangelogManifestListSize)
	str(kIndexManifest, s.IndexManifest)
	if always(kCommitUser) {
		o.String(kCommitUser, s.CommitUser)
	}
	str(kWriterVersion, s.WriterVersion)
	if always(kCommitIdentifier) {
		o.Int(kCommitIdentifier, s.CommitIdentifier)
	}
	if always(kCommitKind) {
		o.String(kCommitKind, string(s.CommitKind))
	}
	if always(kTimeMillis) {
		o.Int(kTimeMillis, s.TimeMillis)
	}
	if parsed && s.keys[kLogOffsets] {
		o.Raw(kLogOffsets, s.logOffsets)
	}
	count(kTotalRecordCount, s.TotalRecordCount)
	count(kDeltaRecordCount, s.DeltaRecordCount)
	num(kChangelogRecordCount, s.ChangelogRecordCount)
	num(kWatermark, s.Watermark)
	str(kStatistics, s.Statistics)
	if len(s.Properties) > 0 || (parsed && s.keys[kProperties]) {
		if s.Properties == nil {
			o.Null(kProperties)
		} else {
			var p jackson.Object
			for _, k := range s.propertyKeys() {
				p.String(k, s.Properties[k])
			}
			o.Raw(kProperties, p.Bytes())
		}
	}
	num(kNextRowID, s.NextRowID)
	str(kOperation, s.Operation)
	for _, m := range s.extras {
		o.Raw(m.Key, m.Value)
	}
	out, err := jackson.Pretty(o.Bytes())
	if err != nil {
		return nil, fmt.Errorf("marshal snapshot %d: %w", s.ID, err)
	}
	return out, nil
}

// propertyKeys keeps the parsed order when the key set is unchanged and
// sorts otherwise.
func (s *Snapshot) propertyKeys() []string {
	if len(s.propertyOrder) == len(s.Properties) {
		ok := true
		for _, k := range s.propertyOrder {
			if _, has := s.Properties[k]; !has {
				ok = false
				break
			}
		}
		if ok {
			return s.propertyOrder
		}
	}
	keys := slices.Collect(maps.Keys(s.Properties))
	sort.Strings(keys)
	return keys
}
