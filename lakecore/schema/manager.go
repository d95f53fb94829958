package schema

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

const schemaPrefix = "schema-"

// maxAddColumnsAttempts bounds AddColumns' retries when other writers keep
// taking the next schema id.
const maxAddColumnsAttempts = 100

// Manager reads and writes the schema versions of one table, as apache/paimon
// paimon-core/src/main/java/org/apache/paimon/schema/SchemaManager.java does.
// It holds no state besides its arguments and is safe for concurrent use.
type Manager struct {
	fio       storage.FileIO
	tablePath string
	now       func() time.Time
}

// NewManager returns the schema manager of the table at tablePath (relative
// to fio's root, e.g. "db.db/t").
func NewManager(fio storage.FileIO, tablePath string) *Manager {
	return &Manager{fio: fio, tablePath: strings.TrimSuffix(tablePath, "/"), now: time.Now}
}

// Dir is the table's schema directory.
func (m *Manager) Dir() string { return path.Join(m.tablePath, "schema") }

// Path is the path of schema-<id>.
func (m *Manager) Path(id int64) string {
	return m.Dir() + "/" + schemaPrefix + strconv.FormatInt(id, 10)
}

// ListIDs returns the ids of all schema-<n> files in ascending order. Other
// names, such as hidden temporary files ".schema-1.<uuid>.tmp", are ignored.
func (m *Manager) ListIDs(ctx context.Context) ([]int64, error) {
	ids, err := storage.ListVersioned(ctx, m.fio, m.Dir(), schemaPrefix)
	if err != nil {
		return nil, fmt.Errorf("list schemas of %s: %w", m.tablePath, err)
	}
	return ids, nil
}

// Get reads schema-<id>. A missing file gives ErrSchemaNotFound; a file
// that does not parse, or whose "id" is not <id>, gives ErrInvalidSchema;
// both name the file.
func (m *Manager) Get(ctx context.Context, id int64) (*TableSchema, error) {
	p := m.Path(id)
	data, err := m.fio.ReadFile(ctx, p)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, fmt.Errorf("read schema %s: %w: %w", p, ErrSchemaNotFound, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", p, err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", p, err)
	}
	if s.ID != id {
		return nil, fmt.Errorf("read schema %s: %w: the file holds schema id %d", p, ErrInvalidSchema, s.ID)
	}
	return s, nil
}

// Latest reads the schema with the highest id (SchemaManager.latest lists
// the directory; there is no hint file). A table without schema files gives
// ErrTableNotFound.
func (m *Manager) Latest(ctx context.Context) (*TableSchema, error) {
	ids, err := m.ListIDs(ctx)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("latest schema of %s: %w", m.tablePath, ErrTableNotFound)
	}
	return m.Get(ctx, ids[len(ids)-1])
}

// List reads every schema in ascending id order.
func (m *Manager) List(ctx context.Context) ([]*TableSchema, error) {
	ids, err := m.ListIDs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*TableSchema, 0, len(ids))
	for _, id := range ids {
		s, err := m.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Create writes schema-0 of a new table. It copies s, sets id 0, version 3,
// TimeMillis (now, if 0) and HighestFieldID (at least the highest id in
// use), and adds explicit "bucket" (-1) and "file.format" (parquet) options
// when absent so that every Paimon version reads the table the same way.
// The copy must pass Validate. The file is created exclusively: if any
// schema exists, or another writer creates schema-0 first, the error wraps
// ErrTableExists. It returns the schema as written.
func (m *Manager) Create(ctx context.Context, s *TableSchema) (*TableSchema, error) {
	ids, err := m.ListIDs(ctx)
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		return nil, fmt.Errorf("create table %s: %w (schema-%d exists)", m.tablePath, ErrTableExists, ids[len(ids)-1])
	}
	n := s.Clone()
	n.ID = 0
	n.Version = CurrentVersion
	if n.TimeMillis == 0 {
		n.TimeMillis = m.now().UnixMilli()
	}
	n.HighestFieldID = max(n.HighestFieldID, types.HighestFieldID(n.Fields))
	if n.PartitionKeys == nil {
		n.PartitionKeys = []string{}
	}
	if n.PrimaryKeys == nil {
		n.PrimaryKeys = []string{}
	}
	if n.Options == nil {
		n.Options = map[string]string{}
	}
	if _, ok := n.Options[OptBucket]; !ok {
		n.Options[OptBucket] = "-1"
	}
	if _, ok := n.Options[OptFileFormat]; !ok {
		n.Options[OptFileFormat] = "parquet"
	}
	if err := n.Validate(); err != nil {
		return nil, fmt.Errorf("create table %s: %w", m.tablePath, err)
	}
	if err := m.write(ctx, n); err != nil {
		if errors.Is(err, ErrSchemaExists) {
			return nil, fmt.Errorf("create table %s: %w: %w", m.tablePath, ErrTableExists, err)
		}
		return nil, fmt.Errorf("create table %s: %w", m.tablePath, err)
	}
	return n, nil
}

// Commit validates s and creates schema-<s.ID> exclusively, as
// SchemaManager.commit does with an atomic create. If the id is taken the
// error wraps ErrSchemaExists (and storage.ErrExist): re-read the latest
// schema, rebuild the change and retry. When storage reports an ambiguous
// outcome, Commit reads the file back: identical bytes mean success,
// different bytes ErrSchemaExists; otherwise the ambiguous error is returned
// wrapped.
func (m *Manager) Commit(ctx context.Context, s *TableSchema) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("commit schema %s: %w", m.Path(s.ID), err)
	}
	return m.write(ctx, s)
}

func (m *Manager) write(ctx context.Context, s *TableSchema) error {
	p := m.Path(s.ID)
	data, err := s.Marshal()
	if err != nil {
		return fmt.Errorf("commit schema %s: %w", p, err)
	}
	err = m.fio.WriteExclusive(ctx, p, data)
	if err == nil {
		return nil
	}
	if errors.Is(err, storage.ErrExist) {
		return fmt.Errorf("commit schema %s: %w: %w", p, ErrSchemaExists, err)
	}
	if errors.Is(err, storage.ErrAmbiguous) {
		// A schema file's bytes include its timeMillis, so identical
		// content can only be our own write.
		got, rerr := m.fio.ReadFile(ctx, p)
		if rerr == nil {
			if bytes.Equal(got, data) {
				return nil
			}
			return fmt.Errorf("commit schema %s: %w: %w", p, ErrSchemaExists, err)
		}
	}
	return fmt.Errorf("commit schema %s: %w", p, err)
}

// AddColumns appends nullable top-level columns and commits the result as
// the next schema version, as Java's ALTER TABLE ADD COLUMN does
// (SchemaManager.commitChanges / generateTableSchema with AddColumn):
// each new column gets highestFieldId+1 and its nested ROW fields the
// following ids (ReassignFieldIDs), a column is appended at the end (or
// before the first partition column when add-column-before-partition is
// true), the ids and default values given in fields are ignored, and
// options are re-ordered as Java's new HashMap<>(old options) orders them.
//
// A column whose name already exists is accepted if its type is the
// requested type (ignoring nested field ids); any other type is an error
// wrapping ErrInvalidSchema. NOT NULL columns are rejected. If another
// writer commits the next schema first, AddColumns re-reads the latest
// schema and tries again, so two writers adding the same column agree on
// one schema. When nothing is missing it returns the latest schema without
// writing.
func (m *Manager) AddColumns(ctx context.Context, fields []types.DataField) (*TableSchema, error) {
	for _, f := range fields {
		if !f.Type.Nullable {
			return nil, fmt.Errorf("add columns to %s: %w: column %q cannot be NOT NULL", m.tablePath, ErrInvalidSchema, f.Name)
		}
	}
	return m.commitChange(ctx, "add columns to", func(cur *TableSchema) (*TableSchema, error) {
		return m.withColumns(cur, fields)
	})
}

// commitChange commits the schema change build makes of the latest schema
// (nil: nothing to change, the latest is returned), re-reading the latest
// schema and building again when another writer commits the next schema
// first (SchemaManager.commitChanges' loop). Errors start with what and
// the table.
func (m *Manager) commitChange(ctx context.Context, what string, build func(cur *TableSchema) (*TableSchema, error)) (*TableSchema, error) {
	var lastErr error
	for attempt := 0; attempt < maxAddColumnsAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, m.tablePath, err)
		}
		cur, err := m.Latest(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, m.tablePath, err)
		}
		next, err := build(cur)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, m.tablePath, err)
		}
		if next == nil {
			return cur, nil
		}
		err = m.Commit(ctx, next)
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, ErrSchemaExists) {
			return nil, fmt.Errorf("%s %s: %w", what, m.tablePath, err)
		}
		lastErr = err
	}
	return nil, fmt.Errorf("%s %s: gave up after %d attempts: %w", what, m.tablePath, maxAddColumnsAttempts, lastErr)
}

// withColumns returns cur plus the missing columns as schema cur.ID+1, or
// nil when every column already exists with the requested type.
func (m *Manager) withColumns(cur *TableSchema, fields []types.DataField) (*TableSchema, error) {
	var missing []types.DataField
	for _, f := range fields {
		i := types.FieldByName(cur.Fields, f.Name)
		if i < 0 {
			if types.FieldByName(missing, f.Name) >= 0 {
				return nil, fmt.Errorf("%w: column %q is given twice", ErrInvalidSchema, f.Name)
			}
			missing = append(missing, f)
			continue
		}
		if !SameType(cur.Fields[i].Type, f.Type) {
			return nil, fmt.Errorf("%w: column %q already exists as %s, not %s", ErrInvalidSchema, f.Name, cur.Fields[i].Type, f.Type)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	before, err := cur.Opts().AddColumnBeforePartition()
	if err != nil {
		return nil, err
	}
	next := cur.Clone()
	next.ID = cur.ID + 1
	next.Version = CurrentVersion
	next.TimeMillis = m.now().UnixMilli()
	next.optionOrder = javaCopyOrder(javaParsedOrder(cur.insertionOrder()))
	highest := next.HighestFieldID
	for _, f := range missing {
		var added []types.DataField
		added, highest = ReassignFieldIDs([]types.DataField{{Name: f.Name, Type: f.Type, Description: f.Description}}, highest)
		at := len(next.Fields)
		if before && len(next.PartitionKeys) > 0 {
			for i, nf := range next.Fields {
				if slices.Contains(next.PartitionKeys, nf.Name) {
					at = i
					break
				}
			}
		}
		next.Fields = slices.Insert(next.Fields, at, added[0])
	}
	next.HighestFieldID = highest
	return next, nil
}

// SameType reports whether a and b are the same type when nested field ids
// are ignored (names, nullability, parameters and descriptions count).
func SameType(a, b types.DataType) bool {
	return a.Equal(clearIDs(b, a))
}

// clearIDs returns b with the nested field ids of like, where the shapes
// match, so that Equal compares everything but ids.
func clearIDs(b, like types.DataType) types.DataType {
	switch b.Kind {
	case types.KindArray, types.KindMultiset:
		if b.Element != nil && like.Element != nil {
			e := clearIDs(*b.Element, *like.Element)
			b.Element = &e
		}
	case types.KindMap:
		if b.Key != nil && like.Key != nil {
			k := clearIDs(*b.Key, *like.Key)
			b.Key = &k
		}
		if b.Value != nil && like.Value != nil {
			v := clearIDs(*b.Value, *like.Value)
			b.Value = &v
		}
	case types.KindRow:
		fs := slices.Clone(b.Fields)
		for i := range fs {
			if i < len(like.Fields) {
				fs[i].ID = like.Fields[i].ID
				fs[i].Type = clearIDs(fs[i].Type, like.Fields[i].Type)
			}
		}
		b.Fields = fs
	}
	return b
}
