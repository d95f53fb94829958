// Package output is the Benthos `paimon` batch output: it converts
// structured messages into rows of an Apache Paimon append table (through
// plugin/internal/rowconv), writes them as Parquet data files and commits
// each group of batches as one snapshot, acknowledging the messages only
// after the commit.
//
// config.go holds the component's config spec (ConfigSpec) and its parsing
// into a plain Config (ParseConfig); output.go the BatchOutput, registered
// in init() (and by Register into other environments); committer.go the
// group committer and its failure handling; sequence.go the sequence
// numbers of fixed-bucket tables; maintenance.go the background expiry and
// compaction.
package paimon

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// Field names of the output's config.
const (
	fieldCreateTable     = "create_table"
	fieldCTEnabled       = "enabled"
	fieldCTSchema        = "schema"
	fieldCTColName       = "name"
	fieldCTColType       = "type"
	fieldCTColComment    = "comment"
	fieldCTPartitionKeys = "partition_keys"
	fieldCTBucket        = "bucket"
	fieldCTBucketKey     = "bucket_key"
	fieldCTPrimaryKeys   = "primary_keys"
	fieldRowKind         = "row_kind"
	fieldSourcePosition  = "source_position"
	fieldCDCFormat       = "cdc_format"
	fieldBefore          = "before"
	fieldUnchanged       = "unchanged_columns"
	fieldTableIdle       = "table_idle_timeout"
	fieldSPStream        = "stream"
	fieldSPOffset        = "offset"
	fieldCTOptions       = "options"
	fieldCommitUser      = "commit_user"
	fieldBatching        = "batching"
	fieldKeepBatches     = "keep_input_batches"
	fieldUnknownFields   = "unknown_fields"
	fieldSchemaEvolution = "schema_evolution"
	fieldTimestampUnit   = "timestamp_unit"
	fieldMaintenance     = "maintenance"
	fieldMaintEnabled    = "enabled"
	fieldMaintInterval   = "interval"
	fieldTableMetrics    = "table_metrics"
	fieldPartitionLimit  = "partition_metrics_limit"
	fieldCompaction      = "compaction"
	fieldCompactEnabled  = "enabled"
)

// DefaultMaintenanceInterval is the default of maintenance.interval.
const DefaultMaintenanceInterval = time.Minute

// DefaultPartitionMetricsLimit is the default of
// maintenance.partition_metrics_limit.
const DefaultPartitionMetricsLimit = 100

// DefaultBatchCount and DefaultBatchPeriod are the batch policy of an
// output without a batching setting.
const (
	DefaultBatchCount  = 10000
	DefaultBatchPeriod = "1s"
)

// DefaultMaxInFlight is the default of max_in_flight: batches converted and
// encoded concurrently while one committer gathers the finished ones.
const DefaultMaxInFlight = 4

// Config is the parsed configuration of the paimon output.
type Config struct {
	// Table locates the table (warehouse, database, table, S3 settings).
	Table config.Table
	// CreateTable describes the table to create when it does not exist, and
	// the schema an existing table is checked against.
	CreateTable CreateTable
	// CommitUser is the commitUser of every snapshot this output writes;
	// never empty (DefaultCommitUser when the field is left empty).
	CommitUser string
	// CommitUserSet says commit_user was given; else each table routed
	// to takes DefaultCommitUser of its own name and Label.
	CommitUserSet bool
	// Label is the output's label ("" when unlabelled).
	Label string
	// Route names the table per message when database or table are
	// interpolated (route.go); nil for the one table of Table.
	Route *Route
	// Batching is the Benthos batch policy the constructor returns.
	Batching service.BatchPolicy
	// MaxInFlight is how many batches may be converted and written at once.
	MaxInFlight int
	// Convert holds unknown_fields, schema_evolution and timestamp_unit.
	Convert rowconv.ConvertOptions
	// Maintenance holds maintenance and compaction.
	Maintenance Maintenance
	// RowKind is row_kind: the row kind of each message of a primary-key
	// table; nil reads the operation metadata (RowKindOf).
	RowKind *text
	// SourcePosition is source_position: where each message is in its
	// source, for exactly-once delivery from sources that replay; nil
	// without it.
	SourcePosition *SourcePosition
	// CDCFormat is cdc_format: the envelope messages carry their changes
	// in; empty for native messages (one row each, of kind RowKind).
	CDCFormat cdcformat.Format
	// Before is the before mapping: the row before an update of a native
	// message (written as -U ahead of the +U); nil without it.
	Before *bloblang.Executor
	// UnchangedColumns is unchanged_columns: per native message, the
	// comma-separated columns an update does not carry, kept from the
	// key's current row (unchanged.go); nil without it.
	UnchangedColumns *text
}

// SourcePosition is the source_position object: the stream a message comes
// from and its offset there (position.go).
type SourcePosition struct {
	Stream, Offset *text
}

// Maintenance is the automatic table maintenance the output runs after its
// commits, off the commit path.
type Maintenance struct {
	// Enabled runs snapshot expiry and partition expiry as the table's
	// options ask (maintenance.enabled).
	Enabled bool
	// Interval is the least time between two runs (maintenance.interval).
	Interval time.Duration
	// Compaction also compacts small files (compaction.enabled).
	Compaction bool
	// TableMetrics publishes the files, bytes and rows of the latest
	// snapshot, in total and per partition, after each run
	// (maintenance.table_metrics).
	TableMetrics bool
	// PartitionMetricsLimit bounds the partitions with series of their own
	// (maintenance.partition_metrics_limit); 0 publishes table totals only.
	PartitionMetricsLimit int
}

// active reports whether the maintenance goroutine has work.
func (m Maintenance) active() bool { return m.Enabled || m.Compaction || m.TableMetrics }

// CreateTable is the create_table object.
type CreateTable struct {
	// Enabled creates the table at Connect if it does not exist.
	Enabled bool
	// Fields is the parsed schema, in order, with field ids assigned from 0
	// (nested ROW fields depth-first, as Java's RowType builder numbers
	// them); nil when no schema was given.
	Fields []types.DataField
	// PartitionKeys and BucketKey are column names; Bucket is -1
	// (bucket-unaware) or a positive number of buckets.
	PartitionKeys []string
	Bucket        int
	BucketKey     []string
	// PrimaryKeys make a primary-key table: rows are upserted and deleted
	// by these columns.
	PrimaryKeys []string
	// Options are the Paimon table options as given, passed through verbatim.
	Options map[string]string
	// Inferred marks the spec of a table named per message whose columns
	// came from its first message (createSpec): it says how to create the
	// table if it is missing, but an existing table is not checked against
	// it, since one message's fields are no schema (a later message may
	// carry a column the table gained, or lack one it has); the rows are
	// checked as they are converted (unknown_fields, schema_evolution).
	Inferred bool
}

// TableOptions returns the options to write into schema-0: Options plus
// "bucket" (always explicit), "bucket-key" when set, and
// "file.format"="parquet" unless given (the only format this writer
// produces; explicit so that readers with an older default agree).
func (c CreateTable) TableOptions() map[string]string {
	out := make(map[string]string, len(c.Options)+3)
	for k, v := range c.Options {
		out[k] = v
	}
	out["bucket"] = strconv.Itoa(c.Bucket)
	if len(c.BucketKey) > 0 {
		out["bucket-key"] = strings.Join(c.BucketKey, ",")
	}
	if _, ok := out["file.format"]; !ok {
		out["file.format"] = "parquet"
	}
	return out
}

// DefaultCommitUser is the commit user of an output whose commit_user is
// empty: "benthos-paimon-<database>.<table>", followed by "-<label>" when
// the output has a label. It is stable across restarts of the same config;
// see the commit_user field for why, and for the one rule it implies.
func DefaultCommitUser(t config.Table, label string) string {
	u := "benthos-paimon-" + t.Database + "." + t.Table
	if label != "" {
		u += "-" + label
	}
	return u
}

const outputDescription = `
Each batch of messages becomes rows of an https://paimon.apache.org[Apache Paimon^] table: appended to an append
table, or upserted and deleted by key in a primary-key table (` + "`create_table.primary_keys`" + `, ` + "`row_kind`" + `,
` + "`cdc_format`" + ` for Debezium, Canal, Maxwell and OGG envelopes). The rows are written as Parquet data files into their
partition and bucket directories, and the files of the batches that are ready are committed together as one snapshot
(` + "`snapshot/snapshot-N`" + `), exactly as Java Paimon lays a table out, so that Flink SQL, Spark SQL, Java Paimon, DuckDB or
pypaimon read it, and the ` + "`paimon`" + ` input tails it. An interpolated ` + "`table`" + ` writes many tables from one
output; ` + "`source_position`" + ` makes delivery from a replaying source exactly once.

== Delivery guarantees

Messages are acknowledged only after the snapshot that holds their rows has been committed. A failed commit nacks every
batch in it, so Benthos delivers them again (at-least-once): nothing acknowledged is ever missing from the table. A
commit whose outcome is unknown (a time-out or a dropped connection while the snapshot file was being created) is
resolved before it is retried by looking for a snapshot with this output's ` + "`commit_user`" + ` and the commit's
identifier, as Paimon's own committer does, so a batch that did land is not written twice; if it did not land, the
same files are committed again. Data files are deleted only when their commit definitely failed; those of a commit
whose outcome stays unknown are kept (they may be part of a snapshot), and the orphan-file cleanup removes them if not.

A message that cannot be converted to a row (a string where a number belongs, an integer out of range, a null in a
` + "`NOT NULL`" + ` column, an unknown field with ` + "`unknown_fields: error`" + `, ...) fails alone: the rest of its
batch is committed, and the failed message is nacked with an error that names the field, the value's type and the
column's type, for example ` + "`field \"amount\": cannot convert string \"abc\" to DECIMAL(10, 2): not a decimal number`" + `.
Since such a message fails again on every retry, route failures elsewhere with a ` + "`fallback`" + `,
` + "`reject_errored`" + ` or ` + "`switch`" + ` output.

== Messages to rows

Each message must be a JSON object; its fields are matched to the table's columns by exact (case-sensitive) name, and
a missing field is NULL. The conversions, per column type:

- *Integers* (` + "`TINYINT`, `SMALLINT`, `INT`, `BIGINT`" + `): JSON numbers and numeric strings whose value is a whole
  number in range (` + "`2.0` and `1e3`" + ` are whole, ` + "`2.5`" + ` is an error). Benthos keeps JSON numbers as text, so
  large integers are exact; a floating-point number computed by a Bloblang mapping is accepted only up to 2^53.
- *FLOAT, DOUBLE*: numbers and numeric strings, and the strings ` + "`\"NaN\"`, `\"Infinity\"`, `\"-Infinity\"`" + `.
- *DECIMAL(p, s)*: numbers or numeric strings, converted from their decimal text with no binary rounding
  (` + "`0.1`" + ` is exactly 0.1). More than ` + "`s`" + ` fraction digits or more than ` + "`p`" + ` digits is an error;
  nothing is rounded.
- *BOOLEAN*: ` + "`true`/`false`" + ` and the strings ` + "`\"true\"`/`\"false\"`" + `.
- *STRING, VARCHAR(n), CHAR(n)*: strings (valid UTF-8, at most n characters); any other JSON value is stored as its
  compact JSON text.
- *BYTES, VARBINARY(n), BINARY(n)*: base64 strings or raw bytes (at most n bytes).
- *DATE*: ` + "`\"YYYY-MM-DD\"`" + ` or a number of days since 1970-01-01.
- *TIME(p)*: ` + "`\"HH:MM:SS[.fff]\"`" + ` or milliseconds of the day.
- *TIMESTAMP(p)* and *TIMESTAMP(p) WITH LOCAL TIME ZONE*: RFC 3339 text with 0 to 9 fraction digits
  (` + "`2024-05-30T12:00:00.123456Z`, `2024-05-30 14:00:00+02:00`" + `, or without an offset), or an epoch number in
  ` + "`timestamp_unit`" + ` (milliseconds by default). Text with an offset is converted to UTC; text without an offset
  is taken as UTC. A ` + "`TIMESTAMP`" + ` column therefore stores the UTC wall clock, a ` + "`TIMESTAMP_LTZ`" + ` column
  the instant. Digits beyond the column's precision are truncated. Years 0000 to 9999.
- *ARRAY*: arrays. *MAP*: objects (keys converted from their text), arrays of ` + "`[key, value]`" + ` pairs, or arrays of
  ` + "`{\"key\": k, \"value\": v}`" + ` objects. *MULTISET*: arrays of elements, or the map forms with counts.
  *ROW*: objects by field name (or arrays by position).

The ` + "`paimon`" + ` input renders rows back in exactly these forms, so a ` + "`paimon`" + ` to ` + "`paimon`" + ` pipeline copies
rows unchanged.

== Tables, partitions and buckets

With ` + "`create_table.enabled`" + ` the output creates the table at start-up if it does not exist, from
` + "`create_table.schema`" + ` (types in Paimon's grammar, e.g. ` + "`BIGINT NOT NULL`, `DECIMAL(10, 2)`, `TIMESTAMP(3)`, `ARRAY<STRING>`, `MAP<STRING, INT>`, `ROW<a INT, b STRING>`" + `). If the table exists, or the schema is given
without ` + "`enabled`" + `, the configured columns are checked against the table's and a mismatch stops the output with an
error that lists the differences. For a table named per message (an interpolated ` + "`table`" + ` or ` + "`database`" + `)
without ` + "`create_table.schema`" + `, a missing table is created from its first message, and an existing table is
written as it is: its columns are not checked against that message, whose rows are converted as any other's.

Rows are routed to partitions by ` + "`partition_keys`" + `: each distinct combination of values is a directory
` + "`k1=v1/k2=v2`" + ` named as Java names it (null or blank values go to ` + "`__DEFAULT_PARTITION__`" + `). Derive a
partition column such as ` + "`dt`" + ` from an event time with a mapping before the output. Within a partition,
` + "`bucket: -1`" + ` (the default, bucket-unaware) writes all rows to ` + "`bucket-0`" + ` and lets any number of writers
append concurrently; ` + "`bucket: N`" + ` with a ` + "`bucket_key`" + ` hashes each row's bucket key into one of N buckets
with Paimon's own hash function, so that readers can prune buckets by key.

== Schema evolution

With ` + "`schema_evolution: true`" + `, a message field that is not a column adds a nullable column at the end of the
schema, through a new ` + "`schema/schema-N`" + ` file with Paimon's field-id rules, and the message is written with it.
The column's type is taken from the first non-null value seen: a string becomes ` + "`STRING`" + `, a whole JSON number
` + "`BIGINT`" + `, any other number ` + "`DOUBLE`" + `, a boolean ` + "`BOOLEAN`" + `, and an object or array ` + "`STRING`" + `
holding its JSON text. A field whose value is null adds nothing until a non-null value arrives. Writers racing to add
the same column agree on one schema. Nested fields inside ROW columns follow ` + "`unknown_fields`" + ` instead.

== Atomic commits on S3, and Java writers

A snapshot is committed by creating ` + "`snapshot/snapshot-N`" + ` exclusively: on a local disk with
` + "`renameat2(RENAME_NOREPLACE)`" + ` or ` + "`link(2)`" + `, on S3 with a conditional ` + "`PutObject`" + ` (` + "`If-None-Match: *`" + `),
which AWS S3 and most S3-compatible stores support. No lock service or catalog is needed, and any number of
` + "`paimon`" + ` outputs (each with its own ` + "`commit_user`" + `) can append to one table at once.

Java Paimon does not commit that way on S3: its filesystem catalog relies on a rename, which S3 does not make atomic,
plus an optional Hive or JDBC lock. On a local disk or HDFS, Go and Java writers can share a table. On S3, do not let
Java writers commit into the same table at the same time unless both sides go through the same catalog lock; Java
readers, and Java maintenance jobs that run while no Go writer is active, are always fine.
` + "\n\n== Performance\n\n" + `Up to ` + "`max_in_flight`" + ` batches are converted and written as Parquet at the same
time; one committer gathers every batch that is ready into a single snapshot (group commit), so small batches do not
each cost a snapshot. Larger batches mean fewer, larger data files: tune ` + "`batching`" + ` (for example a period of
a few seconds) rather than committing per message, and compact small files with the maintenance commands. Give
` + "`batching`" + ` a ` + "`period`" + ` whenever it has a ` + "`count`" + `: an input that waits for its acknowledgements
before it ends would otherwise wait for ever on a last, partial batch. For tables with fixed buckets the batches are
converted in parallel but encoded one at a time, because each bucket numbers its rows consecutively.

== When the input ends, or the stream is stopped

Benthos' batcher, which runs in front of the output and applies ` + "`batching`" + `, hands over the last, partial batch
only once the running ` + "`period`" + ` has elapsed since it handed over the previous one. So when the input ends (a
finished file or ` + "`stdin`" + `, a bounded ` + "`paimon`" + ` input) or the stream is stopped (SIGINT, SIGTERM), the
last rows are committed, and the process exits, up to one ` + "`period`" + ` later (10s of ` + "`period: 10s`" + `;
at most 1s with the default policy). The output cannot shorten that wait: Benthos tells an output nothing when its
input ends, and the messages stay in the batcher until it flushes them. If the rest of the period outlasts
` + "`shutdown_timeout`" + ` (20s by default) when the stream is stopped, the stream is stopped hard: that last batch
fails without being acknowledged (an input that delivers again sends it on its next run, an HTTP client gets an
error), and nothing acknowledged is lost. Keep ` + "`period`" + ` short and below ` + "`shutdown_timeout`" + `; a
policy with only a ` + "`count`" + ` is no way around it, since inputs such as ` + "`stdin`" + ` wait for their
acknowledgements before they end, so a partial batch without a period would never be written.

== Errors that stop the stream, and errors that are retried

Whatever can be checked without reading the table (column types, table options and their values, field
combinations) is checked when the output is built, so ` + "`benthos-paimon lint`" + ` and start-up report it with the
field. Connecting fails for good when retrying cannot help: the table does not exist and ` + "`create_table.enabled`" + `
is off, the table does not match ` + "`create_table`" + `, the S3 bucket does not exist, access is denied, or the table
uses a feature this output does not write. For a table named per message, the same errors are met when its first
message arrives, and end the stream the same way; the error names the table and that message. Then the output logs
the error once and ` + "`benthos-paimon`" + ` stops the stream gracefully and exits with code 1, printing the error
last; batches still arriving fail, and a local warehouse directory the output created is removed if it is still
empty. Any other connection error (refused connections, time-outs, 5xx answers) is retried,
after 500ms, then after twice the previous wait, up to at most 30s; each log line says which failure in a row it is
and when the next attempt comes. (Run from Go in a stream without the binary's stop hook, see internal/fatal, the
output keeps reporting an error that retrying cannot fix every 30s.)

== Maintenance

After its commits, in the background and at most once per ` + "`maintenance.interval`" + `, the output removes
consumers not updated for ` + "`consumer.expiration-time`" + ` (when set), then expires old snapshots and (with
` + "`partition.expiration-time`" + `) old partitions as the table's options ask, in the order Java Paimon's writers do;
with ` + "`compaction.enabled`" + ` it also compacts small files. Partition expiry and compaction commit
under the commit user ` + "`<commit_user>-maintenance`" + `. Failures are logged and retried after a later commit; they
never fail a batch. Tables with ` + "`write-only: true`" + ` get only consumer expiry, as in Java; the rest is left to a
dedicated job such as ` + "`benthos-paimon paimon compact`" + ` and ` + "`benthos-paimon paimon expire-snapshots`" + `,
which Paimon advises for tables with heavy write traffic.

== Metrics

Besides Benthos' ` + "`output_*`" + ` metrics: ` + "`paimon_rows_written`" + `, ` + "`paimon_bytes_written`" + ` and
` + "`paimon_files_written`" + ` count what committed snapshots added; ` + "`paimon_commits`" + ` the snapshots committed;
` + "`paimon_commit_retries`" + ` the commit attempts that were retried (another writer took the snapshot id, storage
failed, or the attempt raced snapshot expiry); ` + "`paimon_commit_failures`" + ` the commits that failed (their batches are delivered again);
` + "`paimon_commit_latency_ns`" + ` (timer) the time of each commit; ` + "`paimon_last_snapshot_id`" + ` (gauge) the
latest snapshot committed; ` + "`paimon_rows_rejected`" + ` the messages that could not become rows. With
` + "`maintenance.table_metrics`" + ` (default on) the gauges ` + "`paimon_table_files`" + `, ` + "`paimon_table_bytes`" + `,
` + "`paimon_table_rows`" + `, ` + "`paimon_table_partitions`" + ` and ` + "`paimon_table_partition_files_max`" + ` describe the latest
snapshot, and ` + "`paimon_partition_files`" + ` and ` + "`paimon_partition_bytes`" + ` (label ` + "`partition`" + `) up to
` + "`maintenance.partition_metrics_limit`" + ` of its partitions; they are updated after each maintenance run.
` + "`paimon_snapshots_expired`" + `, ` + "`paimon_partitions_expired`" + `, ` + "`paimon_compactions`" + `,
` + "`paimon_compaction_files_rewritten`" + `, ` + "`paimon_compaction_bytes_rewritten`" + ` and
` + "`paimon_compaction_files_written`" + ` count what the automatic maintenance did, ` + "`paimon_maintenance_failures`" + ` its failures.`

// ConfigSpec returns the complete config spec of the paimon output.
func ConfigSpec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Version("0.1.0").
		Summary("Appends messages as rows to an Apache Paimon table on a local disk or S3, committing one snapshot per group of batches and acknowledging messages only after the commit.").
		Description(outputDescription).
		Fields(config.RoutedTableFields()...).
		Fields(
			createTableField(),
			service.NewInterpolatedStringField(fieldRowKind).
				Description("The row kind of each message, for primary-key tables: `+I` (insert), `+U` (update), "+
					"`-U` (the row before an update) or `-D` (delete), or the operation words `insert`, `read`, "+
					"`update`, `update_after`, `update_before` and `delete`. Empty (the default) reads the `operation` "+
					"metadata that Benthos CDC inputs set (`read`/`insert` -> `+I`, `update` -> `+U`, `delete` -> `-D`) and "+
					"takes `+I` where there is none. A delete needs only the primary-key columns. `truncate` (what `pg_cdc` "+
					"sends under `truncate: delete_all`) deletes every row of the table at its place in the batch: the "+
					"batch is committed as one OVERWRITE snapshot that deletes every file of the table and adds the rows "+
					"of the messages after it (the messages before it are not converted); alone, that is the snapshot "+
					"Paimon's `TRUNCATE TABLE` writes. Append tables accept inserts only (and `truncate` given by "+
					"`row_kind`; without `row_kind` they ignore the operation metadata): a message whose row kind is not an "+
					"insert fails alone. Changes to a key are applied "+
					"in the order they are written: a primary-key table takes one batch at a time (max_in_flight 1); "+
					"set `pipeline.threads: 1` so that Benthos' processor threads do not reorder batches before they "+
					"arrive. A batch that fails and is delivered again lands after the batches written meanwhile, so a "+
					"source that can replay should set `source_position` or give a `sequence.field`.").
				Default("").
				Example(`${! @operation }`).
				Example(`${! if this.deleted.or(false) { "-D" } else { "+U" } }`),
			service.NewBloblangField(fieldBefore).
				Description("For native messages of a primary-key table: a mapping that gives the row as it was before an "+
					"update (`+U`), written as a `-U` ahead of the update. Tables whose readers need the old values "+
					"want it: `changelog-producer: input` (the changelog then holds `-U`/`+U` pairs, as Flink's "+
					"updates do) and `aggregation` (a `-U` retracts the old value from sums and counts). A mapping "+
					"that gives null or deletes the root writes no `-U`. CDC inputs put the old row in metadata "+
					"(`pg_cdc`: `before` under REPLICA IDENTITY FULL).").
				Examples(`root = @before`, `root = this.before`).
				Optional().
				Advanced(),
			service.NewInterpolatedStringField(fieldUnchanged).
				Description("For native messages of a primary-key table: the columns, comma-separated, that an update "+
					"or insert does not carry (their values in the message are ignored) and that keep the values of the "+
					"key's current row. Made for `pg_cdc` with `toast: null`, whose `unchanged_toast` metadata lists the "+
					"large (TOAST) values an update did not change and Postgres did not send: "+
					"`${! @unchanged_toast.or(\"\") }` fills them without REPLICA IDENTITY FULL (`.or(\"\")`: a message without the metadata keeps nothing). The current row is the last change "+
					"of the key earlier in the batch, else the table's latest snapshot (a point lookup of the key: only the "+
					"files whose key range holds it are read, but each lookup costs reads, so prefer FULL for tables "+
					"updated often). A key without a row fails its message, naming the columns. With "+
					"`merge-engine: partial-update` the message's nulls already keep the old values, so nothing is looked "+
					"up; other merge engines than deduplicate fail such messages. The message's own values of those columns "+
					"(pg_cdc sends null) are still converted first, so the columns must be nullable. Empty for a message: "+
					"nothing kept.").
				Example(`${! @unchanged_toast.or("") }`).
				Optional().
				Advanced(),
			service.NewStringEnumField(fieldCDCFormat, "native", string(cdcformat.Debezium), string(cdcformat.Canal),
				string(cdcformat.Maxwell), string(cdcformat.Ogg)).
				Description("The form messages carry their changes in. `native` (the default): the message is the row, "+
					"its row kind from `row_kind`. The others read a change-data-capture envelope exactly as Paimon's "+
					"`kafka_sync_table` action does: `debezium-json` (`before`/`after`/`op`, with or without the "+
					"`schema`/`payload` wrapper; Debezium's decimal, date, time and timestamp encodings decoded by the "+
					"schema), `canal-json` (`data`/`old`/`type`, several rows per message), `maxwell-json` and "+
					"`ogg-json`. As in Paimon an update becomes a delete of the old row and an insert of the new one, "+
					"snapshot reads are inserts, tombstones and DDL events write nothing. A table created from such "+
					"messages takes its column types and primary keys from the envelope where it carries them "+
					"(Debezium's schema, Canal's `mysqlType` and `pkNames`). `row_kind` must be empty with an envelope.").
				Default("native"),
			service.NewObjectField(fieldSourcePosition,
				service.NewInterpolatedStringField(fieldSPStream).
					Description("The stream the message comes from: a Kafka topic and partition, a replication slot, a file. "+
						"Offsets are compared within one stream only.").
					Example(`${! @kafka_topic }/${! @kafka_partition }`).
					Example(`pg/orders_slot`),
				service.NewInterpolatedStringField(fieldSPOffset).
					Description("The message's offset in its stream: an unsigned decimal integer, or several joined by `.` "+
						"and compared one after the other (a commit LSN and the change's ordinal in its transaction). An "+
						"empty offset writes the message without a position check.").
					Example(`${! @kafka_offset }`).
					Example(`${! @lsn_position }`),
			).
				Description("Exactly-once delivery from a source that can replay. Each commit records, per stream and in the "+
					"same snapshot as the rows (property `"+positionsProperty+"`), the highest offset up to which every "+
					"message was committed; a message at or below its stream's recorded offset is acknowledged without "+
					"being written. A kill after a commit and before the acknowledgement then duplicates nothing, and a CDC "+
					"source that replays from its last confirmed position applies nothing twice. Offsets must increase "+
					"within a stream in the order the source delivers them. Positions belong to the commit user: writers "+
					"with their own commit users keep their own. Batches are written one at a time (max_in_flight 1). "+
					"A message that fails holds its stream's position back until it is committed, so a crash meanwhile "+
					"writes the messages after it once more.").
				Optional().
				Advanced(),
			service.NewDurationField(fieldTableIdle).
				Description("With an interpolated `table` or `database`: a table without batches for this long has its "+
					"committer and maintenance stopped and its state dropped, so that memory stays bounded with many "+
					"tables; its next message opens it again. 0 keeps every table open.").
				Default("10m").
				Advanced(),
			service.NewStringField(fieldCommitUser).
				Description("The `commitUser` recorded in every snapshot this output commits. Paimon identifies a commit by "+
					"its user and a strictly increasing commit identifier, and resolves a commit with an unknown outcome by "+
					"looking for that pair. Leave empty for a stable default derived from the table and the output's label: "+
					"`benthos-paimon-<database>.<table>` followed by `-<label>` when the output is labelled. It is stable "+
					"rather than generated per process so that a restarted pipeline continues as the same writer: its commit "+
					"identifiers keep increasing past those of its earlier snapshots, as Paimon requires of one user, and its "+
					"snapshots stay attributable to it. The one rule: every process writing to the same table at the same "+
					"time must have its own commit user, because two live writers sharing one could take each other's "+
					"commits for their own. When you run replicas of one config, make it unique per replica, for example "+
					"`orders-writer-${HOSTNAME}`.").
				Default("").
				Examples("orders-writer", "orders-writer-${HOSTNAME}").
				Advanced(),
			service.NewBatchPolicyField(fieldBatching).
				Description("How messages are grouped into batches; each batch becomes data files and, with the batches "+
					"ready at the same time, one snapshot. Without any batching setting the output batches "+
					fmt.Sprintf("%d messages or %s, whichever comes first", DefaultBatchCount, DefaultBatchPeriod)+
					", since a lake table wants large files and few snapshots: one message per batch would write one "+
					"file and one snapshot per message (see `keep_input_batches`). `count: 1` alone is Benthos' policy "+
					"for no batching, so the default applies then too; a count of at most 10 is logged as a warning at "+
					"start-up. When the input ends or the stream "+
					"stops, the last partial batch is written once the running `period` has elapsed (see \"When the "+
					"input ends, or the stream is stopped\" above)."),
			service.NewBoolField(fieldKeepBatches).
				Description("With an empty `batching`, write each batch as the input made it instead of applying the "+
					"default policy. An input that batches itself and acknowledges messages one by one then learns "+
					"exactly which messages of its batch failed (a batching policy regroups the messages, so the input "+
					"only sees that its batch failed).").
				Default(false).
				Advanced(),
			service.NewOutputMaxInFlightField().
				Description("The maximum number of batches converted and written concurrently. Finished batches are "+
					"committed together by a single committer, so raising this increases throughput without more snapshots. "+
					"A primary-key table takes one batch at a time (the default becomes 1; another value above 1 is an error), "+
					"so that the changes to a key are written in order.").
				Default(DefaultMaxInFlight).
				LintRule(`root = if this < 1 { [ "max_in_flight must be at least 1" ] }`),
			service.NewStringAnnotatedEnumField(fieldUnknownFields, map[string]string{
				string(rowconv.UnknownFieldsError):  "A message with a field that is not a column fails (alone) with an error naming the field.",
				string(rowconv.UnknownFieldsIgnore): "Fields that are not columns are dropped silently.",
			}).
				Description("What to do with message fields that are not columns of the table (including fields inside ROW "+
					"columns). With `schema_evolution: true`, unknown top-level fields add columns instead.").
				Default(string(rowconv.UnknownFieldsError)),
			service.NewBoolField(fieldSchemaEvolution).
				Description("Add a nullable column for each unknown top-level message field, typed from its first non-null "+
					"value (see Schema evolution above), instead of applying `unknown_fields`.").
				Default(false),
			service.NewStringAnnotatedEnumField(fieldTimestampUnit, map[string]string{
				string(rowconv.UnitSeconds): "Seconds since the epoch (fractions allowed, e.g. `1717070400.123`).",
				string(rowconv.UnitMillis):  "Milliseconds since the epoch.",
				string(rowconv.UnitMicros):  "Microseconds since the epoch.",
				string(rowconv.UnitNanos):   "Nanoseconds since the epoch.",
			}).
				Description("The unit of epoch numbers given for TIMESTAMP and TIMESTAMP_LTZ columns. RFC 3339 text is "+
					"accepted whatever the unit. TIME columns always take milliseconds of the day and DATE columns days.").
				Default(string(rowconv.UnitMillis)).
				Advanced(),
			service.NewObjectField(fieldMaintenance,
				service.NewBoolField(fieldMaintEnabled).
					Description("Remove consumers not updated for `consumer.expiration-time` (when set), then expire old "+
						"snapshots (`snapshot.num-retained.min`, `snapshot.num-retained.max`, `snapshot.time-retained`, "+
						"`snapshot.expire.limit`) and, when `partition.expiration-time` is set, old partitions (checked every "+
						"`partition.expiration-check-interval`), as the table's options ask and as Java Paimon's writers do "+
						"after their commits. Tables with `write-only: true` get only consumer expiry, as in Java; a dedicated "+
						"job expires their snapshots and partitions.").
					Default(true),
				service.NewDurationField(fieldMaintInterval).
					Description("The least time between two maintenance runs. A run is triggered by a commit and "+
						"happens in the background, one at a time; it never delays or fails a batch.").
					Default(DefaultMaintenanceInterval.String()),
				service.NewBoolField(fieldTableMetrics).
					Description("After each maintenance run, and once at start, read the latest snapshot's manifests and "+
						"publish what the table holds: the gauges `paimon_table_files`, `paimon_table_bytes`, "+
						"`paimon_table_rows`, `paimon_table_partitions`, `paimon_table_partition_files_max` and, per "+
						"partition (label `partition`), `paimon_partition_files` and `paimon_partition_bytes`. Reading "+
						"the manifests of a table of 100,000 live files takes under a second of CPU.").
					Default(true),
				service.NewIntField(fieldPartitionLimit).
					Description("The most partitions with series of their own in `paimon_partition_files` and "+
						"`paimon_partition_bytes`. A partition keeps its series while it exists and reads 0 once it is "+
						"dropped or expired; free places go to the partitions with the most files. 0 publishes the "+
						"table totals only.").
					Default(DefaultPartitionMetricsLimit),
			).
				Description("Automatic table maintenance after commits, and the table metrics it publishes.").
				Advanced(),
			service.NewObjectField(fieldCompaction,
				service.NewBoolField(fieldCompactEnabled).
					Description("Compact small data files into larger ones in the background, after commits and at most "+
						"once per `maintenance.interval`, with the table's `target-file-size` and `compaction.min.file-num`. "+
						"Compaction rewrites data and adds COMPACT snapshots; Paimon advises a dedicated compaction job "+
						"(and `write-only: true` on the writers) for tables with heavy write traffic, so it is off by "+
						"default. On tables whose compaction looks keys up in the levels above (`changelog-producer: lookup`, "+
						"deletion vectors, `first-row`) the output keeps those files between runs, within the table's "+
						"`lookup.cache-max-memory-size` and, as local lookup files in a directory under the system temp "+
						"directory (`TMPDIR`), `lookup.cache-max-disk-size`, so that each run reads only the files the "+
						"earlier runs did not; the directory is removed when the output closes.").
					Default(false),
			).
				Description("Background compaction of small files.").
				Advanced(),
		).
		LintRule(outputLintRule).
		Example("Events from HTTP, partitioned by day",
			"Receives JSON events over HTTP, derives the partition `dt` from each event's time, and appends them to a "+
				"table created on first use. Batches commit every 5 seconds or 10,000 events.",
			`
input:
  http_server:
    path: /events
pipeline:
  processors:
    - mapping: |
        root = this
        root.dt = this.ts.ts_parse("2006-01-02T15:04:05Z07:00").ts_format("2006-01-02", "UTC")
output:
  paimon:
    warehouse: /var/lib/paimon
    table: events
    create_table:
      enabled: true
      schema:
        - { name: id, type: BIGINT NOT NULL }
        - { name: ts, type: TIMESTAMP(3) WITH LOCAL TIME ZONE }
        - { name: user, type: STRING }
        - { name: amount, type: "DECIMAL(10, 2)" }
        - { name: dt, type: STRING, comment: day of ts (UTC) }
      partition_keys: [ dt ]
      options:
        partition.expiration-time: 30 d
    batching:
      count: 10000
      period: 5s
`).
		Example("S3-compatible storage",
			"Writes to a bucket of an S3-compatible server with static credentials taken from the environment.",
			`
output:
  paimon:
    warehouse: s3://lake/warehouse
    database: sales
    table: orders
    commit_user: orders-writer-${HOSTNAME}
    s3:
      endpoint: http://minio:9000
      region: us-east-1
      force_path_style: true
      credentials:
        id: ${S3_ACCESS_KEY_ID}
        secret: ${S3_SECRET_ACCESS_KEY}
    batching:
      period: 10s
`).
		Example("Fixed buckets and schema evolution",
			"Hashes rows into 8 buckets by `user_id`, and adds a column for every new field that appears in the events.",
			`
output:
  paimon:
    warehouse: /var/lib/paimon
    table: clicks
    create_table:
      enabled: true
      schema:
        - { name: user_id, type: BIGINT NOT NULL }
        - { name: url, type: STRING }
      bucket: 8
      bucket_key: [ user_id ]
    schema_evolution: true
    batching:
      period: 1s
`)
}

func createTableField() *service.ConfigField {
	f := service.NewObjectField(fieldCreateTable, createTableChildren()...).
		Description("How to create the table if it does not exist. Without `enabled`, the table must already exist " +
			"(created by Java Paimon, by another pipeline or by `create_table` elsewhere).")
	if rule := createTableLintRule(); rule != "" {
		f = f.LintRule(rule)
	}
	return f
}

// createTableChildren are the fields of create_table.
func createTableChildren() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewBoolField(fieldCTEnabled).
			Description("Create the table when it does not exist yet. Requires `schema`.").
			Default(false),
		service.NewObjectListField(fieldCTSchema,
			service.NewStringField(fieldCTColName).
				Description("The column name, matched exactly (case-sensitive) against message fields."),
			service.NewStringField(fieldCTColType).
				Description("The column type in Paimon's type grammar: `BOOLEAN`, `TINYINT`, `SMALLINT`, `INT`, `BIGINT`, "+
					"`FLOAT`, `DOUBLE`, `DECIMAL(p, s)`, `CHAR(n)`, `VARCHAR(n)`, `STRING`, `BINARY(n)`, `VARBINARY(n)`, "+
					"`BYTES`, `DATE`, `TIME(p)`, `TIMESTAMP(p)`, `TIMESTAMP(p) WITH LOCAL TIME ZONE` (or `TIMESTAMP_LTZ(p)`), "+
					"`ARRAY<T>`, `MAP<K, V>`, `MULTISET<T>`, `ROW<name T, ...>`, each optionally followed by `NOT NULL`.").
				Examples("BIGINT NOT NULL", "DECIMAL(10, 2)", "TIMESTAMP(3)", "ARRAY<STRING>", "MAP<STRING, INT>", "ROW<a INT, b STRING>"),
			service.NewStringField(fieldCTColComment).
				Description("An optional column comment, stored as the field's description.").
				Default(""),
		).
			Description("The table's columns, in order. Used to create the table, and to check an existing table's schema " +
				"when given without `enabled`.").
			Default([]any{}),
		service.NewStringListField(fieldCTPartitionKeys).
			Description("Columns whose values partition the table into directories `k1=v1/k2=v2`. Each must be a column " +
				"of `schema` with an atomic type (not ARRAY, MAP, MULTISET or ROW).").
			Default([]any{}).
			Example([]any{"dt"}).
			Example([]any{"dt", "region"}),
		service.NewIntField(fieldCTBucket).
			Description("The number of buckets per partition: `-1` (the default) for a bucket-unaware append table, whose rows " +
				"all go to `bucket-0` and which any number of writers can append to, or for a primary-key table Paimon's " +
				"dynamic buckets (keys are assigned to buckets of at most `dynamic-bucket.target-row-num` keys, recorded in " +
				"HASH index files; one writer per partition at a time, and the primary key must contain every partition " +
				"key); or a positive number N, which hashes each row's bucket key into one of N buckets as Java Paimon does.").
			Default(-1).
			LintRule(`root = if this == 0 || this < -1 { [ "create_table.bucket must be -1 (bucket-unaware) or a positive number of buckets" ] }`),
		service.NewStringListField(fieldCTBucketKey).
			Description("The columns whose values choose a row's bucket; required when `bucket` is positive and not " +
				"allowed when it is -1. Must be atomic columns of `schema` that are not partition keys. For a " +
				"primary-key table it defaults to the primary key minus the partition keys, and must be part of the " +
				"primary key.").
			Default([]any{}).
			Example([]any{"user_id"}),
		service.NewStringListField(fieldCTPrimaryKeys).
			Description("Makes a primary-key table: messages upsert and delete rows by these columns (see `row_kind`), " +
				"which become NOT NULL, and readers merge them by key as Paimon does (merge engine, sequence field and " +
				"changelog producer in `options`: `merge-engine` deduplicate, partial-update or aggregation, " +
				"`sequence.field`, `changelog-producer` none or input). It must contain every partition key, and needs a " +
				"positive `bucket`.").
			Default([]any{}).
			Example([]any{"id"}).
			Example([]any{"dt", "order_id"}),
		service.NewStringMapField(fieldCTOptions).
			Description("Paimon table options, written verbatim into the table's schema, e.g. `file.compression`, " +
				"`file.compression.zstd-level`, `target-file-size`, `metadata.stats-mode`, `fields.<column>.stats-mode`, " +
				"`snapshot.num-retained.min`, `snapshot.num-retained.max`, `snapshot.time-retained`, " +
				"`partition.expiration-time`, `partition.timestamp-formatter`. Set `bucket` and `bucket-key` with the " +
				"fields above, not here. Only `file.format: parquet` is supported (and written by default). Names must be " +
				"options Paimon 1.4 or 2.0 defines, or of the families Paimon builds (`fields.<column>.*`, `file-index.*`, " +
				"a file format's own `parquet.*`, `orc.*`, ...): Paimon stores an unknown name and ignores it, so a " +
				"misspelt one fails lint and start-up instead. The values of the options lakecore reads are checked " +
				"there too.").
			Default(map[string]any{}).
			Example(map[string]any{"file.compression": "zstd", "target-file-size": "128 mb", "snapshot.time-retained": "2 h"}).
			Advanced(),
	}
}

// outputLintRule reports wrong field combinations when a config is linted
// (benthos-paimon lint); ParseConfig checks the same and more at start-up.
const outputLintRule = `
let ct = this.create_table.or({})
let names = $ct.schema.or([]).map_each(f -> f.name.or(""))
let pks = $ct.partition_keys.or([])
let bks = $ct.bucket_key.or([])
let prk = $ct.primary_keys.or([])
let bucket = $ct.bucket.or(-1)
let opts = $ct.options.or({})
let okeys = $opts.keys()
let routed = this.table.or("").contains("${!") || this.database.or("").contains("${!")
root = [
  if $ct.enabled.or(false) && $ct.schema.or([]).length() == 0 && !$routed { "create_table.schema is required when create_table.enabled is true" },
  if $bucket > 0 && $bks.length() == 0 && $prk.length() == 0 && !$routed { "create_table.bucket_key is required when create_table.bucket is positive: Paimon append tables hash rows by an explicit bucket key" },
  if $prk.length() != $prk.unique().length() { "create_table.primary_keys has duplicates" },
  if $bucket == -1 && $bks.length() > 0 { "create_table.bucket_key needs a positive create_table.bucket; with bucket -1 (bucket-unaware) there is nothing to hash into" },
  if $names.length() != $names.unique().length() { "create_table.schema has duplicate column names" },
  if $okeys.contains("bucket") || $okeys.contains("bucket-key") { "set create_table.bucket and create_table.bucket_key rather than the bucket and bucket-key options" },
  if $okeys.contains("primary-key") { "set create_table.primary_keys rather than the primary-key option" },
  if $okeys.contains("file.format") && $opts."file.format".string().lowercase() != "parquet" { "only file.format parquet is supported" },
  if $okeys.contains("partition.expiration-time") && $pks.length() == 0 { "partition.expiration-time needs create_table.partition_keys" },
  if $pks.length() != $pks.unique().length() { "create_table.partition_keys has duplicates" },
  if $bks.length() != $bks.unique().length() { "create_table.bucket_key has duplicates" },
].
  merge(if $names.length() > 0 { $pks.filter(k -> !$names.contains(k)).map_each(k -> "create_table.partition_keys: %s is not a column of create_table.schema".format(k)) } else { [] }).
  merge(if $names.length() > 0 { $bks.filter(k -> !$names.contains(k)).map_each(k -> "create_table.bucket_key: %s is not a column of create_table.schema".format(k)) } else { [] }).
  merge($bks.filter(k -> $pks.contains(k)).map_each(k -> "create_table.bucket_key: %s is a partition key; bucket keys must not be partition keys".format(k))).
  merge(if $prk.length() > 0 { $pks.filter(k -> !$prk.contains(k)).map_each(k -> "create_table.primary_keys must contain the partition key %s".format(k)) } else { [] }).
  merge(if $prk.length() > 0 { $bks.filter(k -> !$prk.contains(k)).map_each(k -> "create_table.bucket_key: %s is not part of create_table.primary_keys".format(k)) } else { [] }).
  merge(if $names.length() > 0 { $prk.filter(k -> !$names.contains(k)).map_each(k -> "create_table.primary_keys: %s is not a column of create_table.schema".format(k)) } else { [] })
`

// ParseConfig reads and validates the output's configuration. It checks
// everything the lint rule checks and what the lint rule cannot: the column
// types parse, partition and bucket keys are atomic columns, and
// max_in_flight is positive. Errors name the field.
func ParseConfig(conf *service.ParsedConfig) (Config, error) {
	var c Config
	var err error
	var routed bool
	if c.Table, routed, err = config.ParseTableTemplate(conf); err != nil {
		return c, err
	}
	if routed {
		c.Route = &Route{}
		if c.Route.Database, err = parseText(conf, config.FieldDatabase); err != nil {
			return c, err
		}
		if c.Route.Table, err = parseText(conf, config.FieldTable); err != nil {
			return c, err
		}
		if c.Route.IdleTimeout, err = conf.FieldDuration(fieldTableIdle); err != nil {
			return c, err
		}
	}
	if c.CreateTable, err = parseCreateTable(conf.Namespace(fieldCreateTable), routed); err != nil {
		return c, err
	}
	if c.CommitUser, err = conf.FieldString(fieldCommitUser); err != nil {
		return c, err
	}
	if res := conf.Resources(); res != nil {
		c.Label = res.Label()
	}
	if c.CommitUser = strings.TrimSpace(c.CommitUser); c.CommitUser == "" {
		c.CommitUser = DefaultCommitUser(c.Table, c.Label)
	} else {
		c.CommitUserSet = true
	}
	if c.Batching, err = conf.FieldBatchPolicy(fieldBatching); err != nil {
		return c, err
	}
	keep, err := conf.FieldBool(fieldKeepBatches)
	if err != nil {
		return c, err
	}
	if c.Batching.IsNoop() && !keep {
		c.Batching.Count, c.Batching.Period = DefaultBatchCount, DefaultBatchPeriod
	}
	if c.MaxInFlight, err = conf.FieldMaxInFlight(); err != nil {
		return c, err
	}
	if c.MaxInFlight < 1 {
		return c, fmt.Errorf("max_in_flight must be at least 1, not %d", c.MaxInFlight)
	}
	if s, err := conf.FieldString(fieldCDCFormat); err != nil {
		return c, err
	} else if s != "native" {
		if c.CDCFormat, err = cdcformat.ParseFormat(s); err != nil {
			return c, fmt.Errorf("cdc_format: %w", err)
		}
	}
	if conf.Contains(fieldBefore) {
		if c.CDCFormat != "" {
			return c, fmt.Errorf("before: not with cdc_format %s, whose envelope carries the old row", c.CDCFormat)
		}
		if c.Before, err = conf.FieldBloblang(fieldBefore); err != nil {
			return c, err
		}
	}
	if conf.Contains(fieldUnchanged) {
		if c.CDCFormat != "" {
			return c, fmt.Errorf("unchanged_columns: not with cdc_format %s, whose envelope carries whole rows", c.CDCFormat)
		}
		if c.UnchangedColumns, err = parseText(conf, fieldUnchanged); err != nil {
			return c, err
		}
	}
	if routed && c.MaxInFlight == DefaultMaxInFlight {
		// Any table routed to may have primary keys, which need batches in
		// order; the default counts as unset.
		c.MaxInFlight = 1
	}
	if conf.Contains(fieldSourcePosition) {
		sp := &SourcePosition{}
		if sp.Stream, err = parseText(conf, fieldSourcePosition, fieldSPStream); err != nil {
			return c, err
		}
		if sp.Offset, err = parseText(conf, fieldSourcePosition, fieldSPOffset); err != nil {
			return c, err
		}
		// A later batch committed before an earlier one could record a
		// position past messages that then fail.
		if c.MaxInFlight > 1 && c.MaxInFlight != DefaultMaxInFlight {
			return c, fmt.Errorf("max_in_flight is %d: source_position needs max_in_flight 1, so that no batch is committed before an earlier one", c.MaxInFlight)
		}
		c.MaxInFlight = 1
		c.SourcePosition = sp
	}
	if len(c.CreateTable.PrimaryKeys) > 0 {
		// Batches in flight at once are numbered in no fixed order, so a later
		// change of a key could lose to an earlier one.
		// The default counts as unset (a parsed config cannot tell them apart).
		if c.MaxInFlight > 1 && c.MaxInFlight != DefaultMaxInFlight {
			return c, fmt.Errorf("max_in_flight is %d: a primary-key table (create_table.primary_keys) needs max_in_flight 1, so that the changes to a key are written in order", c.MaxInFlight)
		}
		c.MaxInFlight = 1
	}
	var s string
	if s, err = conf.FieldString(fieldUnknownFields); err != nil {
		return c, err
	}
	c.Convert.UnknownFields = rowconv.UnknownFields(s)
	if c.Convert.SchemaEvolution, err = conf.FieldBool(fieldSchemaEvolution); err != nil {
		return c, err
	}
	if s, err = conf.FieldString(fieldTimestampUnit); err != nil {
		return c, err
	}
	c.Convert.TimestampUnit = rowconv.TimeUnit(s)
	if s, err = conf.FieldString(fieldRowKind); err != nil {
		return c, err
	}
	if strings.TrimSpace(s) != "" {
		if c.CDCFormat != "" {
			return c, fmt.Errorf("row_kind must be empty with cdc_format %s: the envelope gives each row's kind", c.CDCFormat)
		}
		if c.RowKind, err = parseText(conf, fieldRowKind); err != nil {
			return c, err
		}
	}
	if c.Maintenance.Enabled, err = conf.FieldBool(fieldMaintenance, fieldMaintEnabled); err != nil {
		return c, err
	}
	if c.Maintenance.Interval, err = conf.FieldDuration(fieldMaintenance, fieldMaintInterval); err != nil {
		return c, err
	}
	if c.Maintenance.Interval < 0 {
		return c, fmt.Errorf("maintenance.interval must not be negative, not %v", c.Maintenance.Interval)
	}
	if c.Maintenance.Compaction, err = conf.FieldBool(fieldCompaction, fieldCompactEnabled); err != nil {
		return c, err
	}
	if c.Maintenance.TableMetrics, err = conf.FieldBool(fieldMaintenance, fieldTableMetrics); err != nil {
		return c, err
	}
	if c.Maintenance.PartitionMetricsLimit, err = conf.FieldInt(fieldMaintenance, fieldPartitionLimit); err != nil {
		return c, err
	}
	if c.Maintenance.PartitionMetricsLimit < 0 {
		return c, fmt.Errorf("maintenance.partition_metrics_limit must not be negative, not %d", c.Maintenance.PartitionMetricsLimit)
	}
	if _, err := rowconv.NewConverter(nil, c.Convert); err != nil {
		return c, errors.New(strings.TrimPrefix(err.Error(), "new converter: "))
	}
	return c, nil
}

// parseCreateTable reads create_table. For a routed table (table or
// database interpolated) the schema may be left out: each table is then
// created from its first message and validated then (createSpec).
func parseCreateTable(conf *service.ParsedConfig, routed bool) (CreateTable, error) {
	ct, err := readCreateTable(conf)
	if err != nil {
		return ct, err
	}
	return ct, ct.check(routed)
}

// readCreateTable reads the create_table fields; of their checks it makes
// only those reading needs (column names and types).
func readCreateTable(conf *service.ParsedConfig) (CreateTable, error) {
	var ct CreateTable
	var err error
	if ct.Enabled, err = conf.FieldBool(fieldCTEnabled); err != nil {
		return ct, err
	}
	cols, err := conf.FieldObjectList(fieldCTSchema)
	if err != nil {
		return ct, err
	}
	for i, col := range cols {
		name, err := col.FieldString(fieldCTColName)
		if err != nil {
			return ct, err
		}
		typ, err := col.FieldString(fieldCTColType)
		if err != nil {
			return ct, err
		}
		comment, err := col.FieldString(fieldCTColComment)
		if err != nil {
			return ct, err
		}
		if name == "" {
			return ct, fmt.Errorf("create_table.schema[%d]: name must not be empty", i)
		}
		if types.FieldByName(ct.Fields, name) >= 0 {
			return ct, fmt.Errorf("create_table.schema[%d]: duplicate column %q", i, name)
		}
		dt, err := types.Parse(typ)
		if err != nil {
			return ct, fmt.Errorf("create_table.schema[%d] (%s): %w", i, name, err)
		}
		f := types.DataField{Name: name, Type: dt}
		if comment != "" {
			f.Description = &comment
		}
		ct.Fields = append(ct.Fields, f)
	}
	types.AssignFieldIDs(ct.Fields, 0)
	if ct.PartitionKeys, err = conf.FieldStringList(fieldCTPartitionKeys); err != nil {
		return ct, err
	}
	if ct.Bucket, err = conf.FieldInt(fieldCTBucket); err != nil {
		return ct, err
	}
	if ct.BucketKey, err = conf.FieldStringList(fieldCTBucketKey); err != nil {
		return ct, err
	}
	if ct.PrimaryKeys, err = conf.FieldStringList(fieldCTPrimaryKeys); err != nil {
		return ct, err
	}
	for i, f := range ct.Fields {
		if slices.Contains(ct.PrimaryKeys, f.Name) {
			ct.Fields[i].Type = f.Type.NotNull() // as Paimon's Schema builder makes them
		}
	}
	if ct.Options, err = conf.FieldStringMap(fieldCTOptions); err != nil {
		return ct, err
	}
	return ct, nil
}

// check validates the create_table settings without I/O: the option names
// and values (checkOptions), the field combinations (Validate) and the
// schema as CreateTable would check it (checkSpec). With a routed table and
// no schema, only the options.
func (ct CreateTable) check(routed bool) error {
	if err := ct.checkOptions(); err != nil {
		return err
	}
	if routed && len(ct.Fields) == 0 {
		return nil
	}
	if err := ct.Validate(); err != nil {
		return err
	}
	return ct.checkSpec()
}

// checkOptions checks that every option is one Paimon defines and that the
// options lakecore reads have valid values.
func (ct CreateTable) checkOptions() error {
	if err := schema.CheckOptionNames(ct.Options); err != nil {
		return fmt.Errorf("create_table.options: %w (Paimon stores options it does not know and ignores them, so a misspelt one would silently not apply)", err)
	}
	if err := schema.Options(ct.Options).Validate(); err != nil {
		return fmt.Errorf("create_table.options: %w", err)
	}
	return nil
}

// checkSpec refuses, when the output is constructed, what CreateTable
// would refuse at the first message (Paimon's schema validation, features
// lakecore does not write), so that start-up fails with it rather than
// every Connect.
func (ct CreateTable) checkSpec() error {
	if len(ct.Fields) == 0 {
		return nil
	}
	spec := lakecore.TableSpec{Fields: ct.Fields, PartitionKeys: ct.PartitionKeys, PrimaryKeys: ct.PrimaryKeys, Options: ct.TableOptions()}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("create_table: %w", err)
	}
	return nil
}

// Validate checks the create_table settings as Paimon's SchemaValidation
// does for an append table (apache/paimon:
// paimon-core/src/main/java/org/apache/paimon/schema/SchemaValidation.java),
// plus the limits of this writer (Parquet only, no primary keys).
func (ct CreateTable) Validate() error {
	if ct.Enabled && len(ct.Fields) == 0 {
		return errors.New("create_table.schema is required when create_table.enabled is true")
	}
	if ct.Bucket == 0 || ct.Bucket < -1 {
		return fmt.Errorf("create_table.bucket must be -1 (bucket-unaware) or a positive number of buckets, not %d", ct.Bucket)
	}
	if ct.Bucket > 0 && len(ct.BucketKey) == 0 && len(ct.PrimaryKeys) == 0 {
		return errors.New("create_table.bucket_key is required when create_table.bucket is positive")
	}
	if len(ct.PrimaryKeys) > 0 {
		if err := checkKeys("primary_keys", ct.PrimaryKeys, ct.Fields); err != nil {
			return err
		}
		for _, k := range ct.PartitionKeys {
			if !slices.Contains(ct.PrimaryKeys, k) {
				return fmt.Errorf("create_table.primary_keys %v must contain the partition key %q: a key whose partition changes would be two rows", ct.PrimaryKeys, k)
			}
		}
		for _, k := range ct.BucketKey {
			if !slices.Contains(ct.PrimaryKeys, k) {
				return fmt.Errorf("create_table.bucket_key: %q is not part of create_table.primary_keys %v", k, ct.PrimaryKeys)
			}
		}
		if len(ct.PrimaryKeys) == len(ct.PartitionKeys) {
			return fmt.Errorf("create_table.primary_keys %v must have a column that is not a partition key", ct.PrimaryKeys)
		}
	}
	if ct.Bucket == -1 && len(ct.BucketKey) > 0 {
		return errors.New("create_table.bucket_key needs a positive create_table.bucket (Paimon: cannot define 'bucket-key' in unaware bucket mode)")
	}
	for _, k := range []string{"bucket", "bucket-key"} {
		if _, ok := ct.Options[k]; ok {
			return fmt.Errorf("create_table.options: set %q with create_table.%s instead", k, strings.ReplaceAll(k, "-", "_"))
		}
	}
	if _, ok := ct.Options["primary-key"]; ok {
		return errors.New("create_table.options: set create_table.primary_keys instead of the primary-key option")
	}
	if f, ok := ct.Options["file.format"]; ok && !strings.EqualFold(f, "parquet") {
		return fmt.Errorf("create_table.options: file.format %q is not supported; only parquet is", f)
	}
	if _, ok := ct.Options["partition.expiration-time"]; ok && len(ct.PartitionKeys) == 0 {
		return errors.New("create_table.options: partition.expiration-time needs create_table.partition_keys")
	}
	if err := checkKeys("partition_keys", ct.PartitionKeys, ct.Fields); err != nil {
		return err
	}
	if err := checkKeys("bucket_key", ct.BucketKey, ct.Fields); err != nil {
		return err
	}
	for _, k := range ct.BucketKey {
		if slices.Contains(ct.PartitionKeys, k) {
			return fmt.Errorf("create_table.bucket_key: %q is a partition key; bucket keys must not be partition keys", k)
		}
	}
	return nil
}

// checkKeys checks that keys are distinct atomic columns of fields (when a
// schema is given; without one they are checked against the table later).
func checkKeys(name string, keys []string, fields []types.DataField) error {
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			return fmt.Errorf("create_table.%s: %q is listed twice", name, k)
		}
		seen[k] = true
		if len(fields) == 0 {
			continue
		}
		i := types.FieldByName(fields, k)
		if i < 0 {
			return fmt.Errorf("create_table.%s: %q is not a column of create_table.schema (columns: %s)", name, k, columnNames(fields))
		}
		if fields[i].Type.IsNested() {
			return fmt.Errorf("create_table.%s: column %q has type %s; keys must have atomic types", name, k, fields[i].Type)
		}
	}
	return nil
}

func columnNames(fields []types.DataField) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
