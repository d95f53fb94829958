package datafile

import (
	"fmt"
	"strings"
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdWindowSize bounds how far back a zstd match may reach. Every page is
// its own zstd frame, and a page up to this size compresses to the same
// bytes as with the default 8 MiB window (data pages are about parquet-go's
// 256 KiB page buffer; dictionaries fall back to PLAIN near
// dictionaryMaxBytes); a larger page only misses matches further back. An
// encoder then holds about 1.5 MiB at level 1 instead of 8 to 16 MiB.
const zstdWindowSize = 1 << 20

// Compressor compresses the pages of data files (Paimon's
// file.compression). One Compressor may be shared by any number of
// Writers, also from several goroutines: a table writer with many open
// files shares one so that they hold one zstd encoder between them, not one
// each. It holds one zstd encoder per page compressed at the same time:
// one for writers on one goroutine, more when writers on several
// goroutines compress at once.
type Compressor struct {
	codec compress.Codec
}

// NewCompressor returns the compressor of file.compression name ("zstd",
// also for "", "snappy", "gzip", "lz4", written as LZ4_RAW, "none" or
// "uncompressed", case-insensitive) and file.compression.zstd-level
// (0 means Paimon's default 1), mapped onto the Parquet codecs parquet-mr
// reads out of the box (RowDataParquetBuilder.getCompressionCodec). Errors
// wrap ErrInvalidWriterOptions.
func NewCompressor(name string, zstdLevel int) (*Compressor, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "zstd":
		if zstdLevel == 0 {
			zstdLevel = 1
		}
		if zstdLevel < 1 || zstdLevel > 22 {
			return nil, fmt.Errorf("%w: zstd level %d (1..22)", ErrInvalidWriterOptions, zstdLevel)
		}
		level := kzstd.EncoderLevelFromZstd(zstdLevel)
		c := &zstdCodec{newEncoder: func() (*kzstd.Encoder, error) {
			return kzstd.NewWriter(nil,
				kzstd.WithEncoderLevel(level),
				kzstd.WithEncoderConcurrency(1),
				kzstd.WithWindowSize(zstdWindowSize),
				kzstd.WithLowerEncoderMem(true),
				// As parquet-go's zstd codec: an empty page is still a
				// frame, and no frame checksum (the page header has a CRC
				// field).
				kzstd.WithZeroFrames(true),
				kzstd.WithEncoderCRC(false),
				// Entropy-code a block's literals even when it has no
				// matches, as libzstd (Java's zstd-jni) does at every
				// level: the fastest level skips that by default, which
				// leaves a page of unique numbers (a PLAIN INT64 column)
				// as large as its values.
				kzstd.WithAllLitEntropyCompression(true),
			)
		}}
		enc, err := c.newEncoder()
		if err != nil {
			return nil, fmt.Errorf("%w: zstd level %d: %w", ErrInvalidWriterOptions, zstdLevel, err)
		}
		c.idle = append(c.idle, enc)
		return &Compressor{codec: c}, nil
	case "snappy":
		return &Compressor{codec: &snappy.Codec{}}, nil
	case "gzip":
		return &Compressor{codec: &gzip.Codec{Level: gzip.DefaultCompression}}, nil
	case "lz4", "lz4_raw":
		return &Compressor{codec: &lz4.Codec{Level: lz4.Fastest}}, nil
	case "none", "uncompressed":
		return &Compressor{codec: &uncompressed.Codec{}}, nil
	}
	return nil, fmt.Errorf("%w: unsupported compression %q (zstd, snappy, gzip, lz4 or none)", ErrInvalidWriterOptions, name)
}

// zstdCodec is parquet-go's zstd codec with long-lived encoders of
// bounded memory instead of a sync.Pool of default encoders (each with a
// 16 MiB history, dropped and rebuilt across garbage collections). It
// keeps one encoder per page compressed at the same time, idle ones on a
// stack: a writer on one goroutine always takes the encoder it used last,
// whose tables are in cache (kzstd's own concurrency hands its encoders
// out in turn), and writers on several goroutines do not wait for each
// other.
type zstdCodec struct {
	newEncoder func() (*kzstd.Encoder, error)
	mu         sync.Mutex
	idle       []*kzstd.Encoder // the last one returned on top
	// dec decodes; writers never do, but compress.Codec asks for it.
	dec zstd.Codec
}

func (c *zstdCodec) String() string { return "ZSTD" }

func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	c.mu.Lock()
	var enc *kzstd.Encoder
	if n := len(c.idle); n > 0 {
		enc, c.idle = c.idle[n-1], c.idle[:n-1]
	}
	c.mu.Unlock()
	if enc == nil {
		var err error
		if enc, err = c.newEncoder(); err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
	}
	dst = enc.EncodeAll(src, dst[:0])
	c.mu.Lock()
	c.idle = append(c.idle, enc)
	c.mu.Unlock()
	return dst, nil
}

func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	return c.dec.Decode(dst, src)
}
