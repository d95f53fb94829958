package binrow

import (
	"fmt"
	"strings"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Partition is one serialized partition row of a table, decoded and named.
// For an unpartitioned table every field is empty.
type Partition struct {
	// Values are the typed values, in partition-key order.
	Values []any
	// Strings are the values as Paimon names them (PartitionValues):
	// unescaped, the default name for NULL.
	Strings []string
	// Name is "k1=v1/k2=v2" from Strings, unescaped: the partition as
	// people read it.
	Name string
	// Dir is the escaped directory below the table (PartitionPath).
	Dir string
}

// PartitionNamer decodes and names the serialized partition rows of one
// table, caching each distinct row. It is safe for concurrent use.
type PartitionNamer struct {
	keys  []types.DataField
	types []types.DataType
	opts  PartitionOptions

	mu    sync.Mutex
	cache map[string]*Partition
}

// NewPartitionNamer returns a namer for a table partitioned by keys (none:
// unpartitioned) whose options give o.
func NewPartitionNamer(keys []types.DataField, o PartitionOptions) *PartitionNamer {
	n := &PartitionNamer{keys: keys, opts: o, cache: map[string]*Partition{}}
	for _, k := range keys {
		n.types = append(n.types, k.Type)
	}
	return n
}

// Keys returns the partition keys.
func (n *PartitionNamer) Keys() []types.DataField { return n.keys }

// Of decodes and names a serialized partition row. The result is shared:
// callers must not modify it. Errors (a row that does not decode or a value
// that has no name) name the row in hex.
func (n *PartitionNamer) Of(part []byte) (*Partition, error) {
	n.mu.Lock()
	p, ok := n.cache[string(part)]
	n.mu.Unlock()
	if ok {
		return p, nil
	}
	p = &Partition{}
	if len(n.keys) > 0 {
		var err error
		if p.Values, err = Deserialize(n.types, part); err != nil {
			return nil, fmt.Errorf("partition %x: %w", part, err)
		}
		if p.Strings, err = PartitionValues(n.keys, p.Values, n.opts); err != nil {
			return nil, fmt.Errorf("partition %x: %w", part, err)
		}
		if p.Dir, err = PartitionPath(n.keys, p.Values, n.opts); err != nil {
			return nil, fmt.Errorf("partition %x: %w", part, err)
		}
		names := make([]string, len(n.keys))
		for i, k := range n.keys {
			names[i] = k.Name + "=" + p.Strings[i]
		}
		p.Name = strings.Join(names, "/")
	}
	n.mu.Lock()
	n.cache[string(part)] = p
	n.mu.Unlock()
	return p, nil
}
