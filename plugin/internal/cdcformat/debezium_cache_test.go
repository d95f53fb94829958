package cdcformat

import (
	"bytes"
	"testing"
)

// TestSchemaCacheCopiesItsKey: the cache keeps its own copy of the schema
// bytes, so a caller reusing its buffer cannot make a later, different
// schema hit the cached one (found by FuzzDecodeDebezium).
func TestSchemaCacheCopiesItsKey(t *testing.T) {
	var c schemaCache
	buf := []byte(`{"type":"struct","fields":[{"field":"after","type":"struct","fields":[{"field":"a","type":"string"}]}]}`)
	first, err := c.get(buf)
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, bytes.Replace(buf, []byte(`"field":"a"`), []byte(`"field":"b"`), 1))
	second, err := c.get(buf)
	if err != nil {
		t.Fatal(err)
	}
	if first == second {
		t.Fatal("a different schema in a reused buffer got the cached parse of the first")
	}
}
