package spillfile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/localfile"
)

// Writer writes one spill file. Add the records, then Close, or Abort to
// remove the file. A Writer is not safe for concurrent use.
type Writer struct {
	path    string
	file    *localfile.File
	codec   *Codec
	raw     []byte // the open block
	stored  []byte
	size    int64
	records int64
	err     error
}

// Create creates a spill file at path, which must not exist, whose blocks
// codec compresses.
func Create(path string, codec *Codec) (*Writer, error) {
	f, err := localfile.Create(path, 4*BlockSize)
	if err != nil {
		return nil, fmt.Errorf("create spill file: %w", err)
	}
	w := &Writer{path: path, file: f, codec: codec, raw: make([]byte, 0, BlockSize)}
	head := binary.LittleEndian.AppendUint64(make([]byte, 0, headerSize), magic)
	w.write(append(head, codec.id))
	if w.err != nil {
		err := w.err
		w.Abort()
		return nil, err
	}
	return w, nil
}

// Add appends a record; record is not retained.
func (w *Writer) Add(record []byte) error {
	if w.err != nil {
		return w.err
	}
	var n [binary.MaxVarintLen64]byte
	w.append(n[:binary.PutUvarint(n[:], uint64(len(record)))])
	w.append(record)
	w.records++
	return w.err
}

// append adds p to the raw stream, writing every block it fills.
func (w *Writer) append(p []byte) {
	for len(p) > 0 && w.err == nil {
		k := min(len(p), BlockSize-len(w.raw))
		w.raw = append(w.raw, p[:k]...)
		p = p[k:]
		if len(w.raw) == BlockSize {
			w.flushBlock()
		}
	}
}

func (w *Writer) flushBlock() {
	if len(w.raw) == 0 || w.err != nil {
		return
	}
	var err error
	w.stored, err = w.codec.compress(w.stored[:0], w.raw)
	if err != nil {
		w.err = fmt.Errorf("write spill file %s: %w", w.path, err)
		return
	}
	var head [blockHead]byte
	binary.LittleEndian.PutUint32(head[0:], uint32(len(w.stored)))
	binary.LittleEndian.PutUint32(head[4:], uint32(len(w.raw)))
	crc := crc32.Update(crc32.Checksum(head[4:8], castagnoli), castagnoli, w.stored)
	binary.LittleEndian.PutUint32(head[8:], crc)
	w.write(head[:])
	w.write(w.stored)
	w.raw = w.raw[:0]
}

func (w *Writer) write(p []byte) {
	if w.err != nil {
		return
	}
	if _, err := w.file.Write(p); err != nil {
		w.err = fmt.Errorf("write spill file %s: %w", w.path, err)
		return
	}
	w.size += int64(len(p))
}

// Size is the number of bytes written so far, without the open block: the
// disk the file takes once closed, but for its last block and end.
func (w *Writer) Size() int64 { return w.size }

// Records is the number of records added.
func (w *Writer) Records() int64 { return w.records }

// Close writes the last block and the end and closes the file. On an
// error the file is removed.
func (w *Writer) Close() error {
	w.flushBlock()
	var end [endSize]byte
	binary.LittleEndian.PutUint64(end[4:], uint64(w.records))
	binary.LittleEndian.PutUint32(end[12:], crc32.Checksum(end[4:12], castagnoli))
	w.write(end[:])
	if w.err != nil {
		err := w.err
		w.Abort()
		return err
	}
	if err := w.file.Finish(); err != nil {
		w.err = fmt.Errorf("write spill file %s: %w", w.path, err)
		return w.err
	}
	w.err = fmt.Errorf("spill file %s: writer closed", w.path)
	return nil
}

// Abort closes and removes the file.
func (w *Writer) Abort() {
	w.file.Abort()
	if w.err == nil {
		w.err = fmt.Errorf("spill file %s: writer aborted", w.path)
	}
}
