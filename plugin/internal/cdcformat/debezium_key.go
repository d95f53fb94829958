package cdcformat

import (
	"bytes"
	"strconv"
)

// DebeziumKeyFields returns the primary-key columns that a Debezium Kafka
// record key names (the message value, which Decode reads, does not): with
// a schema (schemas.enable) the fields of the key struct in schema order,
// else the fields of the key object in document order. An empty key or null
// (a table without a primary key) gives nil. Paimon's kafka_sync_table does
// not read the key (it takes pkNames from the value, or the action's
// primary_keys); this is for callers that want the source's keys. Errors
// wrap ErrInvalidEnvelope.
func DebeziumKeyFields(key []byte) ([]string, error) {
	const f = Debezium
	trimmed := bytes.TrimSpace(key)
	if len(trimmed) == 0 {
		return nil, nil
	}
	v, err := parseJSON(trimmed)
	if err != nil {
		return nil, envErr(f, "key", "not valid JSON: %v", err)
	}
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, envErr(f, "key", "not a JSON object but %s", jsonType(v))
	}
	s, hasSchema := obj["schema"]
	if !hasSchema {
		return objectKeyOrder(trimmed, ""), nil
	}
	if s == nil {
		p, ok := field(obj, "payload")
		if !ok {
			return nil, nil
		}
		if _, ok := p.(map[string]any); !ok {
			return nil, envErr(f, "key.payload", "not an object but %s", jsonType(p))
		}
		return objectKeyOrder(trimmed, "payload"), nil
	}
	so, ok := s.(map[string]any)
	if !ok {
		return nil, envErr(f, "key.schema", "not an object but %s", jsonType(s))
	}
	fields, ok := so["fields"].([]any)
	if !ok {
		return nil, envErr(f, "key.schema.fields", "missing or not an array")
	}
	names := make([]string, 0, len(fields))
	for i, e := range fields {
		fo, ok := e.(map[string]any)
		name := textField(fo, "field")
		if !ok || name == "" {
			return nil, envErr(f, "key.schema.fields["+strconv.Itoa(i)+"]", `not an object with a "field" name`)
		}
		names = append(names, name)
	}
	return names, nil
}
