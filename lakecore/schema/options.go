package schema

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
)

// Table option keys lakecore reads, spelled as apache/paimon
// paimon-api/src/main/java/org/apache/paimon/CoreOptions.java (1.4) spells them.
const (
	OptBucket                           = "bucket"
	OptDynamicBucketTargetRowNum        = "dynamic-bucket.target-row-num"
	OptDynamicBucketMaxBuckets          = "dynamic-bucket.max-buckets"
	OptIndexFileInDataFileDir           = "index-file-in-data-file-dir"
	OptBucketKey                        = "bucket-key"
	OptBucketFunctionType               = "bucket-function.type"
	OptFileFormat                       = "file.format"
	OptFileCompression                  = "file.compression"
	OptFileCompressionZstdLevel         = "file.compression.zstd-level"
	OptTargetFileSize                   = "target-file-size"
	OptManifestFormat                   = "manifest.format"
	OptManifestCompression              = "manifest.compression"
	OptManifestTargetFileSize           = "manifest.target-file-size"
	OptManifestMergeMinCount            = "manifest.merge-min-count"
	OptManifestFullCompactionThreshold  = "manifest.full-compaction-threshold-size"
	OptManifestDeleteFileDropStats      = "manifest.delete-file-drop-stats"
	OptMetadataStatsMode                = "metadata.stats-mode"
	OptMetadataStatsDenseStore          = "metadata.stats-dense-store"
	OptMetadataStatsKeepFirstNColumns   = "metadata.stats-keep-first-n-columns"
	OptPartitionDefaultName             = "partition.default-name"
	OptPartitionLegacyName              = "partition.legacy-name"
	OptDataFilePrefix                   = "data-file.prefix"
	OptDataFilePathDirectory            = "data-file.path-directory"
	OptDataFileExternalPaths            = "data-file.external-paths"
	OptFileSuffixIncludeCompression     = "file.suffix.include.compression"
	OptFileIndexInManifestThreshold     = "file-index.in-manifest-threshold"
	OptCommitMaxRetries                 = "commit.max-retries"
	OptCommitMinRetryWait               = "commit.min-retry-wait"
	OptCommitMaxRetryWait               = "commit.max-retry-wait"
	OptCommitTimeout                    = "commit.timeout"
	OptCommitForceCreateSnapshot        = "commit.force-create-snapshot"
	OptSnapshotIgnoreEmptyCommit        = "snapshot.ignore-empty-commit"
	OptSnapshotNumRetainedMin           = "snapshot.num-retained.min"
	OptSnapshotNumRetainedMax           = "snapshot.num-retained.max"
	OptSnapshotTimeRetained             = "snapshot.time-retained"
	OptSnapshotExpireLimit              = "snapshot.expire.limit"
	OptSnapshotCleanEmptyDirectories    = "snapshot.clean-empty-directories"
	OptPartitionExpirationTime          = "partition.expiration-time"
	OptPartitionExpirationCheckInterval = "partition.expiration-check-interval"
	OptPartitionExpirationMaxNum        = "partition.expiration-max-num"
	OptPartitionExpirationStrategy      = "partition.expiration-strategy"
	OptPartitionTimestampFormatter      = "partition.timestamp-formatter"
	OptPartitionTimestampPattern        = "partition.timestamp-pattern"
	OptConsumerID                       = "consumer-id"
	OptConsumerExpirationTime           = "consumer.expiration-time"
	OptWriteOnly                        = "write-only"
	OptDeletionVectorsEnabled           = "deletion-vectors.enabled"
	OptRowTrackingEnabled               = "row-tracking.enabled"
	OptDataEvolutionEnabled             = "data-evolution.enabled"
	OptCompactionMinFileNum             = "compaction.min.file-num"
	OptCompactionFileNumLimit           = "compaction.file-num-limit"
	OptSourceSplitTargetSize            = "source.split.target-size"
	OptSourceSplitOpenFileCost          = "source.split.open-file-cost"
	OptContinuousDiscoveryInterval      = "continuous.discovery-interval"
	OptScanMode                         = "scan.mode"
	OptAddColumnBeforePartition         = "add-column-before-partition"
	OptWriteBufferSize                  = "write-buffer-size"
	OptWriteBufferSpillable             = "write-buffer-spillable"
	OptWriteBufferSpillMaxDiskSize      = "write-buffer-spill.max-disk-size"
	OptLocalSortMaxNumFileHandles       = "local-sort.max-num-file-handles"
	OptSpillCompression                 = "spill-compression"
	OptSpillCompressionZstdLevel        = "spill-compression.zstd-level"
)

// Options are a table's options (the "options" of schema-N), all values
// strings as Paimon stores them. The accessors return Paimon 1.4's default
// when a key is absent (paimon-behaviour.md §6) and an error wrapping
// ErrInvalidOption, naming the key and value, when a present value does not
// parse as Java's Options would parse it. A nil Options is valid and empty.
type Options map[string]string

// Get returns the raw value of key.
func (o Options) Get(key string) (string, bool) {
	v, ok := o[key]
	return v, ok
}

func (o Options) str(key, def string) string {
	if v, ok := o[key]; ok {
		return v
	}
	return def
}

func optErr(key, value string, why string) error {
	return fmt.Errorf("%w: %s = %q: %s", ErrInvalidOption, key, value, why)
}

// intOpt parses as Integer.parseInt does (optional sign, digits, no spaces).
func (o Options) intOpt(key string, def int) (int, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return def, optErr(key, v, "not a 32-bit integer")
	}
	return int(n), nil
}

// boolOpt parses as OptionsUtils.convertToBoolean does (true/false, any case).
func (o Options) boolOpt(key string, def bool) (bool, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return def, optErr(key, v, "expected true or false")
}

func (o Options) memOpt(key string, def int64) (int64, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	n, err := ParseMemorySize(v)
	if err != nil {
		return def, fmt.Errorf("option %s: %w", key, err)
	}
	return n, nil
}

func (o Options) durOpt(key string, def time.Duration) (time.Duration, error) {
	v, ok := o[key]
	if !ok {
		return def, nil
	}
	d, err := ParseDuration(v)
	if err != nil {
		return def, fmt.Errorf("option %s: %w", key, err)
	}
	return d, nil
}

// optionalDur returns (0, false, nil) when key is absent.
func (o Options) optionalDur(key string) (time.Duration, bool, error) {
	if _, ok := o[key]; !ok {
		return 0, false, nil
	}
	d, err := o.durOpt(key, 0)
	return d, err == nil, err
}

// Bucket is "bucket": -1 (default) for an unaware-bucket append table, N>0
// for N fixed hash buckets.
func (o Options) Bucket() (int, error) { return o.intOpt(OptBucket, -1) }

// BucketKey is "bucket-key" split at commas exactly as Java splits it (no
// trimming), or nil when unset or whitespace only.
func (o Options) BucketKey() []string {
	v, ok := o[OptBucketKey]
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// BucketFunctionType is "bucket-function.type" lower-cased: "default"
// (Murmur hash of the bucket-key BinaryRow), "mod" or "hive".
func (o Options) BucketFunctionType() string {
	return strings.ToLower(o.str(OptBucketFunctionType, "default"))
}

// FileFormat is "file.format" lower-cased (CoreOptions.normalizeFileFormat),
// default "parquet".
func (o Options) FileFormat() string { return strings.ToLower(o.str(OptFileFormat, "parquet")) }

// ManifestFormat is "manifest.format" lower-cased, default "avro".
func (o Options) ManifestFormat() string { return strings.ToLower(o.str(OptManifestFormat, "avro")) }

// FileCompression is "file.compression", default "zstd".
func (o Options) FileCompression() string { return o.str(OptFileCompression, "zstd") }

// ZstdLevel is "file.compression.zstd-level", default 1; Java uses it for
// zstd data files and zstd manifests alike.
func (o Options) ZstdLevel() (int, error) { return o.intOpt(OptFileCompressionZstdLevel, 1) }

// TargetFileSize is "target-file-size" in bytes; for append tables the
// default is 256 MiB (CoreOptions.targetFileSize(false)).
func (o Options) TargetFileSize() (int64, error) { return o.memOpt(OptTargetFileSize, 256<<20) }

// ManifestCompression is "manifest.compression", default "zstd".
func (o Options) ManifestCompression() string { return o.str(OptManifestCompression, "zstd") }

// ManifestTargetFileSize is "manifest.target-file-size", default 8 MiB.
func (o Options) ManifestTargetFileSize() (int64, error) {
	return o.memOpt(OptManifestTargetFileSize, 8<<20)
}

// ManifestMergeMinCount is "manifest.merge-min-count", default 30.
func (o Options) ManifestMergeMinCount() (int, error) { return o.intOpt(OptManifestMergeMinCount, 30) }

// ManifestFullCompactionThreshold is
// "manifest.full-compaction-threshold-size", default 16 MiB.
func (o Options) ManifestFullCompactionThreshold() (int64, error) {
	return o.memOpt(OptManifestFullCompactionThreshold, 16<<20)
}

// ManifestDeleteFileDropStats is "manifest.delete-file-drop-stats", default
// false.
func (o Options) ManifestDeleteFileDropStats() (bool, error) {
	return o.boolOpt(OptManifestDeleteFileDropStats, false)
}

// StatsDenseStore is "metadata.stats-dense-store", default true.
func (o Options) StatsDenseStore() (bool, error) { return o.boolOpt(OptMetadataStatsDenseStore, true) }

// StatsKeepFirstNColumns is "metadata.stats-keep-first-n-columns", default
// -1 (keep all).
func (o Options) StatsKeepFirstNColumns() (int, error) {
	return o.intOpt(OptMetadataStatsKeepFirstNColumns, -1)
}

// FieldStatsModeKey is the per-field option "fields.<field>.stats-mode".
func FieldStatsModeKey(field string) string { return "fields." + field + ".stats-mode" }

// StatsMode is the stats mode of the named field: "fields.<field>.stats-mode"
// when set, else "metadata.stats-mode" (default truncate(16)). It ignores
// metadata.stats-keep-first-n-columns, which depends on the field's
// position; use StatsModes for a whole row.
func (o Options) StatsMode(field string) (StatsMode, error) {
	key := FieldStatsModeKey(field)
	if v, ok := o[key]; ok {
		m, err := ParseStatsMode(v)
		if err != nil {
			return DefaultStatsMode, fmt.Errorf("option %s: %w", key, err)
		}
		return m, nil
	}
	return o.tableStatsMode()
}

func (o Options) tableStatsMode() (StatsMode, error) {
	v, ok := o[OptMetadataStatsMode]
	if !ok {
		return DefaultStatsMode, nil
	}
	m, err := ParseStatsMode(v)
	if err != nil {
		return DefaultStatsMode, fmt.Errorf("option %s: %w", OptMetadataStatsMode, err)
	}
	return m, nil
}

// StatsModes returns the stats mode of each of fields (the top-level
// columns of a data file, in order) as Java's
// StatsCollectorFactories.createStatsFactories decides it: a per-field
// "fields.<f>.stats-mode" wins; otherwise, once
// metadata.stats-keep-first-n-columns (when >= 0) columns have been counted,
// the rest get StatsNone; otherwise metadata.stats-mode.
func (o Options) StatsModes(fields []string) ([]StatsMode, error) {
	keep, err := o.StatsKeepFirstNColumns()
	if err != nil {
		return nil, err
	}
	table, err := o.tableStatsMode()
	if err != nil {
		return nil, err
	}
	out := make([]StatsMode, len(fields))
	for i, f := range fields {
		key := FieldStatsModeKey(f)
		if v, ok := o[key]; ok {
			m, err := ParseStatsMode(v)
			if err != nil {
				return nil, fmt.Errorf("option %s: %w", key, err)
			}
			out[i] = m
		} else if keep >= 0 && i >= keep {
			out[i] = StatsMode{Kind: StatsNone}
		} else {
			out[i] = table
		}
	}
	return out, nil
}

// PartitionDefaultName is "partition.default-name", default
// "__DEFAULT_PARTITION__": the directory value for a null or blank
// partition value.
func (o Options) PartitionDefaultName() string {
	return o.str(OptPartitionDefaultName, "__DEFAULT_PARTITION__")
}

// PartitionLegacyName is "partition.legacy-name", default true.
func (o Options) PartitionLegacyName() (bool, error) { return o.boolOpt(OptPartitionLegacyName, true) }

// PartitionOptions returns the options that shape partition names:
// partition.default-name and partition.legacy-name.
func (o Options) PartitionOptions() (binrow.PartitionOptions, error) {
	legacy, err := o.PartitionLegacyName()
	if err != nil {
		return binrow.PartitionOptions{}, err
	}
	return binrow.PartitionOptions{DefaultName: o.PartitionDefaultName(), LegacyName: legacy}, nil
}

// DataFilePrefix is "data-file.prefix", default "data-".
func (o Options) DataFilePrefix() string { return o.str(OptDataFilePrefix, "data-") }

// DataFilePathDirectory is "data-file.path-directory", "" when unset.
func (o Options) DataFilePathDirectory() string { return o.str(OptDataFilePathDirectory, "") }

// FileSuffixIncludeCompression is "file.suffix.include.compression",
// default false.
func (o Options) FileSuffixIncludeCompression() (bool, error) {
	return o.boolOpt(OptFileSuffixIncludeCompression, false)
}

// FileIndexInManifestThreshold is "file-index.in-manifest-threshold",
// default 500 bytes.
func (o Options) FileIndexInManifestThreshold() (int64, error) {
	return o.memOpt(OptFileIndexInManifestThreshold, 500)
}

// CommitMaxRetries is "commit.max-retries", default 10.
func (o Options) CommitMaxRetries() (int, error) { return o.intOpt(OptCommitMaxRetries, 10) }

// CommitMinRetryWait is "commit.min-retry-wait", default 10 ms.
func (o Options) CommitMinRetryWait() (time.Duration, error) {
	return o.durOpt(OptCommitMinRetryWait, 10*time.Millisecond)
}

// CommitMaxRetryWait is "commit.max-retry-wait", default 10 s.
func (o Options) CommitMaxRetryWait() (time.Duration, error) {
	return o.durOpt(OptCommitMaxRetryWait, 10*time.Second)
}

// CommitTimeout is "commit.timeout"; unset means unlimited, returned as the
// largest time.Duration (Java uses Long.MAX_VALUE ms).
func (o Options) CommitTimeout() (time.Duration, error) {
	return o.durOpt(OptCommitTimeout, time.Duration(math.MaxInt64))
}

// CommitForceCreateSnapshot is "commit.force-create-snapshot", default
// false.
func (o Options) CommitForceCreateSnapshot() (bool, error) {
	return o.boolOpt(OptCommitForceCreateSnapshot, false)
}

// SnapshotIgnoreEmptyCommit is "snapshot.ignore-empty-commit", which has no
// default: set reports whether the table sets it (Java then lets batch
// commits ignore empty commits and stream commits keep them).
func (o Options) SnapshotIgnoreEmptyCommit() (value, set bool, err error) {
	if _, ok := o[OptSnapshotIgnoreEmptyCommit]; !ok {
		return false, false, nil
	}
	v, err := o.boolOpt(OptSnapshotIgnoreEmptyCommit, false)
	return v, err == nil, err
}

// SnapshotNumRetainedMin is "snapshot.num-retained.min", default 10.
func (o Options) SnapshotNumRetainedMin() (int, error) {
	return o.intOpt(OptSnapshotNumRetainedMin, 10)
}

// SnapshotNumRetainedMax is "snapshot.num-retained.max", default
// Integer.MAX_VALUE.
func (o Options) SnapshotNumRetainedMax() (int, error) {
	return o.intOpt(OptSnapshotNumRetainedMax, math.MaxInt32)
}

// SnapshotTimeRetained is "snapshot.time-retained", default 1 h.
func (o Options) SnapshotTimeRetained() (time.Duration, error) {
	return o.durOpt(OptSnapshotTimeRetained, time.Hour)
}

// SnapshotExpireLimit is "snapshot.expire.limit", default 50 (the code's
// default; Paimon's docs table says 10).
func (o Options) SnapshotExpireLimit() (int, error) { return o.intOpt(OptSnapshotExpireLimit, 50) }

// SnapshotCleanEmptyDirectories is "snapshot.clean-empty-directories",
// default false.
func (o Options) SnapshotCleanEmptyDirectories() (bool, error) {
	return o.boolOpt(OptSnapshotCleanEmptyDirectories, false)
}

// PartitionExpirationTime is "partition.expiration-time"; set is false when
// partition expiration is off (the default).
func (o Options) PartitionExpirationTime() (d time.Duration, set bool, err error) {
	return o.optionalDur(OptPartitionExpirationTime)
}

// PartitionExpirationCheckInterval is "partition.expiration-check-interval",
// default 1 h.
func (o Options) PartitionExpirationCheckInterval() (time.Duration, error) {
	return o.durOpt(OptPartitionExpirationCheckInterval, time.Hour)
}

// PartitionExpirationMaxNum is "partition.expiration-max-num", default 100.
func (o Options) PartitionExpirationMaxNum() (int, error) {
	return o.intOpt(OptPartitionExpirationMaxNum, 100)
}

// PartitionExpirationStrategy is "partition.expiration-strategy" lower-cased,
// default "values-time".
func (o Options) PartitionExpirationStrategy() string {
	return strings.ToLower(o.str(OptPartitionExpirationStrategy, "values-time"))
}

// PartitionTimestampFormatter is "partition.timestamp-formatter", "" when unset.
func (o Options) PartitionTimestampFormatter() string {
	return o.str(OptPartitionTimestampFormatter, "")
}

// PartitionTimestampPattern is "partition.timestamp-pattern", "" when unset.
func (o Options) PartitionTimestampPattern() string { return o.str(OptPartitionTimestampPattern, "") }

// ConsumerID is "consumer-id", "" when unset.
func (o Options) ConsumerID() string { return o.str(OptConsumerID, "") }

// ConsumerExpirationTime is "consumer.expiration-time"; set is false when
// consumers never expire (the default).
func (o Options) ConsumerExpirationTime() (d time.Duration, set bool, err error) {
	return o.optionalDur(OptConsumerExpirationTime)
}

// WriteOnly is "write-only" (fallback key "write.compaction-skip"), default
// false.
func (o Options) WriteOnly() (bool, error) {
	if _, ok := o[OptWriteOnly]; !ok {
		if _, ok := o["write.compaction-skip"]; ok {
			return o.boolOpt("write.compaction-skip", false)
		}
	}
	return o.boolOpt(OptWriteOnly, false)
}

// DynamicBucketTargetRowNum is "dynamic-bucket.target-row-num", the keys
// a dynamic bucket takes before a new one is created, default 2,000,000
// (CoreOptions.DYNAMIC_BUCKET_TARGET_ROW_NUM).
func (o Options) DynamicBucketTargetRowNum() (int64, error) {
	v, ok := o[OptDynamicBucketTargetRowNum]
	if !ok {
		return 2_000_000, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 2_000_000, optErr(OptDynamicBucketTargetRowNum, v, "not a 64-bit integer")
	}
	return n, nil
}

// DynamicBucketMaxBuckets is "dynamic-bucket.max-buckets", the most
// buckets of one partition in dynamic-bucket mode: -1 (the default) for
// unlimited, else greater than 0.
func (o Options) DynamicBucketMaxBuckets() (int, error) {
	n, err := o.intOpt(OptDynamicBucketMaxBuckets, -1)
	if err == nil && n != -1 && n < 1 {
		return -1, optErr(OptDynamicBucketMaxBuckets, o[OptDynamicBucketMaxBuckets], "should either be -1 (unlimited) or greater than 0")
	}
	return n, err
}

// IndexFileInDataFileDir is "index-file-in-data-file-dir", default false:
// index files go to the bucket's directory instead of index/.
func (o Options) IndexFileInDataFileDir() (bool, error) {
	return o.boolOpt(OptIndexFileInDataFileDir, false)
}

// DeletionVectorsEnabled is "deletion-vectors.enabled", default false.
func (o Options) DeletionVectorsEnabled() (bool, error) {
	return o.boolOpt(OptDeletionVectorsEnabled, false)
}

// RowTrackingEnabled is "row-tracking.enabled", default false.
func (o Options) RowTrackingEnabled() (bool, error) { return o.boolOpt(OptRowTrackingEnabled, false) }

// DataEvolutionEnabled is "data-evolution.enabled", default false.
func (o Options) DataEvolutionEnabled() (bool, error) {
	return o.boolOpt(OptDataEvolutionEnabled, false)
}

// CompactionMinFileNum is "compaction.min.file-num", default 5.
func (o Options) CompactionMinFileNum() (int, error) { return o.intOpt(OptCompactionMinFileNum, 5) }

// CompactionFileNumLimit is "compaction.file-num-limit", default 100000.
func (o Options) CompactionFileNumLimit() (int, error) {
	return o.intOpt(OptCompactionFileNumLimit, 100000)
}

// SourceSplitTargetSize is "source.split.target-size", default 128 MiB.
func (o Options) SourceSplitTargetSize() (int64, error) {
	return o.memOpt(OptSourceSplitTargetSize, 128<<20)
}

// SourceSplitOpenFileCost is "source.split.open-file-cost", default 4 MiB.
func (o Options) SourceSplitOpenFileCost() (int64, error) {
	return o.memOpt(OptSourceSplitOpenFileCost, 4<<20)
}

// ContinuousDiscoveryInterval is "continuous.discovery-interval", default 10 s.
func (o Options) ContinuousDiscoveryInterval() (time.Duration, error) {
	return o.durOpt(OptContinuousDiscoveryInterval, 10*time.Second)
}

// ScanMode is "scan.mode" lower-cased (fallback key "log.scan"), default
// "default".
func (o Options) ScanMode() string {
	if v, ok := o[OptScanMode]; ok {
		return strings.ToLower(v)
	}
	return strings.ToLower(o.str("log.scan", "default"))
}

// AddColumnBeforePartition is "add-column-before-partition", default false:
// when true, ALTER TABLE ADD COLUMN puts a new top-level column before the
// first partition column.
func (o Options) AddColumnBeforePartition() (bool, error) {
	return o.boolOpt(OptAddColumnBeforePartition, false)
}

// Validate parses every typed option that is set and returns the first
// error, checking in a fixed order so the result is deterministic. It does
// not check combinations of options; TableSchema.Validate does.
func (o Options) Validate() error {
	checks := []func() error{
		func() error { _, err := o.Bucket(); return err },
		func() error { _, err := o.ZstdLevel(); return err },
		func() error { _, err := o.DynamicBucketTargetRowNum(); return err },
		func() error { _, err := o.DynamicBucketMaxBuckets(); return err },
		func() error { _, err := o.IndexFileInDataFileDir(); return err },
		func() error { _, err := o.TargetFileSize(); return err },
		func() error { _, err := o.ManifestTargetFileSize(); return err },
		func() error { _, err := o.ManifestMergeMinCount(); return err },
		func() error { _, err := o.ManifestFullCompactionThreshold(); return err },
		func() error { _, err := o.ManifestDeleteFileDropStats(); return err },
		func() error { _, err := o.StatsDenseStore(); return err },
		func() error { _, err := o.StatsKeepFirstNColumns(); return err },
		func() error { _, err := o.tableStatsMode(); return err },
		func() error { _, err := o.PartitionLegacyName(); return err },
		func() error { _, err := o.FileSuffixIncludeCompression(); return err },
		func() error { _, err := o.FileIndexInManifestThreshold(); return err },
		func() error { _, err := o.CommitMaxRetries(); return err },
		func() error { _, err := o.CommitMinRetryWait(); return err },
		func() error { _, err := o.CommitMaxRetryWait(); return err },
		func() error { _, err := o.CommitTimeout(); return err },
		func() error { _, err := o.CommitForceCreateSnapshot(); return err },
		func() error { _, _, err := o.SnapshotIgnoreEmptyCommit(); return err },
		func() error { _, err := o.SnapshotNumRetainedMin(); return err },
		func() error { _, err := o.SnapshotNumRetainedMax(); return err },
		func() error { _, err := o.SnapshotTimeRetained(); return err },
		func() error { _, err := o.SnapshotExpireLimit(); return err },
		func() error { _, err := o.SnapshotCleanEmptyDirectories(); return err },
		func() error { _, _, err := o.PartitionExpirationTime(); return err },
		func() error { _, err := o.PartitionExpirationCheckInterval(); return err },
		func() error { _, err := o.PartitionExpirationMaxNum(); return err },
		func() error { _, _, err := o.ConsumerExpirationTime(); return err },
		func() error { _, err := o.WriteOnly(); return err },
		func() error { _, err := o.DeletionVectorsEnabled(); return err },
		func() error { _, err := o.RowTrackingEnabled(); return err },
		func() error { _, err := o.DataEvolutionEnabled(); return err },
		func() error { _, err := o.CompactionMinFileNum(); return err },
		func() error { _, err := o.CompactionFileNumLimit(); return err },
		func() error { _, err := o.SourceSplitTargetSize(); return err },
		func() error { _, err := o.SourceSplitOpenFileCost(); return err },
		func() error { _, err := o.ContinuousDiscoveryInterval(); return err },
		func() error { _, err := o.AddColumnBeforePartition(); return err },
		func() error { _, err := o.memOpt(OptWriteBufferSize, 0); return err },
		func() error { _, err := o.WriteBufferSpillable(); return err },
		func() error { _, err := o.WriteBufferSpillMaxDiskSize(); return err },
		func() error { _, err := o.LocalSortMaxNumFileHandles(); return err },
		func() error { _, err := o.SpillCompressionZstdLevel(); return err },
	}
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(o))
	for k := range o {
		if strings.HasPrefix(k, "fields.") && strings.HasSuffix(k, ".stats-mode") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := ParseStatsMode(o[k]); err != nil {
			return fmt.Errorf("option %s: %w", k, err)
		}
	}
	return nil
}

// ChangelogRowDeduplicate is "changelog-producer.row-deduplicate", default
// false: whether a lookup or full-compaction changelog leaves out a -U/+U
// pair whose values are equal.
func (o Options) ChangelogRowDeduplicate() (bool, error) {
	return o.boolOpt("changelog-producer.row-deduplicate", false)
}

// ChangelogRowDeduplicateIgnoreFields is
// "changelog-producer.row-deduplicate-ignore-fields": the columns that row
// deduplication does not compare.
func (o Options) ChangelogRowDeduplicateIgnoreFields() []string {
	var out []string
	for _, f := range strings.Split(o.str("changelog-producer.row-deduplicate-ignore-fields", ""), ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// CompactionForceUpLevel0 is "compaction.force-up-level-0", default false:
// every compaction of a primary-key table takes level 0 up
// (ForceUpLevel0Compaction) even without lookup.
func (o Options) CompactionForceUpLevel0() (bool, error) {
	return o.boolOpt("compaction.force-up-level-0", false)
}

// WriteBufferSpillable is "write-buffer-spillable", default true: a full
// write buffer of a primary-key table spills sorted runs to local disk
// instead of writing level-0 files. True by default since Paimon 1.3
// (CoreOptions.writeBufferSpillable); 1.1 and 1.2 defaulted it to "object
// store, or batch, or target-file-size > write-buffer-size".
func (o Options) WriteBufferSpillable() (bool, error) {
	return o.boolOpt(OptWriteBufferSpillable, true)
}

// WriteBufferSpillMaxDiskSize is "write-buffer-spill.max-disk-size", the
// spilled bytes after which a write buffer writes level-0 files instead,
// default unlimited (math.MaxInt64).
func (o Options) WriteBufferSpillMaxDiskSize() (int64, error) {
	return o.memOpt(OptWriteBufferSpillMaxDiskSize, math.MaxInt64)
}

// LocalSortMaxNumFileHandles is "local-sort.max-num-file-handles", the
// most spill files one merge reads at once, default 128; below 2 is an
// error (no merge could progress).
func (o Options) LocalSortMaxNumFileHandles() (int, error) {
	n, err := o.intOpt(OptLocalSortMaxNumFileHandles, 128)
	if err == nil && n < 2 {
		return 128, optErr(OptLocalSortMaxNumFileHandles, o[OptLocalSortMaxNumFileHandles], "must be at least 2")
	}
	return n, err
}

// SpillCompression is "spill-compression", default "zstd".
func (o Options) SpillCompression() string { return o.str(OptSpillCompression, "zstd") }

// SpillCompressionZstdLevel is "spill-compression.zstd-level", default 1.
func (o Options) SpillCompressionZstdLevel() (int, error) {
	return o.intOpt(OptSpillCompressionZstdLevel, 1)
}
