package manifest

import "errors"

// Sentinel errors. Every error of this package that a caller may branch on
// wraps one of these (test with errors.Is); the message around it names the
// file and what is wrong.
var (
	// ErrCorrupt is wrapped when bytes that claim to be an Avro container, a
	// manifest record or a deletion-vector file are malformed: bad magic,
	// truncated blocks, lengths beyond the data, checksum mismatches, values
	// of the wrong Avro type. Retrying does not help; the file is bad.
	ErrCorrupt = errors.New("corrupt manifest data")

	// ErrUnsupportedFormat is wrapped when a manifest file is not an Avro
	// object container, e.g. an ORC manifest written with
	// manifest.format=orc, which this package does not read.
	ErrUnsupportedFormat = errors.New("unsupported manifest file format")

	// ErrUnsupportedCodec is wrapped for an Avro codec this package does not
	// implement (bzip2, xz) or an unknown Codec.Name when writing.
	ErrUnsupportedCodec = errors.New("unsupported avro codec")

	// ErrUnsupportedVersion is wrapped when a record's _VERSION is not the
	// one Java writes (2 for manifests and manifest lists, 1 for index
	// manifests). Java rejects such files too ("please recreate the table").
	ErrUnsupportedVersion = errors.New("unsupported manifest format version")

	// ErrMissingField is wrapped when a field Java requires is absent from
	// the writer schema or is null in a record.
	ErrMissingField = errors.New("required manifest field missing")

	// ErrSchemaMismatch is wrapped when the writer schema gives a known field
	// an Avro type Java cannot read, e.g. a union that is not ["null", T].
	ErrSchemaMismatch = errors.New("manifest field has an unexpected avro type")

	// ErrDuplicateFile is wrapped by MergeEntries when an ADD names a file
	// that is already live (FileEntry.mergeEntries "Trying to add file ...
	// which is already in the map").
	ErrDuplicateFile = errors.New("file already added")

	// ErrCorruptTable is wrapped when the metadata of a table contradicts
	// itself in a way no reader can resolve: a manifest list or manifest
	// whose size or entry counts differ from the record that names it (cut
	// short or replaced), a snapshot that names no manifest list, a live
	// file whose partition row does not decode with the table's partition
	// keys. scan.ErrCorruptTable is the same value.
	ErrCorruptTable = errors.New("corrupt table metadata")

	// ErrUnsupportedIndex is wrapped when a deletion-vector index cannot be
	// applied: an unknown bitmap layout or an external path outside the
	// FileIO. Ignoring it would resurrect deleted rows, so reads must fail.
	ErrUnsupportedIndex = errors.New("unsupported deletion vector index")
)
