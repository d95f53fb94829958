package output

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// attemptCounter counts the exclusive creates of snapshot files made with a
// context that carries it: one per commit attempt of the Committer, so
// attempts beyond the first are the commit's retries. The committer does
// not report its retries, and every attempt ends in exactly one
// WriteExclusive of snapshot/snapshot-<id> (FileStoreCommitImpl.tryCommitOnce).
type attemptCounter struct{ n atomic.Int64 }

type attemptCounterKey struct{}

func withAttemptCounter(ctx context.Context, c *attemptCounter) context.Context {
	return context.WithValue(ctx, attemptCounterKey{}, c)
}

// countingFileIO is the output's FileIO: it passes every call through and
// counts snapshot creates for the attemptCounter in the call's context.
type countingFileIO struct {
	storage.FileIO
}

// WriteExclusive counts the call when it creates a snapshot file.
func (f countingFileIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if c, ok := ctx.Value(attemptCounterKey{}).(*attemptCounter); ok && strings.Contains(p, "/snapshot/snapshot-") {
		c.n.Add(1)
	}
	return f.FileIO.WriteExclusive(ctx, p, data)
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
