// Package spillfile writes and reads spill files: the sorted runs a
// primary-key writer's write buffer puts on local disk when it is full,
// merged back when the buffer is flushed, as Java Paimon's spillable write
// buffer does (apache/paimon: paimon-core/.../sort/BinaryExternalSortBuffer.java,
// writing through ChannelWriterOutputView with spill-compression). Records
// are opaque bytes to this package, read back in the order they were
// added.
//
// A spill file is private to the process that wrote it and lives only until
// its buffer is flushed; the format may change between releases. It is
// nonetheless checked when read: every block carries a CRC-32C and the file
// ends with a checksummed record count, so a truncated or corrupt file
// gives an error wrapping [ErrCorrupt], never a panic or a wrong record.
//
// Layout, all integers little-endian:
//
//	header  uint64 magic "PMSPILL1", byte codec (0 none, 1 zstd, 2 lz4)
//	block*  uint32 stored length (> 0), uint32 raw length (1..BlockSize),
//	        uint32 CRC-32C of the raw length's 4 bytes and the stored bytes,
//	        stored bytes (the raw bytes, compressed by the codec)
//	end     uint32 0, uint64 record count, uint32 CRC-32C of the count's
//	        8 bytes, then nothing
//
// The raw bytes of the blocks, concatenated, are the records, each a
// uvarint length and its bytes; a record may span blocks, so that no block
// exceeds BlockSize however large a record is.
package spillfile

import (
	"errors"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// ErrCorrupt is wrapped by the errors of reading a spill file that is
// truncated or does not hold what was written.
var ErrCorrupt = errors.New("corrupt spill file")

// ErrInvalidCompression is wrapped by NewCodec for an unknown
// spill-compression.
var ErrInvalidCompression = errors.New("invalid spill compression")

// BlockSize is the most raw bytes one block holds: Java's
// compressionBlockSize of spill channels (64 KiB).
const BlockSize = 64 << 10

const (
	magic      = 0x314c4c4950534d50 // "PMSPILL1" little-endian
	headerSize = 8 + 1
	blockHead  = 4 + 4 + 4
	endSize    = 4 + 8 + 4
)

// The codecs, as stored in the header.
const (
	codecNone byte = iota
	codecZstd
	codecLZ4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Codec compresses the blocks of the spill files one writer writes and
// decompresses those it reads: spill-compression (CoreOptions.SPILL_COMPRESSION).
// A Codec holds one encoder and one decoder and is not safe for concurrent
// use; files written with one Codec can be read with any other.
type Codec struct {
	id        byte
	zstdLevel int
	enc       *zstd.Encoder
	dec       *zstd.Decoder
	lz4       lz4.Compressor
}

// NewCodec returns the codec of spill-compression name ("zstd", Java's
// default, at spill-compression.zstd-level zstdLevel, 0 meaning its
// default 1; "lz4"; "none"; any case). Java's "lzo" is read as lz4: spill
// files never leave the process, and lakecore has no LZO coder. Other
// names give an error wrapping ErrInvalidCompression.
func NewCodec(name string, zstdLevel int) (*Codec, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "zstd":
		if zstdLevel == 0 {
			zstdLevel = 1
		}
		if zstdLevel < 1 || zstdLevel > 22 {
			return nil, fmt.Errorf("%w: zstd level %d (1..22)", ErrInvalidCompression, zstdLevel)
		}
		return &Codec{id: codecZstd, zstdLevel: zstdLevel}, nil
	case "lz4", "lzo":
		return &Codec{id: codecLZ4}, nil
	case "none":
		return &Codec{id: codecNone}, nil
	}
	return nil, fmt.Errorf("%w: %q (zstd, lz4, lzo or none)", ErrInvalidCompression, name)
}

// compress appends the stored form of raw to dst.
func (c *Codec) compress(dst, raw []byte) ([]byte, error) {
	switch c.id {
	case codecZstd:
		if c.enc == nil {
			enc, err := zstd.NewWriter(nil,
				zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(c.zstdLevel)),
				zstd.WithEncoderConcurrency(1),
				zstd.WithWindowSize(BlockSize),
				zstd.WithLowerEncoderMem(true),
				zstd.WithEncoderCRC(false)) // the block has its own
			if err != nil {
				return nil, err
			}
			c.enc = enc
		}
		return c.enc.EncodeAll(raw, dst), nil
	case codecLZ4:
		start := len(dst)
		dst = append(dst, make([]byte, lz4.CompressBlockBound(len(raw)))...)
		n, err := c.lz4.CompressBlock(raw, dst[start:])
		if err != nil {
			return nil, err
		}
		if n == 0 { // incompressible: lz4 stores it as literals
			return nil, errors.New("lz4: block did not compress within its bound")
		}
		return dst[:start+n], nil
	}
	return append(dst, raw...), nil
}

// decompress decodes stored, of codec id, into dst (reused), which must
// come out at exactly rawLen bytes.
func (c *Codec) decompress(id byte, dst, stored []byte, rawLen int) ([]byte, error) {
	var err error
	switch id {
	case codecNone:
		dst = append(dst[:0], stored...)
	case codecZstd:
		if c.dec == nil {
			if c.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(BlockSize),
				zstd.WithDecoderMaxWindow(BlockSize)); err != nil {
				return nil, err
			}
		}
		if dst, err = c.dec.DecodeAll(stored, dst[:0]); err != nil {
			return nil, fmt.Errorf("%w: zstd: %w", ErrCorrupt, err)
		}
	case codecLZ4:
		dst = dst[:BlockSize]
		n, err := lz4.UncompressBlock(stored, dst)
		if err != nil {
			return nil, fmt.Errorf("%w: lz4: %w", ErrCorrupt, err)
		}
		dst = dst[:n]
	default:
		return nil, fmt.Errorf("%w: codec %d", ErrCorrupt, id)
	}
	if len(dst) != rawLen {
		return nil, fmt.Errorf("%w: block of %d raw bytes decodes to %d", ErrCorrupt, rawLen, len(dst))
	}
	return dst, nil
}

// Close releases the codec's coders.
func (c *Codec) Close() {
	if c.enc != nil {
		_ = c.enc.Close()
		c.enc = nil
	}
	if c.dec != nil {
		c.dec.Close()
		c.dec = nil
	}
}
