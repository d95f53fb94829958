package cdcformat

import (
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// decodeOgg mirrors OggRecordParser.extractRecords: "op_type" I / U / D over
// "after" and "before". An update is -D of "before" as sent (not merged with
// "after", unlike the other formats) then +I of "after". "table" is
// "SCHEMA.TABLE", split at the first "." (Identifier.fromString); a table
// name without a "." is an error, as in Paimon.
func decodeOgg(root map[string]any) (Event, error) {
	const f = Ogg
	var ev Event
	if v, ok := field(root, "table"); ok {
		full := asText(v)
		db, table, found := strings.Cut(full, ".")
		if strings.TrimSpace(full) == "" || !found {
			return Event{}, envErr(f, "table", "%q is not SCHEMA.TABLE", full)
		}
		ev.Database, ev.Table = db, table
	}
	var err error
	if ev.PrimaryKeys, err = stringList(f, root, "primary_keys", "primary_keys"); err != nil {
		return Event{}, err
	}
	op, err := requiredText(f, root, "op_type", "op_type")
	if err != nil {
		return Event{}, err
	}
	switch op {
	case "I":
		after, err := requiredObject(f, root, "after", "after", "")
		if err != nil {
			return Event{}, err
		}
		ev.Changes = []Change{{Kind: kv.Insert, Row: copyRow(after)}}
	case "U":
		before, err := requiredObject(f, root, "before", "before", `"op_type" is "U"`)
		if err != nil {
			return Event{}, err
		}
		after, err := requiredObject(f, root, "after", "after", "")
		if err != nil {
			return Event{}, err
		}
		ev.Changes = []Change{{Kind: kv.Delete, Row: copyRow(before)}, {Kind: kv.Insert, Row: copyRow(after)}}
	case "D":
		before, err := requiredObject(f, root, "before", "before", `"op_type" is "D"`)
		if err != nil {
			return Event{}, err
		}
		ev.Changes = []Change{{Kind: kv.Delete, Row: copyRow(before)}}
	default:
		return Event{}, envErr(f, "op_type", "unknown operation %q (want I, U or D)", op)
	}
	return ev, nil
}
