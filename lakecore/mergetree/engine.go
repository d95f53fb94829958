package mergetree

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree/aggregate"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// ErrUnsupportedOption is wrapped for a table option of a primary-key
// table that lakecore cannot honour while reading; reading on would give a
// different result than Java.
var ErrUnsupportedOption = errors.New("unsupported primary-key table option")

// The merge engines (merge-engine).
const (
	EngineDeduplicate   = "deduplicate"
	EnginePartialUpdate = "partial-update"
	EngineAggregation   = "aggregation"
	EngineFirstRow      = "first-row"
)

// Engine is how the records of a primary-key table merge: the record
// order and a factory of merge functions, built from the table's schema
// and options as PrimaryKeyTableUtils.createMergeFunctionFactory does.
type Engine struct {
	Mode
	// Order is the merge order of records.
	Order RecordOrder

	newFn func() (MergeFunction, error)
}

// Mode is what a primary-key table's options say about how it is merged
// and read, without its schema: the options readers, planners and writers
// all branch on.
type Mode struct {
	// Name is the merge-engine option's value.
	Name string
	// DeletionVectors is deletion-vectors.enabled.
	DeletionVectors bool
	// ChangelogProducer is changelog-producer: none, input, lookup or
	// full-compaction.
	ChangelogProducer string
	// IgnoreDelete is ignore-delete (or its fallback keys first-row.,
	// deduplicate. and partial-update.ignore-delete); IgnoreUpdateBefore
	// is ignore-update-before.
	IgnoreDelete, IgnoreUpdateBefore bool
}

// ParseMode reads the Mode of a primary-key table's options. A value that
// does not parse wraps schema.ErrInvalidOption.
func ParseMode(opts map[string]string) (Mode, error) {
	m := Mode{Name: EngineDeduplicate, ChangelogProducer: "none"}
	if v, ok := opts["merge-engine"]; ok {
		m.Name = strings.ToLower(strings.TrimSpace(v))
	}
	if v, ok := opts["changelog-producer"]; ok {
		m.ChangelogProducer = strings.ToLower(strings.TrimSpace(v))
	}
	switch m.ChangelogProducer {
	case "none", "input", "lookup", "full-compaction":
	default:
		return m, fmt.Errorf("%w: changelog-producer = %q (want none, input, lookup or full-compaction)", schema.ErrInvalidOption, opts["changelog-producer"])
	}
	var err error
	if m.DeletionVectors, err = boolOption(opts, "deletion-vectors.enabled"); err != nil {
		return m, err
	}
	if m.IgnoreDelete, err = boolOption(opts, "ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete", "partial-update.ignore-delete"); err != nil {
		return m, err
	}
	if m.IgnoreUpdateBefore, err = boolOption(opts, "ignore-update-before"); err != nil {
		return m, err
	}
	return m, nil
}

// NewMergeFunction returns a fresh merge function of the engine.
func (e *Engine) NewMergeFunction() (MergeFunction, error) { return e.newFn() }

// SkipLevel0 reports whether batch reads leave out level-0 files, as
// CoreOptions.batchScanSkipLevel0 does: with deletion vectors or first-row
// those files are visible only once compacted.
func (m Mode) SkipLevel0() bool { return m.DeletionVectors || m.Name == EngineFirstRow }

// boolOption parses a boolean option as Java does (case-insensitive true
// or false); the first key present of keys wins.
func boolOption(opts map[string]string, keys ...string) (bool, error) {
	for _, k := range keys {
		if v, ok := opts[k]; ok {
			b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(v)))
			if err != nil || (strings.ToLower(strings.TrimSpace(v)) != "true" && strings.ToLower(strings.TrimSpace(v)) != "false") {
				return false, fmt.Errorf("%w: option %s = %q is not a boolean", schema.ErrInvalidOption, k, v)
			}
			return b, nil
		}
	}
	return false, nil
}

// splitList splits a comma-separated option value, trimming blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// unsupportedReadOptions are options that change what a read returns and
// that lakecore does not implement; each is refused when set to a value
// other than the harmless one.
var unsupportedReadOptions = []struct{ key, harmless, why string }{
	{"sequence.snapshot-ordering", "false", "records would be ordered by snapshot id (Paimon 2.0)"},
	{"deletion-vectors.merge-on-read", "false", "level-0 files would be merged with deletion vectors (Paimon 2.0)"},
	{"chain-table.enabled", "false", "chain tables keep deletes"},
	{"pk-clustering-override", "false", "clustered primary-key tables are read differently"},
	{"record-level.expire-time", "", "expired records would be dropped"},
}

// NewEngine returns the merge engine of table schema s, read as fields
// (the schema the rows are read as, normally s.Fields). Options lakecore
// cannot honour wrap ErrUnsupportedOption, naming the option; aggregate
// functions it cannot compute wrap aggregate.ErrUnsupportedFunction.
func NewEngine(s *schema.TableSchema, fields []types.DataField) (*Engine, error) {
	opts := s.Options
	for _, u := range unsupportedReadOptions {
		if v, ok := opts[u.key]; ok && strings.TrimSpace(strings.ToLower(v)) != u.harmless {
			return nil, fmt.Errorf("%w: %s = %q: %s", ErrUnsupportedOption, u.key, v, u.why)
		}
	}
	trimmed, err := kv.TrimmedPrimaryKeys(s.PrimaryKeys, s.PartitionKeys)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", schema.ErrInvalidSchema, err)
	}
	keyIdx, err := kv.FieldIndexes(fields, trimmed)
	if err != nil {
		return nil, fmt.Errorf("%w: primary key: %w", schema.ErrInvalidSchema, err)
	}
	for _, i := range keyIdx {
		if err := kv.CheckKeyType(fields[i].Name, fields[i].Type); err != nil {
			return nil, fmt.Errorf("%w: %w", schema.ErrInvalidSchema, err)
		}
	}
	mode, err := ParseMode(opts)
	if err != nil {
		return nil, err
	}
	e := &Engine{Mode: mode}
	e.Order.KeyFields = keyIdx
	seqFields := splitList(opts["sequence.field"])
	if len(seqFields) > 0 {
		idx, err := kv.FieldIndexes(fields, seqFields)
		if err != nil {
			return nil, fmt.Errorf("%w: sequence.field: %w", schema.ErrInvalidOption, err)
		}
		e.Order.Sequence.Fields = idx
		switch order := strings.ToLower(strings.TrimSpace(opts["sequence.field.sort-order"])); order {
		case "", "ascending":
		case "descending":
			e.Order.Sequence.Descending = true
		default:
			return nil, fmt.Errorf("%w: sequence.field.sort-order = %q (want ascending or descending)", schema.ErrInvalidOption, order)
		}
	}
	ignoreDelete := mode.IgnoreDelete
	switch e.Name {
	case EngineDeduplicate:
		e.newFn = func() (MergeFunction, error) { return &Deduplicate{IgnoreDelete: ignoreDelete}, nil }
	case EngineFirstRow:
		if len(seqFields) > 0 {
			return nil, fmt.Errorf("%w: merge-engine first-row does not allow sequence.field", schema.ErrInvalidOption)
		}
		e.newFn = func() (MergeFunction, error) { return &FirstRow{IgnoreDelete: ignoreDelete}, nil }
	case EnginePartialUpdate:
		f, err := newPartialUpdateFactory(s, fields, ignoreDelete)
		if err != nil {
			return nil, err
		}
		e.newFn = f
	case EngineAggregation:
		e.newFn = func() (MergeFunction, error) {
			rows, err := aggregate.NewRowAggregator(fields, s.PrimaryKeys, seqFields, opts)
			if err != nil {
				return nil, err
			}
			return &Aggregation{Rows: rows}, nil
		}
	default:
		return nil, fmt.Errorf("%w: merge-engine = %q (want deduplicate, partial-update, aggregation or first-row)", schema.ErrInvalidOption, opts["merge-engine"])
	}
	forceLookup, err := boolOption(opts, "force-lookup")
	if err != nil {
		return nil, err
	}
	// CoreOptions.needLookup; PrimaryKeyFileStoreTable wraps every engine
	// but first-row in LookupMergeFunction then.
	if e.Name != EngineFirstRow && (e.ChangelogProducer == "lookup" || e.DeletionVectors || forceLookup) {
		inner := e.newFn
		e.newFn = func() (MergeFunction, error) {
			fn, err := inner()
			if err != nil {
				return nil, err
			}
			return &Lookup{Inner: fn}, nil
		}
	}
	if _, err := e.newFn(); err != nil {
		return nil, err
	}
	return e, nil
}

const (
	fieldsPrefix          = "fields."
	sequenceGroupSuffix   = ".sequence-group"
	aggregateFuncSuffix   = ".aggregate-function"
	defaultAggregateFunc  = "fields.default-aggregate-function"
	lastNonNullValueAggFn = "last_non_null_value"
	primaryKeyAggFn       = "primary-key"
)

// newPartialUpdateFactory parses the partial-update options as
// PartialUpdateMergeFunction.Factory does.
func newPartialUpdateFactory(s *schema.TableSchema, fields []types.DataField, ignoreDelete bool) (func() (MergeFunction, error), error) {
	opts := s.Options
	removeOnDelete, err := boolOption(opts, "partial-update.remove-record-on-delete")
	if err != nil {
		return nil, err
	}
	removeOnGroup := splitList(opts["partial-update.remove-record-on-sequence-group"])
	names := make([]string, len(fields))
	nullable := make([]bool, len(fields))
	for i, f := range fields {
		names[i], nullable[i] = f.Name, f.Type.Nullable
	}
	require := func(n, key string) (int, error) {
		i := slices.Index(names, n)
		if i < 0 {
			return 0, fmt.Errorf("%w: %s: field %s can not be found in table schema", schema.ErrInvalidOption, key, n)
		}
		return i, nil
	}
	// Java iterates the options in HashMap order; groups are independent,
	// so sorted keys give the same result and a deterministic error.
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	type group struct {
		seq       []int
		protected []int
	}
	var groups []group
	groupOf := map[int]int{} // column -> index in groups
	seqByName := map[string]int{}
	var allSeq, protectedNames []string
	for _, k := range keys {
		if !strings.HasPrefix(k, fieldsPrefix) || !strings.HasSuffix(k, sequenceGroupSuffix) || len(k) <= len(fieldsPrefix)+len(sequenceGroupSuffix) {
			continue
		}
		var g group
		for _, n := range strings.Split(k[len(fieldsPrefix):len(k)-len(sequenceGroupSuffix)], ",") {
			i, err := require(n, k)
			if err != nil {
				return nil, err
			}
			g.seq = append(g.seq, i)
		}
		gi := len(groups)
		for _, n := range strings.Split(opts[k], ",") {
			i, err := require(n, k)
			if err != nil {
				return nil, err
			}
			if _, dup := groupOf[i]; dup {
				return nil, fmt.Errorf("%w: field %s is defined repeatedly by multiple groups: %s", schema.ErrInvalidOption, n, k)
			}
			groupOf[i] = gi
			g.protected = append(g.protected, i)
			protectedNames = append(protectedNames, n)
		}
		for _, i := range g.seq {
			allSeq = append(allSeq, names[i])
			groupOf[i] = gi
			seqByName[names[i]] = i
		}
		groups = append(groups, g)
	}
	if removeOnDelete && ignoreDelete {
		return nil, fmt.Errorf("%w: ignore-delete and partial-update.remove-record-on-delete have conflicting behavior so should not be enabled at the same time", schema.ErrInvalidOption)
	}
	if len(removeOnGroup) > 0 && ignoreDelete {
		return nil, fmt.Errorf("%w: ignore-delete and partial-update.remove-record-on-sequence-group have conflicting behavior so should not be enabled at the same time", schema.ErrInvalidOption)
	}
	if removeOnDelete && len(groups) > 0 {
		return nil, fmt.Errorf("%w: sequence-group and partial-update.remove-record-on-delete have conflicting behavior so should not be enabled at the same time", schema.ErrInvalidOption)
	}
	partialDelete := map[int]bool{}
	for _, n := range removeOnGroup {
		i, ok := seqByName[n]
		if !ok {
			return nil, fmt.Errorf("%w: field '%s' defined in 'partial-update.remove-record-on-sequence-group' option must be part of sequence groups", schema.ErrInvalidOption, strings.Join(removeOnGroup, ","))
		}
		partialDelete[i] = true
	}
	// Aggregate functions per column (PartialUpdateMergeFunction.getAggFuncName).
	aggNames := map[int]string{}
	for i, n := range names {
		if slices.Contains(allSeq, n) {
			continue
		}
		fn := ""
		if slices.Contains(s.PrimaryKeys, n) {
			fn = primaryKeyAggFn
		} else if v, ok := opts[fieldsPrefix+n+aggregateFuncSuffix]; ok {
			fn = v
		} else if v, ok := opts[defaultAggregateFunc]; ok {
			fn = v
		}
		if fn == "" {
			continue
		}
		if fn != primaryKeyAggFn && fn != lastNonNullValueAggFn && !slices.Contains(protectedNames, n) {
			return nil, fmt.Errorf("%w: must use sequence group for aggregation functions but not found for field %s", schema.ErrInvalidOption, n)
		}
		aggNames[i] = fn
	}
	// Java applies the aggregate functions only with sequence groups.
	if len(groups) == 0 {
		aggNames = nil
	}
	return func() (MergeFunction, error) {
		p := &PartialUpdate{
			Nullable: nullable, IgnoreDelete: ignoreDelete, RemoveRecordOnDelete: removeOnDelete,
			PartialDelete: partialDelete,
		}
		if len(groups) > 0 {
			p.Groups = map[int]*SequenceGroup{}
			gs := make([]*SequenceGroup, len(groups))
			for gi, g := range groups {
				gs[gi] = &SequenceGroup{Order: kv.Comparator{Fields: g.seq}}
			}
			for col, gi := range groupOf {
				p.Groups[col] = gs[gi]
			}
		}
		if len(aggNames) > 0 {
			p.Aggregators = map[int]FieldAggregator{}
			for i, fn := range aggNames {
				a, err := aggregate.New(fn, fields[i], opts)
				if err != nil {
					return nil, err
				}
				p.Aggregators[i] = a
			}
		}
		return p, nil
	}, nil
}
