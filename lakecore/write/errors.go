package write

import "errors"

// ErrInvalidRow is wrapped by TableWriter.Write when a row does not fit the
// table: a wrong number of values, a value of the wrong Go type or out of
// its type's range, NULL in a NOT NULL column. The message names the field.
// The row is not written and the writer, including its open files, stays
// usable: reject the row alone and carry on.
var ErrInvalidRow = errors.New("invalid row")

// ErrWriterFailed is wrapped by TableWriter methods after a storage or
// encoding failure left a data file unusable. Abort the writer (which
// deletes what was written since the last Prepare) and write the batch
// again.
var ErrWriterFailed = errors.New("table writer failed")
