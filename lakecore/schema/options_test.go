package schema_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

func TestParseMemorySize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"128 mb", 128 << 20, true},
		{"256mb", 256 << 20, true},
		{"8 MB", 8 << 20, true},
		{"1kb", 1024, true},
		{"1k", 1024, true},
		{"500 B", 500, true},
		{"1b", 1, true},
		{"7 bytes", 7, true},
		{"1024", 1024, true},
		{"  2 gb  ", 2 << 30, true},
		{"1 t", 1 << 40, true},
		{"3 MEBIBYTES", 3 << 20, true},
		{"0", 0, true},
		{"", 0, false},
		{"   ", 0, false},
		{"mb", 0, false},
		{"1.5 mb", 0, false},
		{"-1 mb", 0, false},
		{"1 pb", 0, false},
		{"99999999999999999999", 0, false},
		{"9223372036854775807 kb", 0, false},
	} {
		got, err := schema.ParseMemorySize(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseMemorySize(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, schema.ErrInvalidOption) {
			t.Errorf("ParseMemorySize(%q) error %v does not wrap ErrInvalidOption", tc.in, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1 h", time.Hour, true},
		{"10 s", 10 * time.Second, true},
		{"500ms", 500 * time.Millisecond, true},
		{"1 d", 24 * time.Hour, true},
		{"30 min", 30 * time.Minute, true},
		{"30 m", 30 * time.Minute, true},
		{"2 hours", 2 * time.Hour, true},
		{"3 DAYS", 72 * time.Hour, true},
		{"5 secs", 5 * time.Second, true},
		{"7 µs", 7 * time.Microsecond, true},
		{"9 nanos", 9 * time.Nanosecond, true},
		{"1500", 1500 * time.Millisecond, true},
		{" 4 minutes ", 4 * time.Minute, true},
		{"99999999999 d", time.Duration(math.MaxInt64), true},
		{"", 0, false},
		{"h", 0, false},
		{"1.5 h", 0, false},
		{"1 week", 0, false},
		{"-1 s", 0, false},
	} {
		got, err := schema.ParseDuration(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, schema.ErrInvalidOption) {
			t.Errorf("ParseDuration(%q) error %v does not wrap ErrInvalidOption", tc.in, err)
		}
	}
}

func TestParseStatsMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want schema.StatsMode
		ok   bool
	}{
		{"none", schema.StatsMode{Kind: schema.StatsNone}, true},
		{"NONE", schema.StatsMode{Kind: schema.StatsNone}, true},
		{"counts", schema.StatsMode{Kind: schema.StatsCounts}, true},
		{"Full", schema.StatsMode{Kind: schema.StatsFull}, true},
		{"truncate(16)", schema.StatsMode{Kind: schema.StatsTruncate, Length: 16}, true},
		{"TRUNCATE(3)", schema.StatsMode{Kind: schema.StatsTruncate, Length: 3}, true},
		{"truncate(0)", schema.StatsMode{Kind: schema.StatsTruncate, Length: 0}, true},
		{"truncate()", schema.StatsMode{}, false},
		{"truncate(-1)", schema.StatsMode{}, false},
		{"truncate( 16)", schema.StatsMode{}, false},
		{"truncate(99999999999)", schema.StatsMode{}, false},
		{" full", schema.StatsMode{}, false},
		{"minmax", schema.StatsMode{}, false},
		{"", schema.StatsMode{}, false},
	} {
		got, err := schema.ParseStatsMode(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseStatsMode(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if s := (schema.StatsMode{Kind: schema.StatsTruncate, Length: 8}).String(); s != "truncate(8)" {
		t.Errorf("String = %q", s)
	}
}

// TestOptionDefaults checks every accessor's Paimon 1.4 default on empty
// options.
func TestOptionDefaults(t *testing.T) {
	var o schema.Options
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"Bucket", must(o.Bucket()), -1},
		{"BucketKey", len(o.BucketKey()), 0},
		{"BucketFunctionType", o.BucketFunctionType(), "default"},
		{"FileFormat", o.FileFormat(), "parquet"},
		{"ManifestFormat", o.ManifestFormat(), "avro"},
		{"FileCompression", o.FileCompression(), "zstd"},
		{"ZstdLevel", must(o.ZstdLevel()), 1},
		{"TargetFileSize", must(o.TargetFileSize()), int64(256 << 20)},
		{"ManifestCompression", o.ManifestCompression(), "zstd"},
		{"ManifestTargetFileSize", must(o.ManifestTargetFileSize()), int64(8 << 20)},
		{"ManifestMergeMinCount", must(o.ManifestMergeMinCount()), 30},
		{"ManifestFullCompactionThreshold", must(o.ManifestFullCompactionThreshold()), int64(16 << 20)},
		{"ManifestDeleteFileDropStats", must(o.ManifestDeleteFileDropStats()), false},
		{"StatsMode", must(o.StatsMode("f")), schema.StatsMode{Kind: schema.StatsTruncate, Length: 16}},
		{"StatsDenseStore", must(o.StatsDenseStore()), true},
		{"StatsKeepFirstNColumns", must(o.StatsKeepFirstNColumns()), -1},
		{"PartitionDefaultName", o.PartitionDefaultName(), "__DEFAULT_PARTITION__"},
		{"PartitionLegacyName", must(o.PartitionLegacyName()), true},
		{"DataFilePrefix", o.DataFilePrefix(), "data-"},
		{"DataFilePathDirectory", o.DataFilePathDirectory(), ""},
		{"FileSuffixIncludeCompression", must(o.FileSuffixIncludeCompression()), false},
		{"FileIndexInManifestThreshold", must(o.FileIndexInManifestThreshold()), int64(500)},
		{"CommitMaxRetries", must(o.CommitMaxRetries()), 10},
		{"CommitMinRetryWait", must(o.CommitMinRetryWait()), 10 * time.Millisecond},
		{"CommitMaxRetryWait", must(o.CommitMaxRetryWait()), 10 * time.Second},
		{"CommitTimeout", must(o.CommitTimeout()), time.Duration(math.MaxInt64)},
		{"CommitForceCreateSnapshot", must(o.CommitForceCreateSnapshot()), false},
		{"SnapshotNumRetainedMin", must(o.SnapshotNumRetainedMin()), 10},
		{"SnapshotNumRetainedMax", must(o.SnapshotNumRetainedMax()), math.MaxInt32},
		{"SnapshotTimeRetained", must(o.SnapshotTimeRetained()), time.Hour},
		{"SnapshotExpireLimit", must(o.SnapshotExpireLimit()), 50},
		{"SnapshotCleanEmptyDirectories", must(o.SnapshotCleanEmptyDirectories()), false},
		{"PartitionExpirationCheckInterval", must(o.PartitionExpirationCheckInterval()), time.Hour},
		{"PartitionExpirationMaxNum", must(o.PartitionExpirationMaxNum()), 100},
		{"PartitionExpirationStrategy", o.PartitionExpirationStrategy(), "values-time"},
		{"ConsumerID", o.ConsumerID(), ""},
		{"WriteOnly", must(o.WriteOnly()), false},
		{"DeletionVectorsEnabled", must(o.DeletionVectorsEnabled()), false},
		{"RowTrackingEnabled", must(o.RowTrackingEnabled()), false},
		{"DataEvolutionEnabled", must(o.DataEvolutionEnabled()), false},
		{"CompactionMinFileNum", must(o.CompactionMinFileNum()), 5},
		{"CompactionFileNumLimit", must(o.CompactionFileNumLimit()), 100000},
		{"SourceSplitTargetSize", must(o.SourceSplitTargetSize()), int64(128 << 20)},
		{"SourceSplitOpenFileCost", must(o.SourceSplitOpenFileCost()), int64(4 << 20)},
		{"ContinuousDiscoveryInterval", must(o.ContinuousDiscoveryInterval()), 10 * time.Second},
		{"ScanMode", o.ScanMode(), "default"},
		{"AddColumnBeforePartition", must(o.AddColumnBeforePartition()), false},
		{"WriteBufferSpillable", must(o.WriteBufferSpillable()), true},
		{"WriteBufferSpillMaxDiskSize", must(o.WriteBufferSpillMaxDiskSize()), int64(math.MaxInt64)},
		{"LocalSortMaxNumFileHandles", must(o.LocalSortMaxNumFileHandles()), 128},
		{"SpillCompression", o.SpillCompression(), "zstd"},
		{"SpillCompressionZstdLevel", must(o.SpillCompressionZstdLevel()), 1},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v (%T), want %v (%T)", tc.name, tc.got, tc.got, tc.want, tc.want)
		}
	}
	if _, set, err := o.PartitionExpirationTime(); set || err != nil {
		t.Errorf("PartitionExpirationTime set=%v err=%v", set, err)
	}
	if _, set, err := o.ConsumerExpirationTime(); set || err != nil {
		t.Errorf("ConsumerExpirationTime set=%v err=%v", set, err)
	}
	if _, set, err := o.SnapshotIgnoreEmptyCommit(); set || err != nil {
		t.Errorf("SnapshotIgnoreEmptyCommit set=%v err=%v", set, err)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("Validate of empty options: %v", err)
	}
}

func TestOptionValues(t *testing.T) {
	o := schema.Options{
		"bucket": "4", "bucket-key": "a,b", "file.format": "PARQUET", "target-file-size": "64 mb",
		"snapshot.time-retained": "30 min", "commit.timeout": "2 min", "partition.expiration-time": "7 d",
		"write.compaction-skip": "TRUE", "partition.legacy-name": "False", "scan.mode": "FROM-TIMESTAMP",
		"snapshot.ignore-empty-commit": "true", "write-buffer-spillable": "FALSE", "write-buffer-spill.max-disk-size": "1 gb",
		"local-sort.max-num-file-handles": "2",
	}
	if b, _ := o.Bucket(); b != 4 {
		t.Errorf("Bucket = %d", b)
	}
	if k := o.BucketKey(); len(k) != 2 || k[0] != "a" || k[1] != "b" {
		t.Errorf("BucketKey = %q", k)
	}
	if f := o.FileFormat(); f != "parquet" {
		t.Errorf("FileFormat = %q", f)
	}
	if n, _ := o.TargetFileSize(); n != 64<<20 {
		t.Errorf("TargetFileSize = %d", n)
	}
	if d, _ := o.SnapshotTimeRetained(); d != 30*time.Minute {
		t.Errorf("SnapshotTimeRetained = %v", d)
	}
	if d, _ := o.CommitTimeout(); d != 2*time.Minute {
		t.Errorf("CommitTimeout = %v", d)
	}
	if d, set, _ := o.PartitionExpirationTime(); !set || d != 7*24*time.Hour {
		t.Errorf("PartitionExpirationTime = %v, %v", d, set)
	}
	if w, _ := o.WriteOnly(); !w {
		t.Error("WriteOnly ignores the fallback key write.compaction-skip")
	}
	if l, _ := o.PartitionLegacyName(); l {
		t.Error("PartitionLegacyName = true for \"False\"")
	}
	if m := o.ScanMode(); m != "from-timestamp" {
		t.Errorf("ScanMode = %q", m)
	}
	if v, set, _ := o.SnapshotIgnoreEmptyCommit(); !v || !set {
		t.Errorf("SnapshotIgnoreEmptyCommit = %v, %v", v, set)
	}
	if v, _ := o.WriteBufferSpillable(); v {
		t.Error("WriteBufferSpillable = true for \"FALSE\"")
	}
	if n, _ := o.WriteBufferSpillMaxDiskSize(); n != 1<<30 {
		t.Errorf("WriteBufferSpillMaxDiskSize = %d", n)
	}
	if n, _ := o.LocalSortMaxNumFileHandles(); n != 2 {
		t.Errorf("LocalSortMaxNumFileHandles = %d", n)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}

	for key, bad := range map[string]string{
		"bucket": " 2", "file.compression.zstd-level": "high", "target-file-size": "big",
		"commit.min-retry-wait": "soon", "partition.legacy-name": "yes", "metadata.stats-mode": "all",
		"fields.f.stats-mode": "truncate", "snapshot.num-retained.max": "3000000000",
		"write-buffer-size": "lots", "write-buffer-spillable": "yes", "write-buffer-spill.max-disk-size": "-1",
		"local-sort.max-num-file-handles": "1", "spill-compression.zstd-level": "fast",
	} {
		o := schema.Options{key: bad}
		err := o.Validate()
		if !errors.Is(err, schema.ErrInvalidOption) || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate(%s=%q) = %v, want ErrInvalidOption naming the key", key, bad, err)
		}
	}
}

func TestStatsModes(t *testing.T) {
	o := schema.Options{
		"metadata.stats-mode":                 "full",
		"fields.b.stats-mode":                 "none",
		"fields.d.stats-mode":                 "Truncate(4)",
		"metadata.stats-keep-first-n-columns": "2",
	}
	got, err := o.StatsModes([]string{"a", "b", "c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.StatsMode{
		{Kind: schema.StatsFull},
		{Kind: schema.StatsNone},
		{Kind: schema.StatsNone}, // beyond the first two columns
		{Kind: schema.StatsTruncate, Length: 4},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("StatsModes[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if m, _ := o.StatsMode("c"); m.Kind != schema.StatsFull {
		t.Errorf("StatsMode(c) = %v, want full", m)
	}
	if m, _ := o.StatsMode("d"); m != (schema.StatsMode{Kind: schema.StatsTruncate, Length: 4}) {
		t.Errorf("StatsMode(d) = %v", m)
	}
	if _, err := (schema.Options{"fields.x.stats-mode": "bad"}).StatsMode("x"); !errors.Is(err, schema.ErrInvalidOption) {
		t.Errorf("StatsMode of a bad field mode = %v", err)
	}
}
