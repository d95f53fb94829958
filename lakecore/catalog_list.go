package lakecore

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

// dbSuffix ends a database directory (Catalog.DB_SUFFIX).
const dbSuffix = ".db"

// ListDatabases returns the databases of the warehouse, sorted: the
// directories "<name>.db" at its root (FileSystemCatalog.listDatabasesImpl).
// On S3 a database exists once it holds a file.
func (c *Catalog) ListDatabases(ctx context.Context) ([]string, error) {
	infos, err := c.fio.List(ctx, "", false)
	if err != nil {
		return nil, fmt.Errorf("list databases: %w", err)
	}
	var out []string
	for _, fi := range infos {
		name, ok := strings.CutSuffix(path.Base(fi.Path), dbSuffix)
		if fi.IsDir && ok && name != "" {
			out = append(out, name)
		}
	}
	return out, nil
}

// ListTables returns the tables of database db, sorted: its directories
// that hold at least one schema file (FileSystemCatalog.listTablesImpl,
// tableExistsInFileSystem). A missing database has no tables.
func (c *Catalog) ListTables(ctx context.Context, db string) ([]string, error) {
	if _, err := TablePath(db, "x"); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	infos, err := c.fio.List(ctx, db+dbSuffix, false)
	if err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", db, err)
	}
	var out []string
	for _, fi := range infos {
		if !fi.IsDir {
			continue
		}
		ids, err := schema.NewManager(c.fio, fi.Path).ListIDs(ctx)
		if err != nil {
			return nil, fmt.Errorf("list tables of %s: %w", db, err)
		}
		if len(ids) > 0 {
			out = append(out, path.Base(fi.Path))
		}
	}
	return out, nil
}
