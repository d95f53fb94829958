package manifest

// Avro object container files (OCF) as Paimon reads and writes them.
//
// Reading follows Java's AvroBulkFormat (apache/paimon:
// paimon-format/src/main/java/org/apache/paimon/format/avro/AvroRowDatumReader.java and
// FieldReaderFactory.java): records are decoded against the file's own writer
// schema and fields are then looked up BY NAME, so unknown writer fields are
// skipped and missing optional fields read as null. The schema JSON is parsed
// with hamba/avro's parser; the container framing, the codecs and the binary
// decoding are done here so that every length is checked against the bytes
// that remain and corrupt input yields an error, never a panic or a huge
// allocation.
//
// Writing follows Java's DataFileWriter (Avro 1.11): header with exactly the
// avro.schema and avro.codec metadata, blocks flushed once the buffered,
// uncompressed records reach the default sync interval of 64000 bytes.

import (
	"bytes"
	"compress/flate"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/golang/snappy"
	"github.com/hamba/avro/v2"
	"github.com/klauspost/compress/zstd"
)

const (
	avroMagic = "Obj\x01"
	syncSize  = 16
	// syncInterval is Avro's DataFileConstants.DEFAULT_SYNC_INTERVAL: Java's
	// DataFileWriter ends a block once this many uncompressed bytes are
	// buffered.
	syncInterval = 64000
	// maxBlockSize bounds one decompressed block. Java's DataFileWriter ends
	// a block once 64000 bytes are buffered, so a block is that plus one
	// record (manifest records are a few KB); the limit only stops a corrupt
	// or hostile file from exhausting memory, since decoded values take up to
	// ~40 times their encoded size.
	maxBlockSize = 16 << 20
	// maxMinSize caps the computed minimum encoded size of a schema so that
	// absurd fixed sizes cannot overflow the arithmetic.
	maxMinSize = 1 << 30
	// maxSchemaDepth bounds the nesting of a writer schema (Paimon's are 4
	// deep); it also rejects recursive schemas, which Paimon never writes.
	maxSchemaDepth = 64
)

// Avro codec names as they appear in the avro.codec metadata.
const (
	codecNull      = "null"
	codecDeflate   = "deflate"
	codecSnappy    = "snappy"
	codecZstandard = "zstandard"
)

// kind is an Avro schema type.
type kind uint8

const (
	kNull kind = iota
	kBoolean
	kInt
	kLong
	kFloat
	kDouble
	kBytes
	kString
	kRecord
	kEnum
	kArray
	kMap
	kUnion
	kFixed
)

var kindNames = [...]string{"null", "boolean", "int", "long", "float", "double", "bytes", "string",
	"record", "enum", "array", "map", "union", "fixed"}

func (k kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// node is a writer schema reduced to what decoding needs.
type node struct {
	kind     kind
	logical  string         // logicalType of a primitive, "" if none
	fields   []field        // record
	index    map[string]int // record: field name -> position
	items    *node          // array items, map values
	branches []*node        // union
	size     int            // fixed: byte size; enum: symbol count
	minSize  int            // fewest bytes one encoded value takes
}

type field struct {
	name string
	typ  *node
}

func (n *node) String() string {
	switch n.kind {
	case kUnion:
		parts := make([]string, len(n.branches))
		for i, b := range n.branches {
			parts[i] = b.String()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case kArray:
		return "array<" + n.items.String() + ">"
	case kMap:
		return "map<" + n.items.String() + ">"
	}
	if n.logical != "" {
		return n.kind.String() + "(" + n.logical + ")"
	}
	return n.kind.String()
}

// javaSchemas are the writer schemas of schemas.go, which Java Paimon
// 1.4+/2.0 and the Encode functions write, parsed once: most files carry
// one of them. Built at init and never modified, so shared freely (node
// trees are immutable once built). Other schema texts are parsed by each
// Decoder, which keeps them.
var javaSchemas = parseJavaSchemas()

func parseJavaSchemas() map[string]*node {
	m := map[string]*node{}
	for _, text := range []string{manifestListSchema, manifestSchema, indexManifestSchema} {
		// A failure would be a bug in schemas.go; the Decoder then parses
		// (and reports) the text as it does unknown ones.
		if n, err := parseSchema(text); err == nil {
			m[text] = n
		}
	}
	return m
}

// parseSchema parses writer schema JSON into a node tree.
func parseSchema(text string) (*node, error) {
	// A private cache: named types of one file must not leak into another.
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("%w: parse writer schema: %v", ErrCorrupt, err)
	}
	c := converter{done: map[avro.Schema]*node{}, active: map[avro.Schema]bool{}}
	return c.convert(s, 0)
}

type converter struct {
	done   map[avro.Schema]*node
	active map[avro.Schema]bool
}

func (c *converter) convert(s avro.Schema, depth int) (*node, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: writer schema nested deeper than %d levels", ErrCorrupt, maxSchemaDepth)
	}
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	if n, ok := c.done[s]; ok {
		return n, nil
	}
	if c.active[s] {
		return nil, fmt.Errorf("%w: recursive writer schema is not supported", ErrCorrupt)
	}
	c.active[s] = true
	defer delete(c.active, s)
	n := &node{}
	switch s := s.(type) {
	case *avro.NullSchema:
		n.kind = kNull
	case *avro.PrimitiveSchema:
		switch s.Type() {
		case avro.Null:
			n.kind = kNull
		case avro.Boolean:
			n.kind, n.minSize = kBoolean, 1
		case avro.Int:
			n.kind, n.minSize = kInt, 1
		case avro.Long:
			n.kind, n.minSize = kLong, 1
		case avro.Float:
			n.kind, n.minSize = kFloat, 4
		case avro.Double:
			n.kind, n.minSize = kDouble, 8
		case avro.Bytes:
			n.kind, n.minSize = kBytes, 1
		case avro.String:
			n.kind, n.minSize = kString, 1
		default:
			return nil, fmt.Errorf("%w: unknown primitive type %q", ErrCorrupt, s.Type())
		}
		if l := s.Logical(); l != nil {
			n.logical = string(l.Type())
		}
	case *avro.RecordSchema:
		n.kind = kRecord
		n.index = make(map[string]int, len(s.Fields()))
		for i, f := range s.Fields() {
			t, err := c.convert(f.Type(), depth+1)
			if err != nil {
				return nil, err
			}
			n.fields = append(n.fields, field{name: f.Name(), typ: t})
			n.index[f.Name()] = i
			n.minSize = min(n.minSize+t.minSize, maxMinSize)
		}
	case *avro.EnumSchema:
		n.kind, n.minSize, n.size = kEnum, 1, len(s.Symbols())
	case *avro.FixedSchema:
		if s.Size() < 0 || s.Size() > maxBlockSize {
			return nil, fmt.Errorf("%w: fixed size %d", ErrCorrupt, s.Size())
		}
		n.kind, n.minSize, n.size = kFixed, s.Size(), s.Size()
	case *avro.ArraySchema:
		t, err := c.convert(s.Items(), depth+1)
		if err != nil {
			return nil, err
		}
		n.kind, n.minSize, n.items = kArray, 1, t
	case *avro.MapSchema:
		t, err := c.convert(s.Values(), depth+1)
		if err != nil {
			return nil, err
		}
		n.kind, n.minSize, n.items = kMap, 1, t
	case *avro.UnionSchema:
		n.kind = kUnion
		n.minSize = math.MaxInt32
		for _, b := range s.Types() {
			t, err := c.convert(b, depth+1)
			if err != nil {
				return nil, err
			}
			n.branches = append(n.branches, t)
			n.minSize = min(n.minSize, 1+t.minSize)
		}
		if len(n.branches) == 0 {
			return nil, fmt.Errorf("%w: empty union in writer schema", ErrCorrupt)
		}
	default:
		return nil, fmt.Errorf("%w: unsupported avro schema %T", ErrCorrupt, s)
	}
	c.done[s] = n
	return n, nil
}

// nullableOf returns T for the union ["null", T], the only union shape Java's
// FieldReaderFactory.visitUnion reads correctly (branch 0 is null, any other
// branch is T). Other schemas come back unchanged with nullable=false.
func nullableOf(n *node) (t *node, nullable bool, err error) {
	if n.kind != kUnion {
		return n, false, nil
	}
	if len(n.branches) != 2 || n.branches[0].kind != kNull || n.branches[1].kind == kNull || n.branches[1].kind == kUnion {
		return nil, false, fmt.Errorf("%w: union %s is not [\"null\", T]", ErrSchemaMismatch, n)
	}
	return n.branches[1], true, nil
}

// ---------------------------------------------------------------------------
// Binary decoding

// avroReader reads Avro binary values from b.
type avroReader struct {
	b   []byte
	pos int
}

func (d *avroReader) remaining() int { return len(d.b) - d.pos }

func (d *avroReader) errTruncated(what string) error {
	return fmt.Errorf("%w: %s truncated at byte %d of %d", ErrCorrupt, what, d.pos, len(d.b))
}

func (d *avroReader) long() (int64, error) {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		if d.pos >= len(d.b) {
			return 0, d.errTruncated("varint")
		}
		c := d.b[d.pos]
		d.pos++
		if shift == 63 && c > 1 {
			return 0, fmt.Errorf("%w: varint overflows 64 bits at byte %d", ErrCorrupt, d.pos)
		}
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
	return 0, fmt.Errorf("%w: varint longer than 10 bytes at byte %d", ErrCorrupt, d.pos)
}

func (d *avroReader) int() (int32, error) {
	v, err := d.long()
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, fmt.Errorf("%w: int value %d out of range at byte %d", ErrCorrupt, v, d.pos)
	}
	return int32(v), nil
}

// length reads a non-negative length that must fit in the remaining bytes
// when each unit takes at least unit bytes.
func (d *avroReader) length(what string, unit int) (int, error) {
	v, err := d.long()
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("%w: negative %s length %d at byte %d", ErrCorrupt, what, v, d.pos)
	}
	if unit > 0 && v > int64(d.remaining()/unit) {
		return 0, fmt.Errorf("%w: %s length %d exceeds the %d bytes left at byte %d", ErrCorrupt, what, v, d.remaining(), d.pos)
	}
	return int(v), nil
}

// raw returns the next n bytes without copying.
func (d *avroReader) raw(n int, what string) ([]byte, error) {
	if n < 0 || n > d.remaining() {
		return nil, d.errTruncated(what)
	}
	b := d.b[d.pos : d.pos+n : d.pos+n]
	d.pos += n
	return b, nil
}

// sized returns the bytes of a length-prefixed value (bytes or string)
// without copying.
func (d *avroReader) sized(what string) ([]byte, error) {
	n, err := d.length(what, 1)
	if err != nil {
		return nil, err
	}
	return d.raw(n, what)
}

func (d *avroReader) bytes() ([]byte, error) {
	b, err := d.sized("bytes")
	if err != nil {
		return nil, err
	}
	return append([]byte{}, b...), nil
}

func (d *avroReader) string() (string, error) {
	b, err := d.sized("string")
	return string(b), err
}

// blockCount reads the item count of one array or map block. A negative
// count is followed by the block's byte size, which is not needed.
func (d *avroReader) blockCount(what string, itemMin int) (int, error) {
	v, err := d.long()
	if err != nil {
		return 0, err
	}
	if v < 0 {
		if v == math.MinInt64 {
			return 0, fmt.Errorf("%w: %s block count overflows at byte %d", ErrCorrupt, what, d.pos)
		}
		v = -v
		if _, err := d.long(); err != nil {
			return 0, err
		}
	}
	// Items that take no bytes (null) are still bounded by the data so that a
	// corrupt count cannot spin for 2^63 iterations.
	if v > int64(d.remaining()/max(itemMin, 1)) {
		return 0, fmt.Errorf("%w: %s block of %d items exceeds the %d bytes left at byte %d", ErrCorrupt, what, v, d.remaining(), d.pos)
	}
	return int(v), nil
}

// record is a decoded Avro record: values in writer field order.
type record struct {
	n    *node
	vals []any
}

// value decodes one value of schema n into its generic Go form: nil, bool,
// int32, int64, float32, float64, []byte (bytes, fixed), string, int32
// (enum index), []any (array), map[string]any, *record. A union yields the
// value of its branch.
func (d *avroReader) value(n *node, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: value nested deeper than %d levels", ErrCorrupt, maxSchemaDepth)
	}
	switch n.kind {
	case kNull:
		return nil, nil
	case kBoolean:
		b, err := d.raw(1, "boolean")
		if err != nil {
			return nil, err
		}
		if b[0] > 1 {
			return nil, fmt.Errorf("%w: boolean byte %d at byte %d", ErrCorrupt, b[0], d.pos)
		}
		return b[0] == 1, nil
	case kInt:
		return d.int()
	case kLong:
		return d.long()
	case kFloat:
		b, err := d.raw(4, "float")
		if err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case kDouble:
		b, err := d.raw(8, "double")
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case kBytes:
		return d.bytes()
	case kString:
		return d.string()
	case kFixed:
		b, err := d.raw(n.size, "fixed")
		if err != nil {
			return nil, err
		}
		return append([]byte{}, b...), nil
	case kEnum:
		i, err := d.int()
		if err != nil {
			return nil, err
		}
		if i < 0 || int(i) >= n.size {
			return nil, fmt.Errorf("%w: enum index %d out of %d symbols", ErrCorrupt, i, n.size)
		}
		return i, nil
	case kRecord:
		r := &record{n: n, vals: make([]any, len(n.fields))}
		for i, f := range n.fields {
			v, err := d.value(f.typ, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
			r.vals[i] = v
		}
		return r, nil
	case kUnion:
		i, err := d.long()
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(n.branches)) {
			return nil, fmt.Errorf("%w: union branch %d of %s at byte %d", ErrCorrupt, i, n, d.pos)
		}
		return d.value(n.branches[i], depth+1)
	case kArray:
		var out []any
		for {
			c, err := d.blockCount("array", n.items.minSize)
			if err != nil {
				return nil, err
			}
			if c == 0 {
				break
			}
			if out == nil {
				out = make([]any, 0, min(c, 1024))
			}
			// Items that take no bytes cannot be bounded by the data;
			// Paimon never writes them, so allow only a few.
			if n.items.minSize == 0 && len(out)+c > 1<<16 {
				return nil, fmt.Errorf("%w: array of more than %d zero-size items", ErrCorrupt, 1<<16)
			}
			for range c {
				v, err := d.value(n.items, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case kMap:
		out := map[string]any{}
		for {
			c, err := d.blockCount("map", 1+n.items.minSize)
			if err != nil {
				return nil, err
			}
			if c == 0 {
				break
			}
			for range c {
				k, err := d.string()
				if err != nil {
					return nil, err
				}
				v, err := d.value(n.items, depth+1)
				if err != nil {
					return nil, err
				}
				out[k] = v
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: cannot decode %s", ErrCorrupt, n)
}

// ---------------------------------------------------------------------------
// Typed, by-name access to decoded records (Java's name-based field lookup).

// get returns the value of the named field and its writer type with a
// ["null", T] union unwrapped to T. present is false when the writer schema
// has no such field; the value is nil for null.
func (r *record) get(name string) (v any, t *node, present bool, err error) {
	i, ok := r.n.index[name]
	if !ok {
		return nil, nil, false, nil
	}
	t, _, err = nullableOf(r.n.fields[i].typ)
	if err != nil {
		return nil, nil, true, fmt.Errorf("field %s: %w", name, err)
	}
	return r.vals[i], t, true, nil
}

// missing is the error for a required field that is absent or null.
func (r *record) missing(name string) error {
	if _, ok := r.n.index[name]; !ok {
		return fmt.Errorf("%w: %s is not in the writer schema", ErrMissingField, name)
	}
	return fmt.Errorf("%w: %s is null", ErrMissingField, name)
}

func wrongType(name string, t *node, want string) error {
	return fmt.Errorf("%w: field %s is %s, want %s", ErrSchemaMismatch, name, t, want)
}

// optLong reads a long field; an int is widened as Avro's resolution would.
func (r *record) optLong(name string) (*int64, error) {
	v, t, _, err := r.get(name)
	if err != nil || v == nil {
		return nil, err
	}
	switch x := v.(type) {
	case int64:
		return &x, nil
	case int32:
		y := int64(x)
		return &y, nil
	}
	return nil, wrongType(name, t, "long")
}

// required turns an optional getter's nil into ErrMissingField.
func required[T any](r *record, name string, opt func(string) (*T, error)) (T, error) {
	var zero T
	v, err := opt(name)
	if err != nil {
		return zero, err
	}
	if v == nil {
		return zero, r.missing(name)
	}
	return *v, nil
}

func (r *record) reqLong(name string) (int64, error) { return required(r, name, r.optLong) }

// optInt reads an int field. Java's readers pick the decoder from the writer
// type, and Paimon's INT/TINYINT getters fail on a long, so a long is refused.
func (r *record) optInt(name string) (*int32, error) {
	v, t, _, err := r.get(name)
	if err != nil || v == nil {
		return nil, err
	}
	if x, ok := v.(int32); ok && t.kind == kInt {
		return &x, nil
	}
	return nil, wrongType(name, t, "int")
}

func (r *record) reqInt(name string) (int32, error) { return required(r, name, r.optInt) }

func (r *record) optString(name string) (*string, error) {
	v, t, _, err := r.get(name)
	if err != nil || v == nil {
		return nil, err
	}
	if x, ok := v.(string); ok {
		return &x, nil
	}
	return nil, wrongType(name, t, "string")
}

func (r *record) reqString(name string) (string, error) { return required(r, name, r.optString) }

// optBytes reads a bytes field; present-but-null and absent both give nil,
// an empty value gives a non-nil empty slice.
func (r *record) optBytes(name string) ([]byte, error) {
	v, t, _, err := r.get(name)
	if err != nil || v == nil {
		return nil, err
	}
	if x, ok := v.([]byte); ok && t.kind == kBytes {
		return x, nil
	}
	return nil, wrongType(name, t, "bytes")
}

func (r *record) reqBytes(name string) ([]byte, error) {
	v, err := r.optBytes(name)
	if err == nil && v == nil {
		err = r.missing(name)
	}
	return v, err
}

func (r *record) optRecord(name string) (*record, error) {
	v, t, _, err := r.get(name)
	if err != nil || v == nil {
		return nil, err
	}
	if x, ok := v.(*record); ok {
		return x, nil
	}
	return nil, wrongType(name, t, "record")
}

func (r *record) reqRecord(name string) (*record, error) {
	v, err := r.optRecord(name)
	if err == nil && v == nil {
		err = r.missing(name)
	}
	return v, err
}

// optArray returns the items of an array field and the item type with a
// ["null", T] union unwrapped; items of such a union may be nil.
func (r *record) optArray(name string) (items []any, itemType *node, err error) {
	v, t, _, err := r.get(name)
	if err != nil || v == nil {
		return nil, nil, err
	}
	x, ok := v.([]any)
	if !ok {
		return nil, nil, wrongType(name, t, "array")
	}
	it, _, err := nullableOf(t.items)
	if err != nil {
		return nil, nil, fmt.Errorf("items of %s: %w", name, err)
	}
	return x, it, nil
}

// optStrings reads an array<string> field; nil when null or absent.
func (r *record) optStrings(name string) ([]string, error) {
	items, it, err := r.optArray(name)
	if err != nil || items == nil {
		return nil, err
	}
	if it.kind != kString {
		return nil, wrongType(name, r.n.fields[r.n.index[name]].typ, "array<string>")
	}
	out := make([]string, len(items))
	for i, v := range items {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%w: %s[%d] is null", ErrMissingField, name, i)
		}
		out[i] = s
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Container reading

// readContainer parses the object container in data and calls fn for each
// top-level record, after telling reserve how many records the next block
// holds. A top-level ["null", record] union (Paimon <= 0.8 and early 0.9) is
// unwrapped; a null row is an error, as in Java.
func readContainer(dec *Decoder, data []byte, reserve func(n int), fn func(r *record) error) error {
	if len(data) < len(avroMagic) || string(data[:len(avroMagic)]) != avroMagic {
		if bytes.HasPrefix(data, []byte("ORC")) {
			return fmt.Errorf("%w: this is an ORC file (manifest.format=orc); ORC manifests are not supported, only Avro", ErrUnsupportedFormat)
		}
		return fmt.Errorf("%w: not an Avro object container (bad magic)", ErrUnsupportedFormat)
	}
	d := &avroReader{b: data, pos: len(avroMagic)}
	meta := map[string][]byte{}
	for {
		c, err := d.blockCount("metadata map", 2)
		if err != nil {
			return fmt.Errorf("header: %w", err)
		}
		if c == 0 {
			break
		}
		for range c {
			k, err := d.string()
			if err != nil {
				return fmt.Errorf("header: %w", err)
			}
			v, err := d.bytes()
			if err != nil {
				return fmt.Errorf("header %s: %w", k, err)
			}
			meta[k] = v
		}
	}
	syncMarker, err := d.raw(syncSize, "sync marker")
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	schemaText, ok := meta["avro.schema"]
	if !ok {
		return fmt.Errorf("%w: header has no avro.schema", ErrCorrupt)
	}
	codec := codecNull
	if c, ok := meta["avro.codec"]; ok && len(c) > 0 {
		codec = string(c)
	}
	switch codec {
	case codecNull, codecDeflate, codecSnappy, codecZstandard:
	default:
		return fmt.Errorf("%w: %q", ErrUnsupportedCodec, codec)
	}
	top, err := dec.schema(string(schemaText))
	if err != nil {
		return err
	}
	rowType, wrapped, err := nullableOf(top)
	if err != nil {
		return fmt.Errorf("top-level schema: %w", err)
	}
	if rowType.kind != kRecord {
		return fmt.Errorf("%w: top-level schema is %s, want a record", ErrSchemaMismatch, top)
	}

	index := 0
	for blockNo := 0; d.remaining() > 0; blockNo++ {
		count, err := d.long()
		if err != nil {
			return fmt.Errorf("block %d: %w", blockNo, err)
		}
		size, err := d.long()
		if err != nil {
			return fmt.Errorf("block %d: %w", blockNo, err)
		}
		if count < 0 || size < 0 || size > int64(d.remaining()-syncSize) {
			return fmt.Errorf("%w: block %d: count %d, size %d with %d bytes left", ErrCorrupt, blockNo, count, size, d.remaining())
		}
		payload, _ := d.raw(int(size), "block")
		marker, _ := d.raw(syncSize, "block sync marker")
		if !bytes.Equal(marker, syncMarker) {
			return fmt.Errorf("%w: block %d: sync marker mismatch", ErrCorrupt, blockNo)
		}
		plain, err := dec.decompress(codec, payload)
		if err != nil {
			return fmt.Errorf("block %d: %w", blockNo, err)
		}
		bd := &avroReader{b: plain}
		if count > int64(len(plain)/max(top.minSize, 1)) {
			return fmt.Errorf("%w: block %d: %d records cannot fit in %d bytes", ErrCorrupt, blockNo, count, len(plain))
		}
		// The count is only bounded by the block's bytes, so reserve room
		// for a modest number and let real records grow the slice.
		reserve(int(min(count, 1024)))
		for range count {
			v, err := bd.value(top, 0)
			if err != nil {
				return fmt.Errorf("record %d: %w", index, err)
			}
			if wrapped && v == nil {
				return fmt.Errorf("%w: record %d is a null row", ErrCorrupt, index)
			}
			if err := fn(v.(*record)); err != nil {
				return fmt.Errorf("record %d: %w", index, err)
			}
			index++
		}
		if bd.remaining() != 0 {
			return fmt.Errorf("%w: block %d: %d bytes after its %d records", ErrCorrupt, blockNo, bd.remaining(), count)
		}
	}
	return nil
}

// decodeAll decodes every record of the container in data with decode.
func decodeAll[T any](dec *Decoder, data []byte, what string, decode func(*record) (T, error)) ([]T, error) {
	var out []T
	err := readContainer(dec, data, func(n int) { out = slices.Grow(out, n) }, func(r *record) error {
		v, err := decode(r)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	return out, nil
}

func (dec *Decoder) decompress(codec string, payload []byte) ([]byte, error) {
	switch codec {
	case codecNull:
		return payload, nil
	case codecZstandard:
		zd, err := dec.zstdDecoder()
		if err != nil {
			return nil, fmt.Errorf("zstd decoder: %w", err)
		}
		out, err := zd.DecodeAll(payload, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: zstandard: %v", ErrCorrupt, err)
		}
		if len(out) > maxBlockSize {
			return nil, fmt.Errorf("%w: zstandard block inflates beyond %d bytes", ErrCorrupt, maxBlockSize)
		}
		return out, nil
	case codecSnappy:
		// Avro's SnappyCodec: raw snappy block + big-endian CRC32 of the
		// uncompressed bytes.
		if len(payload) < 4 {
			return nil, fmt.Errorf("%w: snappy block of %d bytes has no checksum", ErrCorrupt, len(payload))
		}
		body, sum := payload[:len(payload)-4], binary.BigEndian.Uint32(payload[len(payload)-4:])
		n, err := snappy.DecodedLen(body)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
		}
		if n > maxBlockSize {
			return nil, fmt.Errorf("%w: snappy block inflates to %d bytes", ErrCorrupt, n)
		}
		out, err := snappy.Decode(nil, body)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
		}
		if got := crc32.ChecksumIEEE(out); got != sum {
			return nil, fmt.Errorf("%w: snappy checksum %08x, want %08x", ErrCorrupt, got, sum)
		}
		return out, nil
	case codecDeflate:
		r := flate.NewReader(bytes.NewReader(payload))
		defer func() { _ = r.Close() }()
		out, err := io.ReadAll(io.LimitReader(r, maxBlockSize+1))
		if err != nil {
			return nil, fmt.Errorf("%w: deflate: %v", ErrCorrupt, err)
		}
		if len(out) > maxBlockSize {
			return nil, fmt.Errorf("%w: deflate block inflates beyond %d bytes", ErrCorrupt, maxBlockSize)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnsupportedCodec, codec)
}

// ---------------------------------------------------------------------------
// Binary encoding and container writing

func appendLong(b []byte, v int64) []byte {
	return binary.AppendUvarint(b, uint64(v<<1)^uint64(v>>63))
}

func appendInt(b []byte, v int32) []byte { return appendLong(b, int64(v)) }

func appendBytes(b, v []byte) []byte {
	b = appendLong(b, int64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, v string) []byte {
	b = appendLong(b, int64(len(v)))
	return append(b, v...)
}

// Union branch indexes of ["null", T].
func appendNull(b []byte) []byte    { return append(b, 0) }
func appendNotNull(b []byte) []byte { return append(b, 2) } // zigzag(1)

func appendOptLong(b []byte, v *int64) []byte {
	if v == nil {
		return appendNull(b)
	}
	return appendLong(appendNotNull(b), *v)
}

func appendOptInt(b []byte, v *int32) []byte {
	if v == nil {
		return appendNull(b)
	}
	return appendInt(appendNotNull(b), *v)
}

func appendOptString(b []byte, v *string) []byte {
	if v == nil {
		return appendNull(b)
	}
	return appendString(appendNotNull(b), *v)
}

func appendOptBytes(b, v []byte) []byte {
	if v == nil {
		return appendNull(b)
	}
	return appendBytes(appendNotNull(b), v)
}

// appendStrings writes an array<string> as Java does: one block, then 0.
func appendStrings(b []byte, v []string) []byte {
	if len(v) > 0 {
		b = appendLong(b, int64(len(v)))
		for _, s := range v {
			b = appendString(b, s)
		}
	}
	return append(b, 0)
}

func appendOptStrings(b []byte, v *[]string) []byte {
	if v == nil {
		return appendNull(b)
	}
	return appendStrings(appendNotNull(b), *v)
}

// codecName maps a Codec to its avro.codec name (Paimon's manifest.compression
// values: "zstd" becomes Avro's "zstandard").
func (c Codec) avroName() (string, error) {
	switch strings.ToLower(c.Name) {
	case "", "zstd", codecZstandard:
		return codecZstandard, nil
	case codecSnappy:
		return codecSnappy, nil
	case codecDeflate:
		return codecDeflate, nil
	case codecNull, "none":
		return codecNull, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnsupportedCodec, c.Name)
}

// containerWriter builds an object container in memory.
type containerWriter struct {
	out   []byte
	block []byte
	count int64
	sync  [syncSize]byte
	codec string
	zstd  *zstd.Encoder
}

func newContainerWriter(schema string, enc *Encoder) (*containerWriter, error) {
	name, err := enc.codec.avroName()
	if err != nil {
		return nil, err
	}
	w := &containerWriter{codec: name}
	if name == codecZstandard {
		if w.zstd, err = enc.zstdEncoder(); err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
	}
	if _, err := rand.Read(w.sync[:]); err != nil {
		return nil, fmt.Errorf("sync marker: %w", err)
	}
	w.out = append(w.out, avroMagic...)
	// Metadata: one map block with exactly avro.schema and avro.codec, in
	// the order Java's DataFileWriter emits them.
	w.out = appendLong(w.out, 2)
	w.out = appendString(w.out, "avro.schema")
	w.out = appendString(w.out, schema)
	w.out = appendString(w.out, "avro.codec")
	w.out = appendString(w.out, name)
	w.out = append(w.out, 0)
	w.out = append(w.out, w.sync[:]...)
	return w, nil
}

// endRecord counts the record just appended to w.block and ends the block
// once it reaches the sync interval, as DataFileWriter.append does.
func (w *containerWriter) endRecord() error {
	w.count++
	if len(w.block) > maxBlockSize {
		return fmt.Errorf("record of %d bytes exceeds the %d-byte block limit readers enforce", len(w.block), maxBlockSize)
	}
	if len(w.block) >= syncInterval {
		return w.flush()
	}
	return nil
}

func (w *containerWriter) flush() error {
	if w.count == 0 {
		return nil
	}
	var payload []byte
	switch w.codec {
	case codecNull:
		payload = w.block
	case codecZstandard:
		payload = w.zstd.EncodeAll(w.block, nil)
	case codecSnappy:
		payload = snappy.Encode(nil, w.block)
		payload = binary.BigEndian.AppendUint32(payload, crc32.ChecksumIEEE(w.block))
	case codecDeflate:
		var buf bytes.Buffer
		fw, err := flate.NewWriter(&buf, flate.DefaultCompression)
		if err != nil {
			return err
		}
		if _, err := fw.Write(w.block); err != nil {
			return err
		}
		if err := fw.Close(); err != nil {
			return err
		}
		payload = buf.Bytes()
	}
	w.out = appendLong(w.out, w.count)
	w.out = appendLong(w.out, int64(len(payload)))
	w.out = append(w.out, payload...)
	w.out = append(w.out, w.sync[:]...)
	w.block = w.block[:0]
	w.count = 0
	return nil
}

func (w *containerWriter) finish() ([]byte, error) {
	if err := w.flush(); err != nil {
		return nil, err
	}
	return w.out, nil
}
