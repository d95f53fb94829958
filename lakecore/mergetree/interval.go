package mergetree

import (
	"container/heap"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// File is a data file as the merge tree sees it: its key range (decoded
// _MIN_KEY and _MAX_KEY) and an index back to the caller's file list.
type File struct {
	MinKey, MaxKey []any
	Index          int
}

// SortedRun is files whose key ranges do not overlap, in key order.
type SortedRun []File

// IntervalPartition cuts files into sections whose key ranges do not
// overlap, in key order, and packs the files of each section into as few
// sorted runs as the greedy rule of IntervalPartition.java gives: files
// sorted by (min key, max key); a new section starts at a file whose min
// key is above every max key so far; within a section a file joins the run
// whose last max key is the smallest, if that is below the file's min key,
// else it opens a new run. Levels play no part: only key ranges do.
func IntervalPartition(files []File) [][]SortedRun {
	fs := slices.Clone(files)
	slices.SortStableFunc(fs, func(a, b File) int {
		if r := kv.CompareKeys(a.MinKey, b.MinKey); r != 0 {
			return r
		}
		return kv.CompareKeys(a.MaxKey, b.MaxKey)
	})
	var out [][]SortedRun
	start := 0
	var bound []any
	for i := range fs {
		if i > start && kv.CompareKeys(fs[i].MinKey, bound) > 0 {
			out = append(out, partitionSection(fs[start:i]))
			start, bound = i, nil
		}
		if bound == nil || kv.CompareKeys(fs[i].MaxKey, bound) > 0 {
			bound = fs[i].MaxKey
		}
	}
	if start < len(fs) {
		out = append(out, partitionSection(fs[start:]))
	}
	return out
}

// runHeap orders runs by the max key of their last file.
type runHeap []SortedRun

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	return kv.CompareKeys(h[i][len(h[i])-1].MaxKey, h[j][len(h[j])-1].MaxKey) < 0
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(SortedRun)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func partitionSection(files []File) []SortedRun {
	h := runHeap{SortedRun{files[0]}}
	for _, f := range files[1:] {
		top := heap.Pop(&h).(SortedRun)
		if kv.CompareKeys(f.MinKey, top[len(top)-1].MaxKey) > 0 {
			top = append(top, f)
		} else {
			heap.Push(&h, SortedRun{f})
		}
		heap.Push(&h, top)
	}
	// Java returns the queue's array order; the order of runs does not
	// change the merge result, so sort for determinism.
	runs := []SortedRun(h)
	slices.SortFunc(runs, func(a, b SortedRun) int { return kv.CompareKeys(a[0].MinKey, b[0].MinKey) })
	return runs
}
