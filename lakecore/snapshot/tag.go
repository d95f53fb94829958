package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/jackson"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

const tagPrefix = "tag-"

// Tag is a named copy of a snapshot's metadata, <table>/tag/tag-<name>,
// which keeps that snapshot's files alive across expiration
// (apache/paimon paimon-core/src/main/java/org/apache/paimon/tag/Tag.java).
type Tag struct {
	Name     string
	Snapshot *Snapshot
	// CreateTime is the raw "tagCreateTime" (Jackson's LocalDateTime array,
	// e.g. [2024,5,30,12,0,0,123000000]) or nil.
	CreateTime json.RawMessage
	// TimeRetained is the raw "tagTimeRetained" (seconds, e.g.
	// 86400.000000000) or nil.
	TimeRetained json.RawMessage
}

// TagManager reads and writes the tags of one table
// (apache/paimon: paimon-core/.../utils/TagManager.java). It keeps no
// state besides its arguments and is safe for concurrent use.
type TagManager struct {
	fio       storage.FileIO
	tablePath string
}

// NewTagManager returns the tag manager of the table at tablePath.
func NewTagManager(fio storage.FileIO, tablePath string) *TagManager {
	return &TagManager{fio: fio, tablePath: strings.TrimSuffix(tablePath, "/")}
}

// Dir is the table's tag directory.
func (t *TagManager) Dir() string { return path.Join(t.tablePath, "tag") }

// Path is the file of tag name.
func (t *TagManager) Path(name string) string { return t.Dir() + "/" + tagPrefix + name }

// Get reads tag name; a missing tag gives ErrTagNotFound and a file that is
// not a snapshot ErrInvalidSnapshot.
func (t *TagManager) Get(ctx context.Context, name string) (*Tag, error) {
	if name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("read tag %q: %w", name, ErrTagNotFound)
	}
	p := t.Path(name)
	data, err := t.fio.ReadFile(ctx, p)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, fmt.Errorf("read tag %s: %w: %w", p, ErrTagNotFound, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read tag %s: %w", p, err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("read tag %s: %w", p, err)
	}
	tag := &Tag{Name: name, Snapshot: s}
	tag.CreateTime, _ = s.Extra(kTagCreateTime)
	tag.TimeRetained, _ = s.Extra(kTagTimeRetained)
	return tag, nil
}

// List reads every tag, ordered by snapshot id and then name (the order of
// TagManager.tags()). Tags deleted while listing are skipped; hidden
// temporary files are ignored.
func (t *TagManager) List(ctx context.Context) ([]Tag, error) {
	infos, err := t.fio.List(ctx, t.Dir(), false)
	if err != nil {
		return nil, fmt.Errorf("list tags of %s: %w", t.tablePath, err)
	}
	var out []Tag
	for _, fi := range infos {
		name, ok := strings.CutPrefix(path.Base(fi.Path), tagPrefix)
		if fi.IsDir || !ok || name == "" {
			continue
		}
		tag, err := t.Get(ctx, name)
		if errors.Is(err, ErrTagNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *tag)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Snapshot.ID != out[j].Snapshot.ID {
			return out[i].Snapshot.ID < out[j].Snapshot.ID
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// The tag fields Java's Tag adds after the snapshot's keys.
const (
	kTagCreateTime   = "tagCreateTime"
	kTagTimeRetained = "tagTimeRetained"
)

// CheckTagName rejects names that cannot name a tag file: blank names
// (Java: "Tag name shouldn't be blank.") and names containing "/".
// Errors wrap ErrInvalidTag.
func CheckTagName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: tag name shouldn't be blank", ErrInvalidTag)
	}
	if strings.Contains(name, "/") {
		return fmt.Errorf("%w: tag name %q must not contain \"/\"", ErrInvalidTag, name)
	}
	return nil
}

// TrimToSnapshot returns the snapshot of a tag without the tag fields
// (Tag.trimToSnapshot): what rollback writes back as snapshot-<id>.
func (t *Tag) TrimToSnapshot() *Snapshot {
	c := *t.Snapshot
	c.extras = slices.DeleteFunc(slices.Clone(c.extras), func(m jackson.Member) bool {
		return m.Key == kTagCreateTime || m.Key == kTagTimeRetained
	})
	if c.keys != nil {
		c.keys = maps.Clone(c.keys)
		delete(c.keys, kTagCreateTime)
		delete(c.keys, kTagTimeRetained)
	}
	return &c
}

// MarshalTag returns the content of a tag file for snap, as
// TagManager.createOrReplaceTag writes it: without timeRetained the
// snapshot's own JSON (no tag fields, so that Paimon <= 0.7 can read it);
// with it, the snapshot's keys followed by "tagCreateTime" (created, a
// LocalDateTime: Jackson's array [y,M,d,H,m(,s(,nanos))]) and
// "tagTimeRetained" (a Duration: seconds with nine decimals), which is
// what Tag.fromSnapshotAndTagTtl(...).toJson() prints. snap may itself
// come from a tag; its tag fields are dropped first.
func MarshalTag(snap *Snapshot, timeRetained *time.Duration, created time.Time) ([]byte, error) {
	base := (&Tag{Snapshot: snap}).TrimToSnapshot()
	if timeRetained == nil {
		return base.Marshal()
	}
	base.extras = append(base.extras,
		jackson.Member{Key: kTagCreateTime, Value: localDateTimeJSON(created)},
		jackson.Member{Key: kTagTimeRetained, Value: durationJSON(*timeRetained)})
	return base.Marshal()
}

// localDateTimeJSON is Jackson's LocalDateTimeSerializer with
// WRITE_DATES_AS_TIMESTAMPS (JsonSerdeUtil's default): year, month, day,
// hour and minute always, seconds when seconds or nanos are non-zero,
// nanos when non-zero. The wall clock is t's own (Java's
// LocalDateTime.now() is the JVM's zone; pass a local time).
func localDateTimeJSON(t time.Time) json.RawMessage {
	parts := []int{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute()}
	if t.Second() > 0 || t.Nanosecond() > 0 {
		parts = append(parts, t.Second())
		if t.Nanosecond() > 0 {
			parts = append(parts, t.Nanosecond())
		}
	}
	b := []byte{'['}
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return append(b, ']')
}

// durationJSON is Jackson's DurationSerializer with
// WRITE_DURATIONS_AS_TIMESTAMPS and nanosecond precision
// (DecimalUtils.toBigDecimal): "0.0" for zero, else seconds with nine
// decimals ("86400.000000000"). Negative durations are not written by the
// callers (time_retained must be positive).
func durationJSON(d time.Duration) json.RawMessage {
	if d == 0 {
		return json.RawMessage("0.0")
	}
	sec, nanos := int64(d/time.Second), int64(d%time.Second)
	return json.RawMessage(fmt.Sprintf("%d.%09d", sec, nanos))
}

// Create writes tag name for snap (TagManager.createTag with
// ignoreIfExists = false): an existing tag gives ErrTagExists and is left
// alone. The file is written with WriteFile (Java's overwriteFileUtf8), so
// a concurrent creator of the same name may win; Java has the same race.
// created is the tag's creation time, used only with timeRetained.
func (t *TagManager) Create(ctx context.Context, name string, snap *Snapshot, timeRetained *time.Duration, created time.Time) error {
	if err := CheckTagName(name); err != nil {
		return err
	}
	p := t.Path(name)
	exists, err := storage.Exists(ctx, t.fio, p)
	if err != nil {
		return fmt.Errorf("create tag %s: %w", p, err)
	}
	if exists {
		return fmt.Errorf("create tag %s: %w: tag '%s' already exists", p, ErrTagExists, name)
	}
	data, err := MarshalTag(snap, timeRetained, created)
	if err != nil {
		return fmt.Errorf("create tag %s: %w", p, err)
	}
	if err := t.fio.WriteFile(ctx, p, data); err != nil {
		return fmt.Errorf("create tag %s: %w", p, err)
	}
	return nil
}

// DeleteFile removes the file of tag name; a missing tag is not an error
// (Java's fileIO.deleteQuietly). It does not clean the tagged snapshot's
// data files: see maintain.DeleteTag for Java's TagManager.deleteTag.
func (t *TagManager) DeleteFile(ctx context.Context, name string) error {
	if err := CheckTagName(name); err != nil {
		return err
	}
	if err := t.fio.Delete(ctx, t.Path(name)); err != nil {
		return fmt.Errorf("delete tag %s: %w", t.Path(name), err)
	}
	return nil
}
