package schema_test

import (
	"errors"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestValidate's expectations were cross-checked against Paimon 1.4.2's
// SchemaValidation.validateTableSchema on the same JSON: Java agrees on
// every case except those commented as lakecore-only.
func TestValidate(t *testing.T) {
	base := func(opts map[string]string, partitions ...string) *schema.TableSchema {
		return schema.NewTableSchema([]types.DataField{
			field("a", "INT"), field("b", "STRING"), field("pt", "DATE"),
			field("arr", "ARRAY<INT>"), field("r", "ROW<x INT, y ROW<z INT>>"),
		}, partitions, opts, nil)
	}
	pkBase := func(opts map[string]string) *schema.TableSchema {
		s := base(opts)
		s.PrimaryKeys = []string{"a"}
		s.Fields[0].Type = s.Fields[0].Type.NotNull()
		return s
	}
	for _, tc := range []struct {
		name string
		s    *schema.TableSchema
		want error
	}{
		{"unaware bucket", base(nil), nil},
		{"explicit -1", base(map[string]string{"bucket": "-1"}), nil},
		{"fixed bucket", base(map[string]string{"bucket": "4", "bucket-key": "a,b"}, "pt"), nil},
		{"-1 with bucket-key", base(map[string]string{"bucket": "-1", "bucket-key": "a"}), schema.ErrInvalidOption},
		{"-1 with empty bucket-key", base(map[string]string{"bucket-key": ""}), schema.ErrInvalidOption},
		{"bucket 0", base(map[string]string{"bucket": "0"}), schema.ErrInvalidOption},
		{"bucket -2 (postpone, PK only)", base(map[string]string{"bucket": "-2"}), schema.ErrInvalidOption},
		{"fixed without bucket-key", base(map[string]string{"bucket": "2"}), schema.ErrInvalidOption},
		{"fixed with blank bucket-key", base(map[string]string{"bucket": "2", "bucket-key": " "}), schema.ErrInvalidOption},
		{"bucket-key not a field", base(map[string]string{"bucket": "2", "bucket-key": "nope"}), schema.ErrInvalidOption},
		{"bucket-key with a space", base(map[string]string{"bucket": "2", "bucket-key": "a, b"}), schema.ErrInvalidOption},
		{"bucket-key is a partition key", base(map[string]string{"bucket": "2", "bucket-key": "pt"}, "pt"), schema.ErrInvalidOption},
		{"nested bucket-key", base(map[string]string{"bucket": "2", "bucket-key": "arr"}), schema.ErrInvalidOption},
		{"bucket not a number", base(map[string]string{"bucket": "two"}), schema.ErrInvalidOption},
		{"partition key missing", base(nil, "nope"), schema.ErrInvalidSchema},
		{"nested partition key", base(nil, "r"), schema.ErrInvalidSchema},
		{"partition key twice", base(nil, "pt", "pt"), schema.ErrInvalidSchema}, // lakecore-only
		{"retained min 0", base(map[string]string{"snapshot.num-retained.min": "0"}), schema.ErrInvalidOption},
		{"retained min > max", base(map[string]string{"snapshot.num-retained.min": "20", "snapshot.num-retained.max": "5"}), schema.ErrInvalidOption},
		{"partition expiry unpartitioned", base(map[string]string{"partition.expiration-time": "1 d"}), schema.ErrInvalidOption},
		{"partition expiry partitioned", base(map[string]string{"partition.expiration-time": "1 d"}, "pt"), nil},
		{"row tracking with buckets", base(map[string]string{"row-tracking.enabled": "true", "bucket": "2", "bucket-key": "a"}), schema.ErrInvalidOption},
		{"bad stats mode (only CheckWritable cares)", base(map[string]string{"metadata.stats-mode": "truncate"}), nil},
		{"bad row-tracking flag", base(map[string]string{"row-tracking.enabled": "yes"}), schema.ErrInvalidOption},
		{"primary key", func() *schema.TableSchema { s := pkBase(nil); return s }(), nil},
		{"nullable primary key", func() *schema.TableSchema {
			s := pkBase(nil)
			s.Fields[0].Type = s.Fields[0].Type.WithNullable(true)
			return s
		}(), schema.ErrInvalidSchema}, // lakecore-only: Java makes it NOT NULL when it builds the schema
		{"unknown primary key", func() *schema.TableSchema { s := pkBase(nil); s.PrimaryKeys = []string{"zz"}; return s }(), schema.ErrInvalidSchema},
		{"primary key twice", func() *schema.TableSchema { s := pkBase(nil); s.PrimaryKeys = []string{"a", "a"}; return s }(), schema.ErrInvalidSchema},
		{"primary key all partition keys", func() *schema.TableSchema {
			s := pkBase(nil)
			s.PartitionKeys = []string{"a"}
			return s
		}(), schema.ErrInvalidSchema},
		{"primary key with fixed bucket and no bucket-key", pkBase(map[string]string{"bucket": "4"}), nil},
		{"bucket key outside the primary key", pkBase(map[string]string{"bucket": "4", "bucket-key": "b"}), schema.ErrInvalidOption},
		{"postpone bucket with a primary key", pkBase(map[string]string{"bucket": "-2"}), nil},
		{"duplicate name", func() *schema.TableSchema { s := base(nil); s.Fields[1].Name = "a"; return s }(), schema.ErrInvalidSchema},
		{"blank name", func() *schema.TableSchema { s := base(nil); s.Fields[1].Name = " "; return s }(), schema.ErrInvalidSchema},
		{"duplicate id", func() *schema.TableSchema { s := base(nil); s.Fields[1].ID = 0; return s }(), schema.ErrInvalidSchema},                   // lakecore-only
		{"nested id clash", func() *schema.TableSchema { s := base(nil); s.Fields[4].Type.Fields[0].ID = 1; return s }(), schema.ErrInvalidSchema}, // lakecore-only
		{"id above highest", func() *schema.TableSchema { s := base(nil); s.HighestFieldID = 3; return s }(), schema.ErrInvalidSchema},             // lakecore-only
		{"system field", func() *schema.TableSchema { s := base(nil); s.Fields[0].Name = "_SEQUENCE_NUMBER"; return s }(), schema.ErrInvalidSchema},
		{"key prefix", func() *schema.TableSchema { s := base(nil); s.Fields[0].Name = "_KEY_a"; return s }(), schema.ErrInvalidSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestCheckWritable(t *testing.T) {
	for opts, ok := range map[string]bool{
		"":                                      true,
		"file.format=PARQUET":                   true,
		"file.format=orc":                       false,
		"manifest.format=orc":                   false,
		"bucket-function.type=mod":              false,
		"row-tracking.enabled=true":             false,
		"data-evolution.enabled=true":           false,
		"data-file.external-paths=s3://x/y":     false,
		"deletion-vectors.enabled=true":         true,
		"file.compression=snappy":               true,
		"metadata.stats-mode=none":              true,
		"data-file.external-paths= ":            true,
		"bucket-function.type=DEFAULT":          true,
		"manifest.format=AVRO":                  true,
		"file-index.bitmap.columns=a":           true,
		"partition.default-name=__NULL__":       true,
		"commit.force-create-snapshot=true":     true,
		"snapshot.time-retained=1 d":            true,
		"source.split.target-size=64 mb":        true,
		"continuous.discovery-interval=1 s":     true,
		"manifest.compression=snappy":           true,
		"file.compression.zstd-level=3":         true,
		"metadata.stats-keep-first-n-columns=2": true,
	} {
		o := map[string]string{}
		if opts != "" {
			k, v, _ := cut(opts)
			o[k] = v
		}
		s := schema.NewTableSchema([]types.DataField{field("a", "INT")}, nil, o, nil)
		err := s.CheckWritable()
		if ok != (err == nil) {
			t.Errorf("CheckWritable(%s) = %v, want ok=%v", opts, err, ok)
		}
		if err != nil && !errors.Is(err, schema.ErrUnsupported) {
			t.Errorf("CheckWritable(%s) = %v, want ErrUnsupported", opts, err)
		}
	}
	s := schema.NewTableSchema([]types.DataField{field("a", "INT")}, nil, map[string]string{"metadata.stats-mode": "truncate"}, nil)
	if err := s.Validate(); err != nil {
		t.Errorf("Validate = %v", err)
	}
	if err := s.CheckWritable(); !errors.Is(err, schema.ErrInvalidOption) {
		t.Errorf("CheckWritable with a bad stats mode = %v, want ErrInvalidOption", err)
	}
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
		test func(t *testing.T, s *schema.TableSchema)
	}{
		{"minimal version 1 gets bucket=1 and orc", `{"id":0,"fields":[],"highestFieldId":-1,"partitionKeys":[],"primaryKeys":[],"options":{}}`, true,
			func(t *testing.T, s *schema.TableSchema) {
				if s.Version != 1 || s.Options["bucket"] != "1" || s.Options["file.format"] != "orc" || s.TimeMillis != 0 {
					t.Errorf("got version %d options %v time %d", s.Version, s.Options, s.TimeMillis)
				}
			}},
		{"version 2 keeps its bucket, gets orc", `{"version":2,"id":3,"fields":[{"id":0,"name":"a","type":"INT"}],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{"bucket":"-1"},"comment":"c","timeMillis":7}`, true,
			func(t *testing.T, s *schema.TableSchema) {
				if s.ID != 3 || s.Options["bucket"] != "-1" || s.Options["file.format"] != "orc" || s.Comment == nil || *s.Comment != "c" || s.TimeMillis != 7 {
					t.Errorf("got %+v", s)
				}
			}},
		{"version 3 gets no defaults", `{"version":3,"id":0,"fields":[],"highestFieldId":-1,"partitionKeys":[],"primaryKeys":[],"options":{},"unknown":[1]}`, true,
			func(t *testing.T, s *schema.TableSchema) {
				if len(s.Options) != 0 {
					t.Errorf("options %v", s.Options)
				}
			}},
		{"non-string option values as Jackson asText", `{"version":3,"id":0,"fields":[],"highestFieldId":-1,"partitionKeys":[],"primaryKeys":[],"options":{"bucket":4,"x":true,"y":null,"z":{}}}`, true,
			func(t *testing.T, s *schema.TableSchema) {
				if s.Options["bucket"] != "4" || s.Options["x"] != "true" || s.Options["y"] != "null" || s.Options["z"] != "" {
					t.Errorf("options %v", s.Options)
				}
			}},
		{"missing id", `{"fields":[],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{}}`, false, nil},
		{"missing fields", `{"id":0,"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{}}`, false, nil},
		{"missing highestFieldId", `{"id":0,"fields":[],"partitionKeys":[],"primaryKeys":[],"options":{}}`, false, nil},
		{"missing partitionKeys", `{"id":0,"fields":[],"highestFieldId":0,"primaryKeys":[],"options":{}}`, false, nil},
		{"missing primaryKeys", `{"id":0,"fields":[],"highestFieldId":0,"partitionKeys":[],"options":{}}`, false, nil},
		{"missing options", `{"id":0,"fields":[],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[]}`, false, nil},
		{"id not a number", `{"id":"x","fields":[],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{}}`, false, nil},
		{"fractional id", `{"id":1.5,"fields":[],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{}}`, false, nil},
		{"null fields", `{"id":0,"fields":null,"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{}}`, false, nil},
		{"bad type", `{"id":0,"fields":[{"id":0,"name":"a","type":"WHAT"}],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{}}`, false, nil},
		{"options array", `{"id":0,"fields":[],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":[]}`, false, nil},
		{"keys not strings", `{"id":0,"fields":[],"highestFieldId":0,"partitionKeys":[1],"primaryKeys":[],"options":{}}`, false, nil},
		{"not an object", `[1]`, false, nil},
		{"trailing data", `{"id":0,"fields":[],"highestFieldId":0,"partitionKeys":[],"primaryKeys":[],"options":{}} x`, false, nil},
		{"empty", ``, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := schema.Parse([]byte(tc.in))
			if tc.ok != (err == nil) {
				t.Fatalf("Parse = %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, schema.ErrInvalidSchema) {
					t.Fatalf("error %v does not wrap ErrInvalidSchema", err)
				}
				return
			}
			tc.test(t, s)
		})
	}
}

func TestNewTableSchemaIDs(t *testing.T) {
	s := schema.NewTableSchema([]types.DataField{
		{ID: 42, Name: "a", Type: types.MustParse("INT")},
		{Name: "r", Type: types.MustParse("ROW<p ROW<q INT>, m MAP<STRING, ROW<v INT>>>")},
		{Name: "b", Type: types.MustParse("STRING")},
	}, nil, nil, nil)
	// Java: a=0; r=1; inside r: p's type first (q=2), then p=3; m's value
	// row first (v=4), then m=5; b=6.
	r := s.Fields[1].Type
	got := []int{s.Fields[0].ID, s.Fields[1].ID, r.Fields[0].Type.Fields[0].ID, r.Fields[0].ID, r.Fields[1].Type.Value.Fields[0].ID, r.Fields[1].ID, s.Fields[2].ID}
	for i, want := range []int{0, 1, 2, 3, 4, 5, 6} {
		if got[i] != want {
			t.Fatalf("ids = %v, want 0..6", got)
		}
	}
	if s.HighestFieldID != 6 || s.Version != 3 || s.ID != 0 {
		t.Errorf("highest %d version %d id %d", s.HighestFieldID, s.Version, s.ID)
	}
}
