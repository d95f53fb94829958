// Package lakecore is the entry point to Apache Paimon append tables in a
// filesystem catalog: a warehouse directory (local path, file:// or s3://)
// holding <database>.db/<table>/ directories in Paimon's layout.
//
// A few lines read a table:
//
//	t, err := lakecore.Open(ctx, "s3://bucket/warehouse", "default", "events")
//	rows, err := t.ReadAll(ctx, 0) // every row of the latest snapshot
//
// and a stream follows its commits snapshot by snapshot:
//
//	s := t.NewStreamScan(scan.StreamOptions{Mode: scan.ModeLatestFull})
//	plan, err := s.Next(ctx) // nil, nil while no new snapshot exists
//
// The subpackages do the work (scan plans, read reads splits, schema and
// snapshot hold the metadata, storage the files); this package wires them
// to a table. Tables with primary keys are refused: their files need a
// merge-on-read lakecore does not implement.
package lakecore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Catalog is a filesystem catalog: one warehouse on one FileIO. It holds no
// state besides its FileIO and is safe for concurrent use.
type Catalog struct {
	fio storage.FileIO
}

// OpenCatalog opens the warehouse at a URI (a local path, file:///path or
// s3://bucket/prefix; see storage.Open). s3 configures S3 access and is
// ignored for local warehouses; its zero value uses the SDK's default
// credential chain. A local warehouse directory is created if missing.
func OpenCatalog(ctx context.Context, warehouse string, s3 storage.S3Config) (*Catalog, error) {
	fio, err := storage.Open(ctx, warehouse, s3)
	if err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", warehouse, err)
	}
	return &Catalog{fio: fio}, nil
}

// NewCatalog returns the catalog of the warehouse at fio's root.
func NewCatalog(fio storage.FileIO) *Catalog { return &Catalog{fio: fio} }

// FileIO returns the warehouse's storage.
func (c *Catalog) FileIO() storage.FileIO { return c.fio }

// TablePath returns the path of a table relative to the warehouse root:
// "<db>.db/<name>" (Paimon's FileSystemCatalog layout, Catalog.DB_SUFFIX).
func TablePath(db, name string) (string, error) {
	for _, n := range []struct{ what, v string }{{"database", db}, {"table", name}} {
		if n.v == "" || n.v == "." || n.v == ".." || strings.ContainsAny(n.v, "/\\\x00") {
			return "", fmt.Errorf("%w: %s name %q", ErrInvalidName, n.what, n.v)
		}
	}
	return db + ".db/" + name, nil
}

// TableSpec describes a new append table.
type TableSpec struct {
	// Fields are the columns; their ids are assigned by CreateTable as Java
	// assigns them (the IDs given here are ignored).
	Fields []types.DataField
	// PartitionKeys name top-level fields, in partition order.
	PartitionKeys []string
	// PrimaryKeys make a primary-key table: rows are merged by these
	// columns (which CreateTable makes NOT NULL, as Java does).
	PrimaryKeys []string
	// Options are Paimon table options ("bucket", "file.format", ...);
	// CreateTable adds "bucket" = -1 and "file.format" = parquet when
	// absent.
	Options map[string]string
	// Comment is the table comment; "" writes none.
	Comment string
}

// CreateTable creates the table db.name as schema-0 (written exclusively:
// if the table exists, or another writer creates it first, the error wraps
// ErrTableExists) and returns it opened. The schema must pass Paimon's
// validation (schema.TableSchema.Validate) and use only features lakecore
// writes (CheckWritable, e.g. Parquet data files); the errors wrap
// schema.ErrInvalidSchema and ErrUnsupported.
func (c *Catalog) CreateTable(ctx context.Context, db, name string, spec TableSpec) (*Table, error) {
	p, err := TablePath(db, name)
	if err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	s := spec.schema()
	if err := s.CheckWritable(); err != nil {
		return nil, fmt.Errorf("create table %s.%s: %w", db, name, err)
	}
	created, err := schema.NewManager(c.fio, p).Create(ctx, s)
	if err != nil {
		return nil, err
	}
	return newTable(c.fio, db, name, p, created), nil
}

// Validate checks, without I/O, what CreateTable checks before it writes:
// the schema passes Paimon's validation and uses only features lakecore
// writes. It lets a caller report a bad spec when it is configured rather
// than when the table is created. The errors wrap schema.ErrInvalidSchema
// and ErrUnsupported.
func (spec TableSpec) Validate() error {
	s := spec.schema()
	if err := s.Validate(); err != nil {
		return err
	}
	return s.CheckWritable()
}

// schema is the table schema the spec describes, before Manager.Create
// numbers it.
func (spec TableSpec) schema() *schema.TableSchema {
	var comment *string
	if spec.Comment != "" {
		comment = &spec.Comment
	}
	s := schema.NewTableSchema(spec.Fields, spec.PartitionKeys, spec.Options, comment)
	if len(spec.PrimaryKeys) > 0 {
		s.PrimaryKeys = slices.Clone(spec.PrimaryKeys)
		for i, f := range s.Fields {
			if slices.Contains(s.PrimaryKeys, f.Name) {
				s.Fields[i].Type = f.Type.NotNull()
			}
		}
	}
	return s
}

// OpenTable opens the table db.name with its latest schema. A table without
// a schema file gives ErrTableNotFound; a table whose metadata lakecore
// cannot read (ORC manifests) ErrUnsupported. Primary-key tables open for
// reading (merged as Java merges them), writing through NewKeyValueWriter
// and maintenance; the append writer (NewWriter) wraps ErrPrimaryKeyTable.
func (c *Catalog) OpenTable(ctx context.Context, db, name string) (*Table, error) {
	p, err := TablePath(db, name)
	if err != nil {
		return nil, fmt.Errorf("open table: %w", err)
	}
	s, err := schema.NewManager(c.fio, p).Latest(ctx)
	if err != nil {
		return nil, fmt.Errorf("open table %s.%s: %w", db, name, err)
	}
	if err := checkOpenable(s); err != nil {
		return nil, fmt.Errorf("open table %s.%s: %w", db, name, err)
	}
	return newTable(c.fio, db, name, p, s), nil
}

// checkOpenable refuses what this package cannot serve correctly.
func checkOpenable(s *schema.TableSchema) error {
	if f := s.Opts().ManifestFormat(); f == "orc" {
		return fmt.Errorf("%w: ORC manifests are not supported (manifest.format = %q); lakecore reads Avro manifests only", ErrUnsupported, f)
	}
	return s.CheckReadable()
}

// Open opens the table db.table of the warehouse at a URI with the default
// S3 configuration (the SDK's credential chain and region): the few-lines
// API. Use OpenCatalog for other S3 settings.
func Open(ctx context.Context, warehouse, db, table string) (*Table, error) {
	c, err := OpenCatalog(ctx, warehouse, storage.S3Config{})
	if err != nil {
		return nil, err
	}
	return c.OpenTable(ctx, db, table)
}
