//go:build !linux

package paimon

import "errors"

// dirWatch is not available on this system: readers poll.
type dirWatch struct{}

func watchDir(string) (*dirWatch, error) { return nil, errors.New("directory watches need Linux") }

func (w *dirWatch) C() <-chan struct{} { return nil }

func (w *dirWatch) Close() {}
