package cdcformat

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// decodeDebezium mirrors DebeziumJsonRecordParser: with a top-level "schema"
// key (Kafka Connect's JsonConverter with schemas.enable) the envelope is
// "payload" and the schema's "after" (else "before") struct types the
// columns; without one the message is the envelope itself and values stay
// as sent. "op" c / r (snapshot read) insert "after"; u is -D of "before"
// merged over "after", then +I of "after"; d is -D of "before". t (truncate)
// and m (message) are errors, as in Paimon.
//
// The schema value may be a json.RawMessage (Decoder's split of the
// message), parsed through cache, which may be nil.
func decodeDebezium(msg map[string]any, cache *schemaCache) (Event, error) {
	const f = Debezium
	root, prefix := msg, ""
	var schema *dbzSchema
	if s, has := msg["schema"]; has {
		prefix = "payload."
		p, ok := field(msg, "payload")
		if !ok {
			return Event{}, envErr(f, "payload", "missing")
		}
		if root, ok = p.(map[string]any); !ok {
			return Event{}, envErr(f, "payload", "not an object but %s", jsonType(p))
		}
		var err error
		if raw, ok := s.(json.RawMessage); ok {
			schema, err = cache.get(raw)
		} else if s != nil {
			schema, err = parseDebeziumSchema(s)
		}
		if err != nil {
			return Event{}, err
		}
	}
	var ev Event
	if src, ok := root["source"].(map[string]any); ok {
		ev.Database, ev.Table = textField(src, "db"), textField(src, "table")
	}
	var err error
	if ev.PrimaryKeys, err = stringList(f, root, "pkNames", prefix+"pkNames"); err != nil {
		return Event{}, err
	}
	if schema != nil {
		// A copy: the schema may be cached and shared.
		ev.Fields = append([]types.DataField(nil), schema.fields...)
	}
	op, err := requiredText(f, root, "op", prefix+"op")
	if err != nil {
		return Event{}, err
	}
	image := func(key, when string) (map[string]any, error) {
		m, err := requiredObject(f, root, key, prefix+key, when)
		if err != nil {
			return nil, err
		}
		return schema.transformRow(m, prefix+key)
	}
	switch op {
	case "c", "r":
		after, err := image("after", "")
		if err != nil {
			return Event{}, err
		}
		ev.Changes = []Change{{Kind: kv.Insert, Row: after}}
	case "u":
		after, err := image("after", "")
		if err != nil {
			return Event{}, err
		}
		before, err := image("before", `"op" is "u"`)
		if err != nil {
			return Event{}, err
		}
		ev.Changes = []Change{{Kind: kv.Delete, Row: mergeOld(after, before)}, {Kind: kv.Insert, Row: after}}
	case "d":
		before, err := image("before", `"op" is "d"`)
		if err != nil {
			return Event{}, err
		}
		ev.Changes = []Change{{Kind: kv.Delete, Row: before}}
	case "t":
		return Event{}, envErr(f, prefix+"op", `operation "t" (truncate) is not supported, as in Paimon`)
	case "m":
		return Event{}, envErr(f, prefix+"op", `operation "m" (message) is not supported, as in Paimon`)
	default:
		return Event{}, envErr(f, prefix+"op", "unknown operation %q (want c, r, u or d)", op)
	}
	return ev, nil
}

// schemaCache keeps the parsed schema of the last Debezium message: Kafka
// Connect's JsonConverter repeats the same schema, most of a message's bytes,
// in every message of a table. Safe for concurrent use; a parsed schema is
// immutable.
type schemaCache struct {
	mu     sync.Mutex
	raw    []byte
	parsed *dbzSchema
}

// get returns the parsed schema of raw (nil for JSON null), from the cache
// when raw is the last schema seen; c may be nil (no caching).
func (c *schemaCache) get(raw json.RawMessage) (*dbzSchema, error) {
	if c != nil {
		c.mu.Lock()
		if c.parsed != nil && bytes.Equal(raw, c.raw) {
			s := c.parsed
			c.mu.Unlock()
			return s, nil
		}
		c.mu.Unlock()
	}
	v, err := parseJSON(raw)
	if err != nil {
		return nil, envErr(Debezium, "schema", "not valid JSON: %v", err)
	}
	if v == nil {
		return nil, nil
	}
	s, err := parseDebeziumSchema(v)
	if err != nil {
		return nil, err
	}
	if c != nil {
		c.mu.Lock()
		// a copy: the caller may reuse its buffer (a fuzzer does), and a
		// changed key would hand a later message a stale schema
		c.raw, c.parsed = bytes.Clone(raw), s
		c.mu.Unlock()
	}
	return s, nil
}

// splitDebezium parses a Debezium message's top level, leaving "schema"
// unparsed (a json.RawMessage) for the cache: its bytes are only delimited,
// by scanValue, not parsed, so a cache hit costs one pass over them. Every
// other value is parsed (and so validated) by encoding/json; a schema that
// misses the cache is parsed by schemaCache.get. ok is false when the top
// level is not a well-formed object, for the caller to take the general
// path, which reports why.
func splitDebezium(data []byte) (msg map[string]any, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	msg = map[string]any{}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return msg, skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		end, ok := scanValue(data, i)
		if !ok {
			return nil, false
		}
		var key string
		if json.Unmarshal(data[i:end], &key) != nil {
			return nil, false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		end, ok = scanValue(data, i)
		if !ok {
			return nil, false
		}
		if key == "schema" {
			msg[key] = json.RawMessage(data[i:end])
		} else {
			v, err := parseJSON(data[i:end])
			if err != nil {
				return nil, false
			}
			msg[key] = v
		}
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return msg, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// scanValue returns the end of the JSON value starting at data[i]: a string
// to its closing quote, an object or array to its matching bracket (strings
// inside skipped), a scalar to the next delimiter. It checks the structure
// only; the caller parses the bytes, or compares them with bytes parsed
// before.
func scanValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return 0, false
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, ok := scanValue(data, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, j > i
		}
		j++
	}
	return j, j > i
}
