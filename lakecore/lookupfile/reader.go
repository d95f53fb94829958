package lookupfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
)

// Reader reads the blocks of one local lookup file, whose index it holds
// in memory. It is safe for concurrent use.
type Reader struct {
	path    string
	f       *os.File
	size    int64
	entries int64
	blocks  []blockHandle
}

// blockHandle is one block's entry in the index.
type blockHandle struct {
	offset   int64
	length   int
	crc      uint32
	ordinal  int64
	firstKey []byte
}

// Open opens the local lookup file at path and reads its index. A file
// that is not a complete local lookup file gives an error wrapping
// ErrCorrupt.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open local lookup file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open local lookup file: %w", err)
	}
	r := &Reader{path: path, f: f, size: st.Size()}
	if err := r.readIndex(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open local lookup file %s: %w", path, err)
	}
	return r, nil
}

func (r *Reader) readIndex() error {
	if r.size < footerSize {
		return fmt.Errorf("%w: %d bytes, shorter than the footer", ErrCorrupt, r.size)
	}
	footer := make([]byte, footerSize)
	if err := readFull(r.f, footer, r.size-footerSize); err != nil {
		return err
	}
	if binary.LittleEndian.Uint64(footer[24:]) != magic {
		return fmt.Errorf("%w: bad magic number", ErrCorrupt)
	}
	indexOff := binary.LittleEndian.Uint64(footer)
	indexLen := uint64(binary.LittleEndian.Uint32(footer[8:]))
	if indexOff > uint64(r.size) || indexOff+indexLen != uint64(r.size-footerSize) {
		return fmt.Errorf("%w: index at %d of %d bytes in a file of %d bytes", ErrCorrupt, indexOff, indexLen, r.size)
	}
	index := make([]byte, indexLen)
	if err := readFull(r.f, index, int64(indexOff)); err != nil {
		return err
	}
	if crc32.Checksum(index, castagnoli) != binary.LittleEndian.Uint32(footer[12:]) {
		return fmt.Errorf("%w: index checksum mismatch", ErrCorrupt)
	}
	blocks, err := decodeIndex(index, int64(indexOff), binary.LittleEndian.Uint64(footer[16:]))
	if err != nil {
		return err
	}
	r.blocks, r.entries = blocks, int64(binary.LittleEndian.Uint64(footer[16:]))
	return nil
}

// decodeIndex decodes the index of a file whose blocks end at dataEnd and
// hold entries entries: the blocks are contiguous from offset 0 and the
// ordinals of their first entries ascend from 0 and stay below entries.
func decodeIndex(index []byte, dataEnd int64, entries uint64) ([]blockHandle, error) {
	n, k := binary.Uvarint(index)
	if k <= 0 || n > uint64(len(index)) {
		return nil, fmt.Errorf("%w: index block count", ErrCorrupt)
	}
	index = index[k:]
	blocks := make([]blockHandle, 0, n)
	var next int64
	for i := range n {
		var v [4]uint64
		var crc uint32
		for j := range v {
			if j == 2 { // the checksum sits between length and ordinal
				if len(index) < 4 {
					return nil, fmt.Errorf("%w: index entry %d", ErrCorrupt, i)
				}
				crc, index = binary.LittleEndian.Uint32(index), index[4:]
			}
			if v[j], k = binary.Uvarint(index); k <= 0 {
				return nil, fmt.Errorf("%w: index entry %d", ErrCorrupt, i)
			}
			index = index[k:]
		}
		off, length, first, keyLen := v[0], v[1], v[2], v[3]
		ascending := (i == 0 && first == 0) || (i > 0 && first > uint64(blocks[i-1].ordinal))
		if off != uint64(next) || length < 8 || length > uint64(dataEnd)-off || !ascending || first >= entries || keyLen > uint64(len(index)) {
			return nil, fmt.Errorf("%w: index entry %d: block at %d of %d bytes from entry %d", ErrCorrupt, i, off, length, first)
		}
		blocks = append(blocks, blockHandle{offset: int64(off), length: int(length), crc: crc, ordinal: int64(first), firstKey: index[:keyLen:keyLen]})
		index = index[keyLen:]
		next = int64(off + length)
	}
	if len(index) != 0 || next != dataEnd || (n == 0) != (entries == 0) {
		return nil, fmt.Errorf("%w: index of %d blocks does not cover %d bytes of %d entries", ErrCorrupt, n, dataEnd, entries)
	}
	return blocks, nil
}

func readFull(f *os.File, buf []byte, off int64) error {
	n, err := f.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %d bytes at %d, read %d", ErrCorrupt, len(buf), off, n)
	}
	return err
}

// Entries is the number of entries in the file.
func (r *Reader) Entries() int64 { return r.entries }

// Size is the file's size in bytes.
func (r *Reader) Size() int64 { return r.size }

// Blocks is the number of blocks.
func (r *Reader) Blocks() int { return len(r.blocks) }

// FirstKey is the key of block i's first entry (the file's bytes: do not
// modify).
func (r *Reader) FirstKey(i int) []byte { return r.blocks[i].firstKey }

// ReadBlock reads block i and checks it against its checksum.
func (r *Reader) ReadBlock(i int) (*Block, error) {
	h := &r.blocks[i]
	buf := make([]byte, h.length)
	if err := readFull(r.f, buf, h.offset); err != nil {
		return nil, fmt.Errorf("read block %d of local lookup file %s: %w", i, r.path, err)
	}
	if crc32.Checksum(buf, castagnoli) != h.crc {
		return nil, fmt.Errorf("read block %d of local lookup file %s: %w: checksum mismatch", i, r.path, ErrCorrupt)
	}
	b, err := DecodeBlock(buf)
	if err != nil {
		return nil, fmt.Errorf("read block %d of local lookup file %s: %w", i, r.path, err)
	}
	b.ordinal = h.ordinal
	if i+1 < len(r.blocks) && r.blocks[i+1].ordinal != h.ordinal+int64(b.Len()) ||
		i+1 == len(r.blocks) && r.entries != h.ordinal+int64(b.Len()) {
		return nil, fmt.Errorf("read block %d of local lookup file %s: %w: %d entries do not match the index", i, r.path, ErrCorrupt, b.Len())
	}
	return b, nil
}

// Close closes the file (it does not remove it).
func (r *Reader) Close() error { return r.f.Close() }

// Block is the entries of one block.
type Block struct {
	data []byte
	// spans are each entry's key start and end, then its value start and
	// end, in data.
	spans   []int32
	ordinal int64
	size    int
}

// DecodeBlock checks and decodes the bytes of one block (its entries,
// their offsets and their count). A malformed block gives an error
// wrapping ErrCorrupt.
func DecodeBlock(data []byte) (*Block, error) {
	if len(data) < 8 || len(data) > math.MaxInt32 {
		return nil, fmt.Errorf("%w: block of %d bytes", ErrCorrupt, len(data))
	}
	n := uint64(binary.LittleEndian.Uint32(data[len(data)-4:]))
	if n == 0 || n > uint64(len(data)-4)/4 {
		return nil, fmt.Errorf("%w: block of %d bytes with %d entries", ErrCorrupt, len(data), n)
	}
	end := len(data) - 4 - 4*int(n)
	offsets := data[end : len(data)-4]
	spans := make([]int32, 0, 4*n)
	pos := 0
	for i := range int(n) {
		if int(binary.LittleEndian.Uint32(offsets[4*i:])) != pos {
			return nil, fmt.Errorf("%w: entry %d of a block not at its offset", ErrCorrupt, i)
		}
		for range 2 {
			l, k := binary.Uvarint(data[pos:end])
			if k <= 0 || l > uint64(end-pos-k) {
				return nil, fmt.Errorf("%w: entry %d of a block overruns it", ErrCorrupt, i)
			}
			pos += k
			spans = append(spans, int32(pos), int32(pos+int(l)))
			pos += int(l)
		}
	}
	if pos != end {
		return nil, fmt.Errorf("%w: %d bytes after the entries of a block", ErrCorrupt, end-pos)
	}
	return &Block{data: data[:end:end], spans: spans, size: len(data) + 4*cap(spans) + 64}, nil
}

// Len is the number of entries.
func (b *Block) Len() int { return len(b.spans) / 4 }

// Size is the memory the block holds, in bytes.
func (b *Block) Size() int { return b.size }

// Key returns entry i's key (the block's bytes: do not modify).
func (b *Block) Key(i int) []byte {
	s, e := b.spans[4*i], b.spans[4*i+1]
	return b.data[s:e:e]
}

// Value returns entry i's value (the block's bytes: do not modify).
func (b *Block) Value(i int) []byte {
	s, e := b.spans[4*i+2], b.spans[4*i+3]
	return b.data[s:e:e]
}

// Ordinal is entry i's index among the file's entries.
func (b *Block) Ordinal(i int) int64 { return b.ordinal + int64(i) }

// Search returns the index of the entry whose key cmp reports equal (0),
// or -1. cmp orders the searched key against an entry's: negative when the
// searched key comes first. The entries must be in ascending order of cmp.
func (b *Block) Search(cmp func(key []byte) (int, error)) (int, error) {
	lo, hi := 0, b.Len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c, err := cmp(b.Key(m))
		if err != nil {
			return -1, err
		}
		switch {
		case c == 0:
			return m, nil
		case c > 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return -1, nil
}

// FindBlock returns the block that can hold the key cmp searches for: the
// last whose first key is at or below it, or -1 when the key is below the
// first block's first key.
func (r *Reader) FindBlock(cmp func(key []byte) (int, error)) (int, error) {
	lo, hi := 0, len(r.blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c, err := cmp(r.blocks[m].firstKey)
		if err != nil {
			return -1, err
		}
		if c >= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1, nil
}

// Get finds the entry of the key cmp searches for, reading its block: its
// value and ordinal, or found false.
func (r *Reader) Get(cmp func(key []byte) (int, error)) (value []byte, ordinal int64, found bool, err error) {
	i, err := r.FindBlock(cmp)
	if err != nil || i < 0 {
		return nil, 0, false, err
	}
	b, err := r.ReadBlock(i)
	if err != nil {
		return nil, 0, false, err
	}
	j, err := b.Search(cmp)
	if err != nil || j < 0 {
		return nil, 0, false, err
	}
	return b.Value(j), b.Ordinal(j), true, nil
}
