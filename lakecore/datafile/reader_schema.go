package datafile

import (
	"fmt"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// maxSchemaDepth bounds the nesting of a Parquet schema we accept, so that a
// corrupt footer cannot make the recursive walks below run away.
const maxSchemaDepth = 64

// pqNode is one element of a file's Parquet schema with its definition and
// repetition levels (the number of optional-or-repeated and of repeated
// elements from the root down to and including this one).
type pqNode struct {
	el       *format.SchemaElement
	path     string
	children []*pqNode
	leaf     int // index of the leaf column (column chunk), -1 for a group
	def, rep int
}

func (n *pqNode) isLeaf() bool { return n.el.Type.Valid }

func (n *pqNode) repetition() format.FieldRepetitionType {
	if n.el.RepetitionType.Valid {
		return n.el.RepetitionType.V
	}
	return format.Required
}

func (n *pqNode) child(name string) *pqNode {
	for _, c := range n.children {
		if c.el.Name == name {
			return c
		}
	}
	return nil
}

// parquetTree builds the schema tree from the flattened schema of the footer
// and returns it with the number of leaf columns.
func parquetTree(schema []format.SchemaElement) (*pqNode, int, error) {
	if len(schema) == 0 {
		return nil, 0, fmt.Errorf("%w: empty schema", ErrCorruptFile)
	}
	pos, leaves := 0, 0
	var walk func(parent *pqNode, depth int) (*pqNode, error)
	walk = func(parent *pqNode, depth int) (*pqNode, error) {
		if pos >= len(schema) {
			return nil, fmt.Errorf("%w: schema ends inside a group", ErrCorruptFile)
		}
		if depth > maxSchemaDepth {
			return nil, fmt.Errorf("%w: schema nested deeper than %d", ErrCorruptFile, maxSchemaDepth)
		}
		n := &pqNode{el: &schema[pos], leaf: -1}
		pos++
		if parent != nil {
			n.def, n.rep = parent.def, parent.rep
			switch n.repetition() {
			case format.Optional:
				n.def++
			case format.Repeated:
				n.def++
				n.rep++
			}
			n.path = n.el.Name
			if parent.path != "" {
				n.path = parent.path + "." + n.el.Name
			}
		}
		if n.isLeaf() && parent != nil {
			n.leaf = leaves
			leaves++
			return n, nil
		}
		count := int(n.el.NumChildren.V)
		if count <= 0 || count > len(schema)-pos {
			return nil, fmt.Errorf("%w: group %q has %d children", ErrCorruptFile, n.path, count)
		}
		n.children = make([]*pqNode, 0, count)
		for range count {
			c, err := walk(n, depth+1)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, c)
		}
		return n, nil
	}
	root, err := walk(nil, 0)
	if err != nil {
		return nil, 0, err
	}
	if pos != len(schema) {
		return nil, 0, fmt.Errorf("%w: %d schema elements outside the root", ErrCorruptFile, len(schema)-pos)
	}
	return root, leaves, nil
}

// nodeKind is the shape of the value an rnode assembles.
type nodeKind uint8

const (
	nodeLeaf nodeKind = iota
	nodeRow
	nodeList
	nodeMap
)

// rnode assembles the values of one Paimon type (as the data file's schema
// declares it) from the Parquet columns under one schema node, following the
// Dremel record-assembly rules on definition and repetition levels.
type rnode struct {
	kind     nodeKind
	path     string
	optional bool // NULL when the definition level is below def
	def      int
	leaf     *leafCursor // nodeLeaf
	children []*rnode    // nodeRow, in the order of the ROW's fields
	elem     *rnode      // nodeList
	key, val *rnode      // nodeMap
	// nodeList and nodeMap: the levels of the repeated node. An entry exists
	// when the definition level reaches repDef; a repetition level equal to
	// repRep continues the current list or map.
	repDef, repRep int
	first          *leafCursor   // first leaf below, whose levels are peeked
	leaves         []*leafCursor // every leaf below, to skip a NULL or empty value
}

// binder turns Paimon types into rnodes over a file's Parquet schema,
// creating a leafCursor per Parquet leaf column it uses.
type binder struct {
	leaves map[int]*leafCursor
}

func (b *binder) cursor(n *pqNode, conv leafConv) *leafCursor {
	c := &leafCursor{index: n.leaf, path: n.path, maxDef: byte(n.def), maxRep: byte(n.rep), conv: conv}
	b.leaves[n.leaf] = c
	return c
}

func mismatch(n *pqNode, t types.DataType, format string, args ...any) error {
	return fmt.Errorf("%w: column %q of type %s: %s", ErrSchemaMismatch, n.path, t, fmt.Sprintf(format, args...))
}

// bind returns the reader of a value of type t stored under n. When element
// is true, n is the repeated node of a two-level list and stands for one
// element, which is therefore never NULL.
func (b *binder) bind(n *pqNode, t types.DataType, element bool) (*rnode, error) {
	repeated := n.repetition() == format.Repeated
	if repeated && !element && t.Kind != types.KindArray {
		return nil, mismatch(n, t, "the Parquet field is repeated")
	}
	var r *rnode
	var err error
	switch t.Kind {
	case types.KindArray:
		r, err = b.bindList(n, t, element)
	case types.KindMap, types.KindMultiset:
		r, err = b.bindMap(n, t)
	case types.KindRow:
		r, err = b.bindRow(n, t)
	default:
		if !n.isLeaf() {
			return nil, mismatch(n, t, "the Parquet field is a group")
		}
		conv, err := leafConvFor(n, t)
		if err != nil {
			return nil, err
		}
		c := b.cursor(n, conv)
		r = &rnode{kind: nodeLeaf, leaf: c, first: c, leaves: []*leafCursor{c}}
	}
	if err != nil {
		return nil, err
	}
	r.path = n.path
	r.def = n.def
	r.optional = n.repetition() == format.Optional
	return r, nil
}

func (b *binder) bindRow(n *pqNode, t types.DataType) (*rnode, error) {
	if n.isLeaf() {
		return nil, mismatch(n, t, "the Parquet field is not a group")
	}
	r := &rnode{kind: nodeRow}
	for _, f := range t.Fields {
		c := n.child(f.Name)
		if c == nil {
			// ParquetReaderFactory.clipParquetType: a missing nested field throws.
			return nil, mismatch(n, t, "nested field %q is missing", f.Name)
		}
		cr, err := b.bind(c, f.Type, false)
		if err != nil {
			return nil, err
		}
		r.children = append(r.children, cr)
		r.leaves = append(r.leaves, cr.leaves...)
	}
	if len(r.leaves) == 0 {
		return nil, mismatch(n, t, "the ROW has no fields")
	}
	r.first = r.leaves[0]
	return r, nil
}

// bindList reads the three-level LIST form (group, repeated group, element),
// the two-level forms (a repeated primitive, or a repeated group of several
// fields, under the LIST group) and a bare repeated field.
func (b *binder) bindList(n *pqNode, t types.DataType, element bool) (*rnode, error) {
	elemType := *t.Element
	r := &rnode{kind: nodeList}
	var rep, elem *pqNode
	if n.repetition() == format.Repeated && !element {
		// A repeated field outside a LIST group is a list of required elements.
		rep, elem = n, n
	} else {
		if n.isLeaf() || len(n.children) != 1 || n.children[0].repetition() != format.Repeated {
			return nil, mismatch(n, t, "not a Parquet LIST (a group with one repeated field)")
		}
		rep = n.children[0]
		switch {
		case rep.isLeaf():
			elem = rep
		case len(rep.children) == 1:
			elem = rep.children[0]
		case elemType.Kind == types.KindRow:
			elem = rep
		default:
			return nil, mismatch(n, t, "the repeated field of the LIST has %d fields", len(rep.children))
		}
	}
	er, err := b.bind(elem, elemType, elem == rep)
	if err != nil {
		return nil, err
	}
	if elem == rep {
		er.optional = false
	}
	r.elem = er
	r.repDef, r.repRep = rep.def, rep.rep
	r.leaves, r.first = er.leaves, er.first
	return r, nil
}

// bindMap reads MAP and MULTISET: a group with one repeated group of a key
// and a value field (taken by position), the form ParquetSchemaConverter
// writes (key_value, key, value); MULTISET is a MAP to an INT count.
func (b *binder) bindMap(n *pqNode, t types.DataType) (*rnode, error) {
	if n.isLeaf() || len(n.children) != 1 {
		return nil, mismatch(n, t, "not a Parquet MAP (a group with one repeated group)")
	}
	kv := n.children[0]
	if kv.isLeaf() || kv.repetition() != format.Repeated || len(kv.children) != 2 {
		return nil, mismatch(n, t, "not a Parquet MAP (a repeated group of key and value)")
	}
	keyType, valType := types.DataType{}, types.IntType().NotNull()
	if t.Kind == types.KindMap {
		keyType, valType = *t.Key, *t.Value
	} else {
		keyType = *t.Element
	}
	kr, err := b.bind(kv.children[0], keyType, false)
	if err != nil {
		return nil, err
	}
	vr, err := b.bind(kv.children[1], valType, false)
	if err != nil {
		return nil, err
	}
	r := &rnode{kind: nodeMap, key: kr, val: vr, repDef: kv.def, repRep: kv.rep}
	r.leaves = append(append(r.leaves, kr.leaves...), vr.leaves...)
	r.first = r.leaves[0]
	return r, nil
}

// convKind says how a Parquet physical value becomes the Go value of a
// Paimon type.
type convKind uint8

const (
	cvBool convKind = iota
	cvInt8
	cvInt16
	cvInt32
	cvInt64
	cvUint32 // unsigned INT32 into BIGINT
	cvFloat32
	cvFloat64
	cvString
	cvBytes
	cvDecimal
	cvDate
	cvTime      // INT32 milliseconds, or INT64 in unitNanos
	cvTimestamp // INT64 in unitNanos, or INT96
)

// leafConv is the conversion of one leaf column.
type leafConv struct {
	kind      convKind
	phys      format.Type
	scale     int   // DECIMAL
	unitNanos int64 // INT64 TIME and TIMESTAMP: nanoseconds per stored unit
	precision int   // TIMESTAMP: digits of the second kept
}

func isUnsigned(el *format.SchemaElement) bool {
	if it, ok := el.LogicalType.Value.(*format.IntType); ok {
		return !it.IsSigned
	}
	if el.ConvertedType.Valid {
		switch el.ConvertedType.V {
		case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
			return true
		}
	}
	return false
}

func unitNanos(u format.TimeUnit) int64 {
	switch u.Value.(type) {
	case *format.MicroSeconds:
		return 1e3
	case *format.NanoSeconds:
		return 1
	}
	return 1e6
}

// leafConvFor checks that a Parquet leaf can hold Paimon type t and returns
// its conversion. The accepted physical types are those of Java's
// paimon-format/.../parquet/reader/ParquetVectorUpdaterFactory.java.
func leafConvFor(n *pqNode, t types.DataType) (leafConv, error) {
	el := n.el
	phys := el.Type.V
	c := leafConv{phys: phys}
	ok := false
	switch t.Kind {
	case types.KindBoolean:
		c.kind, ok = cvBool, phys == format.Boolean
	case types.KindTinyInt:
		c.kind, ok = cvInt8, phys == format.Int32 || phys == format.Int64
	case types.KindSmallInt:
		c.kind, ok = cvInt16, phys == format.Int32 || phys == format.Int64
	case types.KindInt:
		c.kind, ok = cvInt32, phys == format.Int32 || phys == format.Int64
	case types.KindBigInt:
		c.kind = cvInt64
		switch phys {
		case format.Int32:
			ok = true
			if isUnsigned(el) {
				c.kind = cvUint32
			}
		case format.Int64:
			ok = !isUnsigned(el)
		}
	case types.KindFloat:
		c.kind, ok = cvFloat32, phys == format.Float || phys == format.Double
	case types.KindDouble:
		c.kind, ok = cvFloat64, phys == format.Float || phys == format.Double
	case types.KindChar, types.KindVarChar:
		c.kind, ok = cvString, phys == format.ByteArray
	case types.KindBinary, types.KindVarBinary:
		c.kind, ok = cvBytes, phys == format.ByteArray || phys == format.FixedLenByteArray
	case types.KindDecimal:
		c.kind, c.scale = cvDecimal, t.Scale
		ok = phys == format.Int32 || phys == format.Int64 || phys == format.ByteArray || phys == format.FixedLenByteArray
		scale, annotated := 0, false
		if d, isDec := el.LogicalType.Value.(*format.DecimalType); isDec {
			scale, annotated = int(d.Scale), true
		} else if el.ConvertedType.Valid && el.ConvertedType.V == deprecated.Decimal {
			scale, annotated = int(el.Scale.V), true
		}
		if ok && annotated && scale != t.Scale {
			return c, mismatch(n, t, "the Parquet DECIMAL has scale %d", scale)
		}
	case types.KindDate:
		c.kind, ok = cvDate, phys == format.Int32
	case types.KindTime:
		c.kind, c.unitNanos = cvTime, 1e6
		switch phys {
		case format.Int32:
			ok = true
		case format.Int64:
			if tt, isTime := el.LogicalType.Value.(*format.TimeType); isTime {
				ok, c.unitNanos = true, unitNanos(tt.Unit)
			} else if el.ConvertedType.Valid && el.ConvertedType.V == deprecated.TimeMicros {
				ok, c.unitNanos = true, 1e3
			}
		}
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		c.kind, c.precision = cvTimestamp, t.Precision
		switch phys {
		case format.Int96:
			ok = true
		case format.Int64:
			ok = true
			// The annotation's unit wins (Paimon 2.0 reads pypaimon's NANOS);
			// without one the precision decides as in Paimon 1.x, where p > 6
			// falls back to milliseconds (ParquetVectorUpdaterFactory.timestampUnit).
			switch {
			case isTimestampAnnotation(el):
				c.unitNanos = unitNanos(el.LogicalType.Value.(*format.TimestampType).Unit)
			case el.ConvertedType.Valid && el.ConvertedType.V == deprecated.TimestampMicros:
				c.unitNanos = 1e3
			case el.ConvertedType.Valid && el.ConvertedType.V == deprecated.TimestampMillis:
				c.unitNanos = 1e6
			case t.Precision > 3 && t.Precision <= 6:
				c.unitNanos = 1e3
			default:
				c.unitNanos = 1e6
			}
		}
	}
	if !ok {
		return c, mismatch(n, t, "cannot be read from Parquet physical type %s", phys)
	}
	return c, nil
}

func isTimestampAnnotation(el *format.SchemaElement) bool {
	_, ok := el.LogicalType.Value.(*format.TimestampType)
	return ok
}
