package cdcformat_test

import (
	"reflect"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
)

// Paimon's maxwell-data-3 fixture: insert, delete of "data", an update whose
// "old" has the changed column only (merged over "data" for the -D row).
func TestMaxwellEvents(t *testing.T) {
	want := schemaEvolution3()
	for i, line := range lines(t, "maxwell/schemaevolution-data-3.txt") {
		ev, err := cdcformat.Decode(cdcformat.Maxwell, line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if ev.Database != "test" || ev.Table != "product" || !reflect.DeepEqual(ev.PrimaryKeys, []string{"id"}) || ev.Fields != nil {
			t.Errorf("line %d: event %+v", i+1, ev)
		}
		assertChanges(t, ev.Changes, want[i])
	}
}

// Maxwell's schema-change events (output_ddl) carry the statement and no
// rows; Paimon's parser would fail on them.
func TestMaxwellDDL(t *testing.T) {
	for _, typ := range []string{"table-create", "table-alter", "table-drop", "database-create", "database-alter", "database-drop"} {
		in := `{"type":"` + typ + `","database":"test","table":"product","def":{},"sql":"ALTER TABLE product ADD c INT","ts":1}`
		ev, err := cdcformat.Decode(cdcformat.Maxwell, []byte(in))
		if err != nil {
			t.Errorf("%s: %v", typ, err)
			continue
		}
		if ev.DDL != "ALTER TABLE product ADD c INT" || len(ev.Changes) != 0 || ev.Database != "test" || ev.Table != "product" {
			t.Errorf("%s: event %+v", typ, ev)
		}
	}
	if _, err := cdcformat.Decode(cdcformat.Maxwell, []byte(`{"type":"table-rename","data":{}}`)); err == nil {
		t.Error("table-rename: no error")
	}
}

// Paimon's OGG fixtures: the update's -D row is "before" as sent.
func TestOggEvents(t *testing.T) {
	tests := []struct {
		file  string
		table string
		want  [][]cdcformat.Change
	}{
		{"ogg/event-insert.txt", "EVENT", [][]cdcformat.Change{
			{product(kv.Insert, "101", "scooter", "Small 2-wheel scooter", "3.14")},
			{product(kv.Insert, "102", "car battery", "12V car battery", "8.1")},
			{product(kv.Insert, "103", "scooter", "Big 2-wheel scooter ", "5.1")},
		}},
		{"ogg/event-update.txt", "EVENT", [][]cdcformat.Change{{
			product(kv.Delete, "103", "scooter", "Big 2-wheel scooter ", "5.1"),
			product(kv.Insert, "103", "scooter", "Big 2-wheel scooter ", "8.1"),
		}}},
		{"ogg/event-delete.txt", "EVENT", [][]cdcformat.Change{{product(kv.Delete, "103", "scooter", "Big 2-wheel scooter ", "8.1")}}},
		{"ogg/schemaevolution-data-3.txt", "TBL_TEST", schemaEvolution3()},
	}
	for _, tt := range tests {
		for i, line := range lines(t, tt.file) {
			ev, err := cdcformat.Decode(cdcformat.Ogg, line)
			if err != nil {
				t.Fatalf("%s:%d: %v", tt.file, i+1, err)
			}
			if ev.Database != "OGG" || ev.Table != tt.table || !reflect.DeepEqual(ev.PrimaryKeys, []string{"id"}) {
				t.Errorf("%s:%d: event %+v", tt.file, i+1, ev)
			}
			assertChanges(t, ev.Changes, tt.want[i])
		}
	}
	// The table splits at the first dot only (Identifier.fromString).
	ev, err := cdcformat.Decode(cdcformat.Ogg, []byte(`{"table":"A.B.C","op_type":"I","after":{}}`))
	if err != nil || ev.Database != "A" || ev.Table != "B.C" {
		t.Errorf("A.B.C: %+v, %v", ev, err)
	}
}
