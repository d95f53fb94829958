package rowconv

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Row to message rendering.
//
// Each row becomes one structured message: a JSON object keyed by column name
// whose values are typed so that the paimon output, given the message, writes
// the same row again (render is the exact inverse of the output's
// conversion, see convert.go):
//
//	BOOLEAN                         true / false
//	TINYINT, SMALLINT, INT, BIGINT  integer (int64)
//	FLOAT, DOUBLE                   number (float64, the float's shortest text); NaN and
//	                                infinities as the strings "NaN", "Infinity", "-Infinity"
//	DECIMAL(p, s)                   string with exactly s fraction digits: "12.30"
//	CHAR, VARCHAR, STRING           string
//	BINARY, VARBINARY, BYTES        standard base64 string with padding
//	DATE                            "YYYY-MM-DD"
//	TIME(p)                         "HH:MM:SS" plus min(p, 3) fraction digits (TIME holds milliseconds)
//	TIMESTAMP(p)                    "YYYY-MM-DDTHH:MM:SS" plus exactly p fraction digits, no offset
//	                                (the stored wall clock, which the output keeps in UTC)
//	TIMESTAMP(p) WITH LOCAL TIME ZONE  the same followed by "Z" (the instant in UTC)
//	ARRAY<T>                        array
//	MAP<K, V>                       object when K is CHAR/VARCHAR/STRING and no key is null;
//	                                otherwise an array of {"key": k, "value": v} objects
//	MULTISET<T>                     as MAP<T, INT>: element -> count
//	ROW<...>                        object by field name
//
// NULL is null at every level.

// RenderRow renders one table row (values in fields order, as lakecore's
// reader returns them) as a JSON object keyed by field name. A value whose Go
// type does not match its column type is an error naming the field.
func RenderRow(fields []types.DataField, row []any) (map[string]any, error) {
	if len(row) != len(fields) {
		return nil, fmt.Errorf("render row: %d values for %d columns", len(row), len(fields))
	}
	out := make(map[string]any, len(fields))
	for i := range fields {
		v, err := RenderValue(fields[i].Type, row[i])
		if err != nil {
			return nil, fmt.Errorf("render field %q: %w", fields[i].Name, err)
		}
		out[fields[i].Name] = v
	}
	return out, nil
}

// RenderValue renders one Go value of type t (lakecore/types' representation)
// as a structured JSON value; see the table above.
func RenderValue(t types.DataType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case types.KindBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		if i, ok := types.SignedInt(v); ok {
			return i, nil
		}
	case types.KindFloat:
		if f, ok := v.(float32); ok {
			if s, special := nonFinite(float64(f)); special {
				return s, nil
			}
			// The float's shortest decimal text, as a float64, so that JSON
			// shows 0.1 rather than 0.10000000149011612.
			d, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
			return d, nil
		}
	case types.KindDouble:
		if f, ok := v.(float64); ok {
			if s, special := nonFinite(f); special {
				return s, nil
			}
			return f, nil
		}
	case types.KindDecimal:
		if d, ok := v.(types.Decimal); ok {
			return d.String(), nil
		}
	case types.KindChar, types.KindVarChar:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case types.KindBinary, types.KindVarBinary:
		if b, ok := v.([]byte); ok {
			return base64.StdEncoding.EncodeToString(b), nil
		}
	case types.KindDate:
		if d, ok := v.(types.Date); ok {
			return d.String(), nil
		}
	case types.KindTime:
		if tm, ok := v.(types.Time); ok {
			if tm < 0 || tm >= 86400000 {
				return nil, fmt.Errorf("TIME value %d ms is outside the day", int32(tm))
			}
			return FormatTime(tm, t.Precision), nil
		}
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		if ts, ok := v.(types.Timestamp); ok {
			return FormatTimestamp(ts, t.Precision, t.Kind == types.KindLocalZonedTimestamp), nil
		}
	case types.KindArray:
		if arr, ok := v.([]any); ok {
			out := make([]any, len(arr))
			for i, e := range arr {
				r, err := RenderValue(*t.Element, e)
				if err != nil {
					return nil, fmt.Errorf("element %d: %w", i, err)
				}
				out[i] = r
			}
			return out, nil
		}
	case types.KindMap:
		if m, ok := v.(types.Map); ok {
			return renderEntries(*t.Key, *t.Value, m)
		}
	case types.KindMultiset:
		if m, ok := v.(types.Map); ok {
			return renderEntries(*t.Element, types.IntType().NotNull(), m)
		}
	case types.KindRow:
		if r, ok := v.([]any); ok {
			if len(r) != len(t.Fields) {
				return nil, fmt.Errorf("ROW value has %d fields, the type %d", len(r), len(t.Fields))
			}
			out := make(map[string]any, len(r))
			for i, f := range t.Fields {
				fv, err := RenderValue(f.Type, r[i])
				if err != nil {
					return nil, fmt.Errorf("field %q: %w", f.Name, err)
				}
				out[f.Name] = fv
			}
			return out, nil
		}
	default:
		return nil, fmt.Errorf("unsupported column type %s", t)
	}
	return nil, fmt.Errorf("cannot render Go value of type %T as %s", v, t)
}

func renderEntries(kt, vt types.DataType, m types.Map) (any, error) {
	if len(m.Keys) != len(m.Values) {
		return nil, fmt.Errorf("map value has %d keys and %d values", len(m.Keys), len(m.Values))
	}
	stringKeys := kt.Kind == types.KindChar || kt.Kind == types.KindVarChar
	if stringKeys {
		for _, k := range m.Keys {
			if _, ok := k.(string); !ok {
				stringKeys = false
				break
			}
		}
	}
	if stringKeys {
		out := make(map[string]any, len(m.Keys))
		for i, k := range m.Keys {
			v, err := RenderValue(vt, m.Values[i])
			if err != nil {
				return nil, fmt.Errorf("value of key %q: %w", k, err)
			}
			out[k.(string)] = v
		}
		return out, nil
	}
	out := make([]any, len(m.Keys))
	for i := range m.Keys {
		k, err := RenderValue(kt, m.Keys[i])
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		v, err := RenderValue(vt, m.Values[i])
		if err != nil {
			return nil, fmt.Errorf("value %d: %w", i, err)
		}
		out[i] = map[string]any{"key": k, "value": v}
	}
	return out, nil
}

// nonFinite returns Java's spelling of NaN and the infinities.
func nonFinite(f float64) (string, bool) {
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "Infinity", true
	case math.IsInf(f, -1):
		return "-Infinity", true
	}
	return "", false
}

// FormatTime returns t as HH:MM:SS with min(precision, 3) fraction digits.
func FormatTime(t types.Time, precision int) string {
	ms := int(t)
	b := make([]byte, 0, 12)
	b = append2(b, ms/3600000)
	b = append(b, ':')
	b = append2(b, ms/60000%60)
	b = append(b, ':')
	b = append2(b, ms/1000%60)
	if p := min(precision, 3); p > 0 {
		frac := strconv.Itoa(1000 + ms%1000) // "1mmm"
		b = append(b, '.')
		b = append(b, frac[1:1+p]...)
	}
	return string(b)
}

func append2(b []byte, n int) []byte {
	return append(b, byte('0'+n/10), byte('0'+n%10))
}

// FormatTimestamp returns ts as YYYY-MM-DDTHH:MM:SS with exactly precision
// fraction digits (none for 0), in UTC, followed by "Z" if zulu is true
// (TIMESTAMP WITH LOCAL TIME ZONE) and by nothing otherwise (TIMESTAMP, whose
// value is a wall clock).
func FormatTimestamp(ts types.Timestamp, precision int, zulu bool) string {
	t := ts.Time()
	b := make([]byte, 0, 32)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	if p := min(precision, 9); p > 0 {
		frac := strconv.Itoa(1e9 + t.Nanosecond()) // "1nnnnnnnnn"
		b = append(b, '.')
		b = append(b, frac[1:1+p]...)
	}
	if zulu {
		b = append(b, 'Z')
	}
	return string(b)
}

// Metadata keys set on every message by RowMeta.Apply.
const (
	MetaSnapshotID = "paimon_snapshot_id"
	MetaCommitKind = "paimon_commit_kind"
	MetaCommitTime = "paimon_commit_time"
	MetaPartition  = "paimon_partition"
	MetaBucket     = "paimon_bucket"
	MetaFile       = "paimon_file"
	MetaRow        = "paimon_row"
	// MetaRowKind is the row kind of a primary-key table's row: +I, -U, +U
	// or -D (Paimon's RowKind short string).
	MetaRowKind = "paimon_row_kind"
	// MetaOperation is the row kind in the vocabulary of Benthos CDC
	// inputs: insert, update_before, update_after or delete.
	MetaOperation = "operation"
)

// RowMeta is where a row came from, set on its message as metadata.
type RowMeta struct {
	// SnapshotID is the snapshot whose commit added the row's file.
	SnapshotID int64
	// CommitKind of that snapshot: APPEND or OVERWRITE (or, in a full scan
	// of the starting snapshot, its kind, e.g. COMPACT).
	CommitKind string
	// CommitTimeMillis is the snapshot's timeMillis (epoch milliseconds).
	CommitTimeMillis int64
	// Partition is the partition path "k1=v1/k2=v2" as in the table's
	// directory names, "" for an unpartitioned table.
	Partition string
	// Bucket is the row's bucket (0 for bucket-unaware tables).
	Bucket int32
	// File is the data file's name, as in the manifest ("data-<uuid>-0.parquet").
	File string
	// Row is the row's position in the file, from 0.
	Row int64
}

// Apply sets the metadata keys on msg: paimon_snapshot_id, paimon_bucket and
// paimon_row as integers; paimon_commit_kind, paimon_partition and
// paimon_file as strings; paimon_commit_time as RFC 3339 text in UTC with
// milliseconds ("2024-05-30T10:00:00.123Z"). Bloblang's meta("...") reads
// them all as strings, @... with their types.
func (m RowMeta) Apply(msg *service.Message) {
	msg.MetaSetMut(MetaSnapshotID, m.SnapshotID)
	msg.MetaSetMut(MetaCommitKind, m.CommitKind)
	msg.MetaSetMut(MetaCommitTime, FormatCommitTime(m.CommitTimeMillis))
	msg.MetaSetMut(MetaPartition, m.Partition)
	msg.MetaSetMut(MetaBucket, int64(m.Bucket))
	msg.MetaSetMut(MetaFile, m.File)
	msg.MetaSetMut(MetaRow, m.Row)
}

// FormatCommitTime renders a snapshot's timeMillis as RFC 3339 text in UTC
// with milliseconds.
func FormatCommitTime(millis int64) string {
	return time.UnixMilli(millis).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// NewRowMessage renders row (values in fields order) as a structured message
// with its metadata.
func NewRowMessage(fields []types.DataField, row []any, meta RowMeta) (*service.Message, error) {
	obj, err := RenderRow(fields, row)
	if err != nil {
		return nil, err
	}
	msg := service.NewMessage(nil)
	msg.SetStructuredMut(obj)
	meta.Apply(msg)
	return msg, nil
}
