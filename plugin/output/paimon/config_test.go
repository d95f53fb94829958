package paimon

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/spectest"
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
	if c.Table != (config.Table{Warehouse: "/lake", Database: "default", Table: "events"}) {
		t.Errorf("table %+v", c.Table)
	}
	want := CreateTable{Bucket: -1, PartitionKeys: []string{}, BucketKey: []string{}, PrimaryKeys: []string{}, Options: map[string]string{}}
	if !reflect.DeepEqual(c.CreateTable, want) {
		t.Errorf("create_table %#v, want %#v", c.CreateTable, want)
	}
	if c.CommitUser != "benthos-paimon-default.events" {
		t.Errorf("commit user %q", c.CommitUser)
	}
	if c.MaxInFlight != 4 {
		t.Errorf("max_in_flight %d", c.MaxInFlight)
	}
	if c.Convert != (rowconv.ConvertOptions{UnknownFields: rowconv.UnknownFieldsError, TimestampUnit: rowconv.UnitMillis}) {
		t.Errorf("convert %+v", c.Convert)
	}
	if c.Batching.Count != DefaultBatchCount || c.Batching.Period != DefaultBatchPeriod {
		t.Errorf("batching %+v, want the default policy", c.Batching)
	}
	if got := c.CreateTable.TableOptions(); !reflect.DeepEqual(got, map[string]string{"bucket": "-1", "file.format": "parquet"}) {
		t.Errorf("table options %v", got)
	}
}

func TestParseConfigFull(t *testing.T) {
	c, err := parse(t, `
warehouse: s3://lake/wh
database: sales
table: orders
s3:
  endpoint: http://127.0.0.1:9000
  force_path_style: true
create_table:
  enabled: true
  schema:
    - { name: id, type: BIGINT NOT NULL, comment: order id }
    - { name: amount, type: "DECIMAL(10, 2)" }
    - { name: dt, type: STRING }
    - { name: item, type: "ROW<sku STRING, qty INT>" }
    - { name: tags, type: "MAP<STRING, STRING>" }
  partition_keys: [ dt ]
  bucket: 4
  bucket_key: [ id ]
  options:
    file.compression: zstd
    snapshot.time-retained: 2 h
commit_user: " orders-1 "
batching:
  count: 100
  period: 1s
max_in_flight: 2
unknown_fields: ignore
schema_evolution: true
timestamp_unit: us
`)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Table.IsS3() || c.Table.S3.Endpoint != "http://127.0.0.1:9000" || !c.Table.S3.ForcePathStyle {
		t.Errorf("table %+v", c.Table)
	}
	ct := c.CreateTable
	if !ct.Enabled || ct.Bucket != 4 || !reflect.DeepEqual(ct.BucketKey, []string{"id"}) || !reflect.DeepEqual(ct.PartitionKeys, []string{"dt"}) {
		t.Errorf("create_table %+v", ct)
	}
	var got []string
	for _, f := range ct.Fields {
		got = append(got, f.Name+" "+f.Type.String())
	}
	want := []string{"id BIGINT NOT NULL", "amount DECIMAL(10, 2)", "dt STRING", "item ROW<`sku` STRING, `qty` INT>", "tags MAP<STRING, STRING>"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields %v", got)
	}
	// Field ids: top level and nested depth-first, parent before children.
	ids := []int{ct.Fields[0].ID, ct.Fields[1].ID, ct.Fields[2].ID, ct.Fields[3].ID, ct.Fields[3].Type.Fields[0].ID, ct.Fields[3].Type.Fields[1].ID, ct.Fields[4].ID}
	if !reflect.DeepEqual(ids, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("field ids %v", ids)
	}
	if ct.Fields[0].Description == nil || *ct.Fields[0].Description != "order id" || ct.Fields[1].Description != nil {
		t.Errorf("descriptions %v %v", ct.Fields[0].Description, ct.Fields[1].Description)
	}
	wantOpts := map[string]string{"file.compression": "zstd", "snapshot.time-retained": "2 h", "bucket": "4", "bucket-key": "id", "file.format": "parquet"}
	if got := ct.TableOptions(); !reflect.DeepEqual(got, wantOpts) {
		t.Errorf("table options %v", got)
	}
	if c.CommitUser != "orders-1" || c.MaxInFlight != 2 {
		t.Errorf("commit user %q, max_in_flight %d", c.CommitUser, c.MaxInFlight)
	}
	if c.Batching.Count != 100 || c.Batching.Period != "1s" {
		t.Errorf("batching %+v", c.Batching)
	}
	if c.Convert != (rowconv.ConvertOptions{UnknownFields: rowconv.UnknownFieldsIgnore, SchemaEvolution: true, TimestampUnit: rowconv.UnitMicros}) {
		t.Errorf("convert %+v", c.Convert)
	}
}

func TestParseConfigErrors(t *testing.T) {
	base := "warehouse: /lake\ntable: t\n"
	schema := "create_table:\n  schema:\n    - { name: id, type: BIGINT }\n    - { name: dt, type: STRING }\n    - { name: r, type: ROW<a INT> }\n"
	cases := []struct {
		yaml string
		err  string
	}{
		{"warehouse: hdfs://x\ntable: t\n", "unsupported storage scheme"},
		{"warehouse: /lake\ntable: a/b\n", `table "a/b" must not contain '/'`},
		{base + "create_table:\n  enabled: true\n", "create_table.schema is required when create_table.enabled is true"},
		{base + "create_table:\n  schema:\n    - { name: id, type: BIGIN }\n", `create_table.schema[0] (id): invalid data type "BIGIN"`},
		{base + "create_table:\n  schema:\n    - { name: id, type: INT }\n    - { name: id, type: INT }\n", `create_table.schema[1]: duplicate column "id"`},
		{base + "create_table:\n  schema:\n    - { name: '', type: INT }\n", "name must not be empty"},
		{base + schema + "  partition_keys: [ nope ]\n", `create_table.partition_keys: "nope" is not a column of create_table.schema (columns: dt, id, r)`},
		{base + schema + "  partition_keys: [ r ]\n", `create_table.partition_keys: column "r" has type ROW<`},
		{base + schema + "  partition_keys: [ dt, dt ]\n", `"dt" is listed twice`},
		{base + schema + "  bucket: 4\n", "create_table.bucket_key is required when create_table.bucket is positive"},
		{base + schema + "  bucket_key: [ id ]\n", "create_table.bucket_key needs a positive create_table.bucket"},
		{base + schema + "  bucket: 0\n", "create_table.bucket must be -1 (bucket-unaware) or a positive number of buckets, not 0"},
		{base + schema + "  bucket: -2\n", "not -2"},
		{base + schema + "  bucket: 2\n  bucket_key: [ x ]\n", `create_table.bucket_key: "x" is not a column`},
		{base + schema + "  bucket: 2\n  bucket_key: [ dt ]\n  partition_keys: [ dt ]\n", `create_table.bucket_key: "dt" is a partition key`},
		{base + schema + "  options: { bucket: '4' }\n", `create_table.options: set "bucket" with create_table.bucket instead`},
		{base + schema + "  options: { bucket-key: id }\n", `set "bucket-key" with create_table.bucket_key instead`},
		{base + schema + "  options: { primary-key: id }\n", "set create_table.primary_keys instead of the primary-key option"},
		{base + schema + "  options: { file.format: orc }\n", `file.format "orc" is not supported`},
		{base + schema + "  options: { partition.expiration-time: 7 d }\n", "partition.expiration-time needs create_table.partition_keys"},
		{base + schema + "  options: { snapshot.num-retained.mx: '3' }\n", `create_table.options: unknown table option "snapshot.num-retained.mx" (did you mean "snapshot.num-retained.max"?)`},
		{base + schema + "  partition_keys: [ dt ]\n  options: { partition.expiration-time: 30 dayz }\n", `create_table.options: option partition.expiration-time: invalid table schema: invalid table option: duration "30 dayz": unknown unit "dayz"`},
		{base + schema + "  options: { target-file-size: lots }\n", `create_table.options: option target-file-size: invalid table schema: invalid table option: memory size "lots"`},
		{base + "create_table:\n  schema:\n    - { name: id, type: BIGNT NOT NULL }\n", `create_table.schema[0] (id): invalid data type "BIGNT NOT NULL": unsupported type "BIGNT"`},
		{base + "create_table:\n  schema:\n    - { name: _SEQUENCE_NUMBER, type: BIGINT }\n", `create_table: schema 0: invalid table schema: field name "_SEQUENCE_NUMBER" is reserved`},
		{"warehouse: /lake\ntable: '${! @t }'\ncreate_table:\n  options: { bukcet: '3' }\n", `create_table.options: unknown table option "bukcet" (did you mean "bucket"?)`},
		{base + "max_in_flight: 0\n", "max_in_flight must be at least 1"},
		{base + "unknown_fields: drop\n", `unknown_fields "drop" is not error or ignore`},
		{base + "timestamp_unit: minutes\n", `timestamp_unit "minutes" is not s, ms, us or ns`},
		{base + "cdc_format: debezium-json\nunchanged_columns: big\n", "unchanged_columns: not with cdc_format debezium-json, whose envelope carries whole rows"},
	}
	for _, tc := range cases {
		_, err := parse(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s\n  error %v\n  want %q", tc.yaml, err, tc.err)
		}
	}
}

func stubEnv(t *testing.T, capture func(Config, error)) *service.Environment {
	t.Helper()
	env := service.NewEnvironment()
	err := env.RegisterBatchOutput("paimon", ConfigSpec(),
		func(conf *service.ParsedConfig, _ *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
			c, err := ParseConfig(conf)
			if capture != nil {
				capture(c, err)
			}
			return nil, service.BatchPolicy{}, 1, errors.New("stub output: not runnable")
		})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestLintRules(t *testing.T) {
	linter := stubEnv(t, nil).NewComponentConfigLinter()
	head := "paimon:\n  warehouse: /lake\n  table: t\n"
	schema := "  create_table:\n    schema:\n      - { name: id, type: BIGINT }\n      - { name: dt, type: STRING }\n"
	cases := []struct {
		yaml string
		want []string // expected lint messages (substrings); none means clean
	}{
		{head, nil},
		{head + schema + "    enabled: true\n    partition_keys: [ dt ]\n    bucket: 2\n    bucket_key: [ id ]\n", nil},
		{head + "  create_table:\n    enabled: true\n", []string{"create_table.schema is required when create_table.enabled is true"}},
		{head + schema + "    bucket: 4\n", []string{"create_table.bucket_key is required when create_table.bucket is positive"}},
		{head + schema + "    bucket_key: [ id ]\n", []string{"create_table.bucket_key needs a positive create_table.bucket"}},
		{head + schema + "    bucket: 0\n", []string{"create_table.bucket must be -1 (bucket-unaware) or a positive number of buckets"}},
		{head + schema + "    partition_keys: [ dt, day ]\n", []string{"create_table.partition_keys: day is not a column of create_table.schema"}},
		{head + schema + "    partition_keys: [ dt ]\n    bucket: 2\n    bucket_key: [ dt, x ]\n", []string{
			"create_table.bucket_key: x is not a column of create_table.schema",
			"create_table.bucket_key: dt is a partition key",
		}},
		{head + "  create_table:\n    schema:\n      - { name: a, type: INT }\n      - { name: a, type: INT }\n", []string{"duplicate column names"}},
		{head + schema + "    options: { bucket: '3' }\n", []string{"rather than the bucket and bucket-key options"}},
		{head + schema + "    options: { primary-key: id }\n", []string{"set create_table.primary_keys rather than the primary-key option"}},
		{head + schema + "    options: { file.format: orc }\n", []string{"only file.format parquet is supported"}},
		{head + schema + "    options: { partition.expiration-time: 1 d }\n", []string{"partition.expiration-time needs create_table.partition_keys"}},
		{head + "  unknown_fields: drop\n", []string{"drop"}},
		{head + "  timestamp_unit: minutes\n", []string{"minutes"}},
		{head + "  max_in_flight: 0\n", []string{"max_in_flight must be at least 1"}},
		{head + "  create_table:\n    bukket: 3\n", []string{"field bukket not recognised"}},
		// What only Go code checks, through the create_table rule's Bloblang
		// method: the same messages as start-up (TestParseConfigErrors).
		{head + schema + "    options: { snapshot.num-retained.mx: '3' }\n", []string{`create_table.options: unknown table option "snapshot.num-retained.mx" (did you mean "snapshot.num-retained.max"?)`}},
		{head + schema + "    partition_keys: [ dt ]\n    options: { partition.expiration-time: 30 dayz }\n", []string{`duration "30 dayz": unknown unit "dayz"`}},
		{head + "  create_table:\n    schema:\n      - { name: id, type: BIGNT NOT NULL }\n", []string{`create_table.schema[0] (id): invalid data type "BIGNT NOT NULL"`}},
		{head + "  create_table:\n    schema:\n      - { name: _SEQUENCE_NUMBER, type: BIGINT }\n", []string{"_SEQUENCE_NUMBER"}},
		{head + schema + "    options: { fields.id.stats-mode: full, parquet.block.size: '1048576', commit.callback.a.B.param: x }\n", nil},
		{"paimon:\n  warehouse: ftp://x\n  table: t\n", []string{"warehouse scheme is not supported"}},
	}
	for _, tc := range cases {
		spectest.CheckLint(t, linter.LintOutputYAML, tc.yaml, tc.want...)
	}
}

// TestCommitUserFromLabel runs the spec through a stream build, where the
// component's label reaches ParseConfig through conf.Resources().
func TestCommitUserFromLabel(t *testing.T) {
	var got []string
	env := stubEnv(t, func(c Config, err error) {
		if err != nil {
			t.Errorf("ParseConfig: %v", err)
		}
		got = append(got, c.CommitUser)
	})
	for _, label := range []string{"", "orders_out"} {
		sb := env.NewStreamBuilder()
		if err := sb.AddInputYAML("generate:\n  mapping: 'root = {}'\n  count: 1\n"); err != nil {
			t.Fatal(err)
		}
		out := "paimon:\n  warehouse: /lake\n  database: sales\n  table: orders\n"
		if label != "" {
			out = "label: " + label + "\n" + out
		}
		if err := sb.AddOutputYAML(out); err != nil {
			t.Fatal(err)
		}
		strm, err := sb.Build()
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err = strm.Run(ctx)
			cancel()
		}
		if err == nil || !strings.Contains(err.Error(), "stub output") {
			t.Errorf("expected the stub's error, got %v", err)
		}
	}
	want := []string{"benthos-paimon-sales.orders", "benthos-paimon-sales.orders-orders_out"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("commit users %q, want %q", got, want)
	}
}

func TestDocsRenderAndExamplesLint(t *testing.T) {
	env := stubEnv(t, nil)
	// GetOutputConfig looks in the global environment only (benthos
	// v4.60.0), so walk the isolated one.
	var view *service.ConfigView
	env.WalkOutputs(func(name string, v *service.ConfigView) {
		if name == "paimon" {
			view = v
		}
	})
	if view == nil {
		t.Fatal("paimon output not registered in the test environment")
	}
	data := spectest.CheckDocs(t, view,
		"== Delivery guarantees", "== Messages to rows", "== Tables, partitions and buckets", "== Schema evolution",
		"== Atomic commits on S3, and Java writers", "== Performance",
		"=== create_table.schema[].type", "=== s3.credentials.secret (secret)", "=== commit_user",
		"=== batching.period", "=== max_in_flight", "Default: 4", "=== timestamp_unit",
	)
	if data.Summary == "" || data.Status != "beta" || data.Categories == "" {
		t.Errorf("summary %q status %q categories %q", data.Summary, data.Status, data.Categories)
	}
	advanced := advancedFields(t, view)
	for _, name := range []string{"s3", "commit_user", "timestamp_unit", "create_table.options", "batching.processors"} {
		if !advanced[name] {
			t.Errorf("field %s should be advanced", name)
		}
	}
	for _, name := range []string{"warehouse", "table", "create_table.schema", "unknown_fields", "schema_evolution", "max_in_flight"} {
		if advanced[name] {
			t.Errorf("field %s should not be advanced", name)
		}
	}
	spectest.CheckExamples(t, env, data, "\n  paimon:\n", ConfigSpec(), func(conf *service.ParsedConfig) error {
		_, err := ParseConfig(conf)
		return err
	})
}

// advancedFields reads is_advanced of every field from the spec's JSON form
// (TemplateData does not carry it), by dotted path.
func advancedFields(t *testing.T, view *service.ConfigView) map[string]bool {
	t.Helper()
	raw, err := view.FormatJSON()
	if err != nil {
		t.Fatal(err)
	}
	type field struct {
		Name       string  `json:"name"`
		IsAdvanced bool    `json:"is_advanced"`
		Children   []field `json:"children"`
	}
	var spec struct {
		Config field `json:"config"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	var walk func(prefix string, fs []field)
	walk = func(prefix string, fs []field) {
		for _, f := range fs {
			out[prefix+f.Name] = f.IsAdvanced
			walk(prefix+f.Name+".", f.Children)
		}
	}
	walk("", spec.Config.Children)
	if len(out) < 10 {
		t.Fatalf("only %d fields found in the spec JSON", len(out))
	}
	return out
}

func TestDefaultCommitUser(t *testing.T) {
	tb := config.Table{Database: "db", Table: "t"}
	if got := DefaultCommitUser(tb, ""); got != "benthos-paimon-db.t" {
		t.Errorf("got %q", got)
	}
	if got := DefaultCommitUser(tb, "out"); got != "benthos-paimon-db.t-out" {
		t.Errorf("got %q", got)
	}
}

func TestCreateTableFieldsConvert(t *testing.T) {
	// The schema from the config drives a Converter directly.
	c, err := parse(t, `
warehouse: /lake
table: t
create_table:
  enabled: true
  schema:
    - { name: id, type: BIGINT NOT NULL }
    - { name: at, type: TIMESTAMP(3) }
`)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := rowconv.NewConverter(c.CreateTable.Fields, c.Convert)
	if err != nil {
		t.Fatal(err)
	}
	row, _, err := conv.Convert(map[string]any{"id": int64(1), "at": "2024-05-30T12:00:00Z"})
	if err != nil || row[0] != int64(1) || row[1] != (types.Timestamp{Millis: 1717070400000}) {
		t.Errorf("row %#v, %v", row, err)
	}
}

func TestParseMaintenance(t *testing.T) {
	c, err := parse(t, "warehouse: /lake\ntable: events\n")
	if err != nil {
		t.Fatal(err)
	}
	want := Maintenance{Enabled: true, Interval: DefaultMaintenanceInterval, TableMetrics: true, PartitionMetricsLimit: DefaultPartitionMetricsLimit}
	if c.Maintenance != want || !c.Maintenance.active() {
		t.Errorf("default maintenance %+v", c.Maintenance)
	}
	c, err = parse(t, "warehouse: /lake\ntable: events\nmaintenance: {enabled: false, interval: 5m, table_metrics: false}\ncompaction: {enabled: true}\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Maintenance != (Maintenance{Interval: 5 * time.Minute, Compaction: true, PartitionMetricsLimit: DefaultPartitionMetricsLimit}) || !c.Maintenance.active() {
		t.Errorf("maintenance %+v", c.Maintenance)
	}
	c, err = parse(t, "warehouse: /lake\ntable: events\nmaintenance: {enabled: false, table_metrics: false}\n")
	if err != nil || c.Maintenance.active() {
		t.Errorf("maintenance %+v, %v", c.Maintenance, err)
	}
	c, err = parse(t, "warehouse: /lake\ntable: events\nmaintenance: {enabled: false, partition_metrics_limit: 0}\n")
	if err != nil || !c.Maintenance.active() || c.Maintenance.PartitionMetricsLimit != 0 {
		t.Errorf("table metrics only: %+v, %v", c.Maintenance, err)
	}
	for _, bad := range []string{"maintenance: {interval: -1s}", "maintenance: {partition_metrics_limit: -1}"} {
		if _, err := parse(t, "warehouse: /lake\ntable: events\n"+bad+"\n"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestPrimaryKeyMaxInFlight: a primary-key table writes one batch at a
// time: the default becomes 1, a larger explicit value is refused.
func TestPrimaryKeyMaxInFlight(t *testing.T) {
	pk := "warehouse: /lake\ntable: t\ncreate_table:\n  schema:\n    - { name: id, type: BIGINT }\n  primary_keys: [ id ]\n  bucket: 2\n"
	c, err := parse(t, pk)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxInFlight != 1 || !slices.Equal(c.CreateTable.PrimaryKeys, []string{"id"}) {
		t.Errorf("max_in_flight %d, primary keys %v; want 1 and [id]", c.MaxInFlight, c.CreateTable.PrimaryKeys)
	}
	if c.CreateTable.Fields[0].Type.Nullable {
		t.Error("the primary-key column stays nullable")
	}
	if _, err := parse(t, pk+"max_in_flight: 8\n"); err == nil || !strings.Contains(err.Error(), "needs max_in_flight 1") {
		t.Errorf("max_in_flight 8 on a primary-key table: %v", err)
	}
	for _, bad := range []struct{ extra, want string }{
		{"  partition_keys: [ dt ]\n", "must contain the partition key"},
	} {
		if _, err := parse(t, pk+bad.extra); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want an error naming %s", bad.extra, err, bad.want)
		}
	}
}

// TestDefaultBatching: without a batching setting the output batches
// 10,000 messages or 1 s; a given policy is kept.
func TestDefaultBatching(t *testing.T) {
	for _, c := range []struct {
		yaml   string
		count  int
		period string
	}{
		{"", DefaultBatchCount, DefaultBatchPeriod},
		{"batching: { count: 50 }", 50, ""},
		{"batching: { period: 200ms }", 0, "200ms"},
		{"keep_input_batches: true", 0, ""},
	} {
		conf, err := ConfigSpec().ParseYAML("warehouse: /tmp/wh\ntable: t\n"+c.yaml, nil)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := ParseConfig(conf)
		if err != nil {
			t.Fatal(err)
		}
		if pc.Batching.Count != c.count || pc.Batching.Period != c.period {
			t.Errorf("%q: batching %+v, want count %d period %q", c.yaml, pc.Batching, c.count, c.period)
		}
	}
}

func TestBatchingWarning(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want string // in the warning; "" for none
	}{
		{"batching: { count: 1 }", "batching.count: 1 is Benthos' policy for no batching"},
		{"batching: { count: 1, period: 1s }", "batching.count: 1 makes a batch"},
		{"batching: { count: 2 }", "batching.count: 2 makes a batch"},
		{"batching: { count: 10, byte_size: 1000000 }", "batching.count: 10 makes a batch"},
		{"batching: { count: 11 }", ""},
		{"batching: { count: 10000, period: 1s }", ""},
		{"batching: { period: 100ms }", ""},
		{"", ""},
	} {
		conf, err := ConfigSpec().ParseYAML("warehouse: ./w\ntable: t\n"+tc.yaml+"\n", nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseConfig(conf)
		if err != nil {
			t.Fatal(err)
		}
		count, _ := conf.FieldInt(fieldBatching, "count")
		w := batchingWarning(count, c.Batching)
		if tc.want == "" && w != "" || !strings.Contains(w, tc.want) {
			t.Errorf("%q: warning %q, want one with %q", tc.yaml, w, tc.want)
		}
	}
}
