package schema

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// immutableOptions are the options annotated @Immutable in Paimon 1.4's
// CoreOptions (CoreOptions.IMMUTABLE_OPTIONS): a table with snapshots
// cannot change or reset them.
var immutableOptions = map[string]bool{
	"bucket-key": true, "bucket-function.type": true, "data-file.path-directory": true, "merge-engine": true,
	"aggregation.remove-record-on-delete": true, "partial-update.remove-record-on-delete": true,
	"partial-update.remove-record-on-sequence-group": true, "rowkind.field": true, "primary-key": true,
	"partition": true, "force-lookup": true, "row-tracking.enabled": true, "data-evolution.enabled": true,
	"index-file-in-data-file-dir": true, "blob-descriptor-field": true, "blob-external-storage-path": true,
	"blob-external-storage-field": true, "pk-clustering-override": true,
}

// Alteration is one ALTER TABLE: options to set, options to reset, then
// columns to add, applied in that order to the latest schema.
type Alteration struct {
	// Set are option keys and values, applied in order.
	Set [][2]string
	// Reset are option keys to remove.
	Reset []string
	// AddColumns are nullable columns appended as AddColumns appends them;
	// a column that exists is an error (Java's ColumnAlreadyExistException).
	AddColumns []types.DataField
}

// IsEmpty reports whether a changes nothing.
func (a Alteration) IsEmpty() bool {
	return len(a.Set) == 0 && len(a.Reset) == 0 && len(a.AddColumns) == 0
}

// Alter commits a as the next schema version, as Java's
// SchemaManager.commitChanges does with SetOption, RemoveOption and
// AddColumn changes (apache/paimon 1.4: paimon-core/.../schema/
// SchemaManager.java generateTableSchema, checkAlterTableOption,
// checkResetTableOption):
//
//   - when the table has snapshots (hasSnapshots), an immutable option
//     (bucket-key, merge-engine, primary-key, partition, ...) cannot be
//     set or reset ("Change '<key>' is not supported yet."); "bucket"
//     cannot be reset, nor changed from or to -1; deletion-vectors.enabled
//     cannot change unless deletion-vectors.modifiable; ignore-delete and
//     ignore-update-before cannot go from true to false;
//   - the new schema must pass Validate and its options Options.Validate
//     (SchemaValidation.validateTableSchema in Java; errors wrap
//     ErrInvalidSchema or ErrInvalidOption);
//   - options are written in the order Java's HashMap would hold them, so
//     the file is what Java writes for the same change.
//
// A concurrent schema change makes Alter re-read the latest schema and try
// again. When a changes nothing (every value already set, every reset key
// absent, no column) no schema is written and the latest is returned
// (Java writes an identical new version).
func (m *Manager) Alter(ctx context.Context, a Alteration, hasSnapshots bool) (*TableSchema, error) {
	for _, f := range a.AddColumns {
		if !f.Type.Nullable {
			return nil, fmt.Errorf("alter %s: %w: column %q cannot be NOT NULL (Paimon adds nullable columns only)", m.tablePath, ErrInvalidSchema, f.Name)
		}
	}
	return m.commitChange(ctx, "alter", func(cur *TableSchema) (*TableSchema, error) {
		next, err := m.altered(cur, a, hasSnapshots)
		if next == nil || err != nil {
			return nil, err
		}
		if err := next.Opts().Validate(); err != nil {
			return nil, err
		}
		return next, nil
	})
}

// altered returns cur with a applied as schema cur.ID+1, or nil when a
// changes nothing.
func (m *Manager) altered(cur *TableSchema, a Alteration, hasSnapshots bool) (*TableSchema, error) {
	changed := false
	for _, kv := range a.Set {
		if old, ok := cur.Options[kv[0]]; !ok || old != kv[1] {
			changed = true
		}
		if slices.Contains(a.Reset, kv[0]) {
			return nil, fmt.Errorf("%w: option %q is both set and reset", ErrInvalidOption, kv[0])
		}
		if hasSnapshots {
			old, ok := cur.Options[kv[0]]
			var oldp *string
			if ok {
				oldp = &old
			}
			if err := checkAlterTableOption(cur.Options, kv[0], oldp, kv[1]); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range a.Reset {
		if _, ok := cur.Options[k]; ok {
			changed = true
		}
		if hasSnapshots {
			if err := checkResetTableOption(k); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range a.AddColumns {
		if types.FieldByName(cur.Fields, f.Name) >= 0 {
			return nil, fmt.Errorf("%w: column %q already exists", ErrInvalidSchema, f.Name)
		}
	}
	if !changed && len(a.AddColumns) == 0 {
		return nil, nil
	}
	var next *TableSchema
	if len(a.AddColumns) > 0 {
		n, err := m.withColumns(cur, a.AddColumns)
		if err != nil {
			return nil, err
		}
		next = n
	} else {
		next = cur.Clone()
		next.ID = cur.ID + 1
		next.Version = CurrentVersion
		next.TimeMillis = m.now().UnixMilli()
	}
	// new HashMap<>(old options), then the puts and removes.
	keys := javaParsedOrder(cur.insertionOrder())
	capacity, size := copyCapacity(len(keys)), len(keys)
	for _, kv := range a.Set {
		if _, ok := next.Options[kv[0]]; !ok {
			keys = append(keys, kv[0])
			if size++; float64(size) > 0.75*float64(capacity) {
				capacity *= 2
			}
		}
		if next.Options == nil {
			next.Options = map[string]string{}
		}
		next.Options[kv[0]] = kv[1]
	}
	for _, k := range a.Reset {
		delete(next.Options, k)
	}
	keys = slices.DeleteFunc(keys, func(k string) bool { _, ok := next.Options[k]; return !ok })
	next.optionOrder = javaHashOrder(keys, capacity)
	return next, nil
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOption, fmt.Sprintf(format, args...))
}

// checkAlterTableOption is SchemaManager.checkAlterTableOption of Paimon
// 1.4 (clustering-columns, which needs pk-clustering-override, included).
func checkAlterTableOption(options map[string]string, key string, oldValue *string, newValue string) error {
	if immutableOptions[key] {
		return unsupported("change '%s' is not supported yet", key)
	}
	parseBool := func(v *string, def bool) bool {
		if v == nil {
			return def
		}
		return strings.EqualFold(strings.TrimSpace(*v), "true")
	}
	switch key {
	case OptBucket:
		oldBucket := -1
		if oldValue != nil {
			n, err := strconv.Atoi(strings.TrimSpace(*oldValue))
			if err != nil {
				return unsupported("bucket = %q is not an integer", *oldValue)
			}
			oldBucket = n
		}
		newBucket, err := strconv.Atoi(strings.TrimSpace(newValue))
		if err != nil {
			return unsupported("bucket = %q is not an integer", newValue)
		}
		if oldBucket == -1 {
			return unsupported("cannot change bucket when it is -1")
		}
		if newBucket == -1 {
			return unsupported("cannot change bucket to -1")
		}
	case "deletion-vectors.enabled":
		mod := options["deletion-vectors.modifiable"]
		if !parseBool(&mod, false) {
			oldDv, newDv := parseBool(oldValue, false), parseBool(&newValue, false)
			if oldDv != newDv {
				return unsupported("cannot change deletion vectors mode from %t to %t; if modifying table deletion-vectors mode "+
					"without full-compaction, this may result in data duplication. If you are confident, you can set table "+
					"option 'deletion-vectors.modifiable' = 'true' to allow deletion vectors modification", oldDv, newDv)
			}
		}
	case "ignore-delete", "ignore-update-before":
		if parseBool(oldValue, false) && !parseBool(&newValue, false) {
			return unsupported("cannot change %s from true to false", key)
		}
	case "clustering.columns":
		if _, ok := options["pk-clustering-override"]; ok {
			return unsupported("cannot change %s when pk-clustering-override enabled", key)
		}
	}
	return nil
}

// checkResetTableOption is SchemaManager.checkResetTableOption of Paimon
// 1.4.
func checkResetTableOption(key string) error {
	if immutableOptions[key] {
		return unsupported("change '%s' is not supported yet", key)
	}
	if key == OptBucket {
		return unsupported("cannot reset %s", key)
	}
	return nil
}
