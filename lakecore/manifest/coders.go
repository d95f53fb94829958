package manifest

import (
	"context"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// decoderSchemaMax bounds the writer schemas a Decoder keeps beyond
// javaSchemas, so that arbitrary inputs (fuzzing, corrupt files) cannot
// grow it without limit. A table's files use one to three.
const decoderSchemaMax = 64

// Decoder decodes manifest lists, manifests and index manifests, keeping
// what repeats from file to file: the writer schemas it has parsed (the
// files of a table share a few, and parsing dominates decoding a small
// file) and a zstd decoder (costly to build). Code that reads many files,
// such as a scan planner or a committer, keeps one for its lifetime; the
// package-level functions use a new one per call.
//
// A Decoder is safe for concurrent use. The zero value is ready to use.
type Decoder struct {
	mu      sync.Mutex
	schemas map[string]*node
	zstd    *zstd.Decoder
}

// NewDecoder returns a Decoder with nothing kept yet.
func NewDecoder() *Decoder { return &Decoder{} }

// schema returns the parsed writer schema of text.
func (d *Decoder) schema(text string) (*node, error) {
	if n, ok := javaSchemas[text]; ok {
		return n, nil
	}
	d.mu.Lock()
	n, ok := d.schemas[text]
	d.mu.Unlock()
	if ok {
		return n, nil
	}
	n, err := parseSchema(text)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if d.schemas == nil {
		d.schemas = map[string]*node{}
	}
	if len(d.schemas) < decoderSchemaMax {
		d.schemas[text] = n
	}
	d.mu.Unlock()
	return n, nil
}

// zstdDecoder returns the Decoder's zstd decoder, built on first use.
// DecodeAll is safe for concurrent use.
func (d *Decoder) zstdDecoder() (*zstd.Decoder, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.zstd == nil {
		z, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxBlockSize), zstd.WithDecoderConcurrency(0))
		if err != nil {
			return nil, err
		}
		d.zstd = z
	}
	return d.zstd, nil
}

// DecodeEntries decodes a manifest file (an Avro object container of
// ManifestEntry records) by field name against its writer schema, accepting
// both the current plain-record layout and the union-wrapped layout of Paimon
// <= 0.8 / early 0.9. Unknown fields are skipped, missing optional fields are
// nil; a missing required field wraps ErrMissingField, a _VERSION other than 2
// ErrUnsupportedVersion, an ORC file ErrUnsupportedFormat, and malformed bytes
// ErrCorrupt.
func (d *Decoder) DecodeEntries(data []byte) ([]Entry, error) {
	return decodeAll(d, data, "manifest", decodeEntry)
}

// DecodeFileMetas decodes a manifest list by field name against its writer
// schema (plain or union-wrapped records of any Paimon version). Errors wrap
// the same sentinels as DecodeEntries.
func (d *Decoder) DecodeFileMetas(data []byte) ([]FileMeta, error) {
	return decodeAll(d, data, "manifest list", decodeFileMeta)
}

// DecodeIndexEntries decodes an index manifest by field name against its
// writer schema (0.9's union-wrapped layout and 1.4+'s plain one). _VERSION
// must be 1. Errors wrap the same sentinels as DecodeEntries.
func (d *Decoder) DecodeIndexEntries(data []byte) ([]IndexEntry, error) {
	return decodeAll(d, data, "index manifest", decodeIndexEntry)
}

// ReadIndexEntries reads and decodes the index manifest manifest/<fileName>.
func (d *Decoder) ReadIndexEntries(ctx context.Context, fio storage.FileIO, tablePath, fileName string) ([]IndexEntry, error) {
	return readManifestFile(ctx, fio, tablePath, fileName, "index manifest", d.DecodeIndexEntries)
}

// DecodeEntries is Decoder.DecodeEntries with a new Decoder.
func DecodeEntries(data []byte) ([]Entry, error) { return new(Decoder).DecodeEntries(data) }

// DecodeFileMetas is Decoder.DecodeFileMetas with a new Decoder.
func DecodeFileMetas(data []byte) ([]FileMeta, error) { return new(Decoder).DecodeFileMetas(data) }

// DecodeIndexEntries is Decoder.DecodeIndexEntries with a new Decoder.
func DecodeIndexEntries(data []byte) ([]IndexEntry, error) {
	return new(Decoder).DecodeIndexEntries(data)
}

// ReadEntries reads and decodes manifest/<fileName> of the table at
// tablePath (relative to fio's root), checking nothing against a manifest
// list: for tools and tests that look at one file by name. lakecore reads
// manifests through Reader. Errors name the file; a missing file wraps
// storage.ErrNotExist.
func ReadEntries(ctx context.Context, fio storage.FileIO, tablePath, fileName string) ([]Entry, error) {
	return readManifestFile(ctx, fio, tablePath, fileName, "manifest", new(Decoder).DecodeEntries)
}

// ReadFileMetas reads and decodes the manifest list manifest/<fileName>,
// checking nothing against a snapshot (see ReadEntries; lakecore reads
// through Reader).
func ReadFileMetas(ctx context.Context, fio storage.FileIO, tablePath, fileName string) ([]FileMeta, error) {
	return readManifestFile(ctx, fio, tablePath, fileName, "manifest list", new(Decoder).DecodeFileMetas)
}

// ReadIndexEntries is Decoder.ReadIndexEntries with a new Decoder.
func ReadIndexEntries(ctx context.Context, fio storage.FileIO, tablePath, fileName string) ([]IndexEntry, error) {
	return new(Decoder).ReadIndexEntries(ctx, fio, tablePath, fileName)
}

// Encoder writes manifest lists, manifests and index manifests with one
// Codec, keeping its zstd encoder (costly to build) from file to file. A
// committer keeps one for its lifetime; the package-level functions use a
// new one per call.
//
// An Encoder is safe for concurrent use; concurrent zstd compressions take
// turns.
type Encoder struct {
	codec Codec
	mu    sync.Mutex
	zstd  *zstd.Encoder
}

// NewEncoder returns an Encoder for codec c. An unknown codec name fails
// each encode with ErrUnsupportedCodec.
func NewEncoder(c Codec) *Encoder { return &Encoder{codec: c} }

// Codec returns the Encoder's codec.
func (e *Encoder) Codec() Codec { return e.codec }

// zstdEncoder returns the Encoder's zstd encoder at its codec's level,
// built on first use.
func (e *Encoder) zstdEncoder() (*zstd.Encoder, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.zstd == nil {
		level := e.codec.ZstdLevel
		if level == 0 {
			level = 1
		}
		// Avro's ZstandardCodec writes frames without a content checksum.
		// One compression at a time keeps one set of encoder tables.
		z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)), zstd.WithEncoderCRC(false),
			zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return nil, err
		}
		e.zstd = z
	}
	return e.zstd, nil
}

// EncodeEntries is Encoder.EncodeEntries with a new Encoder for c.
func EncodeEntries(entries []Entry, c Codec) ([]byte, error) {
	return NewEncoder(c).EncodeEntries(entries)
}

// EncodeFileMetas is Encoder.EncodeFileMetas with a new Encoder for c.
func EncodeFileMetas(metas []FileMeta, c Codec) ([]byte, error) {
	return NewEncoder(c).EncodeFileMetas(metas)
}

// EncodeIndexEntries is Encoder.EncodeIndexEntries with a new Encoder for c.
func EncodeIndexEntries(entries []IndexEntry, c Codec) ([]byte, error) {
	return NewEncoder(c).EncodeIndexEntries(entries)
}

// WriteManifestList is Encoder.WriteManifestList with a new Encoder for c.
func WriteManifestList(ctx context.Context, fio storage.FileIO, tablePath string, metas []FileMeta, c Codec) (name string, size int64, err error) {
	return NewEncoder(c).WriteManifestList(ctx, fio, tablePath, metas)
}

// WriteManifest is Encoder.WriteManifest with a new Encoder for c.
func WriteManifest(ctx context.Context, fio storage.FileIO, tablePath string, entries []Entry, partitionTypes []types.DataType,
	schemaID int64, c Codec) (FileMeta, error) {
	return NewEncoder(c).WriteManifest(ctx, fio, tablePath, entries, partitionTypes, schemaID)
}
