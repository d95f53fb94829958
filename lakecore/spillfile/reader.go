package spillfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// Reader reads the records of one spill file in the order they were added.
// It is not safe for concurrent use.
type Reader struct {
	name    string
	in      *bufio.Reader
	f       *os.File
	codec   *Codec
	id      byte
	stored  []byte
	raw     []byte // the current block
	pos     int    // read position in raw
	rec     []byte // a record that spans blocks
	records int64
	err     error
}

// Open opens the spill file at path, whose blocks codec decompresses
// (whatever codec wrote it).
func Open(path string, codec *Codec) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open spill file: %w", err)
	}
	r, err := NewReader(path, f, codec)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

// NewReader reads the spill file in in, named name in errors.
func NewReader(name string, in io.Reader, codec *Codec) (*Reader, error) {
	r := &Reader{name: name, in: bufio.NewReaderSize(in, 16<<10), codec: codec}
	var head [headerSize]byte
	if err := r.readFull(head[:]); err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint64(head[:]) != magic {
		return nil, r.corrupt("not a spill file")
	}
	r.id = head[8]
	if r.id > codecLZ4 {
		return nil, r.corrupt("codec %d", r.id)
	}
	return r, nil
}

func (r *Reader) corrupt(format string, args ...any) error {
	return fmt.Errorf("read spill file %s: %w: %s", r.name, ErrCorrupt, fmt.Sprintf(format, args...))
}

// readFull reads len(p) bytes; the file ending first is corruption.
func (r *Reader) readFull(p []byte) error {
	if _, err := io.ReadFull(r.in, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return r.corrupt("truncated")
		}
		return fmt.Errorf("read spill file %s: %w", r.name, err)
	}
	return nil
}

// Next returns the next record, valid until the next call, or io.EOF
// after the last one. Any error is returned again by later calls.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	return rec, nil
}

func (r *Reader) next() ([]byte, error) {
	if r.pos == len(r.raw) {
		ok, err := r.nextBlock()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, io.EOF
		}
	}
	// The length: in place when the block holds all of it.
	n, k := binary.Uvarint(r.raw[r.pos:])
	if k > 0 {
		r.pos += k
	} else {
		if k < 0 {
			return nil, r.corrupt("record length overflows")
		}
		var err error
		if n, err = r.spanningLength(); err != nil {
			return nil, err
		}
	}
	if uint64(len(r.raw)-r.pos) >= n {
		rec := r.raw[r.pos : r.pos+int(n)]
		r.pos += int(n)
		r.records++
		return rec, nil
	}
	// The record spans blocks: gathered as the blocks come, so that a
	// corrupt length allocates no more than the bytes really there.
	r.rec = append(r.rec[:0], r.raw[r.pos:]...)
	r.pos = len(r.raw)
	for uint64(len(r.rec)) < n {
		ok, err := r.nextBlock()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, r.corrupt("record of %d bytes cut at %d", n, len(r.rec))
		}
		k := min(uint64(len(r.raw)), n-uint64(len(r.rec)))
		r.rec = append(r.rec, r.raw[:k]...)
		r.pos = int(k)
	}
	r.records++
	return r.rec, nil
}

// spanningLength reads a uvarint that continues in the next blocks.
func (r *Reader) spanningLength() (uint64, error) {
	var buf []byte
	for {
		buf = append(buf, r.raw[r.pos:]...)
		r.pos = len(r.raw)
		if len(buf) >= binary.MaxVarintLen64 {
			return 0, r.corrupt("record length overflows")
		}
		ok, err := r.nextBlock()
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, r.corrupt("record length cut")
		}
		k := min(len(r.raw), binary.MaxVarintLen64-len(buf))
		n, m := binary.Uvarint(append(buf, r.raw[:k]...))
		if m < 0 {
			return 0, r.corrupt("record length overflows")
		}
		if m > 0 {
			r.pos = m - len(buf)
			return n, nil
		}
	}
}

// nextBlock reads the next block into raw; false at the end of the file,
// after checking the record count.
func (r *Reader) nextBlock() (bool, error) {
	var head [blockHead]byte
	if err := r.readFull(head[:4]); err != nil {
		return false, err
	}
	storedLen := binary.LittleEndian.Uint32(head[0:])
	if storedLen == 0 {
		return false, r.end()
	}
	if err := r.readFull(head[4:]); err != nil {
		return false, err
	}
	rawLen := binary.LittleEndian.Uint32(head[4:])
	if rawLen == 0 || rawLen > BlockSize {
		return false, r.corrupt("block of %d raw bytes", rawLen)
	}
	// Stored bytes beyond the bound of any codec are corrupt; the bound
	// keeps a bad length from allocating much.
	if storedLen > 2*BlockSize {
		return false, r.corrupt("block of %d stored bytes", storedLen)
	}
	if cap(r.stored) < int(storedLen) {
		r.stored = make([]byte, storedLen)
	}
	r.stored = r.stored[:storedLen]
	if err := r.readFull(r.stored); err != nil {
		return false, err
	}
	crc := crc32.Update(crc32.Checksum(head[4:8], castagnoli), castagnoli, r.stored)
	if crc != binary.LittleEndian.Uint32(head[8:]) {
		return false, r.corrupt("block checksum mismatch")
	}
	if cap(r.raw) < BlockSize {
		r.raw = make([]byte, 0, BlockSize)
	}
	raw, err := r.codec.decompress(r.id, r.raw, r.stored, int(rawLen))
	if err != nil {
		return false, fmt.Errorf("read spill file %s: %w", r.name, err)
	}
	r.raw, r.pos = raw, 0
	return true, nil
}

// end checks the end of the file after its zero block length.
func (r *Reader) end() error {
	var end [endSize - 4]byte
	if err := r.readFull(end[:]); err != nil {
		return err
	}
	if crc32.Checksum(end[:8], castagnoli) != binary.LittleEndian.Uint32(end[8:]) {
		return r.corrupt("end checksum mismatch")
	}
	if n := int64(binary.LittleEndian.Uint64(end[:])); n != r.records {
		return r.corrupt("%d records read, the file says %d", r.records, n)
	}
	if _, err := r.in.ReadByte(); !errors.Is(err, io.EOF) {
		if err != nil {
			return fmt.Errorf("read spill file %s: %w", r.name, err)
		}
		return r.corrupt("bytes after the end")
	}
	return nil
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
