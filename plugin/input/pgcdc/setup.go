package pgcdc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// startupParams are set on every connection (startup packet options), so
// that the walsender's and the snapshot readers' output functions print
// values in one form whatever the server's or role's defaults (§5.2), and
// so that no timeout kills an exported snapshot or a long chunk (§5.4).
var startupParams = map[string]string{
	"TimeZone":                            "UTC",
	"DateStyle":                           "ISO",
	"IntervalStyle":                       "iso_8601",
	"extra_float_digits":                  "3",
	"bytea_output":                        "hex",
	"lc_monetary":                         "C",
	"idle_in_transaction_session_timeout": "0",
	"statement_timeout":                   "0",
	"lock_timeout":                        "0",
}

// queryConfig parses dsn into the config of an ordinary connection with
// the startup parameters set.
func queryConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	for k, v := range startupParams {
		cfg.RuntimeParams[k] = v
	}
	return cfg, nil
}

func queryConn(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := queryConfig(dsn)
	if err != nil {
		return nil, permanentf("dsn: %v", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return conn, nil
}

func replicationConn(ctx context.Context, dsn string) (*pgconn.PgConn, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, permanentf("dsn: %v", err)
	}
	for k, v := range startupParams {
		cfg.RuntimeParams[k] = v
	}
	cfg.RuntimeParams["replication"] = "database"
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect for replication (the user needs the REPLICATION attribute and a pg_hba line for the database, not `replication`): %w", err)
	}
	return conn, nil
}

// slotState is a row of pg_replication_slots.
type slotState struct {
	exists         bool
	plugin, db     string
	walStatus      string
	active         bool
	confirmedFlush pglogrepl.LSN
}

func readSlot(ctx context.Context, conn *pgx.Conn, name string) (slotState, error) {
	var s slotState
	var plugin, db, walStatus, flush *string
	err := conn.QueryRow(ctx, `SELECT plugin, database, wal_status, active, confirmed_flush_lsn::text
		FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&plugin, &db, &walStatus, &s.active, &flush)
	if err == pgx.ErrNoRows {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read slot %s: %w", name, err)
	}
	s.exists = true
	s.plugin, s.db, s.walStatus = deref(plugin), deref(db), deref(walStatus)
	if flush != nil {
		if s.confirmedFlush, err = pglogrepl.ParseLSN(*flush); err != nil {
			return s, err
		}
	}
	return s, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// markerName is the physical slot that marks "snapshot not finished" for
// slot: created before the logical slot, dropped once every snapshot row is
// acknowledged. A physical slot created without reserving WAL retains
// nothing and survives crashes, so it is a free, server-side flag
// (docs/POSTGRES_CDC.md "A snapshot cut short").
func markerName(slot string) string {
	if len(slot) > 54 {
		slot = slot[:54]
	}
	return slot + "_snapshot"
}

// resolveTables expands schema into its tables and reads each table's
// definition, refusing tables whose changes cannot be captured; when this
// start will snapshot them (snapshotDue), also those the role may not read.
func (in *Input) resolveTables(ctx context.Context, conn *pgx.Conn, due bool) ([]*table, error) {
	c := in.conf
	names := c.Tables
	if len(names) == 0 {
		rows, err := conn.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
			WHERE s.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname`, c.Schema)
		if err != nil {
			return nil, fmt.Errorf("tables of schema %s: %w", c.Schema, err)
		}
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("tables of schema %s: %w", c.Schema, err)
		}
		if len(tables) == 0 {
			return nil, permanentf("schema %s has no tables", c.Schema)
		}
		for _, t := range tables {
			names = append(names, TableName{Schema: c.Schema, Name: t})
		}
	}
	var out []*table
	for _, n := range names {
		t, err := catalogTable(ctx, conn, n, c.DecimalFallback, in.domains)
		if err != nil {
			return nil, err
		}
		switch {
		case t.identity == "nothing":
			return nil, permanentf("table %s has REPLICA IDENTITY NOTHING: Postgres cannot log its updates and deletes for replication "+
				"(they fail on the source once it is published). Run: ALTER TABLE %s REPLICA IDENTITY DEFAULT (or FULL)", n, n.quoted())
		case t.identity == "index" && !identityCoversKey(ctx, conn, t):
			return nil, permanentf("table %s has REPLICA IDENTITY USING INDEX on an index without all primary-key columns: "+
				"its deletes and key changes would not carry the primary key. Run: ALTER TABLE %s REPLICA IDENTITY DEFAULT (or FULL)", n, n.quoted())
		case len(t.pk) == 0:
			return nil, permanentf("table %s has no primary key: its rows cannot be upserted or deleted by key downstream. Add one: ALTER TABLE %s ADD PRIMARY KEY (...)",
				n, n.quoted())
		}
		if due && !t.selectable {
			// checked before the slot is made: a snapshot that fails on
			// permissions would leave a new slot behind, holding WAL
			var role string
			if err := conn.QueryRow(ctx, "SELECT current_user::text").Scan(&role); err != nil {
				return nil, fmt.Errorf("table %s: SELECT privilege: %w", n, err)
			}
			return nil, permanentf("role %s may not SELECT from table %s, which the snapshot reads (snapshot: %s). Run: GRANT SELECT ON %s TO %s",
				role, n, c.Snapshot, n.quoted(), quoteIdent(role))
		}
		switch {
		case t.identity == "full":
			in.log.Infof("pg_cdc: table %s: REPLICA IDENTITY FULL: updates and deletes carry the whole old row, unchanged TOAST values are filled from it", n)
		default:
			in.log.Infof("pg_cdc: table %s: REPLICA IDENTITY %s: deletes carry the key only; an update leaving a TOASTed value unchanged does not carry it (toast: %s). "+
				"ALTER TABLE %s REPLICA IDENTITY FULL avoids that", n, strings.ToUpper(t.identity), in.conf.Toast, n.quoted())
		}
		out = append(out, t)
	}
	return out, nil
}

// startSlots are the rows of pg_replication_slots a start decides on:
// the slot, and under snapshot: initial (the only mode that uses it) its
// marker slot, which remains while the slot's snapshot did not finish.
// They are read once, before the tables are checked, so that
// resolveTables and ensureSlot decide on the same state.
type startSlots struct{ slot, marker slotState }

func (in *Input) readStartSlots(ctx context.Context, conn *pgx.Conn) (startSlots, error) {
	var s startSlots
	var err error
	if s.slot, err = readSlot(ctx, conn, in.conf.SlotName); err != nil || in.conf.Snapshot != SnapshotInitial {
		return s, err
	}
	s.marker, err = readSlot(ctx, conn, markerName(in.conf.SlotName))
	return s, err
}

// snapshotDue reports whether this start will read the tables: always
// for initial_only, never for never, and for initial when the slot does
// not exist yet or its snapshot did not finish (its marker slot remains;
// see ensureSlot).
func (in *Input) snapshotDue(slots startSlots) bool {
	switch in.conf.Snapshot {
	case SnapshotInitialOnly:
		return true
	case SnapshotNever:
		return false
	}
	return !slots.slot.exists || slots.marker.exists
}

// identityCoversKey reports whether t's replica identity index contains
// every primary-key column (then key tuples carry the primary key).
func identityCoversKey(ctx context.Context, conn *pgx.Conn, t *table) bool {
	rows, err := conn.Query(ctx, `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = $1 AND i.indisreplident`, t.relID)
	if err != nil {
		return false
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false
	}
	for _, k := range t.pk {
		found := false
		for _, c := range cols {
			found = found || c == k
		}
		if !found {
			return false
		}
	}
	return true
}

// checkServer checks the server settings the input needs and warns about
// risky ones; it returns the server's version (server_version_num).
func (in *Input) checkServer(ctx context.Context, conn *pgx.Conn) (int, error) {
	var version int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return 0, fmt.Errorf("read server version: %w", err)
	}
	if version < 130000 {
		// pgoutput exists from 10, but the checks below read
		// max_slot_wal_keep_size and wal_status (13).
		return 0, permanentf("PostgreSQL %d.%d is not supported: pg_cdc needs 13 or later (tested on 15)", version/10000, version%10000/100)
	}
	if version < 140000 {
		in.log.Warnf("pg_cdc: PostgreSQL %d has no TID range scans: each snapshot chunk scans the whole table; use a large snapshot_chunk_pages", version/10000)
	}
	var walLevel, keep string
	if err := conn.QueryRow(ctx, "SELECT current_setting('wal_level'), current_setting('max_slot_wal_keep_size')").Scan(&walLevel, &keep); err != nil {
		return 0, fmt.Errorf("read server settings: %w", err)
	}
	if walLevel != "logical" && in.conf.Snapshot != SnapshotInitialOnly {
		return 0, permanentf("wal_level is %s, logical replication needs wal_level = logical (ALTER SYSTEM SET wal_level = logical; then restart Postgres)", walLevel)
	}
	if keep == "-1" && in.conf.Snapshot != SnapshotInitialOnly && !in.conf.TemporarySlot {
		in.log.Warnf("pg_cdc: max_slot_wal_keep_size = -1: slot %s retains WAL without limit while this pipeline is stopped or behind; "+
			"set a cap (ALTER SYSTEM SET max_slot_wal_keep_size = '50GB') and monitor the slot's lag", in.conf.SlotName)
	}
	return version, nil
}

// ensurePublication checks that the publication exists and covers every
// table, creating it when allowed; otherwise the error prints the SQL.
func (in *Input) ensurePublication(ctx context.Context, conn *pgx.Conn, tables []*table) error {
	pub := in.conf.Publication
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", pub).Scan(&exists); err != nil {
		return fmt.Errorf("look up publication %s: %w", pub, err)
	}
	anyPartitioned := false
	for _, t := range tables {
		anyPartitioned = anyPartitioned || t.partitioned
	}
	if !exists {
		var list []string
		for _, t := range tables {
			list = append(list, t.name.quoted())
		}
		sql := fmt.Sprintf("CREATE PUBLICATION %s FOR TABLE %s", quoteIdent(pub), strings.Join(list, ", "))
		if anyPartitioned {
			sql += " WITH (publish_via_partition_root = true)"
		}
		if !in.conf.CreatePublication {
			return permanentf("publication %s does not exist and create_publication is false; run as the tables' owner: %s", pub, sql)
		}
		if _, err := conn.Exec(ctx, sql); err != nil {
			// Permanent when the role may not create it (42501, isPermanent).
			return fmt.Errorf("publication %s does not exist and creating it failed (%w); run as the tables' owner: %s", pub, err, sql)
		}
		in.log.Infof("pg_cdc: created publication: %s", sql)
		return nil
	}
	if anyPartitioned {
		var viaRoot bool
		if err := conn.QueryRow(ctx, "SELECT pubviaroot FROM pg_publication WHERE pubname = $1", pub).Scan(&viaRoot); err != nil {
			return fmt.Errorf("look up publication %s: %w", pub, err)
		}
		if !viaRoot {
			// Otherwise pgoutput reports the partitions' changes under the
			// partitions' names, which are not captured: they would be lost.
			return permanentf("publication %s publishes the partitions of a partitioned table under their own names; run: ALTER PUBLICATION %s SET (publish_via_partition_root = true)",
				pub, quoteIdent(pub))
		}
	}
	for _, t := range tables {
		var in bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename = $3)",
			pub, t.name.Schema, t.name.Name).Scan(&in); err != nil {
			return fmt.Errorf("look up publication %s: %w", pub, err)
		}
		if !in {
			return permanentf("publication %s does not include table %s; run as its owner: ALTER PUBLICATION %s ADD TABLE %s",
				pub, t.name, quoteIdent(pub), t.name.quoted())
		}
	}
	return nil
}

// slotPlan is what Connect found or made of the slot.
type slotPlan struct {
	// snapshot: rows must be read; snapshotName is the exported snapshot
	// of a slot created now ("" for a fresh snapshot, recipe B).
	snapshot     bool
	snapshotName string
	snapshotLSN  pglogrepl.LSN
	start        pglogrepl.LSN // confirmed_flush_lsn
}

// ensureSlot finds or creates the slot on repl (the replication connection
// that will stream; a temporary slot lives only as long as it), starting
// from slots as readStartSlots read them.
func (in *Input) ensureSlot(ctx context.Context, conn *pgx.Conn, repl *pgconn.PgConn, slots startSlots) (slotPlan, error) {
	c := in.conf
	var p slotPlan
	st := slots.slot
	// A walsender of this input's previous session (a restart after a
	// failure) exits asynchronously after its connection closed: give it
	// a few seconds before calling the slot taken.
	for wait := 0; st.active && wait < 100; wait++ {
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		var err error
		if st, err = readSlot(ctx, conn, c.SlotName); err != nil {
			return p, err
		}
	}
	marker := markerName(c.SlotName)
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		return p, err
	}
	if st.exists {
		switch {
		case c.TemporarySlot:
			return p, permanentf("temporary_slot is set but a slot named %s already exists", c.SlotName)
		case st.plugin != "pgoutput" || st.db != db:
			return p, permanentf("slot %s exists for plugin %q in database %q, not pgoutput in %q", c.SlotName, st.plugin, st.db, db)
		case st.walStatus == "lost":
			return p, permanentf("slot %s was invalidated (wal_status lost: it exceeded max_slot_wal_keep_size) and cannot be repaired; "+
				"drop it (SELECT pg_drop_replication_slot('%s')) and restart to take a new snapshot", c.SlotName, c.SlotName)
		case st.active:
			return p, fmt.Errorf("slot %s is in use by another connection (a second pipeline on the same slot?)", c.SlotName)
		}
		p.start = st.confirmedFlush
		if slots.marker.exists && c.Snapshot == SnapshotInitial {
			// The snapshot of an earlier run did not finish (its exported
			// snapshot died with it): read the tables again on a fresh
			// snapshot and stream from the slot's consistent point; keyed
			// upserts converge (§7.2, recipe B).
			in.log.Warnf("pg_cdc: slot %s exists but its snapshot did not finish (marker slot %s): taking the snapshot again, then streaming from %s", c.SlotName, marker, p.start)
			p.snapshot = true
		}
		return p, nil
	}
	if !c.CreateSlot {
		return p, permanentf("slot %s does not exist and create_slot is false; create it with: SELECT pg_create_logical_replication_slot('%s', 'pgoutput')",
			c.SlotName, c.SlotName)
	}
	p.snapshot = c.Snapshot == SnapshotInitial
	if p.snapshot && !c.TemporarySlot && !slots.marker.exists {
		if _, err := conn.Exec(ctx, "SELECT pg_create_physical_replication_slot($1)", marker); err != nil {
			return p, fmt.Errorf("create snapshot marker slot %s: %w", marker, err)
		}
	}
	action := "NOEXPORT_SNAPSHOT"
	if p.snapshot {
		action = "EXPORT_SNAPSHOT"
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, repl, c.SlotName, "pgoutput", pglogrepl.CreateReplicationSlotOptions{
		Temporary: c.TemporarySlot, SnapshotAction: action, Mode: pglogrepl.LogicalReplication,
	})
	if err != nil {
		return p, fmt.Errorf("create slot %s (CREATE_REPLICATION_SLOT %s LOGICAL pgoutput %s): %w", c.SlotName, c.SlotName, action, err)
	}
	if p.start, err = pglogrepl.ParseLSN(res.ConsistentPoint); err != nil {
		return p, fmt.Errorf("slot %s consistent point %q: %w", c.SlotName, res.ConsistentPoint, err)
	}
	p.snapshotName, p.snapshotLSN = res.SnapshotName, p.start
	in.log.Infof("pg_cdc: created slot %s at %s", c.SlotName, p.start)
	return p, nil
}

// dropMarker records that the snapshot is complete.
func dropMarker(ctx context.Context, conn *pgx.Conn, slot string) error {
	_, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", markerName(slot))
	return err
}
