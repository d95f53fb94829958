package mergetree

import (
	"fmt"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
)

// FieldAggregator is one column's aggregate function (FieldAggregator.java),
// as package aggregate implements them.
type FieldAggregator interface {
	Agg(acc, in any) (any, error)
	AggReversed(acc, in any) (any, error)
	Retract(acc, in any) (any, error)
	Reset()
}

// SequenceGroup is one fields.<seq...>.sequence-group option: the
// sequence columns that order the group and the columns they protect.
type SequenceGroup struct {
	// Order compares the group's sequence columns (ascending, NULL first).
	Order kv.Comparator
}

// PartialUpdate is PartialUpdateMergeFunction: each +I/+U record of a key
// updates the columns it sets (non-null), in merge order; columns in a
// sequence group are updated only by records whose group sequence is not
// older; -U/-D records are ignored (IgnoreDelete), delete the row
// (RemoveRecordOnDelete, or a -D in a group of PartialDelete) or retract
// their group's columns (sequence groups); otherwise they fail with
// ErrRetractNotAccepted.
type PartialUpdate struct {
	// Nullable tells, per column, whether it may hold NULL.
	Nullable             []bool
	IgnoreDelete         bool
	RemoveRecordOnDelete bool
	// Groups maps a column index to the sequence group that orders it; the
	// group's own sequence columns map to it too. Nil without groups.
	Groups map[int]*SequenceGroup
	// Aggregators maps a column index to its aggregate function
	// (fields.<f>.aggregate-function inside a sequence group).
	Aggregators map[int]FieldAggregator
	// PartialDelete holds the sequence columns of
	// partial-update.remove-record-on-sequence-group.
	PartialDelete map[int]bool

	row                 []any
	latestSeq           int64
	meetInsert          bool
	notNullColumnFilled bool
	deleteRow           bool
	last                *KeyValue
}

// Reset implements MergeFunction.
func (p *PartialUpdate) Reset() {
	p.row = make([]any, len(p.Nullable))
	p.latestSeq, p.meetInsert, p.notNullColumnFilled, p.deleteRow, p.last = 0, false, false, false, nil
	for _, a := range p.Aggregators {
		a.Reset()
	}
}

// Add implements MergeFunction.
func (p *PartialUpdate) Add(r *KeyValue) error {
	p.last = r
	p.deleteRow = false
	if r.Kind.IsRetract() {
		if !p.notNullColumnFilled {
			if err := p.initRow(r.Value); err != nil {
				return err
			}
			p.notNullColumnFilled = true
		}
		if p.IgnoreDelete {
			return nil
		}
		p.latestSeq = r.Seq
		if len(p.Groups) > 0 {
			return p.retractWithSequenceGroup(r)
		}
		if p.RemoveRecordOnDelete {
			if r.Kind == kv.Delete {
				p.deleteRow = true
				p.row = make([]any, len(p.Nullable))
				return p.initRow(r.Value)
			}
			return nil
		}
		return fmt.Errorf("%w: merge-engine partial-update got a %s record; set 'ignore-delete', 'partial-update.remove-record-on-delete' or sequence groups ('fields.<seq>.sequence-group') to accept deletes",
			ErrRetractNotAccepted, r.Kind)
	}
	p.latestSeq = r.Seq
	var err error
	if len(p.Groups) == 0 {
		err = p.updateNonNullFields(r.Value)
	} else {
		err = p.updateWithSequenceGroup(r.Value)
	}
	if err != nil {
		return err
	}
	p.meetInsert, p.notNullColumnFilled = true, true
	return nil
}

func (p *PartialUpdate) initRow(v []any) error {
	for i := range p.row {
		if v[i] == nil && !p.Nullable[i] {
			return fmt.Errorf("%w: column %d", ErrNullInNotNull, i)
		}
		p.row[i] = v[i]
	}
	return nil
}

func (p *PartialUpdate) updateNonNullFields(v []any) error {
	for i := range p.row {
		if v[i] != nil {
			p.row[i] = v[i]
		} else if !p.Nullable[i] {
			return fmt.Errorf("%w: column %d", ErrNullInNotNull, i)
		}
	}
	return nil
}

// emptyGroup reports whether every sequence column of g is NULL in v,
// remembering the answer per group for this record.
func emptyGroup(v []any, g *SequenceGroup, empty map[*SequenceGroup]bool) bool {
	if e, ok := empty[g]; ok {
		return e
	}
	e := true
	for _, i := range g.Order.Fields {
		if v[i] != nil {
			e = false
			break
		}
	}
	empty[g] = e
	return e
}

func (p *PartialUpdate) updateWithSequenceGroup(v []any) error {
	empty := map[*SequenceGroup]bool{}
	for i := range p.row {
		g := p.Groups[i]
		agg := p.Aggregators[i]
		acc := p.row[i]
		if g == nil {
			if agg != nil {
				x, err := agg.Agg(acc, v[i])
				if err != nil {
					return err
				}
				p.row[i] = x
			} else if v[i] != nil {
				p.row[i] = v[i]
			}
			continue
		}
		if emptyGroup(v, g, empty) {
			continue
		}
		if g.Order.Compare(v, p.row) >= 0 {
			if slices.Contains(g.Order.Fields, i) {
				// The group's sequence columns are updated together.
				for _, j := range g.Order.Fields {
					p.row[j] = v[j]
				}
				continue
			}
			if agg == nil {
				p.row[i] = v[i]
			} else {
				x, err := agg.Agg(acc, v[i])
				if err != nil {
					return err
				}
				p.row[i] = x
			}
		} else if agg != nil {
			x, err := agg.AggReversed(acc, v[i])
			if err != nil {
				return err
			}
			p.row[i] = x
		}
	}
	return nil
}

func (p *PartialUpdate) retractWithSequenceGroup(r *KeyValue) error {
	v := r.Value
	updated := map[int]bool{}
	empty := map[*SequenceGroup]bool{}
	for i := range p.row {
		g := p.Groups[i]
		if g == nil {
			continue
		}
		agg := p.Aggregators[i]
		if emptyGroup(v, g, empty) {
			continue
		}
		if g.Order.Compare(v, p.row) >= 0 {
			if slices.Contains(g.Order.Fields, i) {
				for _, j := range g.Order.Fields {
					if updated[j] {
						continue
					}
					if r.Kind == kv.Delete && p.PartialDelete[j] {
						p.deleteRow = true
						p.row = make([]any, len(p.Nullable))
						return p.initRow(v)
					}
					p.row[j] = v[j]
					updated[j] = true
				}
			} else if agg == nil {
				p.row[i] = nil
			} else {
				x, err := agg.Retract(p.row[i], v[i])
				if err != nil {
					return err
				}
				p.row[i] = x
			}
		} else if agg != nil {
			x, err := agg.Retract(p.row[i], v[i])
			if err != nil {
				return err
			}
			p.row[i] = x
		}
	}
	return nil
}

// Result implements MergeFunction.
func (p *PartialUpdate) Result() (*KeyValue, error) {
	kind := kv.Insert
	if p.deleteRow || !p.meetInsert {
		kind = kv.Delete
	}
	var level int32
	if p.last != nil {
		level = p.last.Level
	}
	return &KeyValue{Value: p.row, Seq: p.latestSeq, Kind: kind, Level: level}, nil
}
