package paimon

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// dirWatch signals changes to one directory (inotify). Close stops it.
type dirWatch struct {
	f    *os.File
	wake chan struct{} // cap 1: changes coalesce
	done chan struct{}
}

// watchDir watches dir for created and renamed-in files; nil, err when it
// cannot (the directory is missing, or inotify is not available).
func watchDir(dir string) (*dirWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	// A non-blocking descriptor goes through Go's poller, so that Close
	// ends the pending Read.
	w := &dirWatch{f: os.NewFile(uintptr(fd), "inotify:"+dir), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run()
	return w, nil
}

func (w *dirWatch) run() {
	defer close(w.done)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return // closed, or the watch is gone
			}
			continue
		}
		if n > 0 {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// C receives a value after a change (several changes may give one).
func (w *dirWatch) C() <-chan struct{} { return w.wake }

// Close stops the watch and waits for its goroutine.
func (w *dirWatch) Close() {
	_ = w.f.Close()
	<-w.done
}
