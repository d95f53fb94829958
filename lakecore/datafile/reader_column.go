package datafile

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// valueSource yields the non-null values of one page, converted to Go values.
type valueSource interface {
	len() int
	get(i int) any
}

// denseSource is a valueSource that also stores a run of its values at
// once: dst[j][col] = get(from+j), with the conversion chosen once per
// run instead of once per value.
type denseSource interface {
	valueSource
	fill(dst [][]any, col, from int)
}

// leafCursor walks the level entries of one leaf column through the pages of
// its column chunk in the current row group. Each entry has a definition
// level, a repetition level and, when the definition level is the maximum, a
// value.
type leafCursor struct {
	index          int // leaf column index in the file
	path           string
	maxDef, maxRep byte
	conv           leafConv

	pages    parquet.Pages
	page     parquet.Page
	def, rep []byte // levels of the current page; nil when the maximum is 0
	n, pos   int    // entries in the current page and the next one to read
	src      valueSource
	vpos     int // next value of src

	dict     parquet.Dictionary // dictionary whose converted values are cached
	dictVals []any
	// slab boxes the commonest values (boxes: one allocation per many).
	slab boxes.Slab
}

// start positions the cursor at the beginning of a new column chunk.
func (c *leafCursor) start(p parquet.Pages) {
	c.close()
	c.pages = p
	c.dict, c.dictVals = nil, nil
}

// close releases the current page and the column chunk.
func (c *leafCursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		_ = c.pages.Close()
		c.pages = nil
	}
	c.def, c.rep, c.src = nil, nil, nil
	c.n, c.pos, c.vpos = 0, 0, 0
}

// corrupt reports damaged data; the caller adds the table column's name, so
// only a nested leaf names its Parquet path.
func (c *leafCursor) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w%s: %s", ErrCorruptFile, c.where(), fmt.Sprintf(format, args...))
}

func (c *leafCursor) where() string {
	if strings.Contains(c.path, ".") {
		return fmt.Sprintf(" in Parquet column %q", c.path)
	}
	return ""
}

// nextPage loads the next page that has entries. It returns false at the end
// of the column chunk.
func (c *leafCursor) nextPage() (bool, error) {
	for {
		if c.pages == nil {
			return false, nil
		}
		if c.page != nil {
			parquet.Release(c.page)
			c.page = nil
		}
		page, err := c.pages.ReadPage()
		if errors.Is(err, io.EOF) {
			_ = c.pages.Close()
			c.pages = nil
			return false, nil
		}
		if err != nil {
			if w := c.where(); w != "" {
				return false, fmt.Errorf("read page%s: %w", w, err)
			}
			return false, err
		}
		c.page = page
		if err := c.load(page); err != nil {
			return false, err
		}
		if c.n > 0 {
			return true, nil
		}
	}
}

// load checks a page's levels against its values and makes it current.
func (c *leafCursor) load(page parquet.Page) error {
	c.pos, c.vpos = 0, 0
	c.def, c.rep = nil, nil
	defined := 0
	if c.maxDef > 0 {
		c.def = page.DefinitionLevels()
		c.n = len(c.def)
		for _, d := range c.def {
			if d == c.maxDef {
				defined++
			} else if d > c.maxDef {
				return c.corrupt("definition level %d above the maximum %d", d, c.maxDef)
			}
		}
	} else {
		c.n = int(page.NumValues())
		defined = c.n
	}
	if c.maxRep > 0 {
		c.rep = page.RepetitionLevels()
		if len(c.rep) != c.n {
			return c.corrupt("%d repetition levels for %d definition levels", len(c.rep), c.n)
		}
		for _, r := range c.rep {
			if r > c.maxRep {
				return c.corrupt("repetition level %d above the maximum %d", r, c.maxRep)
			}
		}
	}
	data := page.Data()
	if dict := page.Dictionary(); dict != nil {
		if data.Kind() != encoding.Int32 {
			return c.corrupt("dictionary page without indexes")
		}
		vals, err := c.dictionary(dict)
		if err != nil {
			return err
		}
		idx := data.Int32()
		for _, i := range idx {
			if i < 0 || int(i) >= len(vals) {
				return c.corrupt("dictionary index %d out of %d entries", i, len(vals))
			}
		}
		c.src = &dictSource{idx: idx, vals: vals, copyBytes: c.conv.kind == cvBytes}
	} else {
		src, err := c.source(data)
		if err != nil {
			return err
		}
		c.src = src
	}
	if c.src.len() < defined {
		return c.corrupt("page has %d values for %d defined entries", c.src.len(), defined)
	}
	return nil
}

// dictionary converts a dictionary's values once per column chunk.
func (c *leafCursor) dictionary(dict parquet.Dictionary) ([]any, error) {
	if dict == c.dict {
		return c.dictVals, nil
	}
	src, err := c.source(dict.Page().Data())
	if err != nil {
		return nil, err
	}
	n := min(src.len(), dict.Len())
	vals := make([]any, n)
	for i := range vals {
		vals[i] = src.get(i)
	}
	c.dict, c.dictVals = dict, vals
	return vals, nil
}

// source wraps the plain values of a page.
func (c *leafCursor) source(data encoding.Values) (valueSource, error) {
	kind := data.Kind()
	switch {
	case kind == encoding.Boolean && c.conv.kind == cvBool:
		bits := data.Boolean()
		return &boolSource{bits: bits, n: 8 * len(bits)}, nil
	case kind == encoding.Int32:
		return &int32Source{v: data.Int32(), conv: c.conv, slab: &c.slab}, nil
	case kind == encoding.Int64:
		return &int64Source{v: data.Int64(), conv: c.conv, slab: &c.slab}, nil
	case kind == encoding.Int96 && c.conv.kind == cvTimestamp:
		return &int96Source{v: data.Int96(), precision: c.conv.precision, slab: &c.slab}, nil
	case kind == encoding.Float:
		return &floatSource{v: data.Float(), conv: c.conv.kind}, nil
	case kind == encoding.Double:
		return &doubleSource{v: data.Double(), conv: c.conv.kind, slab: &c.slab}, nil
	case kind == encoding.ByteArray:
		b, off := data.ByteArray()
		if len(off) == 0 {
			return &byteArraySource{conv: c.conv, slab: &c.slab}, nil
		}
		prev := uint32(0)
		for _, o := range off {
			if o < prev || int(o) > len(b) {
				return nil, c.corrupt("byte array offsets out of range")
			}
			prev = o
		}
		return &byteArraySource{data: b, offsets: off, conv: c.conv, slab: &c.slab}, nil
	case kind == encoding.FixedLenByteArray:
		b, size := data.FixedLenByteArray()
		if size <= 0 {
			return nil, c.corrupt("fixed length byte array of size %d", size)
		}
		return &flbaSource{data: b, size: size, conv: c.conv, slab: &c.slab}, nil
	}
	return nil, c.corrupt("page holds %v values", kind)
}

// ensure makes an entry available; the chunk ending first is corruption,
// since the row group promised more rows.
func (c *leafCursor) ensure() error {
	if c.pos < c.n {
		return nil
	}
	ok, err := c.nextPage()
	if err != nil {
		return err
	}
	if !ok {
		return c.corrupt("column chunk ends before the row group's last row")
	}
	return nil
}

// peekDef returns the definition level of the next entry.
func (c *leafCursor) peekDef() (int, error) {
	if err := c.ensure(); err != nil {
		return 0, err
	}
	if c.def == nil {
		return int(c.maxDef), nil
	}
	return int(c.def[c.pos]), nil
}

// continues reports whether the next entry continues the list or map whose
// repeated node has repetition level rep.
func (c *leafCursor) continues(rep int) (bool, error) {
	if c.pos >= c.n {
		ok, err := c.nextPage()
		if err != nil || !ok {
			return false, err
		}
	}
	return c.rep != nil && int(c.rep[c.pos]) == rep, nil
}

// take consumes one entry and returns its value, nil when it is not defined.
func (c *leafCursor) take() (any, error) {
	if err := c.ensure(); err != nil {
		return nil, err
	}
	if c.def != nil {
		d := c.def[c.pos]
		c.pos++
		if d != c.maxDef {
			return nil, nil
		}
	} else {
		c.pos++
	}
	v := c.src.get(c.vpos)
	c.vpos++
	return v, nil
}

// skip consumes one entry without converting its value.
func (c *leafCursor) skip() error {
	if err := c.ensure(); err != nil {
		return err
	}
	if c.def == nil || c.def[c.pos] == c.maxDef {
		c.vpos++
	}
	c.pos++
	return nil
}

// readFlat fills rows[i][col] for a top-level column without repetition, a
// page segment at a time.
func (c *leafCursor) readFlat(rows [][]any, col int) error {
	i := 0
	for i < len(rows) {
		if err := c.ensure(); err != nil {
			return err
		}
		k := min(len(rows)-i, c.n-c.pos)
		seg := rows[i : i+k]
		src := c.src
		if c.def == nil {
			if d, ok := src.(denseSource); ok {
				d.fill(seg, col, c.vpos)
			} else {
				for j, row := range seg {
					row[col] = src.get(c.vpos + j)
				}
			}
			c.vpos += k
		} else {
			vpos, maxDef := c.vpos, c.maxDef
			for j, d := range c.def[c.pos : c.pos+k] {
				if d == maxDef {
					seg[j][col] = src.get(vpos)
					vpos++
				}
			}
			c.vpos = vpos
		}
		c.pos += k
		i += k
	}
	return nil
}

// read assembles the next value of the node.
func (n *rnode) read() (any, error) {
	if n.kind == nodeLeaf {
		return n.leaf.take()
	}
	d, err := n.first.peekDef()
	if err != nil {
		return nil, err
	}
	if n.optional && d < n.def {
		return nil, n.skip()
	}
	switch n.kind {
	case nodeRow:
		row := make([]any, len(n.children))
		for i, c := range n.children {
			if row[i], err = c.read(); err != nil {
				return nil, err
			}
		}
		return row, nil
	case nodeList:
		if d < n.repDef {
			return []any{}, n.skip()
		}
		var out []any
		for {
			v, err := n.elem.read()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			more, err := n.first.continues(n.repRep)
			if err != nil {
				return nil, err
			}
			if !more {
				return out, nil
			}
		}
	default: // nodeMap
		if d < n.repDef {
			return types.Map{Keys: []any{}, Values: []any{}}, n.skip()
		}
		var m types.Map
		for {
			k, err := n.key.read()
			if err != nil {
				return nil, err
			}
			v, err := n.val.read()
			if err != nil {
				return nil, err
			}
			m.Keys = append(m.Keys, k)
			m.Values = append(m.Values, v)
			more, err := n.first.continues(n.repRep)
			if err != nil {
				return nil, err
			}
			if !more {
				return m, nil
			}
		}
	}
}

// skip consumes the single entry a NULL or empty value leaves in every leaf.
func (n *rnode) skip() error {
	for _, c := range n.leaves {
		if err := c.skip(); err != nil {
			return err
		}
	}
	return nil
}

type boolSource struct {
	bits []byte
	n    int
}

func (s *boolSource) len() int      { return s.n }
func (s *boolSource) get(i int) any { return s.bits[i>>3]>>(i&7)&1 != 0 }

type int32Source struct {
	v    []int32
	conv leafConv
	slab *boxes.Slab
}

func (s *int32Source) len() int { return len(s.v) }
func (s *int32Source) get(i int) any {
	v := s.v[i]
	switch s.conv.kind {
	case cvInt32:
		return s.slab.Int32(v)
	case cvInt8:
		return int8(v)
	case cvInt16:
		return int16(v)
	case cvInt64:
		return int64(v)
	case cvUint32:
		return int64(uint32(v))
	case cvDate:
		return types.Date(v)
	case cvTime:
		return types.Time(v)
	case cvDecimal:
		return s.slab.Decimal(int64(v), s.conv.scale)
	}
	return nil
}

func (s *int32Source) fill(dst [][]any, col, from int) {
	v := s.v[from : from+len(dst)]
	if s.conv.kind != cvInt32 {
		for j, row := range dst {
			row[col] = s.get(from + j)
		}
		return
	}
	for j, row := range dst {
		row[col] = s.slab.Int32(v[j])
	}
}

type int64Source struct {
	v    []int64
	conv leafConv
	slab *boxes.Slab
}

func (s *int64Source) len() int { return len(s.v) }
func (s *int64Source) get(i int) any {
	v := s.v[i]
	switch s.conv.kind {
	case cvInt64:
		return s.slab.Int64(v)
	case cvTimestamp:
		return s.slab.Timestamp(int64Timestamp(v, s.conv.unitNanos, s.conv.precision))
	case cvInt32:
		return int32(v)
	case cvInt16:
		return int16(v)
	case cvInt8:
		return int8(v)
	case cvTime:
		return types.Time(types.FloorDiv(v, 1e6/s.conv.unitNanos))
	case cvDecimal:
		return s.slab.Decimal(v, s.conv.scale)
	}
	return nil
}

func (s *int64Source) fill(dst [][]any, col, from int) {
	v := s.v[from : from+len(dst)]
	switch s.conv.kind {
	case cvInt64:
		for j, row := range dst {
			row[col] = s.slab.Int64(v[j])
		}
	case cvTimestamp:
		unit, precision := s.conv.unitNanos, s.conv.precision
		for j, row := range dst {
			row[col] = s.slab.Timestamp(int64Timestamp(v[j], unit, precision))
		}
	case cvDecimal:
		scale := s.conv.scale
		for j, row := range dst {
			row[col] = s.slab.Decimal(v[j], scale)
		}
	default:
		for j, row := range dst {
			row[col] = s.get(from + j)
		}
	}
}

// int64Timestamp converts an INT64 timestamp in the given unit and keeps the
// precision's digits: milliseconds for p <= 3 and microseconds for p <= 6, as
// Java's long-backed timestamp vectors do.
func int64Timestamp(v, unitNanos int64, precision int) types.Timestamp {
	var ts types.Timestamp
	switch unitNanos {
	case 1e6:
		ts.Millis = v
	case 1e3:
		ts.Millis = types.FloorDiv(v, 1000)
		ts.NanoOfMilli = int32((v - ts.Millis*1000) * 1000)
	default:
		ts.Millis = types.FloorDiv(v, 1e6)
		ts.NanoOfMilli = int32(v - ts.Millis*1e6)
	}
	return keepPrecision(ts, precision)
}

func keepPrecision(ts types.Timestamp, precision int) types.Timestamp {
	switch {
	case precision <= 3:
		ts.NanoOfMilli = 0
	case precision <= 6:
		ts.NanoOfMilli -= ts.NanoOfMilli % 1000
	}
	return ts
}

// julianDayOfEpoch is the Julian day number of 1970-01-01.
const julianDayOfEpoch = 2440588

type int96Source struct {
	v         []deprecated.Int96
	precision int
	slab      *boxes.Slab
}

func (s *int96Source) len() int { return len(s.v) }

// get decodes INT96 as nanoseconds of the day (signed little-endian int64:
// Java writes negative values before 1970) and the Julian day (int32), as
// ParquetVectorUpdaterFactory.TimestampUpdater.int96ToTimestamp.
func (s *int96Source) get(i int) any {
	w := s.v[i]
	nanosOfDay := int64(uint64(w[1])<<32 | uint64(w[0]))
	day := int64(int32(w[2])) - julianDayOfEpoch
	millis := types.FloorDiv(nanosOfDay, 1e6)
	ts := types.Timestamp{Millis: day*millisPerDay + millis, NanoOfMilli: int32(nanosOfDay - millis*1e6)}
	return s.slab.Timestamp(keepPrecision(ts, s.precision))
}

type floatSource struct {
	v    []float32
	conv convKind
}

func (s *floatSource) len() int { return len(s.v) }
func (s *floatSource) get(i int) any {
	if s.conv == cvFloat64 {
		return float64(s.v[i])
	}
	return s.v[i]
}

type doubleSource struct {
	v    []float64
	conv convKind
	slab *boxes.Slab
}

func (s *doubleSource) len() int { return len(s.v) }
func (s *doubleSource) get(i int) any {
	if s.conv == cvFloat32 {
		return float32(s.v[i])
	}
	return s.slab.Float64(s.v[i])
}

type byteArraySource struct {
	data    []byte
	offsets []uint32
	conv    leafConv
	slab    *boxes.Slab
}

func (s *byteArraySource) len() int { return max(len(s.offsets)-1, 0) }
func (s *byteArraySource) get(i int) any {
	b := s.data[s.offsets[i]:s.offsets[i+1]]
	switch s.conv.kind {
	case cvString:
		return s.slab.String(b)
	case cvDecimal:
		return decimalFromBytes(b, s.conv.scale, s.slab)
	}
	return append([]byte{}, b...)
}

func (s *byteArraySource) fill(dst [][]any, col, from int) {
	if s.conv.kind != cvString {
		for j, row := range dst {
			row[col] = s.get(from + j)
		}
		return
	}
	off := s.offsets[from : from+len(dst)+1]
	for j, row := range dst {
		row[col] = s.slab.String(s.data[off[j]:off[j+1]])
	}
}

type flbaSource struct {
	data []byte
	size int
	conv leafConv
	slab *boxes.Slab
}

func (s *flbaSource) len() int { return len(s.data) / s.size }
func (s *flbaSource) get(i int) any {
	b := s.data[i*s.size : (i+1)*s.size]
	if s.conv.kind == cvDecimal {
		return decimalFromBytes(b, s.conv.scale, s.slab)
	}
	return append([]byte{}, b...)
}

// decimalFromBytes reads a big-endian two's-complement unscaled value as
// a types.Decimal, boxing values of up to 8 bytes from slab.
func decimalFromBytes(b []byte, scale int, slab *boxes.Slab) any {
	if len(b) <= 8 {
		var v int64
		for _, x := range b {
			v = v<<8 | int64(x)
		}
		if shift := 64 - 8*len(b); shift < 64 {
			v = v << shift >> shift
		}
		return slab.Decimal(v, scale)
	}
	u := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return types.Decimal{Unscaled: u, Scale: scale}
}

// dictSource indexes the converted values of a dictionary. BYTES values are
// copied so that rows never share a mutable slice.
type dictSource struct {
	idx       []int32
	vals      []any
	copyBytes bool
}

func (s *dictSource) len() int { return len(s.idx) }
func (s *dictSource) get(i int) any {
	v := s.vals[s.idx[i]]
	if s.copyBytes {
		if b, ok := v.([]byte); ok {
			return append([]byte{}, b...)
		}
	}
	return v
}

func (s *dictSource) fill(dst [][]any, col, from int) {
	idx := s.idx[from : from+len(dst)]
	if s.copyBytes {
		for j, row := range dst {
			row[col] = s.get(from + j)
		}
		return
	}
	vals := s.vals
	for j, row := range dst {
		row[col] = vals[idx[j]]
	}
}
