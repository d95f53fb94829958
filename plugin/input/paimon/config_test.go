package paimon

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/spectest"
	paimonout "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

func parse(t *testing.T, yaml string) (Config, error) {
	t.Helper()
	conf, err := ConfigSpec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatalf("ParseYAML: %v", err)
	}
	return ParseConfig(conf)
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := parse(t, "warehouse: /lake\ntable: events\n")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Table:             config.Table{Warehouse: "/lake", Database: "default", Table: "events"},
		ScanMode:          ScanLatestFull,
		DiscoveryInterval: time.Second,
		Columns:           []string{},
		BatchSize:         1000,
		OnExpired:         OnExpiredError,
		AutoReplayNacks:   true,
		Changelog:         true,
		MessageFormat:     MessageFormatStructured,
		MetadataKeys:      AllMetadataKeys,
		Shard:             scan.Shard{Count: 1},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	if !c.PartitionFilter.IsEmpty() {
		t.Error("default partition filter not empty")
	}
}

func TestParseConfigFull(t *testing.T) {
	c, err := parse(t, `
warehouse: s3://lake/wh
database: sales
table: orders
s3:
  region: eu-west-1
scan_mode: from-timestamp
scan_timestamp: 2024-05-30T14:00:00.123456+02:00
discovery_interval: 100ms
consumer_id: orders-tail
bounded: true
partition_filter:
  - { dt: 2024-05-30, region: [ eu, us ] }
  - { dt: "2024-05-31" }
columns: [ id, amount ]
batch_size: 500
read_overwrite: true
on_expired: earliest
auto_replay_nacks: false
changelog: false
message_format: json
metadata_keys: [ operation, paimon_snapshot_id ]
shard: { count: 3, index: 2 }
`)
	if err != nil {
		t.Fatal(err)
	}
	if c.ScanMode != ScanFromTimestamp || c.ScanTimestampMillis != 1717070400123 {
		t.Errorf("scan %s %d", c.ScanMode, c.ScanTimestampMillis)
	}
	if c.DiscoveryInterval != 100*time.Millisecond || c.ConsumerID != "orders-tail" || !c.Bounded ||
		c.BatchSize != 500 || !c.ReadOverwrite || c.OnExpired != OnExpiredEarliest || c.AutoReplayNacks ||
		c.Changelog || c.MessageFormat != MessageFormatJSON || c.MetadataKeys != metaOperation|metaSnapshotID ||
		c.Shard != (scan.Shard{Count: 3, Index: 2}) {
		t.Errorf("config %+v", c)
	}
	if got := c.MetadataKeys.Names(); !reflect.DeepEqual(got, []string{"paimon_snapshot_id", "operation"}) {
		t.Errorf("metadata keys %v", got)
	}
	if c, err := parse(t, "warehouse: /lake\ntable: t\nmetadata_keys: []\n"); err != nil || c.MetadataKeys != 0 {
		t.Errorf("metadata_keys: [] gives %v, %v; want none", c.MetadataKeys.Names(), err)
	}
	if got := c.Consumer(); got != "orders-tail-shard-2-of-3" {
		t.Errorf("sharded consumer id %q, want orders-tail-shard-2-of-3", got)
	}
	if !reflect.DeepEqual(c.Columns, []string{"id", "amount"}) {
		t.Errorf("columns %v", c.Columns)
	}
	wantFilter := partition.Filter{Source: "partition_filter", Alternatives: []partition.Conjunction{
		{{Key: "dt", Values: []any{"2024-05-30"}}, {Key: "region", Values: []any{"eu", "us"}}},
		{{Key: "dt", Values: []any{"2024-05-31"}}},
	}}
	if !reflect.DeepEqual(c.PartitionFilter, wantFilter) {
		t.Errorf("filter %#v", c.PartitionFilter)
	}
}

func TestParseConfigScanModes(t *testing.T) {
	base := "warehouse: /lake\ntable: t\n"
	cases := []struct {
		yaml   string
		mode   ScanMode
		tsMs   int64
		snapID int64
		err    string
	}{
		{base + "scan_mode: full\n", ScanLatestFull, 0, 0, ""},
		{base + "scan_mode: latest\n", ScanLatest, 0, 0, ""},
		{base + "scan_mode: from-timestamp\nscan_timestamp: 1717070400000\n", ScanFromTimestamp, 1717070400000, 0, ""},
		{base + "scan_mode: from-timestamp\nscan_timestamp: '1717070400000'\n", ScanFromTimestamp, 1717070400000, 0, ""},
		{base + "scan_mode: from-timestamp\nscan_timestamp: '2024-05-30T12:00:00'\n", ScanFromTimestamp, 1717070400000, 0, ""},
		{base + "scan_mode: from-timestamp\nscan_timestamp: '2024-05-30 12:00:00Z'\n", ScanFromTimestamp, 1717070400000, 0, ""},
		{base + "scan_mode: from-snapshot\nscan_snapshot_id: 7\n", ScanFromSnapshot, 0, 7, ""},
		{base + "scan_mode: from-snapshot-full\nscan_snapshot_id: 1\n", ScanFromSnapshotFull, 0, 1, ""},
		{base + "scan_mode: from-timestamp\n", "", 0, 0, "scan_timestamp is required when scan_mode is from-timestamp"},
		{base + "scan_mode: from-timestamp\nscan_timestamp: ''\n", "", 0, 0, "scan_timestamp is required"},
		{base + "scan_mode: from-timestamp\nscan_timestamp: yesterday\n", "", 0, 0, `scan_timestamp "yesterday": expected RFC 3339 text or epoch milliseconds`},
		{base + "scan_timestamp: '2024-05-30T12:00:00Z'\n", "", 0, 0, "scan_timestamp is only used with scan_mode from-timestamp, not latest-full"},
		{base + "scan_mode: from-snapshot\n", "", 0, 0, "scan_snapshot_id is required when scan_mode is from-snapshot"},
		{base + "scan_mode: from-snapshot-full\n", "", 0, 0, "scan_snapshot_id is required when scan_mode is from-snapshot-full"},
		{base + "scan_mode: from-snapshot\nscan_snapshot_id: 0\n", "", 0, 0, "scan_snapshot_id is required when scan_mode is from-snapshot"},
		{base + "scan_mode: from-snapshot\nscan_snapshot_id: -2\n", "", 0, 0, "scan_snapshot_id must be a positive snapshot id, not -2"},
		{base + "scan_mode: latest\nscan_snapshot_id: 3\n", "", 0, 0, "scan_snapshot_id is only used with scan_mode from-snapshot or from-snapshot-full, not latest"},
		{base + "scan_mode: latest\nbounded: true\n", "", 0, 0, "bounded with scan_mode latest reads nothing"},
		{base + "scan_mode: earliest\n", "", 0, 0, `scan_mode "earliest" is not one of`},
	}
	for _, tc := range cases {
		c, err := parse(t, tc.yaml)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s  error %v, want %q", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s  %v", tc.yaml, err)
			continue
		}
		if c.ScanMode != tc.mode || c.ScanTimestampMillis != tc.tsMs || c.ScanSnapshotID != tc.snapID {
			t.Errorf("%s  got %s %d %d", tc.yaml, c.ScanMode, c.ScanTimestampMillis, c.ScanSnapshotID)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	base := "warehouse: /lake\ntable: t\n"
	cases := []struct {
		yaml string
		err  string
	}{
		{"warehouse: /lake\ntable: ''\n", "table must not be empty"},
		{base + "discovery_interval: 0s\n", "discovery_interval must be positive"},
		{base + "discovery_interval: soon\n", "soon"},
		{base + "consumer_id: a/b\n", `consumer_id "a/b" must not contain '/'`},
		{base + "consumer_id: ' a'\n", "leading or trailing spaces"},
		{base + "batch_size: 0\n", "batch_size must be at least 1"},
		{base + "columns: [ a, a ]\n", `columns: "a" is listed twice`},
		{base + "columns: [ '' ]\n", "must not be empty"},
		{base + "on_expired: skip\n", `on_expired "skip" is not error or earliest`},
		{base + "message_format: bytes\n", `message_format "bytes" is not structured or json`},
		{base + "metadata_keys: [ paimon_row, paimon_offset ]\n", `metadata_keys: metadata key "paimon_offset" is not one of paimon_snapshot_id, ` +
			`paimon_commit_kind, paimon_commit_time, paimon_partition, paimon_bucket, paimon_file, paimon_row, paimon_row_kind, operation`},
		{base + "partition_filter: dt\n", "partition_filter: expected a map of partition key to value(s), or a list of such maps, got a string"},
		{base + "partition_filter: []\n", "an empty list matches no partition"},
		{base + "partition_filter: [ dt ]\n", "partition_filter[0]: expected a map"},
		{base + "partition_filter: { dt: [] }\n", `key "dt": an empty list matches nothing`},
		{base + "partition_filter: { dt: { a: 1 } }\n", `key "dt": values must be scalars, got a map`},
		{base + "shard: { count: 0 }\n", "shard.count must be at least 1, not 0"},
		{base + "shard: { count: -2, index: 0 }\n", "shard.count must be at least 1, not -2"},
		{base + "shard: { count: 3, index: 3 }\n", "shard.index must be from 0 to shard.count - 1 (2), not 3"},
		{base + "shard: { count: 3, index: -1 }\n", "shard.index must be from 0 to shard.count - 1 (2), not -1"},
		{base + "shard: { index: 1 }\n", "shard.index must be from 0 to shard.count - 1 (0), not 1"},
	}
	for _, tc := range cases {
		_, err := parse(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s  error %v, want %q", tc.yaml, err, tc.err)
		}
	}
}

// stubEnv registers stub paimon components with the real specs in an
// isolated environment, so lint and docs go through Benthos' own machinery.
func stubEnv(t *testing.T) *service.Environment {
	t.Helper()
	env := service.NewEnvironment()
	err := env.RegisterBatchInput("paimon", ConfigSpec(), func(conf *service.ParsedConfig, _ *service.Resources) (service.BatchInput, error) {
		if _, err := ParseConfig(conf); err != nil {
			return nil, err
		}
		return nil, errors.New("stub input: not runnable")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = env.RegisterBatchOutput("paimon", paimonout.ConfigSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			return nil, service.BatchPolicy{}, 1, errors.New("stub output: not runnable")
		})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestLintRules(t *testing.T) {
	linter := stubEnv(t).NewComponentConfigLinter()
	head := "paimon:\n  warehouse: /lake\n  table: t\n"
	cases := []struct {
		yaml string
		want []string
	}{
		{head, nil},
		{head + "  scan_mode: from-timestamp\n  scan_timestamp: 2024-05-30T12:00:00Z\n", nil},
		{head + "  scan_mode: from-snapshot\n  scan_snapshot_id: 3\n", nil},
		{head + "  partition_filter: { dt: '2024-05-30' }\n", nil},
		{head + "  partition_filter: [ { dt: '2024-05-30' } ]\n", nil},
		{head + "  scan_mode: from-timestamp\n", []string{"scan_timestamp is required when scan_mode is from-timestamp"}},
		{head + "  scan_timestamp: '1717070400000'\n", []string{"scan_timestamp is only used with scan_mode from-timestamp, not latest-full"}},
		{head + "  scan_mode: from-snapshot-full\n", []string{"scan_snapshot_id is required when scan_mode is from-snapshot-full"}},
		{head + "  scan_mode: latest\n  scan_snapshot_id: 4\n", []string{"scan_snapshot_id is only used with scan_mode from-snapshot or from-snapshot-full, not latest"}},
		{head + "  scan_mode: from-snapshot\n  scan_snapshot_id: 0\n", []string{"scan_snapshot_id is required when scan_mode is from-snapshot"}},
		{head + "  scan_mode: from-snapshot\n  scan_snapshot_id: -1\n", []string{"scan_snapshot_id must be a positive snapshot id"}},
		{head + "  scan_mode: latest\n  bounded: true\n", []string{"bounded with scan_mode latest reads nothing"}},
		{head + "  scan_mode: newest\n", []string{"newest"}},
		{head + "  on_expired: skip\n", []string{"skip"}},
		{head + "  message_format: bytes\n", []string{"bytes"}},
		{head + "  columns: [ a, b, a ]\n", []string{"columns has duplicates"}},
		{head + "  batch_size: 0\n", []string{"batch_size must be at least 1"}},
		{head + "  consumer_id: a/b\n", []string{"consumer_id must not contain"}},
		{head + "  partition_filter: dt\n", []string{"partition_filter must be a map of partition key to value(s), or a list of such maps"}},
		{head + "  consumer: x\n", []string{"field consumer not recognised"}},
		{head + "  changelog: false\n  shard: { count: 4, index: 3 }\n", nil},
		{head + "  shard: { count: 0, index: 0 }\n", []string{"shard.count must be at least 1, not 0"}},
		{head + "  shard: { count: 2, index: 2 }\n", []string{"shard.index must be from 0 to shard.count - 1 (1), not 2"}},
		{head + "  shard: { count: 2, index: -1 }\n", []string{"shard.index must be from 0 to shard.count - 1 (1), not -1"}},
		{head + "  shard: { count: 2, shard: 1 }\n", []string{"field shard not recognised"}},
	}
	for _, tc := range cases {
		spectest.CheckLint(t, linter.LintInputYAML, tc.yaml, tc.want...)
	}
}

func TestDocsRenderAndExamplesLint(t *testing.T) {
	env := stubEnv(t)
	var view *service.ConfigView
	env.WalkInputs(func(name string, v *service.ConfigView) {
		if name == "paimon" {
			view = v
		}
	})
	if view == nil {
		t.Fatal("paimon input not registered in the test environment")
	}
	data := spectest.CheckDocs(t, view,
		"== Scan modes", "== Progress and acknowledgements", "== Messages", "== Partition filter",
		"== Primary-key tables: changelog or latest values", "== Sharded readers", "=== changelog", "=== shard.index",
		"=== scan_mode", "* from-snapshot-full: All rows of snapshot", "=== partition_filter", "=== auto_replay_nacks",
		"=== s3.credentials.token (secret)", `=== discovery_interval`, `Default: "1s"`, "paimon_snapshot_id", "paimon_row",
	)
	raw, err := view.FormatJSON()
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Config struct {
			Children []struct {
				Name       string `json:"name"`
				IsAdvanced bool   `json:"is_advanced"`
				IsOptional bool   `json:"is_optional"`
			} `json:"children"`
		} `json:"config"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	flags := map[string][2]bool{}
	for _, f := range spec.Config.Children {
		flags[f.Name] = [2]bool{f.IsAdvanced, f.IsOptional}
	}
	for name, want := range map[string][2]bool{
		"s3": {true, false}, "read_overwrite": {true, false}, "on_expired": {true, false},
		"scan_mode": {false, false}, "scan_timestamp": {false, false}, "scan_snapshot_id": {false, false},
		"partition_filter": {false, false}, "consumer_id": {false, false},
		"changelog": {false, false}, "shard": {true, false}, "message_format": {true, false},
	} {
		if flags[name] != want {
			t.Errorf("field %s: advanced, optional = %v, want %v", name, flags[name], want)
		}
	}
	spectest.CheckExamples(t, env, data, "input:\n  paimon:\n", ConfigSpec(), func(conf *service.ParsedConfig) error {
		_, err := ParseConfig(conf)
		return err
	})
}

func TestConsumerID(t *testing.T) {
	cases := []struct {
		id    string
		shard scan.Shard
		want  string
	}{
		{"", scan.Shard{Count: 1}, ""},
		{"", scan.Shard{Count: 3, Index: 1}, ""},
		{"tail", scan.Shard{Count: 1}, "tail"},
		{"tail", scan.Shard{Count: 3, Index: 0}, "tail-shard-0-of-3"},
		{"tail", scan.Shard{Count: 3, Index: 2}, "tail-shard-2-of-3"},
	}
	for _, tc := range cases {
		if got := (Config{ConsumerID: tc.id, Shard: tc.shard}).Consumer(); got != tc.want {
			t.Errorf("consumer_id %q, shard %+v: %q, want %q", tc.id, tc.shard, got, tc.want)
		}
	}
}

func TestParseScanTimestamp(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"1717070400000", 1717070400000, false},
		{"-1", -1, false},
		{"2024-05-30T12:00:00Z", 1717070400000, false},
		{"2024-05-30T12:00:00.999999Z", 1717070400999, false},
		{"2024-05-30T14:00:00+02:00", 1717070400000, false},
		{"2024-05-30", 1717027200000, false},
		{"30/05/2024", 0, true},
		{"", 0, true},
	}
	for _, tc := range cases {
		got, err := ParseScanTimestamp(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%q: %d, %v", tc.in, got, err)
		}
	}
}

// TestGeneratedConfigReadsEverything: the config `create` generates holds
// defaults only, so a user who keeps it reads every partition.
func TestGeneratedConfigReadsEverything(t *testing.T) {
	conf, err := ConfigSpec().ParseYAML("warehouse: /lake\ntable: t\npartition_filter: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(conf)
	if err != nil || len(c.PartitionFilter.Alternatives) != 0 {
		t.Fatalf("partition_filter {} gives %+v, %v; want no filter", c.PartitionFilter, err)
	}
}
