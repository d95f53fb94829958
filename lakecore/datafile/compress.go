package datafile

import (
	"fmt"
	"strings"

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
// each. Its zstd encoder compresses one page at a time; writers sharing it
// from several goroutines take turns.
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
		enc, err := kzstd.NewWriter(nil,
			kzstd.WithEncoderLevel(kzstd.EncoderLevelFromZstd(zstdLevel)),
			kzstd.WithEncoderConcurrency(1),
			kzstd.WithWindowSize(zstdWindowSize),
			kzstd.WithLowerEncoderMem(true),
			// As parquet-go's zstd codec: an empty page is still a frame,
			// and no frame checksum (the page header has a CRC field).
			kzstd.WithZeroFrames(true),
			kzstd.WithEncoderCRC(false),
		)
		if err != nil {
			return nil, fmt.Errorf("%w: zstd level %d: %w", ErrInvalidWriterOptions, zstdLevel, err)
		}
		return &Compressor{codec: &zstdCodec{enc: enc}}, nil
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

// zstdCodec is parquet-go's zstd codec with one long-lived encoder of
// bounded memory instead of a sync.Pool of default encoders (each with a
// 16 MiB history, dropped and rebuilt across garbage collections).
type zstdCodec struct {
	// enc is safe for concurrent EncodeAll calls; with concurrency 1 they
	// run one at a time.
	enc *kzstd.Encoder
	// dec decodes; writers never do, but compress.Codec asks for it.
	dec zstd.Codec
}

func (c *zstdCodec) String() string { return "ZSTD" }

func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	return c.enc.EncodeAll(src, dst[:0]), nil
}

func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	return c.dec.Decode(dst, src)
}
