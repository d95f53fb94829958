package datafile

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The Parquet schema of a Paimon data file, as Java Paimon writes it
// (apache/paimon: paimon-format/src/main/java/org/apache/paimon/format/parquet/ParquetSchemaConverter.java
// convertToParquetMessageType):
//
//   - the root message is "paimon_schema";
//   - every field carries field_id = its Paimon field id; a column is
//     OPTIONAL when the Paimon type is nullable and REQUIRED otherwise;
//   - ARRAY is `group (LIST) { repeated group list { element } }`, MAP and
//     MULTISET are `group (MAP) { repeated group key_value (MAP_KEY_VALUE)
//     { required key; value } }`, ROW is a plain group;
//   - list elements, map keys and map values get synthetic ids derived from
//     the enclosing top-level-or-row field id and the nesting depth
//     (apache/paimon: paimon-api/src/main/java/org/apache/paimon/table/SpecialFields.java).
const (
	parquetRootName       = "paimon_schema"
	parquetListRepeated   = "list"
	parquetListElement    = "element"
	parquetMapRepeated    = "key_value"
	parquetMapKey         = "key"
	parquetMapValue       = "value"
	structuredFieldIDBase = math.MaxInt32 / 4 // SpecialFields.STRUCTURED_TYPE_FIELD_ID_BASE
	structuredDepthLimit  = 1 << 10           // SpecialFields.STRUCTURED_TYPE_FIELD_DEPTH_LIMIT
)

// Java computes these ids in int arithmetic; int32 wraps the same way.
func arrayElementFieldID(fieldID int32, depth int32) int32 {
	return structuredFieldIDBase + fieldID*structuredDepthLimit + depth
}

func mapKeyFieldID(fieldID int32, depth int32) int32 {
	return structuredFieldIDBase - fieldID*structuredDepthLimit - depth
}

func mapValueFieldID(fieldID int32, depth int32) int32 {
	return structuredFieldIDBase + fieldID*structuredDepthLimit + depth
}

// footerSchemaElement mirrors format.SchemaElement with an optional field id,
// so that field_id 0 (the first Paimon field) is written as Java writes it;
// format.SchemaElement drops a zero field id.
type footerSchemaElement struct {
	Type           thrift.Null[format.Type]                `thrift:"1,optional"`
	TypeLength     thrift.Null[int32]                      `thrift:"2,optional"`
	RepetitionType thrift.Null[format.FieldRepetitionType] `thrift:"3,optional"`
	Name           string                                  `thrift:"4,required"`
	NumChildren    thrift.Null[int32]                      `thrift:"5,optional"`
	ConvertedType  thrift.Null[deprecated.ConvertedType]   `thrift:"6,optional"`
	Scale          thrift.Null[int32]                      `thrift:"7,optional"`
	Precision      thrift.Null[int32]                      `thrift:"8,optional"`
	FieldID        thrift.Null[int32]                      `thrift:"9,optional"`
	LogicalType    format.LogicalType                      `thrift:"10,optional"`
}

// footerMetadata mirrors format.FileMetaData with footerSchemaElement.
type footerMetadata struct {
	Version                  int32                             `thrift:"1,required"`
	Schema                   thrift.Slice[footerSchemaElement] `thrift:"2,required"`
	NumRows                  int64                             `thrift:"3,required"`
	RowGroups                thrift.Slice[format.RowGroup]     `thrift:"4,required"`
	KeyValueMetadata         thrift.Slice[format.KeyValue]     `thrift:"5,optional"`
	CreatedBy                string                            `thrift:"6,optional"`
	ColumnOrders             thrift.Slice[format.ColumnOrder]  `thrift:"7,optional"`
	EncryptionAlgorithm      format.EncryptionAlgorithm        `thrift:"8,optional"`
	FooterSigningKeyMetadata []byte                            `thrift:"9,optional"`
}

// nodeRole says how a schema node takes part in shredding values.
type nodeRole uint8

const (
	roleLeaf     nodeRole = iota // primitive column
	roleRow                      // ROW group: children are the row fields
	roleList                     // ARRAY group: children[0] is the repeated "list" group
	roleMap                      // MAP/MULTISET group: children[0] is the repeated "key_value" group
	roleRepeated                 // the repeated group inside a LIST or MAP
)

// leafKind is how a leaf's Go values are checked and encoded.
type leafKind uint8

const (
	leafBoolean leafKind = iota
	leafTinyInt
	leafSmallInt
	leafInt
	leafBigInt
	leafFloat
	leafDouble
	leafString    // CHAR, VARCHAR, STRING
	leafBytes     // BINARY, VARBINARY, BYTES
	leafDecimal32 // DECIMAL p <= 9, INT32 unscaled
	leafDecimal64 // DECIMAL p <= 18, INT64 unscaled
	leafDecimalFixed
	leafDate
	leafTime
	leafTimestampMillis // TIMESTAMP / LTZ p <= 3
	leafTimestampMicros // p <= 6
	leafTimestampInt96  // p > 6
)

// schemaNode is one node of the Parquet schema together with what the
// writer needs to shred Go values into it.
type schemaNode struct {
	name     string
	dataType types.DataType // the Paimon type (zero for roleRepeated)
	role     nodeRole
	kind     leafKind
	required bool
	children []*schemaNode

	element footerSchemaElement // as Java writes it
	node    parquet.Node        // for parquet-go's column writers

	leaf                int           // leaf column index (leaves only)
	nullValue           parquet.Value // a NULL of this top-level leaf
	firstLeaf, endLeaf  int           // leaf columns under this node
	defLevel, repLevel  int           // levels when this node holds a value
	fixedLen            int           // FIXED_LEN_BYTE_ARRAY length (DECIMAL p > 18)
	decimalBound        int64         // 10^precision for DECIMAL p <= 18
	decimalPrecisionMax int           // precision for DECIMAL
}

// writeSchema is the Parquet schema of one file plus its leaf columns in
// file order.
type writeSchema struct {
	fields   []*schemaNode // top-level fields in table order
	leaves   []*schemaNode // leaf columns in Parquet column order
	paths    [][]string    // leaf column paths
	elements []footerSchemaElement
	root     parquet.Node

	nextLeaf int // leaves converted so far (convertField runs in file order)
}

// decimalMinBytes is ParquetSchemaConverter.computeMinBytesForDecimalPrecision:
// the smallest n with 2^(8n-1) >= 10^precision, computed in doubles as Java does.
func decimalMinBytes(precision int) int {
	n := 1
	for math.Pow(2, float64(8*n-1)) < math.Pow(10, float64(precision)) {
		n++
	}
	return n
}

// schemaOptions carries the encoding choices for parquet-go's leaves; they
// do not change the schema Java readers see.
type schemaOptions struct {
	// dictionary holds, per leaf column in file order, whether the column
	// is dictionary-encoded; nil or a missing entry means PLAIN.
	dictionary []bool
}

// buildWriteSchema converts Paimon fields into the Parquet schema Java
// writes. It fails on types Parquet cannot hold (a DECIMAL precision outside
// 1..38, a malformed nested type).
func buildWriteSchema(fields []types.DataField, o schemaOptions) (*writeSchema, error) {
	s := &writeSchema{}
	root := &orderedGroup{}
	for _, f := range fields {
		n, err := s.convertField(f.Name, f.Type, int32(f.ID), 0, o)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		s.fields = append(s.fields, n)
		root.fields = append(root.fields, orderedField{Node: n.node, name: n.name})
	}
	s.root = root
	s.elements = append(s.elements, footerSchemaElement{
		Name:        parquetRootName,
		NumChildren: thrift.New(int32(len(fields))),
	})
	for _, n := range s.fields {
		s.assign(n, nil, 0, 0)
	}
	return s, nil
}

// assign numbers leaves, computes levels and appends schema elements in
// depth-first order.
func (s *writeSchema) assign(n *schemaNode, parent []string, def, rep int) {
	switch {
	case n.role == roleRepeated:
		def++
		rep++
	case !n.required:
		def++
	}
	n.defLevel, n.repLevel = def, rep
	path := append(append([]string(nil), parent...), n.name)
	s.elements = append(s.elements, n.element)
	n.firstLeaf = len(s.leaves)
	if n.role == roleLeaf {
		n.leaf = len(s.leaves)
		n.nullValue = parquet.Value{}.Level(rep, max(def-1, 0), n.leaf)
		s.leaves = append(s.leaves, n)
		s.paths = append(s.paths, path)
	}
	for _, c := range n.children {
		s.assign(c, path, def, rep)
	}
	n.endLeaf = len(s.leaves)
}

// convertField is ParquetSchemaConverter.convertToParquetType(name, type,
// fieldId, depth). fieldID is the id of the enclosing top-level or ROW field;
// depth counts the ARRAY/MAP levels below it.
func (s *writeSchema) convertField(name string, t types.DataType, fieldID, depth int32, o schemaOptions) (*schemaNode, error) {
	n := &schemaNode{name: name, dataType: t, required: !t.Nullable}
	rep := format.Optional
	if n.required {
		rep = format.Required
	}
	el := footerSchemaElement{
		Name:           name,
		RepetitionType: thrift.New(rep),
		FieldID:        thrift.New(fieldID),
	}
	leaf := func(k leafKind, phys format.Type, typ parquet.Type) {
		n.role, n.kind = roleLeaf, k
		el.Type = thrift.New(phys)
		// parquet-mr's v1 writer uses PLAIN, with a dictionary while it pays
		// off (see dictionaryPays); parquet-go would default BYTE_ARRAY to
		// DELTA_LENGTH_BYTE_ARRAY.
		node := parquet.Encoded(parquet.Leaf(typ), &parquet.Plain)
		if i := s.nextLeaf; i < len(o.dictionary) && o.dictionary[i] {
			node = parquet.Encoded(parquet.Leaf(typ), &parquet.RLEDictionary)
		}
		s.nextLeaf++
		n.node = wrapRepetition(node, n.required)
	}
	switch t.Kind {
	case types.KindChar, types.KindVarChar:
		leaf(leafString, format.ByteArray, parquet.ByteArrayType)
		el.ConvertedType = thrift.New(deprecated.UTF8)
		el.LogicalType = format.LogicalType{Value: &format.StringType{}}
	case types.KindBoolean:
		leaf(leafBoolean, format.Boolean, parquet.BooleanType)
	case types.KindBinary, types.KindVarBinary:
		leaf(leafBytes, format.ByteArray, parquet.ByteArrayType)
	case types.KindDecimal:
		p, sc := t.Precision, t.Scale
		if p < 1 || p > 38 || sc < 0 || sc > p {
			return nil, fmt.Errorf("unsupported type %s", t)
		}
		n.decimalPrecisionMax = p
		switch {
		case p <= 9:
			leaf(leafDecimal32, format.Int32, parquet.Int32Type)
			n.decimalBound = types.Pow10(p)
		case p <= 18:
			leaf(leafDecimal64, format.Int64, parquet.Int64Type)
			n.decimalBound = types.Pow10(p)
		default:
			n.fixedLen = decimalMinBytes(p)
			leaf(leafDecimalFixed, format.FixedLenByteArray, parquet.FixedLenByteArrayType(n.fixedLen))
			el.TypeLength = thrift.New(int32(n.fixedLen))
		}
		el.ConvertedType = thrift.New(deprecated.Decimal)
		el.Scale = thrift.New(int32(sc))
		el.Precision = thrift.New(int32(p))
		el.LogicalType = format.LogicalType{Value: &format.DecimalType{Scale: int32(sc), Precision: int32(p)}}
	case types.KindTinyInt:
		leaf(leafTinyInt, format.Int32, parquet.Int32Type)
		el.ConvertedType = thrift.New(deprecated.Int8)
		el.LogicalType = format.LogicalType{Value: &format.IntType{BitWidth: 8, IsSigned: true}}
	case types.KindSmallInt:
		leaf(leafSmallInt, format.Int32, parquet.Int32Type)
		el.ConvertedType = thrift.New(deprecated.Int16)
		el.LogicalType = format.LogicalType{Value: &format.IntType{BitWidth: 16, IsSigned: true}}
	case types.KindInt:
		leaf(leafInt, format.Int32, parquet.Int32Type)
	case types.KindBigInt:
		leaf(leafBigInt, format.Int64, parquet.Int64Type)
	case types.KindFloat:
		leaf(leafFloat, format.Float, parquet.FloatType)
	case types.KindDouble:
		leaf(leafDouble, format.Double, parquet.DoubleType)
	case types.KindDate:
		leaf(leafDate, format.Int32, parquet.Int32Type)
		el.ConvertedType = thrift.New(deprecated.Date)
		el.LogicalType = format.LogicalType{Value: &format.DateType{}}
	case types.KindTime:
		leaf(leafTime, format.Int32, parquet.Int32Type)
		el.ConvertedType = thrift.New(deprecated.TimeMillis)
		el.LogicalType = format.LogicalType{Value: &format.TimeType{
			IsAdjustedToUTC: true, Unit: format.TimeUnit{Value: &format.MilliSeconds{}}}}
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		// createTimestampWithLogicalType: LTZ is adjusted to UTC, TIMESTAMP is not.
		utc := t.Kind == types.KindLocalZonedTimestamp
		switch p := t.Precision; {
		case p <= 3:
			leaf(leafTimestampMillis, format.Int64, parquet.Int64Type)
			el.ConvertedType = thrift.New(deprecated.TimestampMillis)
			el.LogicalType = format.LogicalType{Value: &format.TimestampType{
				IsAdjustedToUTC: utc, Unit: format.TimeUnit{Value: &format.MilliSeconds{}}}}
		case p <= 6:
			leaf(leafTimestampMicros, format.Int64, parquet.Int64Type)
			el.ConvertedType = thrift.New(deprecated.TimestampMicros)
			el.LogicalType = format.LogicalType{Value: &format.TimestampType{
				IsAdjustedToUTC: utc, Unit: format.TimeUnit{Value: &format.MicroSeconds{}}}}
		default:
			leaf(leafTimestampInt96, format.Int96, parquet.Int96Type)
		}
	case types.KindArray:
		if t.Element == nil {
			return nil, fmt.Errorf("unsupported type %s: no element type", t)
		}
		elem, err := s.convertField(parquetListElement, *t.Element, fieldID, depth+1, o)
		if err != nil {
			return nil, err
		}
		elem.element.FieldID = thrift.New(arrayElementFieldID(fieldID, depth+1))
		n.role = roleList
		n.children = []*schemaNode{repeatedGroup(parquetListRepeated, elem)}
		el.ConvertedType = thrift.New(deprecated.List)
		el.LogicalType = format.LogicalType{Value: &format.ListType{}}
	case types.KindMap, types.KindMultiset:
		var keyType, valueType types.DataType
		if t.Kind == types.KindMap {
			if t.Key == nil || t.Value == nil {
				return nil, fmt.Errorf("unsupported type %s: no key or value type", t)
			}
			keyType, valueType = *t.Key, *t.Value
		} else {
			if t.Element == nil {
				return nil, fmt.Errorf("unsupported type %s: no element type", t)
			}
			keyType, valueType = *t.Element, types.IntType().NotNull()
		}
		// Parquet map keys are REQUIRED whatever the Paimon key nullability.
		key, err := s.convertField(parquetMapKey, keyType.NotNull(), fieldID, depth+1, o)
		if err != nil {
			return nil, err
		}
		key.element.FieldID = thrift.New(mapKeyFieldID(fieldID, depth+1))
		value, err := s.convertField(parquetMapValue, valueType, fieldID, depth+1, o)
		if err != nil {
			return nil, err
		}
		value.element.FieldID = thrift.New(mapValueFieldID(fieldID, depth+1))
		kv := repeatedGroup(parquetMapRepeated, key, value)
		kv.element.ConvertedType = thrift.New(deprecated.MapKeyValue)
		n.role = roleMap
		n.children = []*schemaNode{kv}
		el.ConvertedType = thrift.New(deprecated.Map)
		el.LogicalType = format.LogicalType{Value: &format.MapType{}}
	case types.KindRow:
		n.role = roleRow
		for _, f := range t.Fields {
			c, err := s.convertField(f.Name, f.Type, int32(f.ID), 0, o)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			n.children = append(n.children, c)
		}
		if len(n.children) == 0 {
			return nil, fmt.Errorf("unsupported type %s: a ROW needs at least one field", t)
		}
	default:
		return nil, fmt.Errorf("unsupported type %s", t)
	}
	if n.role != roleLeaf {
		g := &orderedGroup{}
		for _, c := range n.children {
			g.fields = append(g.fields, orderedField{Node: c.node, name: c.name})
		}
		el.NumChildren = thrift.New(int32(len(n.children)))
		n.node = wrapRepetition(g, n.required)
	}
	n.element = el
	return n, nil
}

// repeatedGroup is the middle group of a LIST or MAP; Java gives it no id.
func repeatedGroup(name string, children ...*schemaNode) *schemaNode {
	g := &orderedGroup{}
	for _, c := range children {
		g.fields = append(g.fields, orderedField{Node: c.node, name: c.name})
	}
	return &schemaNode{
		name:     name,
		role:     roleRepeated,
		children: children,
		element: footerSchemaElement{
			Name:           name,
			RepetitionType: thrift.New(format.Repeated),
			NumChildren:    thrift.New(int32(len(children))),
		},
		node: parquet.Repeated(g),
	}
}

func wrapRepetition(n parquet.Node, required bool) parquet.Node {
	if required {
		return parquet.Required(n)
	}
	return parquet.Optional(n)
}

// orderedGroup is a parquet-go group node that keeps its fields in the given
// order (parquet.Group sorts them by name, Paimon keeps schema order).
type orderedGroup struct {
	fields []orderedField
}

type orderedField struct {
	parquet.Node
	name string
}

func (f orderedField) Name() string                           { return f.name }
func (f orderedField) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

func (g *orderedGroup) ID() int                     { return 0 }
func (g *orderedGroup) String() string              { return "group" }
func (g *orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g *orderedGroup) Optional() bool              { return false }
func (g *orderedGroup) Repeated() bool              { return false }
func (g *orderedGroup) Required() bool              { return true }
func (g *orderedGroup) Leaf() bool                  { return false }
func (g *orderedGroup) Encoding() encoding.Encoding { return nil }
func (g *orderedGroup) Compression() compress.Codec { return nil }
func (g *orderedGroup) Fields() []parquet.Field {
	out := make([]parquet.Field, len(g.fields))
	for i := range g.fields {
		out[i] = g.fields[i]
	}
	return out
}

// GoType returns a struct with one exported field per column; parquet-go
// only needs it for reflection-based paths the writer does not use.
func (g *orderedGroup) GoType() reflect.Type {
	sf := make([]reflect.StructField, len(g.fields))
	for i, f := range g.fields {
		sf[i] = reflect.StructField{Name: "F" + strconv.Itoa(i), Type: f.GoType()}
	}
	return reflect.StructOf(sf)
}
