package cdcformat

import (
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// decodeMaxwell mirrors MaxwellRecordParser.extractRecords: "type" insert /
// update / delete over the "data" row, with "old" (the changed columns'
// previous values) merged over "data" for the -D row of an update.
//
// Unlike Paimon, which fails on them, schema-change events ("database-*" and
// "table-*" types, sent with Maxwell's output_ddl) decode to an Event with
// only DDL set. Bootstrap events ("bootstrap-insert", ...) are errors, as in
// Paimon.
func decodeMaxwell(root map[string]any) (Event, error) {
	const f = Maxwell
	ev := Event{Database: textField(root, "database"), Table: textField(root, "table")}
	op, err := requiredText(f, root, "type", "type")
	if err != nil {
		return Event{}, err
	}
	if isMaxwellDDL(op) {
		ev.DDL = textField(root, "sql")
		return ev, nil
	}
	if ev.PrimaryKeys, err = stringList(f, root, "primary_key_columns", "primary_key_columns"); err != nil {
		return Event{}, err
	}
	data, err := requiredObject(f, root, "data", "data", "")
	if err != nil {
		return Event{}, err
	}
	switch op {
	case "insert":
		ev.Changes = []Change{{Kind: kv.Insert, Row: copyRow(data)}}
	case "update":
		old, err := requiredObject(f, root, "old", "old", `"type" is "update"`)
		if err != nil {
			return Event{}, err
		}
		ev.Changes = []Change{{Kind: kv.Delete, Row: mergeOld(data, old)}, {Kind: kv.Insert, Row: copyRow(data)}}
	case "delete":
		ev.Changes = []Change{{Kind: kv.Delete, Row: copyRow(data)}}
	default:
		return Event{}, envErr(f, "type", "unknown operation %q (want insert, update or delete)", op)
	}
	return ev, nil
}

// isMaxwellDDL reports Maxwell's schema-change event types
// (database-create, database-alter, database-drop, table-create,
// table-alter, table-drop).
func isMaxwellDDL(op string) bool {
	kind, action, ok := strings.Cut(op, "-")
	if !ok || (kind != "database" && kind != "table") {
		return false
	}
	return action == "create" || action == "alter" || action == "drop"
}
