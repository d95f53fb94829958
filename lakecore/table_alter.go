package lakecore

import (
	"context"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

// Alter sets and resets table options and adds columns as one new schema
// version, with Java's rules (schema.Manager.Alter; the checks that apply
// once a table has snapshots apply when it has one). The table's schema is
// refreshed afterwards. It returns the schema now in force.
func (t *Table) Alter(ctx context.Context, a schema.Alteration) (*schema.TableSchema, error) {
	_, has, err := t.snapshots.LatestID(ctx)
	if err != nil {
		return nil, fmt.Errorf("alter %s.%s: %w", t.db, t.name, err)
	}
	s, err := t.schemas.Alter(ctx, a, has)
	if err != nil {
		return nil, err
	}
	if err := t.Refresh(ctx); err != nil {
		return s, err
	}
	return s, nil
}
