package paimon

import (
	"fmt"
	"math"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// messageBuilder turns rows into messages exactly as rowconv.NewRowMessage
// does (the same structured value and metadata, of the same Go types), at
// a lower cost per row, which dominates tailing throughput:
//   - values whose rendering is the value itself (strings, BIGINT, BOOLEAN,
//     finite DOUBLE) keep the interface value the reader returned instead
//     of being boxed again;
//   - TIMESTAMP values are formatted without going through time.Time;
//   - the metadata values shared by the rows of a split or file are
//     formatted and boxed once (metaValues), so only paimon_row is boxed
//     per row;
//   - the values it boxes per row (paimon_row, TINYINT/SMALLINT/INT as
//     int64, TIMESTAMP text) come from the caller's boxes.Slab, one heap
//     allocation per 128 values instead of one or two per value.
//
// It holds no state that changes: workers share one. Each worker passes
// its own slab.
//
// With asJSON (message_format: json, jsonmessage.go) the messages carry the
// JSON text of that structured value as their bytes instead.
type messageBuilder struct {
	fields []types.DataField
	same   []bool // render(v) == v for every non-null v of the field
	asJSON bool
	order  []int    // JSON: field indexes in key order
	keys   [][]byte // JSON: each field's quoted name and colon
}

func newMessageBuilder(fields []types.DataField, asJSON bool) *messageBuilder {
	b := &messageBuilder{fields: fields, same: make([]bool, len(fields)), asJSON: asJSON}
	for i, f := range fields {
		switch f.Type.Kind {
		case types.KindChar, types.KindVarChar, types.KindBigInt, types.KindBoolean, types.KindDouble:
			b.same[i] = true
		}
	}
	if asJSON {
		b.order, b.keys = jsonKeys(fields)
	}
	return b
}

// metaValues are the metadata of the rows of one data file, boxed once.
// It is read by several workers at once and never changed once made.
type metaValues struct {
	snapshot, kind, time, partition, bucket, file any
	// keys are the metadata keys set (metadata_keys).
	keys MetadataKeys
	// byKind, for a primary-key table's rows, holds for each valid row
	// kind a message with all that metadata set (paimon_row 0): a row's
	// message is a copy of it with paimon_row set. Nine keys overflow the
	// eight-slot map Benthos starts with, so setting them one by one also
	// grows the map; copying a template clones the map at its full size
	// once, which costs less. (With the seven keys of an append table's
	// rows the map does not grow, and setting them one by one is cheaper
	// than a copy.)
	byKind [4]*service.Message
}

// newMetaValues boxes m's values except Row, for messages with the
// metadata keys of keys; keyed (a primary-key table, rows with row kinds)
// also makes the row-kind templates.
func newMetaValues(m rowconv.RowMeta, keyed bool, keys MetadataKeys) *metaValues {
	mv := &metaValues{
		snapshot:  m.SnapshotID,
		kind:      m.CommitKind,
		time:      rowconv.FormatCommitTime(m.CommitTimeMillis),
		partition: m.Partition,
		bucket:    int64(m.Bucket),
		file:      m.File,
		keys:      keys,
	}
	// Templates pay only with every key: more than Benthos' first map
	// holds (see byKind).
	if keyed && keys == AllMetadataKeys {
		for k := range mv.byKind {
			msg := service.NewMessage(nil)
			mv.set(msg, int64(0))
			mv.setRowKind(msg, kv.RowKind(k))
			mv.byKind[k] = msg
		}
	}
	return mv
}

// set sets the metadata of rowconv.RowMeta.Apply that mv.keys holds: mv's
// and row.
func (mv *metaValues) set(msg *service.Message, row any) {
	// In the order of metadataKeyNames, whose first seven these are.
	vals := [...]any{mv.snapshot, mv.kind, mv.time, mv.partition, mv.bucket, mv.file, row}
	for i, v := range vals {
		if mv.keys&(1<<i) != 0 {
			msg.MetaSetMut(metadataKeyNames[i], v)
		}
	}
}

// noKind is the kind of a row without one (an append table's).
const noKind kv.RowKind = -128

// newMessage returns an empty message with the metadata of the row at pos
// of mv's file, and the row-kind metadata of kind unless it is noKind:
// those of mv.keys.
func (mv *metaValues) newMessage(pos int64, kind kv.RowKind, slab *boxes.Slab) *service.Message {
	if kind.Valid() && mv.byKind[kind] != nil {
		msg := mv.byKind[kind].Copy()
		msg.MetaSetMut(rowconv.MetaRow, slab.Int64(pos))
		return msg
	}
	msg := service.NewMessage(nil)
	if mv.keys == 0 {
		return msg
	}
	var row any
	if mv.keys&metaRow != 0 {
		row = slab.Int64(pos)
	}
	mv.set(msg, row)
	if kind != noKind {
		mv.setRowKind(msg, kind)
	}
	return msg
}

// message renders row (values in fields order) with metadata mv, the
// row's position in its file and its row kind (noKind for none), reusing
// s (not safe for concurrent use: one per goroutine).
func (b *messageBuilder) message(row []any, mv *metaValues, pos int64, kind kv.RowKind, s *rowScratch) (*service.Message, error) {
	if len(row) != len(b.fields) {
		return nil, fmt.Errorf("render row: %d values for %d columns", len(row), len(b.fields))
	}
	if b.asJSON {
		return b.jsonMessage(row, mv, pos, kind, s)
	}
	slab := &s.slab
	obj := make(map[string]any, len(b.fields))
	for i, v := range row {
		f := &b.fields[i]
		if v != nil && b.same[i] && identity(f.Type.Kind, v) {
			obj[f.Name] = v
			continue
		}
		switch f.Type.Kind {
		case types.KindTinyInt, types.KindSmallInt, types.KindInt:
			// RenderValue widens them to int64.
			if i, ok := types.SignedInt(v); ok {
				obj[f.Name] = slab.Int64(i)
				continue
			}
		case types.KindTimestamp, types.KindLocalZonedTimestamp:
			if ts, ok := v.(types.Timestamp); ok {
				var buf [40]byte
				if text, ok := appendTimestamp(buf[:0], ts, f.Type.Precision, f.Type.Kind == types.KindLocalZonedTimestamp); ok {
					obj[f.Name] = slab.String(text)
					continue
				}
			}
		}
		r, err := rowconv.RenderValue(f.Type, v)
		if err != nil {
			return nil, fmt.Errorf("render field %q: %w", f.Name, err)
		}
		obj[f.Name] = r
	}
	msg := mv.newMessage(pos, kind, slab)
	msg.SetStructuredMut(obj)
	return msg, nil
}

// identity reports whether rowconv.RenderValue returns v itself for a
// field of kind k: the Go type is the one it passes through unchanged.
func identity(k types.Kind, v any) bool {
	switch k {
	case types.KindChar, types.KindVarChar:
		_, ok := v.(string)
		return ok
	case types.KindBigInt:
		_, ok := v.(int64)
		return ok
	case types.KindBoolean:
		_, ok := v.(bool)
		return ok
	case types.KindDouble:
		f, ok := v.(float64)
		return ok && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return false
}

// appendTimestamp appends rowconv.FormatTimestamp's text for the years
// 0000-9999 to b: the date and time of day in UTC, min(precision, 9)
// fraction digits, "Z" if zulu. ok is false (b unchanged) outside those
// years or for a nano-of-milli out of range.
func appendTimestamp(b []byte, ts types.Timestamp, precision int, zulu bool) ([]byte, bool) {
	if ts.NanoOfMilli < 0 || ts.NanoOfMilli >= 1000000 {
		return b, false
	}
	const msPerDay = 86400000
	days := ts.Millis / msPerDay
	if ts.Millis%msPerDay < 0 {
		days--
	}
	msOfDay := ts.Millis - days*msPerDay
	y, m, d := civilFromDays(days)
	if y < 0 || y > 9999 {
		return b, false
	}
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, m, 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, 'T')
	sec := msOfDay / 1000
	b = appendDigits(b, sec/3600, 2)
	b = append(b, ':')
	b = appendDigits(b, sec/60%60, 2)
	b = append(b, ':')
	b = appendDigits(b, sec%60, 2)
	if p := min(precision, 9); p > 0 {
		nanos := (msOfDay%1000)*1000000 + int64(ts.NanoOfMilli)
		var frac [9]byte
		for i := 8; i >= 0; i-- {
			frac[i] = byte('0' + nanos%10)
			nanos /= 10
		}
		b = append(b, '.')
		b = append(b, frac[:p]...)
	}
	if zulu {
		b = append(b, 'Z')
	}
	return b, true
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (Howard Hinnant's days_from_civil inverse).
func civilFromDays(days int64) (y, m, d int64) {
	z := days + 719468
	era := z / 146097
	if z%146097 < 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// appendDigits appends v (>= 0) zero-padded to width digits.
func appendDigits(b []byte, v int64, width int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for v > 0 || width > 0 {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		width--
	}
	return append(b, tmp[i:]...)
}

// operations are the row kinds as Benthos CDC inputs name operations.
var operations = [...]string{kv.Insert: "insert", kv.UpdateBefore: "update_before", kv.UpdateAfter: "update_after", kv.Delete: "delete"}

// setRowKind sets the row-kind metadata of a primary-key table's row that
// mv.keys holds.
func (mv *metaValues) setRowKind(msg *service.Message, k kv.RowKind) {
	if mv.keys&metaRowKind != 0 {
		msg.MetaSetMut(rowconv.MetaRowKind, k.String())
	}
	if k.Valid() && mv.keys&metaOperation != 0 {
		msg.MetaSetMut(rowconv.MetaOperation, operations[k])
	}
}
