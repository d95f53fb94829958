package datafile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// LZ4_RAW column chunks are decoded here rather than by parquet-go, whose
// v0.32.0 LZ4 codec loses a page whenever it has to allocate its own output
// buffer (any page compressed less than 3:1) and retries a damaged block
// with a doubled buffer forever. Our writer emits LZ4_RAW for
// file.compression=lz4, and pyarrow writes it too.
//
// The deprecated LZ4 codec is decoded here too: Java Paimon writes it for
// file.compression=lz4 (parquet-mr's CompressionCodecName.LZ4, Hadoop's
// Lz4Codec), which parquet-go does not read at all. Its pages carry
// Hadoop's block framing (hadoopLZ4); like Arrow
// (cpp/src/arrow/util/compression_lz4.cc, Lz4HadoopCodec), a page that is
// not a valid frame is read as one plain LZ4 block, as some older writers
// produced under that codec.
//
// The footer parquet-go parses is rewritten to declare those chunks
// UNCOMPRESSED; when a row group is read, each such chunk is loaded, its
// pages decompressed (bounded, CRC-checked) and served to parquet-go with
// rewritten page headers.

// lz4MaxRatio bounds the size an LZ4 block can decode to: n input bytes
// yield at most about 255·n output bytes.
const lz4MaxRatio = 255

// lz4SectionSize stands for the unknown decompressed size of a rewritten
// chunk in the patched footer; parquet-go only uses it to bound its reads.
const lz4SectionSize = 1 << 40

// chunkKey names a column chunk: row group and leaf column.
type chunkKey struct{ rowGroup, leaf int }

// lz4FooterView presents the file with its footer replaced by one that
// declares the LZ4_RAW and LZ4 chunks UNCOMPRESSED; it returns the view,
// its size and the original metadata of those chunks.
func lz4FooterView(tail *tailReaderAt, size int64) (io.ReaderAt, int64, map[chunkKey]format.ColumnMetaData, error) {
	footerLen := int64(binary.LittleEndian.Uint32(tail.tail[len(tail.tail)-8:]))
	start := size - 8 - footerLen
	footer := tail.tail[start-tail.off : size-8-tail.off]
	var proto thrift.CompactProtocol
	var meta format.FileMetaData
	if err := thrift.Unmarshal(&proto, footer, &meta); err != nil {
		return nil, 0, nil, fmt.Errorf("%w: footer: %v", ErrCorruptFile, err)
	}
	orig := map[chunkKey]format.ColumnMetaData{}
	for i := range meta.RowGroups {
		for j := range meta.RowGroups[i].Columns {
			md := &meta.RowGroups[i].Columns[j].MetaData
			if md.Codec == format.Lz4Raw || md.Codec == format.Lz4 {
				orig[chunkKey{i, j}] = *md
				md.Codec = format.Uncompressed
				md.TotalCompressedSize = lz4SectionSize
			}
		}
	}
	patched, err := thrift.Marshal(&proto, &meta)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("rewrite footer: %w", err)
	}
	patched = binary.LittleEndian.AppendUint32(patched, uint32(len(patched)))
	patched = append(patched, "PAR1"...)
	return &footerView{r: tail, dataEnd: start, footer: patched}, start + int64(len(patched)), orig, nil
}

// footerView is a file whose bytes from dataEnd on are footer.
type footerView struct {
	r       io.ReaderAt
	dataEnd int64
	footer  []byte
}

func (v *footerView) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < v.dataEnd {
		k := min(int64(len(p)), v.dataEnd-off)
		m, err := v.r.ReadAt(p[:k], off)
		n += m
		if m < int(k) {
			return n, err
		}
		p, off = p[k:], off+k
	}
	if len(p) == 0 {
		return n, nil
	}
	rel := off - v.dataEnd
	if rel >= int64(len(v.footer)) {
		return n, io.EOF
	}
	m := copy(p, v.footer[rel:])
	if n += m; m < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// loadLZ4Chunk reads an LZ4_RAW or LZ4 column chunk described by its
// original metadata, decompresses its pages and returns a ReaderAt over the
// chunk rewritten with uncompressed pages, at the chunk's file offset.
func loadLZ4Chunk(src io.ReaderAt, fileSize int64, md *format.ColumnMetaData) (io.ReaderAt, error) {
	base := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		base = md.DictionaryPageOffset
	}
	size := md.TotalCompressedSize
	if base < 0 || size < 0 || base > fileSize || size > fileSize-base {
		return nil, fmt.Errorf("%w: column chunk at %d of %d bytes outside the file of %d", ErrCorruptFile, base, size, fileSize)
	}
	chunk := make([]byte, size)
	if n, err := src.ReadAt(chunk, base); n != len(chunk) {
		return nil, fmt.Errorf("read column chunk: %w", err)
	}
	var proto thrift.CompactProtocol
	out := make([]byte, 0, max(md.TotalUncompressedSize, 0)+1024)
	for off := 0; off < len(chunk); {
		at := base + int64(off)
		var h format.PageHeader
		pr := proto.NewReaderFromBytes(chunk[off:])
		if err := thrift.NewDecoder(pr).Decode(&h); err != nil {
			return nil, fmt.Errorf("%w: page header at %d: %v", ErrCorruptFile, at, err)
		}
		off += pr.BytesRead()
		if h.CompressedPageSize < 0 || int(h.CompressedPageSize) > len(chunk)-off || h.UncompressedPageSize < 0 {
			return nil, fmt.Errorf("%w: page at %d: sizes %d/%d beyond the chunk", ErrCorruptFile, at, h.CompressedPageSize, h.UncompressedPageSize)
		}
		data := chunk[off : off+int(h.CompressedPageSize)]
		off += len(data)
		if h.CRC != 0 && crc32.ChecksumIEEE(data) != uint32(h.CRC) {
			return nil, fmt.Errorf("%w: page at %d: CRC mismatch", ErrCorruptFile, at)
		}
		prefix, compressed, want := 0, true, int(h.UncompressedPageSize)
		switch h.Type {
		case format.DataPage, format.DictionaryPage:
		case format.DataPageV2:
			v2 := &h.DataPageHeaderV2.V
			prefix = int(v2.RepetitionLevelsByteLength) + int(v2.DefinitionLevelsByteLength)
			if v2.RepetitionLevelsByteLength < 0 || v2.DefinitionLevelsByteLength < 0 || prefix > len(data) || prefix > want {
				return nil, fmt.Errorf("%w: page at %d: levels of %d bytes", ErrCorruptFile, at, prefix)
			}
			compressed = !v2.IsCompressed.Valid || v2.IsCompressed.V
			want -= prefix
		default:
			compressed = false // index pages are passed through
			prefix = len(data)
		}
		payload := data
		if compressed && want == 0 {
			payload = data[:prefix]
		} else if compressed {
			src := data[prefix:]
			if len(src) == 0 || want > lz4MaxRatio*len(src)+64 {
				return nil, fmt.Errorf("%w: LZ4 page at %d: %d bytes cannot decode to %d", ErrCorruptFile, at, len(src), want)
			}
			payload = make([]byte, prefix+want)
			copy(payload, data[:prefix])
			n, err := decodeLZ4Page(md.Codec, src, payload[prefix:])
			if err != nil {
				return nil, fmt.Errorf("%w: LZ4 page at %d: %v", ErrCorruptFile, at, err)
			}
			payload = payload[:prefix+n]
		}
		h.CompressedPageSize = int32(len(payload))
		h.UncompressedPageSize = int32(len(payload))
		h.CRC = 0
		header, err := thrift.Marshal(&proto, &h)
		if err != nil {
			return nil, fmt.Errorf("rewrite page header at %d: %w", at, err)
		}
		out = append(append(out, header...), payload...)
	}
	return &chunkReaderAt{base: base, data: out}, nil
}

// chunkReaderAt serves one column chunk held in memory at its file offsets.
type chunkReaderAt struct {
	base int64
	data []byte
}

func (c *chunkReaderAt) ReadAt(p []byte, off int64) (int, error) {
	rel := off - c.base
	if rel < 0 || rel >= int64(len(c.data)) {
		return 0, io.EOF
	}
	n := copy(p, c.data[rel:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// decodeLZ4Page decompresses the compressed part of one page into dst: one
// LZ4 block for LZ4_RAW; for LZ4 the Hadoop frame, or one block if the page
// is not a valid frame.
func decodeLZ4Page(codec format.CompressionCodec, src, dst []byte) (int, error) {
	if codec == format.Lz4 {
		if n, err := hadoopLZ4(src, dst); err == nil {
			return n, nil
		}
	}
	return lz4.UncompressBlock(src, dst)
}

// hadoopLZ4 decodes Hadoop's block framing (BlockCompressorStream /
// BlockDecompressorStream, which Lz4Codec uses): blocks of a 4-byte
// big-endian uncompressed length followed by chunks of a 4-byte big-endian
// compressed length and an LZ4 block, until the chunks add up to the
// uncompressed length. The blocks must fill dst exactly.
func hadoopLZ4(src, dst []byte) (int, error) {
	n := 0
	for len(src) > 0 {
		if len(src) < 4 {
			return n, fmt.Errorf("hadoop LZ4 frame: %d trailing bytes", len(src))
		}
		raw := int64(binary.BigEndian.Uint32(src))
		src = src[4:]
		if raw > int64(len(dst)-n) {
			return n, fmt.Errorf("hadoop LZ4 frame: block of %d bytes exceeds the page's %d", raw, len(dst))
		}
		end := n + int(raw)
		for n < end {
			if len(src) < 4 {
				return n, fmt.Errorf("hadoop LZ4 frame: truncated chunk length")
			}
			c := int64(binary.BigEndian.Uint32(src))
			src = src[4:]
			if c == 0 || c > int64(len(src)) {
				return n, fmt.Errorf("hadoop LZ4 frame: chunk of %d bytes with %d left", c, len(src))
			}
			m, err := lz4.UncompressBlock(src[:c], dst[n:end])
			if err != nil {
				return n, fmt.Errorf("hadoop LZ4 frame: %w", err)
			}
			if m == 0 {
				return n, fmt.Errorf("hadoop LZ4 frame: empty chunk")
			}
			n += m
			src = src[c:]
		}
	}
	if n != len(dst) {
		return n, fmt.Errorf("hadoop LZ4 frame: %d bytes, the page has %d", n, len(dst))
	}
	return n, nil
}
