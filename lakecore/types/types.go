// Package types holds Apache Paimon's data types (atomic, DECIMAL, TIMESTAMP,
// nested ARRAY / MAP / MULTISET / ROW), the fields of a row type with their
// ids, the type-string grammar and its JSON form, and the Go values that
// stand for each type everywhere in lakecore.
//
// Go values by type (nil is SQL NULL for every type):
//
//	BOOLEAN                    bool
//	TINYINT / SMALLINT         int8 / int16
//	INT / BIGINT               int32 / int64
//	FLOAT / DOUBLE             float32 / float64
//	CHAR / VARCHAR / STRING    string
//	BINARY / VARBINARY / BYTES []byte
//	DECIMAL(p, s)              Decimal
//	DATE                       Date (days since 1970-01-01)
//	TIME(p)                    Time (milliseconds of the day)
//	TIMESTAMP(p), and
//	TIMESTAMP(p) WITH LOCAL TIME ZONE  Timestamp
//	ARRAY<T>                   []any
//	MAP<K, V>, MULTISET<T>     Map (a MULTISET maps each element to its INT count)
//	ROW<...>                   []any, one value per field
//
// The JSON form and the SQL strings follow apache/paimon:
// paimon-api/src/main/java/org/apache/paimon/types/DataTypeJsonParser.java and
// DataType.asSQLString.
package types

import (
	"fmt"
	"strings"
)

// Kind is the root of a data type, without its parameters or nullability.
type Kind int

// The kinds of Paimon data types.
const (
	KindBoolean Kind = iota
	KindTinyInt
	KindSmallInt
	KindInt
	KindBigInt
	KindFloat
	KindDouble
	KindChar
	KindVarChar
	KindBinary
	KindVarBinary
	KindDecimal
	KindDate
	KindTime
	KindTimestamp
	KindLocalZonedTimestamp
	KindArray
	KindMap
	KindMultiset
	KindRow
)

// MaxLength is the length of STRING (VARCHAR) and BYTES (VARBINARY).
const MaxLength = 2147483647

var kindNames = [...]string{
	KindBoolean: "BOOLEAN", KindTinyInt: "TINYINT", KindSmallInt: "SMALLINT", KindInt: "INT", KindBigInt: "BIGINT",
	KindFloat: "FLOAT", KindDouble: "DOUBLE", KindChar: "CHAR", KindVarChar: "VARCHAR", KindBinary: "BINARY",
	KindVarBinary: "VARBINARY", KindDecimal: "DECIMAL", KindDate: "DATE", KindTime: "TIME", KindTimestamp: "TIMESTAMP",
	KindLocalZonedTimestamp: "TIMESTAMP_LTZ", KindArray: "ARRAY", KindMap: "MAP", KindMultiset: "MULTISET", KindRow: "ROW",
}

// String returns the SQL keyword of the kind.
func (k Kind) String() string {
	if int(k) >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// DataType is a Paimon data type. The zero value is a NOT NULL BOOLEAN; build
// types with the constructors below or with Parse.
type DataType struct {
	Kind     Kind
	Nullable bool
	// Length of CHAR, VARCHAR, BINARY and VARBINARY.
	Length int
	// Precision of DECIMAL, TIME, TIMESTAMP and TIMESTAMP_LTZ; Scale of DECIMAL.
	Precision int
	Scale     int
	// Element of ARRAY and MULTISET.
	Element *DataType
	// Key and Value of MAP.
	Key, Value *DataType
	// Fields of ROW.
	Fields []DataField
}

// DataField is a named field of a ROW or of a table schema. ID is Paimon's
// field id: top-level and nested ROW fields share one id space.
type DataField struct {
	ID           int
	Name         string
	Type         DataType
	Description  *string
	DefaultValue *string
}

// BooleanType returns the nullable type BOOLEAN; NotNull drops the nullability.
func BooleanType() DataType { return DataType{Kind: KindBoolean, Nullable: true} }

// TinyIntType returns the nullable type TINYINT; NotNull drops the nullability.
func TinyIntType() DataType { return DataType{Kind: KindTinyInt, Nullable: true} }

// SmallIntType returns the nullable type SMALLINT; NotNull drops the nullability.
func SmallIntType() DataType { return DataType{Kind: KindSmallInt, Nullable: true} }

// IntType returns the nullable type INT; NotNull drops the nullability.
func IntType() DataType { return DataType{Kind: KindInt, Nullable: true} }

// BigIntType returns the nullable type BIGINT; NotNull drops the nullability.
func BigIntType() DataType { return DataType{Kind: KindBigInt, Nullable: true} }

// FloatType returns the nullable type FLOAT; NotNull drops the nullability.
func FloatType() DataType { return DataType{Kind: KindFloat, Nullable: true} }

// DoubleType returns the nullable type DOUBLE; NotNull drops the nullability.
func DoubleType() DataType { return DataType{Kind: KindDouble, Nullable: true} }

// StringType returns the nullable type STRING; NotNull drops the nullability.
func StringType() DataType { return DataType{Kind: KindVarChar, Nullable: true, Length: MaxLength} }

// BytesType returns the nullable type BYTES; NotNull drops the nullability.
func BytesType() DataType { return DataType{Kind: KindVarBinary, Nullable: true, Length: MaxLength} }

// DateType returns the nullable type DATE; NotNull drops the nullability.
func DateType() DataType { return DataType{Kind: KindDate, Nullable: true} }

// CharType returns the nullable type CHAR; NotNull drops the nullability.
func CharType(n int) DataType { return DataType{Kind: KindChar, Nullable: true, Length: n} }

// VarCharType returns the nullable type VARCHAR; NotNull drops the nullability.
func VarCharType(n int) DataType { return DataType{Kind: KindVarChar, Nullable: true, Length: n} }

// BinaryType returns the nullable type BINARY; NotNull drops the nullability.
func BinaryType(n int) DataType { return DataType{Kind: KindBinary, Nullable: true, Length: n} }

// VarBinaryType returns the nullable type VARBINARY; NotNull drops the nullability.
func VarBinaryType(n int) DataType { return DataType{Kind: KindVarBinary, Nullable: true, Length: n} }

// TimeType returns the nullable type TIME; NotNull drops the nullability.
func TimeType(p int) DataType { return DataType{Kind: KindTime, Nullable: true, Precision: p} }

// TimestampType returns the nullable type TIMESTAMP; NotNull drops the nullability.
func TimestampType(p int) DataType {
	return DataType{Kind: KindTimestamp, Nullable: true, Precision: p}
}

// LocalZonedTimestampType returns the nullable type TIMESTAMP(p) WITH LOCAL
// TIME ZONE; NotNull drops the nullability.
func LocalZonedTimestampType(p int) DataType {
	return DataType{Kind: KindLocalZonedTimestamp, Nullable: true, Precision: p}
}

// DecimalType returns the nullable type DECIMAL(p, s); NotNull drops the
// nullability.
func DecimalType(p, s int) DataType {
	return DataType{Kind: KindDecimal, Nullable: true, Precision: p, Scale: s}
}

// ArrayType returns the nullable type ARRAY<elem>; NotNull drops the
// nullability.
func ArrayType(elem DataType) DataType {
	return DataType{Kind: KindArray, Nullable: true, Element: &elem}
}

// MultisetType returns the nullable type MULTISET<elem>; NotNull drops the
// nullability.
func MultisetType(elem DataType) DataType {
	return DataType{Kind: KindMultiset, Nullable: true, Element: &elem}
}

// MapType returns the nullable type MAP<key, value>; NotNull drops the
// nullability.
func MapType(key, value DataType) DataType {
	return DataType{Kind: KindMap, Nullable: true, Key: &key, Value: &value}
}

// RowType returns the nullable type ROW<fields...>; NotNull drops the
// nullability.
func RowType(fields ...DataField) DataType {
	return DataType{Kind: KindRow, Nullable: true, Fields: fields}
}

// NotNull returns t without nullability.
func (t DataType) NotNull() DataType { t.Nullable = false; return t }

// WithNullable returns t with the given nullability.
func (t DataType) WithNullable(n bool) DataType { t.Nullable = n; return t }

// IsNested reports whether t is ARRAY, MAP, MULTISET or ROW.
func (t DataType) IsNested() bool {
	return t.Kind == KindArray || t.Kind == KindMap || t.Kind == KindMultiset || t.Kind == KindRow
}

// Equal reports whether two types are identical, nested field ids, names and
// descriptions included.
func (t DataType) Equal(o DataType) bool {
	if t.Kind != o.Kind || t.Nullable != o.Nullable || t.Length != o.Length ||
		t.Precision != o.Precision || t.Scale != o.Scale || len(t.Fields) != len(o.Fields) {
		return false
	}
	if !ptrTypeEqual(t.Element, o.Element) || !ptrTypeEqual(t.Key, o.Key) || !ptrTypeEqual(t.Value, o.Value) {
		return false
	}
	for i := range t.Fields {
		a, b := t.Fields[i], o.Fields[i]
		if a.ID != b.ID || a.Name != b.Name || !a.Type.Equal(b.Type) ||
			!ptrStrEqual(a.Description, b.Description) || !ptrStrEqual(a.DefaultValue, b.DefaultValue) {
			return false
		}
	}
	return true
}

// ptrType returns the nullable type PTR; NotNull drops the nullability.
func ptrTypeEqual(a, b *DataType) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func ptrStrEqual(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// String returns the type as Java's DataType.asSQLString writes it, for
// example "INT NOT NULL", "DECIMAL(10, 2)", "TIMESTAMP(3) WITH LOCAL TIME ZONE",
// "ARRAY<STRING>", "MAP<STRING, INT>" or "ROW<`a` INT, `b` STRING>".
func (t DataType) String() string {
	var s string
	switch t.Kind {
	case KindBoolean, KindTinyInt, KindSmallInt, KindInt, KindBigInt, KindFloat, KindDouble, KindDate:
		s = t.Kind.String()
	case KindChar:
		s = fmt.Sprintf("CHAR(%d)", t.Length)
	case KindVarChar:
		if t.Length == MaxLength {
			s = "STRING"
		} else {
			s = fmt.Sprintf("VARCHAR(%d)", t.Length)
		}
	case KindBinary:
		s = fmt.Sprintf("BINARY(%d)", t.Length)
	case KindVarBinary:
		if t.Length == MaxLength {
			s = "BYTES"
		} else {
			s = fmt.Sprintf("VARBINARY(%d)", t.Length)
		}
	case KindDecimal:
		s = fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case KindTime:
		s = fmt.Sprintf("TIME(%d)", t.Precision)
	case KindTimestamp:
		s = fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	case KindLocalZonedTimestamp:
		s = fmt.Sprintf("TIMESTAMP(%d) WITH LOCAL TIME ZONE", t.Precision)
	case KindArray, KindMultiset:
		s = fmt.Sprintf("%s<%s>", t.Kind, elemString(t.Element))
	case KindMap:
		s = fmt.Sprintf("MAP<%s, %s>", elemString(t.Key), elemString(t.Value))
	case KindRow:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = fmt.Sprintf("`%s` %s", strings.ReplaceAll(f.Name, "`", "``"), f.Type)
			if f.Description != nil {
				parts[i] += " '" + strings.ReplaceAll(*f.Description, "'", "''") + "'"
			}
		}
		s = "ROW<" + strings.Join(parts, ", ") + ">"
	default:
		s = t.Kind.String()
	}
	if !t.Nullable {
		s += " NOT NULL"
	}
	return s
}

func elemString(t *DataType) string {
	if t == nil {
		return "?"
	}
	return t.String()
}

// HighestFieldID returns the highest field id in fields and in every nested
// ROW below them (Java's RowType.currentHighestFieldId), or -1 if there are
// no fields.
func HighestFieldID(fields []DataField) int {
	highest := -1
	var visit func(t DataType)
	visit = func(t DataType) {
		switch t.Kind {
		case KindArray, KindMultiset:
			if t.Element != nil {
				visit(*t.Element)
			}
		case KindMap:
			if t.Key != nil {
				visit(*t.Key)
			}
			if t.Value != nil {
				visit(*t.Value)
			}
		case KindRow:
			for _, f := range t.Fields {
				highest = max(highest, f.ID)
				visit(f.Type)
			}
		}
	}
	visit(RowType(fields...))
	return highest
}

// AssignFieldIDs gives every field of fields, and of every nested ROW, a
// fresh id counting up from next, in depth-first order (parent before its
// children), and returns the next unused id. It is how a new schema numbers
// fields whose ids were not given.
func AssignFieldIDs(fields []DataField, next int) int {
	var visit func(t *DataType)
	visit = func(t *DataType) {
		switch t.Kind {
		case KindArray, KindMultiset:
			if t.Element != nil {
				visit(t.Element)
			}
		case KindMap:
			if t.Key != nil {
				visit(t.Key)
			}
			if t.Value != nil {
				visit(t.Value)
			}
		case KindRow:
			for i := range t.Fields {
				t.Fields[i].ID = next
				next++
				visit(&t.Fields[i].Type)
			}
		}
	}
	root := DataType{Kind: KindRow, Fields: fields}
	visit(&root)
	return next
}

// FieldByName returns the index of the field with the given name, or -1.
func FieldByName(fields []DataField, name string) int {
	for i, f := range fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// FieldByID returns the index of the field with the given id, or -1.
func FieldByID(fields []DataField, id int) int {
	for i, f := range fields {
		if f.ID == id {
			return i
		}
	}
	return -1
}
