package pgcdc

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/redpanda-data/benthos/v4/public/schema"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// column is one column of a captured table.
type column struct {
	name string
	typ  colType
	pk   bool
}

// table is a captured table as the input renders its rows: columns in
// attribute order (without dropped and generated columns, as pgoutput sends
// them), the primary key from the catalogue (pgoutput's key flags mark the
// replica identity, which under FULL is every column), and the schema
// metadata shared by all its messages.
type table struct {
	name     TableName
	relID    uint32
	identity string // default, full, index, nothing
	// partitioned: a partitioned table, whose changes pgoutput reports
	// under its own name only with publish_via_partition_root.
	partitioned bool
	// selectable: the session's role may SELECT from the table, as the
	// snapshot does (read by catalogTable; unset for a table met in the
	// stream).
	selectable bool
	columns    []column
	pk         []string
	pkText     string
	common     any            // Benthos common schema (schema metadata)
	paimon     map[string]any // column → Paimon type (paimon_types metadata)
	// streamTemplate holds every metadata key of a streamed message, the
	// per-table ones set: each message is a copy, whose metadata map is
	// cloned once at its final size on the first per-row write (Benthos'
	// copy-on-write) instead of growing key by key.
	streamTemplate *service.Message
}

// identityName is relreplident (or the Relation message's byte) spelled out.
func identityName(b byte) string {
	switch b {
	case 'd':
		return "default"
	case 'f':
		return "full"
	case 'i':
		return "index"
	case 'n':
		return "nothing"
	}
	return string(b)
}

// finish computes the derived fields once the columns and key are known.
func (t *table) finish() {
	t.pkText = strings.Join(t.pk, ",")
	pk := map[string]bool{}
	for _, k := range t.pk {
		pk[k] = true
	}
	c := schema.Common{Name: t.name.Name, Type: schema.Object}
	t.paimon = make(map[string]any, len(t.columns))
	for i := range t.columns {
		col := &t.columns[i]
		col.pk = pk[col.name]
		child := schema.Common{Name: col.name, Type: col.typ.common, Optional: !col.pk}
		if col.typ.kind == kArray {
			child.Children = []schema.Common{{Type: col.typ.elem.common, Optional: true}}
		}
		c.Children = append(c.Children, child)
		pt := col.typ.paimon
		if col.pk {
			pt += " NOT NULL"
		}
		t.paimon[col.name] = pt
	}
	common := c.ToAny()
	// Each field also names its exact Paimon type (paimon_type), which
	// the paimon output's table creation prefers to the common type.
	for i, child := range common.(map[string]any)["children"].([]any) {
		child.(map[string]any)["paimon_type"] = t.paimon[t.columns[i].name]
	}
	t.common = common
	m := service.NewMessage(nil)
	setTableMeta(m, t, "")
	for _, k := range []string{"lsn", "lsn_seq", "xid", "commit_ts_ms", "lsn_position"} {
		m.MetaSetMut(k, nil)
	}
	t.streamTemplate = m
}

// catalogTable reads a table's columns, primary key and replica identity
// from the catalogue; the types are decided by typeOf exactly as for
// Relation messages.
func catalogTable(ctx context.Context, conn *pgx.Conn, n TableName, fb DecimalFallback, dr *domainResolver) (*table, error) {
	var relID uint32
	var ident string
	var partitioned, selectable bool
	err := conn.QueryRow(ctx, `SELECT c.oid, c.relreplident::text, c.relkind = 'p', has_table_privilege(c.oid, 'SELECT')
		FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
		WHERE s.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')`, n.Schema, n.Name).Scan(&relID, &ident, &partitioned, &selectable)
	if err == pgx.ErrNoRows {
		return nil, permanentf("table %s does not exist (or is not a table)", n)
	}
	if err != nil {
		return nil, fmt.Errorf("look up table %s: %w", n, err)
	}
	t := &table{name: n, relID: relID, identity: identityName(ident[0]), partitioned: partitioned, selectable: selectable}
	rows, err := conn.Query(ctx, `SELECT attname, atttypid, atttypmod FROM pg_attribute
		WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`, relID)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", n, err)
	}
	type attr struct {
		name   string
		oid    uint32
		typmod int32
	}
	var attrs []attr
	for rows.Next() {
		var a attr
		if err := rows.Scan(&a.name, &a.oid, &a.typmod); err != nil {
			rows.Close()
			return nil, err
		}
		attrs = append(attrs, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("columns of %s: %w", n, err)
	}
	for _, a := range attrs {
		oid, typmod, err := dr.resolve(ctx, conn, a.oid, a.typmod)
		if err != nil {
			return nil, fmt.Errorf("table %s column %s: %w", n, a.name, err)
		}
		typ, err := typeOf(oid, typmod, fb)
		if err != nil {
			return nil, permanentf("table %s column %s: %w (decimal_fallback: error)", n, a.name, err)
		}
		t.columns = append(t.columns, column{name: a.name, typ: typ})
	}
	if t.pk, err = primaryKey(ctx, conn, relID); err != nil {
		return nil, fmt.Errorf("primary key of %s: %w", n, err)
	}
	t.finish()
	return t, nil
}

func primaryKey(ctx context.Context, conn *pgx.Conn, relID uint32) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT a.attname FROM pg_index i
		JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = $1 AND i.indisprimary ORDER BY k.ord`, relID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
