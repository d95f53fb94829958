// Package input is the Benthos `paimon` batch input: it tails an Apache
// Paimon table (append or primary-key, whole or one shard of it) snapshot
// by snapshot with Paimon's scan modes, emits one structured message per
// row (plugin/internal/rowconv), and keeps its progress in the table as a
// consumer file that advances only past fully acknowledged snapshots.
//
// Files: config.go (the config spec and ParseConfig), filter.go
// (partition_filter), input.go (registration, Connect/ReadBatch/Close,
// metrics), reader.go (the background reader: plans to message batches),
// acks.go (the ack tracker), consumer.go (saving the consumer position).
package paimon

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// Field names of the input's config.
const (
	fieldScanMode          = "scan_mode"
	fieldScanTimestamp     = "scan_timestamp"
	fieldScanSnapshotID    = "scan_snapshot_id"
	fieldDiscoveryInterval = "discovery_interval"
	fieldConsumerID        = "consumer_id"
	fieldBounded           = "bounded"
	fieldPartitionFilter   = "partition_filter"
	fieldColumns           = "columns"
	fieldBatchSize         = "batch_size"
	fieldReadOverwrite     = "read_overwrite"
	fieldOnExpired         = "on_expired"
	fieldAutoReplayNacks   = "auto_replay_nacks"
	fieldChangelog         = "changelog"
	fieldMessageFormat     = "message_format"
	fieldMetadataKeys      = "metadata_keys"
	fieldShard             = "shard"
	fieldShardCount        = "count"
	fieldShardIndex        = "index"
)

// ScanMode is where a read starts, with Paimon's names and semantics
// (apache/paimon: paimon-api/.../CoreOptions.java StartupMode, and the
// starting scanners in paimon-core/.../table/source/snapshot/).
type ScanMode string

// The scan modes.
const (
	// ScanLatestFull reads all rows of the latest snapshot, then each new
	// snapshot's added rows. Paimon's default.
	ScanLatestFull ScanMode = "latest-full"
	// ScanFull is Paimon's deprecated alias of latest-full; ParseConfig
	// turns it into ScanLatestFull.
	ScanFull ScanMode = "full"
	// ScanLatest reads only snapshots committed after the start (from
	// snapshot 1 if the table had none).
	ScanLatest ScanMode = "latest"
	// ScanFromTimestamp starts after the latest snapshot committed before
	// scan_timestamp (at the earliest snapshot if none is), reading deltas.
	ScanFromTimestamp ScanMode = "from-timestamp"
	// ScanFromSnapshot reads the deltas of snapshots from scan_snapshot_id
	// on (inclusive; the earliest if it has expired).
	ScanFromSnapshot ScanMode = "from-snapshot"
	// ScanFromSnapshotFull reads all rows of snapshot scan_snapshot_id (the
	// earliest if it has expired), then the deltas after it.
	ScanFromSnapshotFull ScanMode = "from-snapshot-full"
)

// OnExpired says what to do when the next snapshot to read has been expired
// while reading.
type OnExpired string

// The values of on_expired.
const (
	OnExpiredError    OnExpired = "error"
	OnExpiredEarliest OnExpired = "earliest"
)

// MessageFormat is the form of the messages the input emits.
type MessageFormat string

// The values of message_format.
const (
	// MessageFormatStructured: each message is a structured object (a
	// map[string]any), its bytes encoded only if something asks for them.
	MessageFormatStructured MessageFormat = "structured"
	// MessageFormatJSON: each message's bytes are the JSON text the
	// structured object would serialise to, written directly from the
	// row's values; a mapping that reads the message parses them.
	MessageFormatJSON MessageFormat = "json"
)

// Defaults of the input's fields.
const (
	DefaultDiscoveryInterval = time.Second
	DefaultBatchSize         = 1000
)

// Config is the parsed configuration of the paimon input.
type Config struct {
	// Table locates the table (warehouse, database, table, S3 settings).
	Table config.Table
	// ScanMode is never ScanFull (normalised to ScanLatestFull).
	ScanMode ScanMode
	// ScanTimestampMillis is scan_timestamp as epoch milliseconds; set only
	// with ScanFromTimestamp.
	ScanTimestampMillis int64
	// ScanSnapshotID is set (>= 1) only with ScanFromSnapshot and
	// ScanFromSnapshotFull.
	ScanSnapshotID int64
	// DiscoveryInterval is how often to look for a new snapshot when caught up.
	DiscoveryInterval time.Duration
	// ConsumerID names consumer/consumer-<id> in the table; "" for none.
	ConsumerID string
	// Bounded ends the input after the latest snapshot that existed at start.
	Bounded bool
	// PartitionFilter selects partitions (partition.ParseConfig gives the
	// syntax); empty reads all. It is bound to the table's partition keys
	// at Connect.
	PartitionFilter partition.Filter
	// Columns is the projection, in the order given; empty means all
	// columns in schema order.
	Columns []string
	// BatchSize is the maximum number of rows per message batch.
	BatchSize int
	// ReadOverwrite emits the added files of OVERWRITE snapshots.
	ReadOverwrite bool
	// OnExpired is OnExpiredError or OnExpiredEarliest.
	OnExpired OnExpired
	// AutoReplayNacks mirrors auto_replay_nacks; the constructor wraps the
	// input with service.AutoRetryNacksBatchedToggled, which reads it itself.
	AutoReplayNacks bool
	// Changelog emits every change of a primary-key table (true, the
	// default); false emits only the latest value of each changed key per
	// snapshot (read.TableRead.SetLatestChanges). Connect refuses false on
	// an append table.
	Changelog bool
	// MessageFormat is MessageFormatStructured or MessageFormatJSON.
	MessageFormat MessageFormat
	// MetadataKeys are the metadata keys set on each message
	// (AllMetadataKeys by default).
	MetadataKeys MetadataKeys
	// Shard is the part of the table this input reads; Count 1 (the
	// default) reads all of it. With Count > 1 a consumer_id is suffixed
	// with ShardSuffix.
	Shard scan.Shard
}

// ShardSuffix is what a sharded input appends to its consumer_id, so that
// the shards of one config, which differ only in index, keep one consumer
// each: "-shard-<index>-of-<count>".
func ShardSuffix(s scan.Shard) string { return fmt.Sprintf("-shard-%d-of-%d", s.Index, s.Count) }

// Consumer returns the consumer id the input keeps its position under:
// consumer_id, suffixed with ShardSuffix when sharded; "" without one.
func (c Config) Consumer() string {
	if c.ConsumerID == "" || c.Shard.Count <= 1 {
		return c.ConsumerID
	}
	return c.ConsumerID + ShardSuffix(c.Shard)
}

const inputDescription = `
Reads an https://paimon.apache.org[Apache Paimon^] table the way Paimon's streaming source does: snapshot by
snapshot in id order, emitting the rows of the data files each ` + "`APPEND`" + ` snapshot added (and, with
` + "`read_overwrite`" + `, each ` + "`OVERWRITE`" + ` snapshot), then waiting ` + "`discovery_interval`" + ` for the next one.
` + "`COMPACT`" + ` snapshots only rewrite existing rows and are skipped, so compaction never duplicates data downstream.
Tables written by Java Paimon, Flink, Spark or the ` + "`paimon`" + ` output are read alike.

== Scan modes

` + "`scan_mode`" + ` chooses where a read starts, as Paimon's ` + "`scan.mode`" + `:

|===
| Mode | Starts with

| ` + "`latest-full`" + ` (default) | all rows of the latest snapshot, then every later snapshot's new rows
| ` + "`full`" + ` | the same (Paimon's deprecated name for ` + "`latest-full`" + `)
| ` + "`latest`" + ` | only snapshots committed after the start
| ` + "`from-timestamp`" + ` | the new rows of every snapshot committed at or after ` + "`scan_timestamp`" + `
| ` + "`from-snapshot`" + ` | the new rows of snapshot ` + "`scan_snapshot_id`" + ` and every later one
| ` + "`from-snapshot-full`" + ` | all rows of snapshot ` + "`scan_snapshot_id`" + `, then every later snapshot's new rows
|===

A starting snapshot that has already expired is moved to the earliest snapshot, as Paimon does. With
` + "`bounded: true`" + ` the input stops after the latest snapshot that existed when it started, once every message has
been acknowledged.

== Progress and acknowledgements

With a ` + "`consumer_id`" + `, progress is kept in the table itself, in ` + "`consumer/consumer-<id>`" + ` holding
` + "`{\"nextSnapshot\": N}`" + ` exactly as Java Paimon writes it. Snapshot expiry, ours and Java's, never removes a snapshot
a consumer has not finished, so a slow or stopped reader loses nothing. The file advances to N only when every message
of every snapshot before N has been acknowledged, whatever order acknowledgements arrive in; a nack makes the rows come
again (` + "`auto_replay_nacks`" + `). On restart the input resumes at the consumer file, which overrides
` + "`scan_mode`" + ` as in Paimon: nothing acknowledged is read again except the rows of the one snapshot that was not
fully acknowledged, and nothing is skipped. Without a ` + "`consumer_id`" + ` each start follows ` + "`scan_mode`" + `
afresh.

If the next snapshot to read is expired while the input is behind (a reader without a consumer, or a consumer file
removed by ` + "`consumer.expiration-time`" + `), ` + "`on_expired: error`" + ` stops with an error that says so, and
` + "`on_expired: earliest`" + ` skips ahead to the earliest snapshot, losing the expired rows knowingly.

== Messages

Each row becomes one message: a JSON object keyed by column name (or by ` + "`columns`" + `), with typed values in the
forms the ` + "`paimon`" + ` output accepts, so that rows copy unchanged from one table to another:

- integers as numbers; FLOAT and DOUBLE as numbers, NaN and infinities as the strings ` + "`\"NaN\"`, `\"Infinity\"`, `\"-Infinity\"`" + `;
- DECIMAL as an exact string with all its scale digits (` + "`\"12.30\"`" + `);
- STRING and CHAR as strings; BYTES and BINARY as base64 strings;
- DATE as ` + "`\"YYYY-MM-DD\"`" + `; TIME as ` + "`\"HH:MM:SS.fff\"`" + ` (as many fraction digits as its precision, at most 3);
- TIMESTAMP(p) as ` + "`\"2024-05-30T12:00:00.123\"`" + `, with exactly p fraction digits and no offset (a wall clock);
  TIMESTAMP(p) WITH LOCAL TIME ZONE the same in UTC with a ` + "`Z`" + `;
- ARRAY as an array; ROW as an object; MAP as an object when its keys are strings, otherwise as an array of
  ` + "`{\"key\": k, \"value\": v}`" + ` objects; MULTISET like a map from element to count.

Every message carries the metadata ` + "`paimon_snapshot_id`" + ` (the snapshot that added the row),
` + "`paimon_commit_kind`" + `, ` + "`paimon_commit_time`" + ` (the snapshot's commit time, RFC 3339 in UTC),
` + "`paimon_partition`" + ` (` + "`k1=v1/k2=v2`" + `, empty when unpartitioned), ` + "`paimon_bucket`" + `,
` + "`paimon_file`" + ` (the data file's name) and ` + "`paimon_row`" + ` (the row's position in that file, from 0),
unless ` + "`metadata_keys`" + ` leaves some or all of them out to save their cost.
On primary-key tables rows are merged by key as Java Paimon merges them: a full scan emits the merged
rows (` + "`paimon_file`" + ` empty, ` + "`paimon_row`" + ` counting them within the bucket), and later snapshots
their changes (the delta files with ` + "`changelog-producer: none`" + `, the changelog files otherwise),
each with ` + "`paimon_row_kind`" + ` (` + "`+I`" + `, ` + "`-U`" + `, ` + "`+U`" + `, ` + "`-D`" + `) and ` + "`operation`" + `
(` + "`insert`" + `, ` + "`update_before`" + `, ` + "`update_after`" + `, ` + "`delete`" + `, the names Benthos CDC inputs use).
Rows of one bucket arrive in the order they were written.

== Primary-key tables: changelog or latest values

With ` + "`changelog: true`" + ` (the default) every change record of each snapshot is emitted with its row kind: the
table's changelog files when it has a ` + "`changelog-producer`" + `, its delta files otherwise. With ` + "`changelog: false`" + ` the
input emits an upsert stream, what a key-value store (Redis, a SQL upsert) needs: the full read is the merged
table, as always, and for each later snapshot only the last change of each key in it, never a ` + "`-U`" + `: ` + "`+I`" + `
or ` + "`+U`" + ` is the key's new value, ` + "`-D`" + ` (` + "`operation: delete`" + `) removes it. Applying the messages in order
to a map gives the merged table after every snapshot. This is how Flink reads a table without changelog producer
(an upsert changelog) and what its upsert-kafka sink keeps. ` + "`changelog: false`" + ` on an append table, or on a
partial-update or aggregation table without a ` + "`lookup`" + ` or ` + "`full-compaction`" + ` changelog producer (whose delta
records are not whole rows), fails at connect.

== Sharded readers

` + "`shard: {count: N, index: i}`" + ` lets N processes read one table together, every row read by exactly one of them.
On a bucketed table shard i reads the buckets b with b mod N = i, so each bucket's order is kept; on an append
table without buckets (` + "`bucket: -1`" + `) it reads the data files whose name hashes to i (FNV-1a 32 of the file
name, mod N). Files of other shards are never opened, and a snapshot with nothing for a shard still moves its
consumer. The processes share one config and differ in ` + "`index`" + ` only (` + "`index: ${SHARD_INDEX}`" + `): the
` + "`consumer_id`" + ` is suffixed with ` + "`-shard-<i>-of-<N>`" + `, so each shard keeps its own position. Changing N starts new
consumers.

== Partition filter

` + "`partition_filter`" + ` reads only some partitions, pruning whole manifests and files by their partition statistics.
A map is a conjunction: each key is a partition key, each value a scalar (equality) or a list (` + "`IN`" + `). A list of
maps is their disjunction. ` + "`null`" + ` matches the default partition. Values are converted to each key's type as
the output converts message fields; quote them to be safe (YAML reads an unquoted ` + "`2024-05-30`" + ` as a timestamp,
which is turned back into that text). A bounded read whose filter matches no partition with data in the snapshots it
reads logs a warning naming the filter when it ends, since it otherwise looks like an empty table.

== Errors that stop the stream, and errors that are retried

An error that retrying cannot fix ends the input, and ` + "`benthos-paimon`" + ` stops the stream gracefully and exits
with code 1, printing the error last: a table feature this input does not read (ORC data files, ORC or Parquet
manifests), a missing S3 bucket, access denied, ` + "`columns`" + ` or a ` + "`partition_filter`" + ` that do not fit the table,
a next snapshot that expired before it was read (with ` + "`on_expired: error`" + `), and, with ` + "`bounded: true`" + `, a
missing table (a tailing input waits for the table to be created). A local
warehouse directory the input created is removed if it is still empty. Damaged files are not such errors: the input
reports them and tries again, so that a bounded read never ends short. Connection errors that may pass (refused
connections, time-outs, 5xx answers, a table not created yet) are retried after 500ms, then after twice the previous
wait, up to at most 30s; each log line says which failure in a row it is and when the next attempt comes.
`

// ConfigSpec returns the complete config spec of the paimon input.
func ConfigSpec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Version("0.1.0").
		Summary("Tails an Apache Paimon table snapshot by snapshot with Paimon's scan modes, one message per row, keeping its progress in the table as a consumer that advances only past acknowledged snapshots.").
		Description(inputDescription).
		Fields(config.TableFields()...).
		Fields(
			service.NewStringAnnotatedEnumField(fieldScanMode, map[string]string{
				string(ScanLatestFull):       "All rows of the latest snapshot, then the new rows of every later snapshot (Paimon's default).",
				string(ScanFull):             "Paimon's deprecated alias of `latest-full`.",
				string(ScanLatest):           "Only the new rows of snapshots committed after the start.",
				string(ScanFromTimestamp):    "The new rows of every snapshot committed at or after `scan_timestamp`.",
				string(ScanFromSnapshot):     "The new rows of snapshot `scan_snapshot_id` and of every later snapshot.",
				string(ScanFromSnapshotFull): "All rows of snapshot `scan_snapshot_id`, then the new rows of every later snapshot.",
			}).
				Description("Where to start reading, as Paimon's `scan.mode`. A stored `consumer_id` position overrides it.").
				Default(string(ScanLatestFull)),
			service.NewStringField(fieldScanTimestamp).
				Description("The start time of `scan_mode: from-timestamp`: RFC 3339 text (`2024-05-30T12:00:00Z`; without an "+
					"offset it is taken as UTC, not as the machine's zone) or epoch milliseconds (`1717070400000`). Reading "+
					"starts after the last snapshot committed before it.").
				Default("").
				Examples("2024-05-30T12:00:00Z", "1717070400000"),
			service.NewIntField(fieldScanSnapshotID).
				Description("The snapshot id of `scan_mode: from-snapshot` and `from-snapshot-full`; 0 means unset.").
				Default(0).
				Example(42).
				LintRule(`root = if this < 0 { [ "scan_snapshot_id must be a positive snapshot id" ] }`),
			service.NewDurationField(fieldDiscoveryInterval).
				Description("The longest wait before looking for a new snapshot once all committed ones have been read "+
					"(Paimon's `continuous.discovery-interval`). On a local disk (Linux) the input also watches the snapshot "+
					"directory and looks as soon as a snapshot is written. On S3 it probes for the next snapshot's name with one "+
					"`HEAD` request, soon after the last snapshot read (after 10 ms, the wait then growing by half up to this "+
					"interval), and polls in full (five requests, which also detect expired snapshots and a recreated table) "+
					"every 16th time instead, as "+
					"Java's reader does: an idle input costs 1.25 requests per interval, 4,500 an hour at `1s` and 45,000 at "+
					"`100ms` (a full poll every interval cost 18,000 and 180,000); after each new snapshot the probes come "+
					"sooner (12 in the 2.6 s after it at `1s`). Lower values cut the latency of the first snapshot after a "+
					"quiet period at the cost of more requests.").
				Default(DefaultDiscoveryInterval.String()).
				Examples("100ms", "10s"),
			service.NewStringField(fieldConsumerID).
				Description("Keep progress in the table as consumer `consumer/consumer-<id>`, Paimon's `consumer-id`. The "+
					"consumer advances only past snapshots whose messages are all acknowledged, resumes reading after a "+
					"restart (overriding `scan_mode`), and protects unread snapshots from expiry by Java's and our writers. "+
					"With `shard.count` > 1 the id is suffixed with `-shard-<index>-of-<count>`. Leave empty to keep no progress.").
				Default("").
				Example("orders-to-warehouse").
				LintRule(`root = if this.contains("/") || this.contains("\\") || this.trim() != this { [ "consumer_id must not contain '/', '\\' or leading or trailing spaces" ] }`),
			service.NewBoolField(fieldBounded).
				Description("Stop after the latest snapshot that existed at start (`ErrEndOfInput` once every message is "+
					"acknowledged), instead of tailing forever. With a `consumer_id` the position is saved before the input ends.").
				Default(false),
			service.NewAnyField(fieldPartitionFilter).
				Description("Read only the partitions that match: a map from partition key to a value (equality) or a list "+
					"of values (IN), all keys required to match; or a list of such maps, any of which may match. `null` "+
					"matches the default partition. Keys must be partition keys of the table; values are converted to the "+
					"key's type. Quote dates. The default, an empty map, reads every partition.").
				Examples(
					map[string]any{"dt": "2024-05-30"},
					map[string]any{"dt": []any{"2024-05-30", "2024-05-31"}, "region": "eu"},
					[]any{map[string]any{"dt": "2024-05-30", "region": "eu"}, map[string]any{"dt": "2024-05-31"}},
				).
				Default(map[string]any{}),
			service.NewStringListField(fieldColumns).
				Description("Read only these columns, in this order; empty reads all columns in schema order.").
				Default([]any{}).
				Example([]any{"id", "ts", "amount"}),
			service.NewIntField(fieldBatchSize).
				Description("The maximum number of rows (messages) in one message batch. A batch never spans two snapshots.").
				Default(DefaultBatchSize).
				LintRule(`root = if this < 1 { [ "batch_size must be at least 1" ] }`),
			service.NewBoolField(fieldReadOverwrite).
				Description("Also emit the rows added by `OVERWRITE` snapshots (partition overwrites, partition expiry), "+
					"like Paimon's `streaming-read-append-overwrite`. Off by default: an overwrite replaces rows that were "+
					"already emitted, and the rows it removes are not retracted.").
				Default(false).
				Advanced(),
			service.NewStringAnnotatedEnumField(fieldOnExpired, map[string]string{
				string(OnExpiredError):    "Stop with an error naming the expired snapshot and the earliest one still present.",
				string(OnExpiredEarliest): "Skip ahead to the earliest snapshot still present, dropping the expired ones.",
			}).
				Description("What to do when the next snapshot to read has been expired while reading (the reader fell "+
					"behind snapshot expiry). A start position that has expired always moves to the earliest snapshot.").
				Default(string(OnExpiredError)).
				Advanced(),
			service.NewBoolField(fieldChangelog).
				Description("Primary-key tables: `true` emits every change of each snapshot with its row kind "+
					"(`+I`, `-U`, `+U`, `-D`); `false` emits only the latest value of each changed key per snapshot, as "+
					"an upsert stream for a key-value store: `+I`/`+U` set the key, `-D` (operation `delete`) removes it, "+
					"no `-U`. The first full read is the merged table either way. `false` is refused on append tables.").
				Default(true),
			service.NewStringAnnotatedEnumField(fieldMessageFormat, map[string]string{
				string(MessageFormatStructured): "Each message is the row as a structured object: a mapping reads its fields at no parsing cost; an output that writes the message encodes it as JSON first.",
				string(MessageFormatJSON): "Each message's bytes are the row's JSON text, written directly from the column values: the same text an output writes for a `structured` message, " +
					"for about a third of the CPU per row in pipelines that write rows out unchanged (to `file`, `kafka`, `http_client`, ...); but a processor that reads the " +
					"message's content (a mapping reading `this`) parses the JSON again, and its numbers are then JSON numbers rather than the integers and floats of a `structured` message. Metadata needs no parsing.",
			}).
				Description("The form of each message: `structured` (a JSON object value) or `json` (its JSON text as the message's bytes). "+
					"The JSON text and the metadata are the same either way; the choice is where the cost falls. "+
					"Use `json` when most messages are written out without being mapped.").
				Default(string(MessageFormatStructured)).
				Advanced(),
			service.NewStringListField(fieldMetadataKeys).
				Description("The metadata keys set on each message, of those listed above (a primary-key table's rows "+
					"also carry `paimon_row_kind` and `operation`). Each costs CPU per message: setting all of them took about "+
					"a quarter of the input's CPU on rows of 9 columns (`BenchmarkTail`). List only the keys the pipeline reads, or `[]` for none. "+
					"The input's acknowledgements and consumer position do not depend on them.").
				Default(AllMetadataKeys.Names()).
				Example([]string{rowconv.MetaRowKind, rowconv.MetaOperation}).
				Example([]string{}).
				Advanced(),
			service.NewObjectField(fieldShard,
				service.NewIntField(fieldShardCount).
					Description("The number of processes that read the table together.").
					Default(1),
				service.NewIntField(fieldShardIndex).
					Description("This process's shard, from 0 to `count - 1`; usually from an environment variable.").
					Default(0).
					Example("${SHARD_INDEX}"),
			).
				Description("Read one of `count` disjoint parts of the table, so that `count` processes share it: "+
					"buckets with `bucket mod count = index`, or on an append table without buckets the data files "+
					"whose name's FNV-1a 32 hash mod count is `index`. A `consumer_id` is suffixed with "+
					"`-shard-<index>-of-<count>`, one consumer per shard.").
				Advanced(),
			service.NewAutoRetryNacksToggleField(),
		).
		LintRule(inputLintRule).
		Example("Tail a table to stdout",
			"Prints every row of the table and then each new row as it is committed, keeping its position in the table.",
			`
input:
  paimon:
    warehouse: /var/lib/paimon
    table: events
    consumer_id: stdout-tail
output:
  stdout: {}
`).
		Example("Replay one day from a point in time, then stop",
			"Reads the rows committed since a timestamp in one partition of a table on S3, up to the snapshot that was "+
				"latest at start.",
			`
input:
  paimon:
    warehouse: s3://lake/warehouse
    database: sales
    table: orders
    scan_mode: from-timestamp
    scan_timestamp: 2024-05-30T00:00:00Z
    partition_filter:
      dt: "2024-05-30"
    columns: [ id, amount, ts ]
    bounded: true
    s3:
      region: eu-west-1
output:
  stdout: {}
`).
		Example("Latest values into a key-value store, three processes",
			"Each of three processes reads a third of a primary-key table's buckets and gets an upsert stream: "+
				"the latest value of each changed key per snapshot (`+I`/`+U`), or its deletion (`-D`, operation `delete`). "+
				"The three run one config with `index` set per process (usually `${SHARD_INDEX}`); each keeps its consumer "+
				"`orders-to-kv-shard-<index>-of-3`.",
			`
input:
  paimon:
    warehouse: s3://lake/warehouse
    database: shop
    table: orders
    consumer_id: orders-to-kv
    changelog: false
    shard:
      count: 3
      index: 0 # 1 and 2 in the other processes
output:
  stdout: {}
`).
		Example("Copy a table",
			"Copies every row of one table into another, preserving types; progress survives restarts.",
			`
input:
  paimon:
    warehouse: /var/lib/paimon
    table: events
    consumer_id: copy-to-events-v2
output:
  paimon:
    warehouse: /var/lib/paimon
    table: events_v2
`)
}

// inputLintRule reports wrong field combinations when a config is linted;
// ParseConfig checks the same at start-up.
const inputLintRule = `
let mode = this.scan_mode.or("latest-full")
let has_ts = this.scan_timestamp.or("").string() != ""
let has_id = this.scan_snapshot_id.or(0) != 0
let cols = this.columns.or([])
let shard_count = this.shard.count.or(1).number().catch(1)
let shard_index = this.shard.index.or(0).number().catch(0)
root = [
  if $mode == "from-timestamp" && !$has_ts { "scan_timestamp is required when scan_mode is from-timestamp" },
  if $mode != "from-timestamp" && $has_ts { "scan_timestamp is only used with scan_mode from-timestamp, not %s".format($mode) },
  if ($mode == "from-snapshot" || $mode == "from-snapshot-full") && !$has_id { "scan_snapshot_id is required when scan_mode is %s".format($mode) },
  if !($mode == "from-snapshot" || $mode == "from-snapshot-full") && $has_id { "scan_snapshot_id is only used with scan_mode from-snapshot or from-snapshot-full, not %s".format($mode) },
  if this.bounded.or(false) && $mode == "latest" { "bounded with scan_mode latest reads nothing: latest starts after the snapshot where a bounded read ends" },
  if $cols.length() != $cols.unique().length() { "columns has duplicates" },
  if this.partition_filter.or(null) != null && !["object", "array"].contains(this.partition_filter.type()) { "partition_filter must be a map of partition key to value(s), or a list of such maps" },
  if $shard_count < 1 { "shard.count must be at least 1, not %v".format($shard_count) },
  if $shard_count >= 1 && ($shard_index < 0 || $shard_index >= $shard_count) { "shard.index must be from 0 to shard.count - 1 (%v), not %v".format($shard_count - 1, $shard_index) },
]
`

// ParseConfig reads and validates the input's configuration; errors name the
// field.
func ParseConfig(conf *service.ParsedConfig) (Config, error) {
	var c Config
	var err error
	if c.Table, err = config.ParseTable(conf); err != nil {
		return c, err
	}
	var s string
	if s, err = conf.FieldString(fieldScanMode); err != nil {
		return c, err
	}
	c.ScanMode = ScanMode(s)
	switch c.ScanMode {
	case ScanFull:
		c.ScanMode = ScanLatestFull
	case ScanLatestFull, ScanLatest, ScanFromTimestamp, ScanFromSnapshot, ScanFromSnapshotFull:
	default:
		return c, fmt.Errorf("scan_mode %q is not one of latest-full, full, latest, from-timestamp, from-snapshot, from-snapshot-full", s)
	}
	if s, err = conf.FieldString(fieldScanTimestamp); err != nil {
		return c, err
	}
	hasTS := strings.TrimSpace(s) != ""
	switch {
	case c.ScanMode == ScanFromTimestamp && !hasTS:
		return c, errors.New("scan_timestamp is required when scan_mode is from-timestamp")
	case c.ScanMode != ScanFromTimestamp && hasTS:
		return c, fmt.Errorf("scan_timestamp is only used with scan_mode from-timestamp, not %s", c.ScanMode)
	case hasTS:
		if c.ScanTimestampMillis, err = ParseScanTimestamp(s); err != nil {
			return c, err
		}
	}
	fromSnapshot := c.ScanMode == ScanFromSnapshot || c.ScanMode == ScanFromSnapshotFull
	id, err := conf.FieldInt(fieldScanSnapshotID)
	if err != nil {
		return c, err
	}
	switch {
	case id < 0:
		return c, fmt.Errorf("scan_snapshot_id must be a positive snapshot id, not %d", id)
	case fromSnapshot && id == 0:
		return c, fmt.Errorf("scan_snapshot_id is required when scan_mode is %s", c.ScanMode)
	case !fromSnapshot && id != 0:
		return c, fmt.Errorf("scan_snapshot_id is only used with scan_mode from-snapshot or from-snapshot-full, not %s", c.ScanMode)
	}
	c.ScanSnapshotID = int64(id)
	if c.DiscoveryInterval, err = conf.FieldDuration(fieldDiscoveryInterval); err != nil {
		return c, err
	}
	if c.DiscoveryInterval <= 0 {
		return c, fmt.Errorf("discovery_interval must be positive, not %s", c.DiscoveryInterval)
	}
	if c.ConsumerID, err = conf.FieldString(fieldConsumerID); err != nil {
		return c, err
	}
	if err := validateConsumerID(c.ConsumerID); err != nil {
		return c, err
	}
	if c.Bounded, err = conf.FieldBool(fieldBounded); err != nil {
		return c, err
	}
	if c.Bounded && c.ScanMode == ScanLatest {
		return c, errors.New("bounded with scan_mode latest reads nothing: latest starts after the snapshot where a bounded read ends")
	}
	if conf.Contains(fieldPartitionFilter) {
		raw, err := conf.FieldAny(fieldPartitionFilter)
		if err != nil {
			return c, err
		}
		// The default, an empty map, is no filter (so that a generated
		// config reads every partition).
		if m, ok := raw.(map[string]any); !ok || len(m) > 0 {
			if c.PartitionFilter, err = partition.ParseConfig(fieldPartitionFilter, raw); err != nil {
				return c, err
			}
		}
	}
	if c.Columns, err = conf.FieldStringList(fieldColumns); err != nil {
		return c, err
	}
	seen := map[string]bool{}
	for _, col := range c.Columns {
		if col == "" {
			return c, errors.New("columns: a column name must not be empty")
		}
		if seen[col] {
			return c, fmt.Errorf("columns: %q is listed twice", col)
		}
		seen[col] = true
	}
	if c.BatchSize, err = conf.FieldInt(fieldBatchSize); err != nil {
		return c, err
	}
	if c.BatchSize < 1 {
		return c, fmt.Errorf("batch_size must be at least 1, not %d", c.BatchSize)
	}
	if c.ReadOverwrite, err = conf.FieldBool(fieldReadOverwrite); err != nil {
		return c, err
	}
	if s, err = conf.FieldString(fieldOnExpired); err != nil {
		return c, err
	}
	c.OnExpired = OnExpired(s)
	if c.OnExpired != OnExpiredError && c.OnExpired != OnExpiredEarliest {
		return c, fmt.Errorf("on_expired %q is not error or earliest", s)
	}
	if c.AutoReplayNacks, err = conf.FieldBool(fieldAutoReplayNacks); err != nil {
		return c, err
	}
	if c.Changelog, err = conf.FieldBool(fieldChangelog); err != nil {
		return c, err
	}
	if s, err = conf.FieldString(fieldMessageFormat); err != nil {
		return c, err
	}
	c.MessageFormat = MessageFormat(s)
	if c.MessageFormat != MessageFormatStructured && c.MessageFormat != MessageFormatJSON {
		return c, fmt.Errorf("message_format %q is not structured or json", s)
	}
	keys, err := conf.FieldStringList(fieldMetadataKeys)
	if err != nil {
		return c, err
	}
	if c.MetadataKeys, err = ParseMetadataKeys(keys); err != nil {
		return c, fmt.Errorf("%s: %w", fieldMetadataKeys, err)
	}
	if c.Shard.Count, err = conf.FieldInt(fieldShard, fieldShardCount); err != nil {
		return c, err
	}
	if c.Shard.Index, err = conf.FieldInt(fieldShard, fieldShardIndex); err != nil {
		return c, err
	}
	switch {
	case c.Shard.Count < 1:
		return c, fmt.Errorf("shard.count must be at least 1, not %d", c.Shard.Count)
	case c.Shard.Index < 0 || c.Shard.Index >= c.Shard.Count:
		return c, fmt.Errorf("shard.index must be from 0 to shard.count - 1 (%d), not %d", c.Shard.Count-1, c.Shard.Index)
	}
	return c, nil
}

// ParseScanTimestamp reads scan_timestamp: epoch milliseconds (digits, an
// optional sign) or RFC 3339 text as the output accepts it for a
// TIMESTAMP_LTZ column (an offset, or none for UTC; fractions below a
// millisecond are dropped).
func ParseScanTimestamp(s string) (int64, error) {
	v, err := rowconv.ConvertValue(types.LocalZonedTimestampType(3), strings.TrimSpace(s), rowconv.ConvertOptions{TimestampUnit: rowconv.UnitMillis})
	if err != nil {
		var ce *rowconv.ConvertError
		if errors.As(err, &ce) {
			return 0, fmt.Errorf("scan_timestamp %q: expected RFC 3339 text or epoch milliseconds (%s)", s, ce.Msg)
		}
		return 0, fmt.Errorf("scan_timestamp %q: %w", s, err)
	}
	return v.(types.Timestamp).Millis, nil
}

// validateConsumerID checks that the id can name consumer/consumer-<id> on
// every storage.
func validateConsumerID(id string) error {
	if id == "" {
		return nil
	}
	if strings.TrimSpace(id) != id || strings.ContainsAny(id, `/\`) {
		return fmt.Errorf("consumer_id %q must not contain '/', '\\' or leading or trailing spaces", id)
	}
	for _, r := range id {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("consumer_id %q contains a control character or invalid UTF-8", id)
		}
	}
	return nil
}
