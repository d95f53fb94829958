package paimon

import (
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// bindPartitionFilter types the partition_filter (partition.ParseConfig
// gives its syntax) against the table's partition keys. Values are
// converted to each key's type with the paimon output's rules ("2024-05-30"
// for a DATE, 7 or "7" for an INT, ...); an error names the field, the key
// and the value. An empty filter binds to nil, which reads all.
func bindPartitionFilter(f partition.Filter, keys []types.DataField) (*partition.Predicate, error) {
	return f.Bind(keys, convertPartitionValue)
}

func convertPartitionValue(key types.DataField, raw any) ([]any, error) {
	// Partition values may be null even for NOT NULL-declared keys in
	// Java-written tables; the filter's null means the default partition.
	v, err := rowconv.ConvertValue(key.Type.WithNullable(true), raw, rowconv.ConvertOptions{})
	if err != nil {
		return nil, err
	}
	return []any{v}, nil
}
