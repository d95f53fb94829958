package scan

import (
	"errors"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
)

// Sentinel errors of the package; test with errors.Is. Errors about files
// on storage also wrap the error of the package that read them (for example
// manifest.ErrCorrupt, or manifest.ErrUnsupportedFormat for ORC manifests)
// and name the file.
var (
	// ErrSnapshotExpired is returned by StreamScanner.Next when the next
	// snapshot a stream must read was already expired (deleted) by snapshot
	// expiration: reading on would silently skip data. Restart the stream
	// from a retained snapshot, or set StreamOptions.OnExpired to
	// "earliest" to accept the gap. The message is Java's
	// (NextSnapshotFetcher.rangeCheck).
	ErrSnapshotExpired = errors.New("snapshot expired")

	// ErrSnapshotTooBig is returned by StreamScanner.Next when the stream's
	// next snapshot is beyond latest+1: the table was most likely dropped
	// and recreated under the same name, so the consumer position belongs
	// to another table.
	ErrSnapshotTooBig = errors.New("next expected snapshot is too big")

	// ErrEndOfScan is returned by a bounded StreamScanner once it has
	// returned the plans of every snapshot up to the latest one that existed
	// when it started.
	ErrEndOfScan = errors.New("end of bounded scan")

	// ErrInvalidFilter is wrapped when a partition predicate does not fit
	// the table: bound to other partition keys. It is
	// partition.ErrInvalidFilter.
	ErrInvalidFilter = partition.ErrInvalidFilter

	// ErrInvalidOptions is wrapped by StreamScanner.Next for StreamOptions
	// that cannot start a stream (an unknown mode, a missing snapshot id).
	ErrInvalidOptions = errors.New("invalid stream options")

	// ErrUnsupportedFiles is wrapped by a streaming plan that would have to
	// emit files lakecore cannot read: the Avro files of a postpone-bucket
	// table (bucket = -2), which Java streams raw before its compaction job
	// moves them into real buckets. Batch plans leave them out, as Java's do.
	ErrUnsupportedFiles = errors.New("streaming plan holds files lakecore cannot read")

	// ErrCorruptTable is wrapped when the metadata of a table contradicts
	// itself in a way no reader can resolve, such as a manifest cut short
	// or a live data file whose partition row cannot be decoded with the
	// table's partition keys. It is manifest.ErrCorruptTable, which the
	// manifest reader wraps.
	ErrCorruptTable = manifest.ErrCorruptTable
)
