package cdcformat

import (
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// decodeDebezium mirrors DebeziumJsonRecordParser: with a top-level "schema"
// key (Kafka Connect's JsonConverter with schemas.enable) the envelope is
// "payload" and the schema's "after" (else "before") struct types the
// columns; without one the message is the envelope itself and values stay
// as sent. "op" c / r (snapshot read) insert "after"; u is -D of "before"
// merged over "after", then +I of "after"; d is -D of "before". t (truncate)
// and m (message) are errors, as in Paimon.
func decodeDebezium(msg map[string]any) (Event, error) {
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
		if s != nil {
			var err error
			if schema, err = parseDebeziumSchema(s); err != nil {
				return Event{}, err
			}
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
		ev.Fields = schema.fields
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
