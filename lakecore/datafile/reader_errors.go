package datafile

import "errors"

// Errors of the Parquet reader. They are wrapped with the file name and, where
// it applies, the column; test for them with errors.Is.
var (
	// ErrCorruptFile is returned when a data file is not valid Parquet: cut
	// short, a bad footer or page, or fewer values than its metadata claims.
	// Retrying does not help; the file must be repaired or dropped.
	ErrCorruptFile = errors.New("corrupt parquet data file")

	// ErrUnsupportedFile is returned for valid Parquet this reader does not
	// read: an encrypted file, or a compression codec other than
	// UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4_RAW and LZ4 (Hadoop framing).
	ErrUnsupportedFile = errors.New("unsupported parquet data file")

	// ErrSchemaMismatch is returned when a file cannot hold the columns of its
	// schema: a column has the wrong Parquet physical type or shape for its
	// Paimon type, a nested ROW field is missing, or a NOT NULL table column
	// is absent from the file.
	ErrSchemaMismatch = errors.New("parquet file does not match the data file schema")

	// ErrUnsupportedCast is returned by NewReader when a column's type in the
	// file cannot be converted to its type in the table schema (Paimon has no
	// cast rule for the pair).
	ErrUnsupportedCast = errors.New("unsupported type cast")

	// ErrCastFailed is returned by Next when a value cannot be converted to
	// the table's type, such as the string "abc" read as INT.
	ErrCastFailed = errors.New("cannot cast value")

	// ErrNullInNotNullColumn is returned by Next when a file holds NULL in a
	// column the table declares NOT NULL.
	ErrNullInNotNullColumn = errors.New("NULL in a NOT NULL column")
)
