package schema

import (
	"errors"
	"fmt"
)

var (
	// ErrTableNotFound is returned (wrapped) by Manager.Latest and
	// Manager.AddColumns when the table has no schema file.
	ErrTableNotFound = errors.New("table not found")

	// ErrTableExists is returned (wrapped) by Manager.Create when a schema
	// already exists, including when another writer created schema-0 first.
	ErrTableExists = errors.New("table already exists")

	// ErrSchemaExists is returned (wrapped) by Manager.Commit when
	// schema-<id> was taken by another writer; re-read the latest schema and
	// retry. It also wraps storage.ErrExist.
	ErrSchemaExists = errors.New("schema already exists")

	// ErrSchemaNotFound is returned (wrapped) by Manager.Get for a missing
	// schema-<id>.
	ErrSchemaNotFound = errors.New("schema not found")

	// ErrInvalidSchema is wrapped by every error about a malformed schema
	// file or a schema that fails validation (SchemaValidation in Java).
	ErrInvalidSchema = errors.New("invalid table schema")

	// ErrInvalidOption is wrapped by errors about a table option whose value
	// cannot be parsed or is not allowed. It wraps ErrInvalidSchema, since
	// options are part of the schema.
	ErrInvalidOption = fmt.Errorf("%w: invalid table option", ErrInvalidSchema)

	// ErrUnknownOption is wrapped by CheckOptionNames for an option name
	// that Paimon does not define (a misspelling Paimon would store and
	// ignore). A schema file with such an option is still valid.
	ErrUnknownOption = errors.New("unknown table option")

	// ErrPrimaryKeyTable is wrapped for an operation lakecore does not
	// support on a table with primary keys (lakecore reads, writes,
	// compacts and maintains them, but not through the append writer).
	ErrPrimaryKeyTable = errors.New("primary-key tables are not supported")

	// ErrUnsupported is returned (wrapped) by CheckWritable and CheckReadable
	// for a valid Paimon table that uses a feature lakecore does not
	// implement (ORC data files, ORC manifests, other bucket functions, ...).
	ErrUnsupported = errors.New("unsupported table feature")
)
