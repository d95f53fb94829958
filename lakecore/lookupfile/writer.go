package lookupfile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/localfile"
)

// Writer writes one local lookup file. Add the entries in ascending key
// order (the caller's comparator; keys must be distinct), then Close, or
// Abort to remove the file. A Writer is not safe for concurrent use.
type Writer struct {
	path      string
	file      *localfile.File
	blockSize int
	off       int64
	entries   int64
	block     []byte
	offsets   []uint32
	first     []byte // the current block's first key
	index     []byte
	blocks    int
	err       error
}

// Create creates a local lookup file at path, which must not exist;
// blocks are closed once they reach blockSize bytes (DefaultBlockSize when
// blockSize <= 0).
func Create(path string, blockSize int) (*Writer, error) {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	f, err := localfile.Create(path, 64<<10)
	if err != nil {
		return nil, fmt.Errorf("create local lookup file: %w", err)
	}
	return &Writer{path: path, file: f, blockSize: blockSize}, nil
}

// Add appends an entry. key and value are copied.
func (w *Writer) Add(key, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(w.offsets) == 0 {
		w.first = append(w.first[:0], key...)
	}
	w.offsets = append(w.offsets, uint32(len(w.block)))
	w.block = binary.AppendUvarint(w.block, uint64(len(key)))
	w.block = append(w.block, key...)
	w.block = binary.AppendUvarint(w.block, uint64(len(value)))
	w.block = append(w.block, value...)
	w.entries++
	if len(w.block) >= w.blockSize || len(w.block) > 1<<31 {
		return w.flushBlock()
	}
	return nil
}

// Size is the number of bytes written so far, without the open block.
func (w *Writer) Size() int64 { return w.off }

func (w *Writer) flushBlock() error {
	if len(w.offsets) == 0 {
		return nil
	}
	for _, o := range w.offsets {
		w.block = binary.LittleEndian.AppendUint32(w.block, o)
	}
	w.block = binary.LittleEndian.AppendUint32(w.block, uint32(len(w.offsets)))
	w.index = binary.AppendUvarint(w.index, uint64(w.off))
	w.index = binary.AppendUvarint(w.index, uint64(len(w.block)))
	w.index = binary.LittleEndian.AppendUint32(w.index, crc32.Checksum(w.block, castagnoli))
	w.index = binary.AppendUvarint(w.index, uint64(w.entries-int64(len(w.offsets))))
	w.index = binary.AppendUvarint(w.index, uint64(len(w.first)))
	w.index = append(w.index, w.first...)
	w.blocks++
	if _, err := w.file.Write(w.block); err != nil {
		w.err = fmt.Errorf("write local lookup file %s: %w", w.path, err)
		return w.err
	}
	w.off += int64(len(w.block))
	w.block, w.offsets = w.block[:0], w.offsets[:0]
	return nil
}

// Close writes the last block, the index and the footer and closes the
// file. On an error the file is removed.
func (w *Writer) Close() error {
	if w.err == nil {
		w.err = w.flushBlock()
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	index := binary.AppendUvarint(nil, uint64(w.blocks))
	index = append(index, w.index...)
	footer := binary.LittleEndian.AppendUint64(nil, uint64(w.off))
	footer = binary.LittleEndian.AppendUint32(footer, uint32(len(index)))
	footer = binary.LittleEndian.AppendUint32(footer, crc32.Checksum(index, castagnoli))
	footer = binary.LittleEndian.AppendUint64(footer, uint64(w.entries))
	footer = binary.LittleEndian.AppendUint64(footer, magic)
	_, err := w.file.Write(index)
	if err == nil {
		_, err = w.file.Write(footer)
	}
	if err == nil {
		err = w.file.Finish()
	} else {
		w.file.Abort()
	}
	if err != nil {
		w.err = fmt.Errorf("write local lookup file %s: %w", w.path, err)
		return w.err
	}
	w.err = fmt.Errorf("local lookup file %s: writer closed", w.path)
	return nil
}

// Abort closes and removes the file.
func (w *Writer) Abort() {
	w.file.Abort()
	if w.err == nil {
		w.err = fmt.Errorf("local lookup file %s: writer aborted", w.path)
	}
}
