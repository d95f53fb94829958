package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// systemFieldNames are SpecialFields.SYSTEM_FIELD_NAMES; user columns may not
// use them, nor the "_KEY_" prefix.
var systemFieldNames = []string{"_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind", "_ROW_ID"}

// Validate checks the schema as Java checks an append table when it loads
// it (TableSchema's constructor and SchemaValidation.validateTableSchema in
// apache/paimon paimon-core/src/main/java/org/apache/paimon/schema/), for the
// rules that concern append tables:
//
//   - primary keys name distinct top-level fields of atomic, NOT NULL type
//     and are not all partition keys; the bucket key of a primary-key
//     table is a subset of the primary key;
//   - field names are non-blank and unique within each row, field ids are
//     unique across the whole tree (nested ROW fields included) and not above
//     HighestFieldID, and no top-level field uses a system name
//     (_SEQUENCE_NUMBER, _VALUE_KIND, _LEVEL, rowkind, _ROW_ID) or the
//     "_KEY_" prefix;
//   - partition keys name distinct top-level fields of atomic type;
//   - bucket = -1 must not have a "bucket-key"; bucket 0 or below -1 is an
//     error; bucket > 0 needs a "bucket-key" whose fields exist, are not
//     partition keys and are not ARRAY, MAP, MULTISET or ROW;
//   - snapshot.num-retained.min >= 1 and <= snapshot.num-retained.max;
//   - partition.expiration-time needs partition keys;
//   - row-tracking.enabled needs bucket = -1.
//
// Like Java, it parses only the options these rules need, so that a table
// Java can read is not refused for an option that matters only when writing
// (CheckWritable checks every option). Unlike Java, it also rejects field ids
// that repeat or exceed HighestFieldID and repeated partition keys: Java
// never writes them, and reading by field id would be ambiguous.
//
// Errors wrap ErrInvalidSchema (option problems wrap ErrInvalidOption).
func (s *TableSchema) Validate() error {
	if err := s.validate(); err != nil {
		return fmt.Errorf("schema %d: %w", s.ID, err)
	}
	return nil
}

func (s *TableSchema) validate() error {
	if s.ID < 0 {
		return fmt.Errorf("%w: negative schema id %d", ErrInvalidSchema, s.ID)
	}
	if s.Version < 0 || s.Version > CurrentVersion {
		return fmt.Errorf("%w: unknown schema version %d", ErrInvalidSchema, s.Version)
	}
	ids := map[int]string{}
	if err := validateRow(s.Fields, "", ids, s.HighestFieldID); err != nil {
		return err
	}
	for _, f := range s.Fields {
		if slices.Contains(systemFieldNames, f.Name) {
			return fmt.Errorf("%w: field name %q is reserved for system fields %v", ErrInvalidSchema, f.Name, systemFieldNames)
		}
		if strings.HasPrefix(f.Name, "_KEY_") {
			return fmt.Errorf("%w: field name %q must not start with \"_KEY_\"", ErrInvalidSchema, f.Name)
		}
	}
	seen := map[string]bool{}
	for _, k := range s.PartitionKeys {
		i := types.FieldByName(s.Fields, k)
		if i < 0 {
			return fmt.Errorf("%w: partition key %q is not a field (fields %v)", ErrInvalidSchema, k, s.FieldNames())
		}
		if s.Fields[i].Type.IsNested() {
			return fmt.Errorf("%w: partition key %q has nested type %s", ErrInvalidSchema, k, s.Fields[i].Type)
		}
		if seen[k] {
			return fmt.Errorf("%w: partition key %q is listed twice", ErrInvalidSchema, k)
		}
		seen[k] = true
	}
	o := s.Opts()
	if err := s.validatePrimaryKeys(o); err != nil {
		return err
	}
	if err := s.validateBucket(o); err != nil {
		return err
	}
	minRet, err := o.SnapshotNumRetainedMin()
	if err != nil {
		return err
	}
	maxRet, err := o.SnapshotNumRetainedMax()
	if err != nil {
		return err
	}
	if minRet < 1 {
		return fmt.Errorf("%w: %s should be at least 1, got %d", ErrInvalidOption, OptSnapshotNumRetainedMin, minRet)
	}
	if minRet > maxRet {
		return fmt.Errorf("%w: %s (%d) should not be larger than %s (%d)", ErrInvalidOption,
			OptSnapshotNumRetainedMin, minRet, OptSnapshotNumRetainedMax, maxRet)
	}
	if _, set := o[OptPartitionExpirationTime]; set && len(s.PartitionKeys) == 0 {
		return fmt.Errorf("%w: cannot set %q for a non-partitioned table", ErrInvalidOption, OptPartitionExpirationTime)
	}
	rt, err := o.RowTrackingEnabled()
	if err != nil {
		return err
	}
	if rt {
		if b, _ := o.Bucket(); b != -1 {
			return fmt.Errorf("%w: %s needs bucket = -1, got %d", ErrInvalidOption, OptRowTrackingEnabled, b)
		}
	}
	return nil
}

// validatePrimaryKeys follows TableSchema's constructor and
// SchemaValidation for the primary keys (paimon-pk.md §1.1, §3.1).
func (s *TableSchema) validatePrimaryKeys(o Options) error {
	if len(s.PrimaryKeys) == 0 {
		return nil
	}
	seen := map[string]bool{}
	trimmed := 0
	for _, k := range s.PrimaryKeys {
		i := types.FieldByName(s.Fields, k)
		if i < 0 {
			return fmt.Errorf("%w: primary key %q is not a field (fields %v)", ErrInvalidSchema, k, s.FieldNames())
		}
		if seen[k] {
			return fmt.Errorf("%w: primary key %q is listed twice", ErrInvalidSchema, k)
		}
		seen[k] = true
		if t := s.Fields[i].Type; t.IsNested() {
			return fmt.Errorf("%w: primary key %q has nested type %s", ErrInvalidSchema, k, t)
		} else if t.Nullable {
			return fmt.Errorf("%w: primary key %q must be NOT NULL", ErrInvalidSchema, k)
		}
		if !slices.Contains(s.PartitionKeys, k) {
			trimmed++
		}
	}
	if trimmed == 0 {
		return fmt.Errorf("%w: primary key constraint %v should not be same with partition fields %v", ErrInvalidSchema, s.PrimaryKeys, s.PartitionKeys)
	}
	for _, k := range o.BucketKey() {
		if !slices.Contains(s.PrimaryKeys, k) {
			return fmt.Errorf("%w: primary keys %v should contain all bucket keys %v", ErrInvalidOption, s.PrimaryKeys, o.BucketKey())
		}
	}
	return nil
}

// validateBucket follows SchemaValidation.validateBucket and
// TableSchema.originalBucketKeys for a table without primary keys.
func (s *TableSchema) validateBucket(o Options) error {
	bucket, err := o.Bucket()
	if err != nil {
		return err
	}
	keys := o.BucketKey()
	for _, k := range keys {
		i := types.FieldByName(s.Fields, k)
		if i < 0 {
			return fmt.Errorf("%w: bucket key %q is not a field (fields %v)", ErrInvalidOption, k, s.FieldNames())
		}
		if slices.Contains(s.PartitionKeys, k) {
			return fmt.Errorf("%w: bucket key %q must not be a partition key %v", ErrInvalidOption, k, s.PartitionKeys)
		}
	}
	switch {
	case bucket == -1:
		if _, ok := o[OptBucketKey]; ok {
			return fmt.Errorf("%w: cannot define 'bucket-key' with bucket = -1; remove 'bucket-key' or set a bucket number", ErrInvalidOption)
		}
	case bucket == -2 && len(s.PrimaryKeys) > 0: // postpone bucket
	case bucket < 1:
		return fmt.Errorf("%w: the number of buckets needs to be greater than 0 (or -1), got %d", ErrInvalidOption, bucket)
	default:
		if len(keys) == 0 && len(s.PrimaryKeys) == 0 {
			return fmt.Errorf("%w: define a 'bucket-key' for a bucketed append table (bucket = %d)", ErrInvalidOption, bucket)
		}
		for _, k := range keys {
			if t := s.Fields[types.FieldByName(s.Fields, k)].Type; t.IsNested() {
				return fmt.Errorf("%w: bucket key %q has nested type %s", ErrInvalidOption, k, t)
			}
		}
	}
	return nil
}

func validateRow(fields []types.DataField, path string, ids map[int]string, highest int) error {
	names := map[string]bool{}
	for _, f := range fields {
		full := path + f.Name
		if strings.TrimSpace(f.Name) == "" {
			return fmt.Errorf("%w: field name %q must contain a non-whitespace character", ErrInvalidSchema, full)
		}
		if names[f.Name] {
			return fmt.Errorf("%w: duplicate field name %q", ErrInvalidSchema, full)
		}
		names[f.Name] = true
		if other, dup := ids[f.ID]; dup {
			return fmt.Errorf("%w: fields %q and %q share field id %d", ErrInvalidSchema, other, full, f.ID)
		}
		ids[f.ID] = full
		if f.ID > highest {
			return fmt.Errorf("%w: field %q has id %d above highestFieldId %d", ErrInvalidSchema, full, f.ID, highest)
		}
		if f.ID < 0 {
			return fmt.Errorf("%w: field %q has negative id %d", ErrInvalidSchema, full, f.ID)
		}
		if err := validateType(f.Type, full, ids, highest); err != nil {
			return err
		}
	}
	return nil
}

func validateType(t types.DataType, path string, ids map[int]string, highest int) error {
	switch t.Kind {
	case types.KindArray, types.KindMultiset:
		if t.Element == nil {
			return fmt.Errorf("%w: field %q: %s without element type", ErrInvalidSchema, path, t.Kind)
		}
		return validateType(*t.Element, path, ids, highest)
	case types.KindMap:
		if t.Key == nil || t.Value == nil {
			return fmt.Errorf("%w: field %q: MAP without key or value type", ErrInvalidSchema, path)
		}
		if err := validateType(*t.Key, path, ids, highest); err != nil {
			return err
		}
		return validateType(*t.Value, path, ids, highest)
	case types.KindRow:
		return validateRow(t.Fields, path+".", ids, highest)
	}
	return nil
}

// CheckWritable reports a table lakecore cannot write correctly: an option
// a writer reads that does not parse (Options.Validate; ErrInvalidOption),
// or, wrapping ErrUnsupported, data files other than Parquet
// ("file.format"), manifests other than Avro ("manifest.format"), a bucket
// function other than "default", row tracking or data evolution (which need
// row ids), or external data paths. Call it, besides Validate, before
// writing.
func (s *TableSchema) CheckWritable() error {
	o := s.Opts()
	if err := o.Validate(); err != nil {
		return fmt.Errorf("schema %d: %w", s.ID, err)
	}
	if f := o.FileFormat(); f != "parquet" {
		return fmt.Errorf("%w: %s = %q: lakecore writes parquet data files only", ErrUnsupported, OptFileFormat, f)
	}
	if err := s.CheckReadable(); err != nil {
		return err
	}
	if f := o.BucketFunctionType(); f != "default" {
		return fmt.Errorf("%w: %s = %q: lakecore implements the default bucket function only", ErrUnsupported, OptBucketFunctionType, f)
	}
	if rt, _ := o.RowTrackingEnabled(); rt {
		return fmt.Errorf("%w: %s: lakecore does not assign row ids", ErrUnsupported, OptRowTrackingEnabled)
	}
	if de, _ := o.DataEvolutionEnabled(); de {
		return fmt.Errorf("%w: %s: lakecore does not assign row ids", ErrUnsupported, OptDataEvolutionEnabled)
	}
	if p, ok := o[OptDataFileExternalPaths]; ok && strings.TrimSpace(p) != "" {
		return fmt.Errorf("%w: %s: lakecore writes data files under the table path only", ErrUnsupported, OptDataFileExternalPaths)
	}
	return nil
}

// CheckReadable reports, wrapping ErrUnsupported, a table whose metadata
// lakecore cannot read: manifests other than Avro ("manifest.format" = orc
// or parquet). Data files are read by their extension, so "file.format" does
// not matter here; an ORC data file fails when it is opened.
func (s *TableSchema) CheckReadable() error {
	if f := s.Opts().ManifestFormat(); f != "avro" {
		return fmt.Errorf("%w: %s = %q: lakecore reads avro manifests only", ErrUnsupported, OptManifestFormat, f)
	}
	return nil
}
