// Package pgcdc is the Benthos `pg_cdc` input: it snapshots PostgreSQL
// tables through a replication slot's exported snapshot, then streams their
// changes with the pgoutput protocol (v1, or v2 with large transactions
// streamed while in progress), one structured message per changed row, and
// confirms a position to the slot only once every message up to it is
// acknowledged downstream (docs/POSTGRES_CDC.md).
//
// Files: config.go (the config spec and ParseConfig), types.go (Postgres
// types to Paimon types and message values), tables.go (the captured tables
// and their schema metadata), setup.go (start checks, publication and
// slot), snapshot.go (snapshot workers), stream.go (the pgoutput stream),
// inprogress.go (protocol 2's streamed transactions), spool.go (their
// changes until they commit, spilled to local files beyond a memory bound),
// tracker.go (acks to the slot's flush position), input.go (registration,
// Connect/ReadBatch/Close, metrics).
package pgcdc

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

// Field names.
const (
	fieldDSN                = "dsn"
	fieldTables             = "tables"
	fieldSchema             = "schema"
	fieldPublication        = "publication"
	fieldCreatePublication  = "create_publication"
	fieldSlotName           = "slot_name"
	fieldCreateSlot         = "create_slot"
	fieldTemporarySlot      = "temporary_slot"
	fieldSnapshot           = "snapshot"
	fieldSnapshotWorkers    = "snapshot_workers"
	fieldSnapshotChunkPages = "snapshot_chunk_pages"
	fieldSnapshotBatchSize  = "snapshot_batch_size"
	fieldMaxTxnRows         = "max_transaction_rows"
	fieldMaxBatchRows       = "max_batch_rows"
	fieldTruncate           = "truncate"
	fieldToast              = "toast"
	fieldDecimalFallback    = "decimal_fallback"
	fieldHeartbeatInterval  = "heartbeat_interval"
	fieldStatusInterval     = "status_interval"
	fieldSlotMonitor        = "slot_monitor_interval"
	fieldAutoReplayNacks    = "auto_replay_nacks"
	fieldStreamInProgress   = "stream_in_progress"
	fieldStreamMemory       = "stream_buffer_memory"
	fieldStreamSpillDir     = "stream_spill_directory"
)

// SnapshotMode is the snapshot field.
type SnapshotMode string

// The snapshot modes.
const (
	SnapshotInitial     SnapshotMode = "initial"
	SnapshotNever       SnapshotMode = "never"
	SnapshotInitialOnly SnapshotMode = "initial_only"
)

// TruncatePolicy is the truncate field.
type TruncatePolicy string

// The truncate policies.
const (
	TruncateError  TruncatePolicy = "error"
	TruncateIgnore TruncatePolicy = "ignore"
	// TruncateDeleteAll emits a message with operation "truncate" at the
	// TRUNCATE's place in its transaction, which the paimon output turns
	// into an OVERWRITE snapshot emptying the table.
	TruncateDeleteAll TruncatePolicy = "delete_all"
)

// ToastPolicy is the toast field: what an unchanged TOAST value that the
// stream does not carry becomes.
type ToastPolicy string

// The toast policies.
const (
	ToastError ToastPolicy = "error"
	ToastNull  ToastPolicy = "null"
)

// StreamMode is the stream_in_progress field: whether the server streams
// large transactions before they commit (pgoutput protocol 2, PostgreSQL
// 14+).
type StreamMode string

// The stream_in_progress modes.
const (
	// StreamAuto streams in-progress transactions when the server is 14 or
	// later, and uses protocol 1 on 13.
	StreamAuto StreamMode = "auto"
	// StreamOn requires streaming: a server before 14 is refused at Connect.
	StreamOn StreamMode = "on"
	// StreamOff uses protocol 1: the server decodes a transaction whole, to
	// its own disk beyond logical_decoding_work_mem, and sends it at commit.
	StreamOff StreamMode = "off"
)

// Config is the parsed configuration.
type Config struct {
	DSN               string
	Tables            []TableName // schema-qualified; empty with Schema
	Schema            string
	Publication       string
	CreatePublication bool
	SlotName          string
	CreateSlot        bool
	TemporarySlot     bool
	Snapshot          SnapshotMode
	SnapshotWorkers   int
	SnapshotChunk     int // pages per snapshot chunk
	SnapshotBatchSize int
	MaxTxnRows        int
	MaxBatchRows      int
	Truncate          TruncatePolicy
	Toast             ToastPolicy
	DecimalFallback   DecimalFallback
	HeartbeatInterval time.Duration
	StatusInterval    time.Duration
	SlotMonitor       time.Duration
	StreamInProgress  StreamMode
	StreamMemory      int64  // bytes of streamed changes held in memory before they spill
	StreamSpillDir    string // base of the spill directory; "" for os.TempDir()
}

// TableName is a schema-qualified table name.
type TableName struct{ Schema, Name string }

func (n TableName) String() string { return n.Schema + "." + n.Name }

// quoted is the name as an SQL identifier.
func (n TableName) quoted() string { return quoteIdent(n.Schema) + "." + quoteIdent(n.Name) }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// slotNameRE is what Postgres accepts as a slot name (ReplicationSlotValidateName).
var slotNameRE = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

const inputDescription = `
Captures changes of PostgreSQL tables (13+, tested on 15) through logical replication with the built-in ` + "`pgoutput`" + `
plugin: first a consistent snapshot of the tables (` + "`operation: read`" + `), then every committed insert, update and
delete, in commit order, one message per changed row. On PostgreSQL 14 and later the server streams a large
transaction while it runs (protocol 2, ` + "`stream_in_progress`" + `) instead of spilling it to its own disk; the input
keeps it and emits it only at its commit, exactly as an unstreamed one.

The message is a JSON object of the row's columns (the new row; for a delete the old key, or the whole old row under
` + "`REPLICA IDENTITY FULL`" + `), with values in the forms the ` + "`paimon`" + ` output takes, so that
` + "`pg_cdc`" + ` → ` + "`paimon`" + ` into a primary-key table needs no mapping: the output reads
` + "`operation`" + ` as the row kind (read/insert → +I, update → +U, delete → -D).

== Delivery

The slot's confirmed position moves only to the end of the last transaction whose messages, and every message before
them, have been acknowledged: a crash or restart replays everything not yet acknowledged and loses nothing. Replays
are recognisable by ` + "`lsn_position`" + `, which strictly increases over the stream; the ` + "`paimon`" + ` output's
` + "`source_position`" + ` drops what it already committed, making the pair exactly-once. The snapshot is taken from
the slot's exported snapshot, and streaming starts only after every snapshot row is acknowledged.

== Errors that stop the stream, and errors that are retried

An error that retrying cannot fix ends the input, and ` + "`benthos-paimon`" + ` stops the stream gracefully and exits
with code 1, printing the error last: a DSN that does not parse, a failed authentication (SQLSTATE class 28), an unknown
database (3D000), missing privileges (42501: no ` + "`REPLICATION`" + ` attribute, no ` + "`SELECT`" + ` on a table, a
publication the role may not create), a server older than 13 or without ` + "`wal_level = logical`" + `, a missing table,
one without a primary key or with ` + "`REPLICA IDENTITY NOTHING`" + `, a missing publication or slot that may not be
created, a publication that lacks a table, an invalidated slot (` + "`wal_status`" + ` lost, 55000), a TRUNCATE
under ` + "`truncate: error`" + ` and an unchanged TOAST value under ` + "`toast: error`" + ` (the slot would deliver them
again on every restart). Other errors (refused connections,
a server shutting down or starting up, too many connections, a slot another connection still holds) are retried after
500ms, then after twice the previous wait, up to at most 30s; each log line says which failure in a row it is and when
the next attempt comes. A session that fails after it started (the connection lost) starts again from the slot's
confirmed position.

== Metadata

` + "`table`" + `, ` + "`pg_schema`" + `, ` + "`operation`" + ` (read, insert, update, delete; truncate under ` + "`truncate: delete_all`" + `), ` + "`lsn`" + ` (end LSN
of the transaction's commit, X/Y; the snapshot's point for read rows), ` + "`lsn_seq`" + ` (1, 2, … within the
transaction or snapshot chunk), ` + "`lsn_position`" + ` (streamed rows: the commit end LSN as a decimal number,
a dot, lsn_seq; empty for read rows), ` + "`xid`" + `, ` + "`commit_ts_ms`" + `, ` + "`pk`" + ` (primary-key columns, comma-separated),
` + "`before`" + ` (the old key or row, when Postgres sends one), ` + "`unchanged_toast`" + ` (columns set to null by
` + "`toast: null`" + `), ` + "`replica_identity`" + ` (default, full, index), ` + "`snapshot_chunk`" + ` (read rows),
` + "`schema`" + ` (the table as a Benthos common schema) and ` + "`paimon_types`" + ` (column → Paimon type).
See docs/POSTGRES_CDC.md for the full contract, the type mapping, privileges and failure handling.
`

// ConfigSpec returns the input's config spec.
func ConfigSpec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Summary("Streams the changes of PostgreSQL tables (snapshot, then logical replication with pgoutput), acknowledging them to the replication slot only after delivery.").
		Description(inputDescription).
		Fields(
			service.NewStringField(fieldDSN).
				Description("The connection string (URL or key=value). The user needs `REPLICATION` and `SELECT` on the tables; see docs/POSTGRES_CDC.md for privileges and pg_hba.").
				Example("postgres://cdc:secret@db.internal:5432/shop?sslmode=require").
				Secret(),
			service.NewStringListField(fieldTables).
				Description("The tables to capture, schema-qualified (`public.orders`). Empty with `schema`: every table of that schema.").
				Default([]any{}).
				Example([]any{"public.orders", "public.customers"}),
			service.NewStringField(fieldSchema).
				Description("Capture every table of this Postgres schema (when `tables` is empty). Under a publication `FOR TABLES IN SCHEMA`, "+
					"a table created in the schema while the input runs is captured from its first change.").
				Default(""),
			service.NewStringField(fieldPublication).
				Description("The publication to stream; empty uses `slot_name`.").
				Default(""),
			service.NewBoolField(fieldCreatePublication).
				Description("Create the publication `FOR TABLE` the captured tables when it is missing (needs table ownership). If false, or when creating it fails, the error prints the SQL to run.").
				Default(true),
			service.NewStringField(fieldSlotName).
				Description("The logical replication slot: lower-case letters, digits and `_`.").
				Example("paimon_orders"),
			service.NewBoolField(fieldCreateSlot).
				Description("Create the slot when it is missing. If false, a missing slot is an error printing the SQL to create it.").
				Default(true),
			service.NewBoolField(fieldTemporarySlot).
				Description("Use a temporary slot, dropped when the connection ends: nothing is retained on the server, and every start snapshots afresh.").
				Default(false).
				Advanced(),
			service.NewStringEnumField(fieldSnapshot, string(SnapshotInitial), string(SnapshotNever), string(SnapshotInitialOnly)).
				Description("`initial`: snapshot the tables when the slot is created (or when an earlier snapshot did not finish), then stream. `never`: stream only. `initial_only`: snapshot without a slot, then end.").
				Default(string(SnapshotInitial)),
			service.NewIntField(fieldSnapshotWorkers).
				Description("Connections reading the snapshot in parallel, each importing the same exported snapshot.").
				Default(2),
			service.NewIntField(fieldSnapshotChunkPages).
				Description("Table pages (8 kB blocks) per snapshot chunk, read by ctid range.").
				Default(1024).
				Advanced(),
			service.NewIntField(fieldSnapshotBatchSize).
				Description("Rows per message batch during the snapshot.").
				Default(1000).
				Advanced(),
			service.NewIntField(fieldMaxTxnRows).
				Description("A transaction is one message batch unless it has more rows than this; then it is split into batches of this many rows (bounding memory).").
				Default(100000).
				Advanced(),
			service.NewIntField(fieldMaxBatchRows).
				Description("Small transactions already received are combined into one batch of at most this many rows (whole transactions only).").
				Default(10000).
				Advanced(),
			service.NewStringEnumField(fieldTruncate, string(TruncateError), string(TruncateIgnore), string(TruncateDeleteAll)).
				Description("What a `TRUNCATE` of a captured table does: `error` stops the stream with an error naming the table (nothing is confirmed past it); `ignore` skips it with a warning (downstream keeps the rows); `delete_all` emits one message with `operation: truncate` and an empty body per truncated table, in its place among the transaction's changes, which the `paimon` output (with `row_kind: ${! @operation }` or the operation metadata) commits as an OVERWRITE snapshot that deletes every row of the table, as Paimon's own `TRUNCATE TABLE` does.").
				Default(string(TruncateError)),
			service.NewStringEnumField(fieldToast, string(ToastError), string(ToastNull)).
				Description("An update that leaves a TOASTed value unchanged does not carry it unless the table has `REPLICA IDENTITY FULL`. `error` stops with an error naming the table and column; `null` sends null and lists the column in `unchanged_toast`.").
				Default(string(ToastError)),
			service.NewStringEnumField(fieldDecimalFallback, string(DecimalString), string(DecimalError)).
				Description("A `numeric` column no Paimon DECIMAL holds (no precision, precision above 38, negative scale): `string` types it STRING with the exact text; `error` refuses to start.").
				Default(string(DecimalString)),
			service.NewDurationField(fieldHeartbeatInterval).
				Description("How often to write a `pg_logical_emit_message` heartbeat so that the slot advances while the captured tables are idle but others write WAL. `0s` disables it.").
				Default("5m"),
			service.NewDurationField(fieldStatusInterval).
				Description("How often to send the slot's confirmed position (standby status) to the server; must stay below its `wal_sender_timeout`.").
				Default("10s").
				Advanced(),
			service.NewDurationField(fieldSlotMonitor).
				Description("How often to read the slot's WAL retention from `pg_replication_slots` (metrics `pg_cdc_slot_retained_bytes` and `pg_cdc_slot_safe_wal_bytes`; a warning when `wal_status` leaves `reserved`). `0s` disables it.").
				Default("30s").
				Advanced(),
			service.NewStringEnumField(fieldStreamInProgress, string(StreamAuto), string(StreamOn), string(StreamOff)).
				Description("Whether the server streams a large transaction while it is still in progress (pgoutput protocol 2 with `streaming`, the option `CREATE SUBSCRIPTION … WITH (streaming = on)` sets for Postgres' own subscribers). "+
					"Streamed, a transaction larger than the server's `logical_decoding_work_mem` is sent in chunks as it is written instead of being spilled to the server's disk and sent after its commit; "+
					"the input keeps the chunks (in memory up to `stream_buffer_memory`, then in local files) and emits nothing of the transaction before its commit, exactly as an unstreamed one, "+
					"and drops them if it aborts. `auto`: stream on PostgreSQL 14 and later, protocol 1 on 13. `on`: stream, refusing a server before 14. `off`: protocol 1.").
				Default(string(StreamAuto)),
			service.NewStringField(fieldStreamMemory).
				Description("Memory for the changes of streamed transactions not yet committed, all together; beyond it, the largest is written to a local file (see `stream_in_progress`). A size such as `64mb`.").
				Default("64mb").
				Advanced(),
			service.NewStringField(fieldStreamSpillDir).
				Description("Where the files of streamed transactions beyond `stream_buffer_memory` go: a directory of the input's own is made under it and removed when the input closes (one left by a killed process is removed by the next start). Empty: the system's temporary directory.").
				Default("").
				Advanced(),
			service.NewAutoRetryNacksToggleField(),
		).
		LintRule(`root = if this.tables.or([]).length() == 0 && this.schema.or("") == "" { [ "tables must not be empty when schema is not set (one of tables or schema is required)" ] }`).
		Example("Orders into Paimon", "Snapshot then stream `public.orders` into a primary-key table; the output takes the row kind from `operation`.", `
input:
  pg_cdc:
    dsn: postgres://cdc:secret@localhost:5432/shop
    tables: [ public.orders ]
    slot_name: paimon_orders
output:
  paimon:
    warehouse: /var/lib/lake
    database: shop
    table: orders
    create_table:
      enabled: true
      schema:
        - { name: order_id, type: BIGINT }
        - { name: status, type: STRING }
        - { name: amount, type: "DECIMAL(10, 2)" }
      primary_keys: [ order_id ]
      bucket: 4
`).
		Example("A whole schema, changes only", "Stream every table of the `sales` schema from now on, without a snapshot, through a publication an administrator created.", `
input:
  pg_cdc:
    dsn: postgres://cdc:secret@localhost:5432/shop
    schema: sales
    publication: sales_cdc
    create_publication: false
    slot_name: sales_cdc
    snapshot: never
    heartbeat_interval: 1m
output:
  drop: {}
`).
		Example("A one-off copy", "Read the tables once on one consistent snapshot (no slot, no publication) and stop.", `
input:
  pg_cdc:
    dsn: postgres://cdc:secret@localhost:5432/shop
    tables: [ public.orders, public.customers ]
    slot_name: unused
    snapshot: initial_only
    snapshot_workers: 4
output:
  drop: {}
`)
}

// ParseConfig reads and checks a parsed config.
func ParseConfig(conf *service.ParsedConfig) (Config, error) {
	var c Config
	var err error
	str := func(name string, dst *string) {
		if err == nil {
			*dst, err = conf.FieldString(name)
		}
	}
	boolean := func(name string, dst *bool) {
		if err == nil {
			*dst, err = conf.FieldBool(name)
		}
	}
	integer := func(name string, dst *int) {
		if err == nil {
			*dst, err = conf.FieldInt(name)
		}
	}
	dur := func(name string, dst *time.Duration) {
		if err == nil {
			*dst, err = conf.FieldDuration(name)
		}
	}
	var snapshot, truncate, toast, fb, streamMode, streamMem string
	str(fieldDSN, &c.DSN)
	str(fieldSchema, &c.Schema)
	str(fieldPublication, &c.Publication)
	boolean(fieldCreatePublication, &c.CreatePublication)
	str(fieldSlotName, &c.SlotName)
	boolean(fieldCreateSlot, &c.CreateSlot)
	boolean(fieldTemporarySlot, &c.TemporarySlot)
	str(fieldSnapshot, &snapshot)
	integer(fieldSnapshotWorkers, &c.SnapshotWorkers)
	integer(fieldSnapshotChunkPages, &c.SnapshotChunk)
	integer(fieldSnapshotBatchSize, &c.SnapshotBatchSize)
	integer(fieldMaxTxnRows, &c.MaxTxnRows)
	integer(fieldMaxBatchRows, &c.MaxBatchRows)
	str(fieldTruncate, &truncate)
	str(fieldToast, &toast)
	str(fieldDecimalFallback, &fb)
	dur(fieldHeartbeatInterval, &c.HeartbeatInterval)
	dur(fieldStatusInterval, &c.StatusInterval)
	dur(fieldSlotMonitor, &c.SlotMonitor)
	str(fieldStreamInProgress, &streamMode)
	str(fieldStreamMemory, &streamMem)
	str(fieldStreamSpillDir, &c.StreamSpillDir)
	if err != nil {
		return c, err
	}
	c.Snapshot, c.Truncate, c.Toast, c.DecimalFallback = SnapshotMode(snapshot), TruncatePolicy(truncate), ToastPolicy(toast), DecimalFallback(fb)
	c.StreamInProgress = StreamMode(streamMode)
	if c.StreamMemory, err = schema.ParseMemorySize(streamMem); err != nil {
		return c, fmt.Errorf("%s: %w", fieldStreamMemory, err)
	}
	tables, err := conf.FieldStringList(fieldTables)
	if err != nil {
		return c, err
	}
	for _, t := range tables {
		s, n, ok := strings.Cut(t, ".")
		if !ok || s == "" || n == "" || strings.Contains(n, ".") {
			return c, fmt.Errorf("%s: %q is not schema-qualified (schema.table)", fieldTables, t)
		}
		c.Tables = append(c.Tables, TableName{Schema: s, Name: n})
	}
	switch {
	case len(c.Tables) == 0 && c.Schema == "":
		return c, errors.New("tables must not be empty when schema is not set (one of tables or schema is required)")
	case !slotNameRE.MatchString(c.SlotName):
		return c, fmt.Errorf("%s %q: use 1 to 63 lower-case letters, digits and _ (what Postgres accepts)", fieldSlotName, c.SlotName)
	case c.SnapshotWorkers < 1 || c.SnapshotChunk < 1 || c.SnapshotBatchSize < 1 || c.MaxTxnRows < 1 || c.MaxBatchRows < 1:
		return c, errors.New("snapshot_workers, snapshot_chunk_pages, snapshot_batch_size, max_transaction_rows and max_batch_rows must be positive")
	case c.StatusInterval <= 0:
		return c, errors.New("status_interval must be positive")
	}
	if c.Publication == "" {
		c.Publication = c.SlotName
	}
	return c, nil
}
