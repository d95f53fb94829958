package paimon

import (
	"context"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

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
