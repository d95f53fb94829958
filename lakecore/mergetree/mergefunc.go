package mergetree

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// ErrRetractNotAccepted is wrapped when a merge engine meets a -U or -D
// record it cannot apply (first-row, or partial-update without a delete
// option), as Java throws IllegalArgumentException while reading.
var ErrRetractNotAccepted = errors.New("retract record not accepted by the merge engine")

// ErrNullInNotNull is wrapped when a merge would put NULL into a NOT NULL
// column (PartialUpdateMergeFunction: "Field i can not be null").
var ErrNullInNotNull = errors.New("null value in a NOT NULL column")

// MergeFunction folds the records of one key, given in merge order, into
// its merged record (MergeFunction.java). Reset starts a key; Result may
// return nil, meaning the key has no row.
type MergeFunction interface {
	Reset()
	Add(r *KeyValue) error
	Result() (*KeyValue, error)
}

// Reducer is ReducerMergeFunctionWrapper: a key with a single record is
// returned as it is, without calling the merge function; only keys with
// two or more records are merged.
type Reducer struct {
	fn      MergeFunction
	initial *KeyValue
	merged  bool
}

// NewReducer wraps fn.
func NewReducer(fn MergeFunction) *Reducer { return &Reducer{fn: fn} }

// Reset starts a new key.
func (r *Reducer) Reset() {
	r.initial, r.merged = nil, false
	r.fn.Reset()
}

// Add adds the next record of the key.
func (r *Reducer) Add(kv *KeyValue) error {
	if r.initial == nil {
		r.initial = kv
		return nil
	}
	if !r.merged {
		r.merged = true
		if err := r.fn.Add(r.initial); err != nil {
			return err
		}
	}
	return r.fn.Add(kv)
}

// Result returns the key's record, nil if it has none.
func (r *Reducer) Result() (*KeyValue, error) {
	if r.merged {
		return r.fn.Result()
	}
	return r.initial, nil
}

// Deduplicate keeps the last record of a key (DeduplicateMergeFunction);
// with IgnoreDelete, -U and -D records are skipped.
type Deduplicate struct {
	IgnoreDelete bool
	latest       *KeyValue
}

// Reset implements MergeFunction.
func (d *Deduplicate) Reset() { d.latest = nil }

// Add implements MergeFunction.
func (d *Deduplicate) Add(r *KeyValue) error {
	if d.IgnoreDelete && r.Kind.IsRetract() {
		return nil
	}
	d.latest = r
	return nil
}

// Result implements MergeFunction.
func (d *Deduplicate) Result() (*KeyValue, error) { return d.latest, nil }

// FirstRow keeps the first record of a key (FirstRowMergeFunction); a -U
// or -D fails with ErrRetractNotAccepted unless IgnoreDelete skips it.
type FirstRow struct {
	IgnoreDelete bool
	first        *KeyValue
}

// Reset implements MergeFunction.
func (f *FirstRow) Reset() { f.first = nil }

// Add implements MergeFunction.
func (f *FirstRow) Add(r *KeyValue) error {
	if r.Kind.IsRetract() {
		if f.IgnoreDelete {
			return nil
		}
		return fmt.Errorf("%w: merge-engine first-row got a %s record; set 'ignore-delete' to ignore DELETE and UPDATE_BEFORE records", ErrRetractNotAccepted, r.Kind)
	}
	if f.first == nil {
		f.first = r
	}
	return nil
}

// Result implements MergeFunction.
func (f *FirstRow) Result() (*KeyValue, error) { return f.first, nil }

// DropDelete reports whether a merged record is dropped from the output
// of a read: every kind but +I and +U (DropDeleteReader).
func DropDelete(r *KeyValue) bool { return r.Kind != kv.Insert && r.Kind != kv.UpdateAfter }

// Lookup is LookupMergeFunction, which Java puts around the merge engine
// of tables that use lookup (changelog-producer lookup, deletion vectors,
// force-lookup; first-row excepted): each compaction of such a table
// merges level-0 records into the record of the highest level that holds
// the key, so of the records above level 0 only the one on the smallest
// level is current; the others are older states, not deltas. The result
// merges the level-0 records with that one.
type Lookup struct {
	Inner      MergeFunction
	candidates []*KeyValue
}

// Reset implements MergeFunction.
func (l *Lookup) Reset() { l.candidates = l.candidates[:0] }

// Add implements MergeFunction.
func (l *Lookup) Add(r *KeyValue) error {
	l.candidates = append(l.candidates, r)
	return nil
}

// HighLevel returns the record of the smallest level above 0 among the
// key's records, nil if all are on level 0 (LookupMergeFunction.pickHighLevel).
func (l *Lookup) HighLevel() *KeyValue {
	var high *KeyValue
	for _, r := range l.candidates {
		if r.Level > 0 && (high == nil || r.Level < high.Level) {
			high = r
		}
	}
	return high
}

// ContainsLevel0 reports whether a record of the key came from level 0.
func (l *Lookup) ContainsLevel0() bool {
	for _, r := range l.candidates {
		if r.Level == 0 {
			return true
		}
	}
	return false
}

// InsertHighLevel adds a record found above the compacted levels to the
// key's records, before the first record that seq orders after it
// (KeyValueBuffer.insertInto with the sequence comparator of
// LookupChangelogMergeFunctionWrapper: sequence.field, then sequence
// number).
func (l *Lookup) InsertHighLevel(high *KeyValue, seq kv.Comparator) {
	at := len(l.candidates)
	for i, r := range l.candidates {
		c := seq.Compare(high.Value, r.Value)
		if c == 0 {
			c = cmp.Compare(high.Seq, r.Seq)
		}
		if c < 0 {
			at = i
			break
		}
	}
	l.candidates = slices.Insert(l.candidates, at, high)
}

// Result implements MergeFunction.
func (l *Lookup) Result() (*KeyValue, error) {
	l.Inner.Reset()
	high := l.HighLevel()
	for _, r := range l.candidates {
		if r.Level <= 0 || r == high {
			if err := l.Inner.Add(r); err != nil {
				return nil, err
			}
		}
	}
	return l.Inner.Result()
}
