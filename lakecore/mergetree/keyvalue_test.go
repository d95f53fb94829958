package mergetree

import "testing"

// TestRecordSlab checks that records from a RecordSlab are zeroed, have
// their own values and cannot grow into their neighbours'.
func TestRecordSlab(t *testing.T) {
	var s RecordSlab
	var recs []*KeyValue
	for i := range 600 {
		r := s.New(3)
		if len(r.Value) != 3 || cap(r.Value) != 3 || r.Seq != 0 || r.Value[0] != nil {
			t.Fatalf("record %d: %+v, want a zeroed record of 3 values", i, r)
		}
		r.Value[0], r.Seq = i, int64(i)
		recs = append(recs, r)
	}
	_ = append(recs[0].Value, "grown")
	for i, r := range recs {
		if r.Value[0] != i || r.Seq != int64(i) || r.Value[1] != nil {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
}
