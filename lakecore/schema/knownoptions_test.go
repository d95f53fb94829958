package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
)

func TestIsKnownOption(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"bucket", true},
		{"snapshot.num-retained.max", true},
		{"partition.expiration-time", true},
		{"log.scan", true},                // a fallback key
		{"sink.parallelism", true},        // FlinkConnectorOptions
		{"variant.shreddingSchema", true}, // 2.0 only, mixed case
		{"fields.price.aggregate-function", true},
		{"fields.default-aggregate-function", true},
		{"file-index.bloom-filter.columns", true},
		{"parquet.block.size", true},
		{"orc.bloom.filter.columns", true},
		{"commit.callback.com.example.Callback.param", true},
		{"snapshot.num-retained.mx", false},
		{"fields.", false},
		{"commit.callback..param", false},
		{"bukcet", false},
		{"", false},
		{"my.own.option", false},
	} {
		if got := schema.IsKnownOption(tc.key); got != tc.want {
			t.Errorf("IsKnownOption(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestCheckOptionNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts map[string]string
		want string // "" for no error
	}{
		{"none", nil, ""},
		{"known", map[string]string{"bucket": "2", "fields.a.stats-mode": "full", "parquet.page.size": "1mb"}, ""},
		{"misspelt", map[string]string{"snapshot.num-retained.mx": "3"}, `unknown table option "snapshot.num-retained.mx" (did you mean "snapshot.num-retained.max"?)`},
		{"swapped letters", map[string]string{"bukcet": "3"}, `unknown table option "bukcet" (did you mean "bucket"?)`},
		{"far from any", map[string]string{"my.own.option": "x"}, `unknown table option "my.own.option": not an option of Paimon 1.4 or 2.0`},
		{"first in order", map[string]string{"zz.b": "1", "aa.b": "1", "bucket": "1"}, `unknown table option "aa.b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := schema.CheckOptionNames(tc.opts)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if !errors.Is(err, schema.ErrUnknownOption) {
				t.Errorf("%v does not wrap ErrUnknownOption", err)
			}
		})
	}
}

// TestKnownOptionsCoverLakecore: every option lakecore reads is in the list.
func TestKnownOptionsCoverLakecore(t *testing.T) {
	for _, k := range []string{schema.OptBucket, schema.OptFileFormat, schema.OptManifestFormat,
		schema.OptMetadataStatsMode, schema.OptPartitionDefaultName, schema.OptDataFileExternalPaths,
		schema.OptBucketFunctionType, schema.OptTargetFileSize} {
		if !schema.IsKnownOption(k) {
			t.Errorf("%s is not known", k)
		}
	}
}
