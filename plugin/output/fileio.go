package output

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// attemptCounter counts the failed exclusive creates of snapshot files
// made with a context that carries it. Every attempt of the Committer ends
// in one WriteExclusive of snapshot/snapshot-<id>
// (FileStoreCommitImpl.tryCommitOnce); when it fails (another writer took
// the id, or storage failed) the Committer retries, after looking for its
// own snapshot if the outcome was unknown. The Committer does not report
// its retries itself, so this is how the output counts them.
type attemptCounter struct{ failed atomic.Int64 }

type attemptCounterKey struct{}

func withAttemptCounter(ctx context.Context, c *attemptCounter) context.Context {
	return context.WithValue(ctx, attemptCounterKey{}, c)
}

// countingFileIO is the output's FileIO: it passes every call through and
// counts failed snapshot creates for the attemptCounter in the call's
// context.
type countingFileIO struct {
	storage.FileIO
}

// WriteExclusive counts the call when it fails to create a snapshot file.
func (f countingFileIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	err := f.FileIO.WriteExclusive(ctx, p, data)
	if err != nil && strings.Contains(p, "/snapshot/snapshot-") {
		if c, ok := ctx.Value(attemptCounterKey{}).(*attemptCounter); ok {
			c.failed.Add(1)
		}
	}
	return err
}

// recordingFileIO remembers the path of every file a batch's TableWriter
// creates, so that the data files of a batch whose commit definitely failed
// can be deleted (TableWriter.Abort only covers files not yet prepared).
type recordingFileIO struct {
	storage.FileIO

	mu    sync.Mutex
	paths []string
}

// Create records p and creates it.
func (f *recordingFileIO) Create(ctx context.Context, p string) (storage.Writer, error) {
	f.mu.Lock()
	f.paths = append(f.paths, p)
	f.mu.Unlock()
	return f.FileIO.Create(ctx, p)
}

// created returns the paths created so far.
func (f *recordingFileIO) created() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}
