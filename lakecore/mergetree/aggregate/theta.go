package aggregate

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// thetaFunc is FieldThetaSketchAgg over VARBINARY: the union of two Theta
// sketches as Paimon's ThetaSketch.union computes it with
// DataSketches-java 4.2.0 (a Union of the default 4096 nominal entries fed
// the accumulator then the input, getResult() as an ordered compact
// sketch, toByteArray). Only compact sketches of serialization version 3
// (what Paimon writes) are read; other versions fail with
// ErrUnsupportedFunction. A NULL side returns the other value unchanged.
type thetaFunc struct{ noRetract }

func newTheta(f types.DataField) (Func, error) {
	if f.Type.Kind != types.KindVarBinary {
		return nil, typeError(nameThetaSketch, f, "VARBINARY")
	}
	return thetaFunc{noRetract{nameThetaSketch}}, nil
}

func (f thetaFunc) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	a, ok1 := acc.([]byte)
	b, ok2 := in.([]byte)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: theta_sketch wants VARBINARY ([]byte), got %T and %T", ErrInvalidValue, acc, in)
	}
	x, err := decodeTheta(a)
	if err != nil {
		return nil, err
	}
	y, err := decodeTheta(b)
	if err != nil {
		return nil, err
	}
	u := newThetaUnion()
	u.union(x)
	u.union(y)
	return u.result(), nil
}

func (f thetaFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }
func (thetaFunc) Reset()                                 {}

const (
	thetaSerVer     = 3
	thetaCompact    = 3 // Family.COMPACT
	thetaFlagBigEnd = 1
	thetaFlagRO     = 2
	thetaFlagEmpty  = 4
	thetaFlagComp   = 8
	thetaFlagOrd    = 16
	thetaFlagSingle = 32
	thetaSeedHash   = 0x93cc // seed hash of DEFAULT_UPDATE_SEED 9001
	thetaLgNom      = 12     // ThetaUtil.DEFAULT_NOMINAL_ENTRIES 4096
	thetaMaxTheta   = math.MaxInt64
)

type thetaSketch struct {
	empty  bool
	theta  int64
	hashes []int64
}

func decodeTheta(b []byte) (thetaSketch, error) {
	bad := func(format string, args ...any) (thetaSketch, error) {
		return thetaSketch{}, fmt.Errorf("%w: theta_sketch: %s", ErrInvalidValue, fmt.Sprintf(format, args...))
	}
	if len(b) < 16 {
		// UnionImpl.union(Memory) ignores anything shorter than 16 bytes:
		// the 8-byte empty sketch, and garbage alike.
		return thetaSketch{empty: true, theta: thetaMaxTheta}, nil
	}
	preLongs, serVer, family, flags := int(b[0]&0x3f), b[1], b[2], b[5]
	if serVer != thetaSerVer || family != thetaCompact || flags&thetaFlagBigEnd != 0 {
		return thetaSketch{}, fmt.Errorf("%w: theta_sketch: only little-endian compact sketches of serialization version 3 are read (got version %d, family %d, flags %#x)",
			ErrUnsupportedFunction, serVer, family, flags)
	}
	le := binary.LittleEndian
	s := thetaSketch{theta: thetaMaxTheta}
	if flags&thetaFlagEmpty != 0 {
		s.empty = true
		return s, nil
	}
	if seed := le.Uint16(b[6:]); seed != thetaSeedHash {
		return bad("seed hash %#x is not the default seed's %#x", seed, thetaSeedHash)
	}
	var count, start int
	switch preLongs {
	case 1:
		if flags&thetaFlagSingle == 0 {
			return s, nil // non-empty, no entries
		}
		count, start = 1, 8
	case 2, 3:
		if len(b) < 8*preLongs {
			return bad("truncated preamble")
		}
		count, start = int(int32(le.Uint32(b[8:]))), 8*preLongs
		if preLongs == 3 {
			s.theta = int64(le.Uint64(b[16:]))
		}
	default:
		return bad("preamble of %d longs", preLongs)
	}
	if count < 0 || len(b) < start+8*count {
		return bad("%d entries in %d bytes", count, len(b))
	}
	s.hashes = make([]int64, count)
	for i := range s.hashes {
		s.hashes[i] = int64(le.Uint64(b[start+8*i:]))
	}
	return s, nil
}

// thetaUnion is UnionImpl with its QuickSelect gadget: entries below the
// union's theta are kept until more than 15/16 of the full 2^(lgNom+1)
// table is used, when the gadget's theta drops to the (k+1)-th smallest
// entry and only the k smaller ones stay (quickSelectAndRebuild).
type thetaUnion struct {
	unionTheta  int64
	unionEmpty  bool
	gadgetTheta int64
	gadgetEmpty bool
	entries     map[int64]struct{}
}

func newThetaUnion() *thetaUnion {
	return &thetaUnion{unionTheta: thetaMaxTheta, unionEmpty: true, gadgetTheta: thetaMaxTheta, gadgetEmpty: true, entries: map[int64]struct{}{}}
}

func (u *thetaUnion) union(s thetaSketch) {
	if s.empty {
		return
	}
	u.unionTheta = min(u.unionTheta, s.theta, u.gadgetTheta)
	u.unionEmpty = false
	k := 1 << thetaLgNom
	threshold := (1 << (thetaLgNom + 1)) * 15 / 16
	for _, h := range s.hashes {
		if h <= 0 || h >= u.unionTheta {
			continue
		}
		u.gadgetEmpty = false
		if h >= u.gadgetTheta {
			continue
		}
		if _, dup := u.entries[h]; dup {
			continue
		}
		u.entries[h] = struct{}{}
		if len(u.entries) > threshold {
			sorted := u.sorted()
			u.gadgetTheta = sorted[k]
			for _, x := range sorted[k:] {
				delete(u.entries, x)
			}
		}
	}
	u.unionTheta = min(u.unionTheta, u.gadgetTheta)
}

func (u *thetaUnion) sorted() []int64 {
	out := make([]int64, 0, len(u.entries))
	for h := range u.entries {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// result is getResult(true, null).toByteArray().
func (u *thetaUnion) result() []byte {
	k := 1 << thetaLgNom
	hashes := u.sorted()
	theta := min(u.gadgetTheta, u.unionTheta)
	if len(hashes) > k {
		theta = min(theta, hashes[k])
	}
	n := 0
	for n < len(hashes) && hashes[n] < theta {
		n++
	}
	hashes = hashes[:n]
	return encodeTheta(u.gadgetEmpty && u.unionEmpty, theta, hashes)
}

// encodeTheta is CompactSketch.toByteArray of an ordered compact sketch
// (componentsToCompact): the 8-byte empty sketch, a single-item sketch, or
// preamble longs 1 to 3 (count and p = 1.0 from 2, theta from 3) and the
// sorted hashes.
func encodeTheta(empty bool, theta int64, hashes []int64) []byte {
	le := binary.LittleEndian
	if empty {
		return []byte{1, thetaSerVer, thetaCompact, 0, 0, thetaFlagRO | thetaFlagEmpty | thetaFlagComp | thetaFlagOrd, 0, 0}
	}
	if len(hashes) == 1 && theta == thetaMaxTheta {
		out := []byte{1, thetaSerVer, thetaCompact, 0, 0, thetaFlagRO | thetaFlagComp | thetaFlagOrd | thetaFlagSingle, 0, 0}
		le.PutUint16(out[6:], thetaSeedHash)
		return le.AppendUint64(out, uint64(hashes[0]))
	}
	preLongs := 1
	switch {
	case theta < thetaMaxTheta:
		preLongs = 3
	case len(hashes) > 1:
		preLongs = 2
	}
	out := []byte{byte(preLongs), thetaSerVer, thetaCompact, 0, 0, thetaFlagRO | thetaFlagComp | thetaFlagOrd, 0, 0}
	le.PutUint16(out[6:], thetaSeedHash)
	if preLongs >= 2 {
		out = le.AppendUint32(out, uint32(len(hashes)))
		out = le.AppendUint32(out, math.Float32bits(1))
	}
	if preLongs == 3 {
		out = le.AppendUint64(out, uint64(theta))
	}
	for _, h := range hashes {
		out = le.AppendUint64(out, uint64(h))
	}
	return out
}
