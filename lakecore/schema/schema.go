// Package schema reads and writes Paimon's schema files
// (<table>/schema/schema-<id>), validates them for append tables, manages
// schema versions on storage, and gives typed access to table options with
// Paimon 1.4's defaults.
//
// The JSON follows apache/paimon
// paimon-api/src/main/java/org/apache/paimon/schema/SchemaSerializer.java
// and is printed as Jackson's DefaultPrettyPrinter prints it, so a schema
// written here is byte-identical to one written by Java
// (paimon-format.md §2).
package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/jackson"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Schema file versions (TableSchema.PAIMON_07_VERSION, PAIMON_08_VERSION,
// CURRENT_VERSION).
const (
	Version07      = 1
	Version08      = 2
	CurrentVersion = 3
)

// TableSchema is one schema-<id> file.
//
// A TableSchema returned by Parse remembers the order of its options in the
// file so that Marshal reproduces the file byte for byte; when the set of
// option keys changes, Marshal orders them as Java's HashMap would.
type TableSchema struct {
	// Version is the file format version; 0 means CurrentVersion when
	// marshalling.
	Version int
	// ID equals N of the file name schema-N.
	ID int64
	// Fields are the top-level columns with their field ids.
	Fields []types.DataField
	// HighestFieldID is the highest field id ever used, nested ROW fields
	// and dropped columns included; new columns get ids above it.
	HighestFieldID int
	// PartitionKeys are top-level field names, in partition order.
	PartitionKeys []string
	// PrimaryKeys are empty for append tables.
	PrimaryKeys []string
	// Options are the table options; all values are strings.
	Options map[string]string
	// Comment is the table comment, written only when non-nil.
	Comment *string
	// TimeMillis is the creation time of this schema version (epoch ms).
	TimeMillis int64

	// optionOrder is the order of the option keys in the parsed file.
	optionOrder []string
}

// Parse reads a schema file as SchemaSerializer.deserialize does: a missing
// "version" means 1; "id", "fields", "highestFieldId", "partitionKeys",
// "primaryKeys" and "options" are required; "comment" and "timeMillis" are
// optional (timeMillis defaults to 0); a version-1 schema without "bucket"
// gets bucket=1 and a schema of version 2 or less without "file.format"
// gets file.format=orc. Unknown keys are ignored. Errors wrap
// ErrInvalidSchema; Parse does not run Validate.
func Parse(data []byte) (*TableSchema, error) {
	members, err := jackson.Members(data)
	if err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrInvalidSchema, err)
	}
	raw := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		raw[m.Key] = m.Value
	}
	for _, k := range []string{"id", "fields", "highestFieldId", "partitionKeys", "primaryKeys", "options"} {
		if _, ok := raw[k]; !ok {
			return nil, fmt.Errorf("%w: missing required key %q", ErrInvalidSchema, k)
		}
	}
	s := &TableSchema{Version: Version07}
	if v, ok := raw["version"]; ok {
		n, err := intValue("version", v, 32)
		if err != nil {
			return nil, err
		}
		s.Version = int(n)
	}
	if s.ID, err = intValue("id", raw["id"], 64); err != nil {
		return nil, err
	}
	hi, err := intValue("highestFieldId", raw["highestFieldId"], 32)
	if err != nil {
		return nil, err
	}
	s.HighestFieldID = int(hi)
	if isNull(raw["fields"]) {
		return nil, fmt.Errorf("%w: \"fields\" is null", ErrInvalidSchema)
	}
	if err := json.Unmarshal(raw["fields"], &s.Fields); err != nil {
		return nil, fmt.Errorf("%w: fields: %w", ErrInvalidSchema, err)
	}
	if s.PartitionKeys, err = stringList("partitionKeys", raw["partitionKeys"]); err != nil {
		return nil, err
	}
	if s.PrimaryKeys, err = stringList("primaryKeys", raw["primaryKeys"]); err != nil {
		return nil, err
	}
	opts, err := jackson.Members(raw["options"])
	if err != nil {
		return nil, fmt.Errorf("%w: \"options\" is not a JSON object: %v", ErrInvalidSchema, err)
	}
	s.Options = make(map[string]string, len(opts))
	for _, m := range opts {
		s.Options[m.Key] = asText(m.Value)
		s.optionOrder = append(s.optionOrder, m.Key)
	}
	if s.Version <= Version07 {
		if _, ok := s.Options[OptBucket]; !ok {
			s.Options[OptBucket] = "1" // the default of "bucket" in Paimon 0.7
			s.optionOrder = append(s.optionOrder, OptBucket)
		}
	}
	if s.Version <= Version08 {
		if _, ok := s.Options[OptFileFormat]; !ok {
			s.Options[OptFileFormat] = "orc" // the default of "file.format" before 0.9
			s.optionOrder = append(s.optionOrder, OptFileFormat)
		}
	}
	if c, ok := raw["comment"]; ok && !isNull(c) {
		var str string
		if err := json.Unmarshal(c, &str); err != nil {
			return nil, fmt.Errorf("%w: \"comment\" is not a string", ErrInvalidSchema)
		}
		s.Comment = &str
	}
	if t, ok := raw["timeMillis"]; ok && !isNull(t) {
		if s.TimeMillis, err = intValue("timeMillis", t, 64); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

func intValue(key string, raw json.RawMessage, bits int) (int64, error) {
	var n json.Number
	if isNull(raw) || json.Unmarshal(raw, &n) != nil {
		return 0, fmt.Errorf("%w: %q must be an integer, got %s", ErrInvalidSchema, key, abbreviate(raw))
	}
	v, err := n.Int64()
	if err != nil || (bits == 32 && int64(int32(v)) != v) {
		return 0, fmt.Errorf("%w: %q must be a %d-bit integer, got %s", ErrInvalidSchema, key, bits, abbreviate(raw))
	}
	return v, nil
}

func stringList(key string, raw json.RawMessage) ([]string, error) {
	var out []string
	if isNull(raw) || json.Unmarshal(raw, &out) != nil {
		return nil, fmt.Errorf("%w: %q must be an array of strings, got %s", ErrInvalidSchema, key, abbreviate(raw))
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// asText is Jackson's JsonNode.asText for an option value: the text of a
// string, the literal of a number or boolean, "null" for null and "" for a
// container.
func asText(raw json.RawMessage) string {
	if isNull(raw) {
		return "null"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	t := strings.TrimSpace(string(raw))
	if t != "" && (t[0] == '{' || t[0] == '[') {
		return ""
	}
	return t
}

func abbreviate(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Marshal writes the schema as Java's SchemaSerializer.serialize with
// Jackson's pretty printer: keys version, id, fields, highestFieldId,
// partitionKeys, primaryKeys, options, [comment], timeMillis; no trailing
// newline. Options keep the parsed file's order when the key set is
// unchanged, and otherwise follow java.util.HashMap's iteration order.
func (s *TableSchema) Marshal() ([]byte, error) {
	var o jackson.Object
	v := s.Version
	if v == 0 {
		v = CurrentVersion
	}
	o.Int("version", int64(v))
	o.Int("id", s.ID)
	fields := s.Fields
	if fields == nil {
		fields = []types.DataField{}
	}
	fb, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("marshal schema %d: %w", s.ID, err)
	}
	o.Raw("fields", fb)
	o.Int("highestFieldId", int64(s.HighestFieldID))
	o.Raw("partitionKeys", stringsJSON(s.PartitionKeys))
	o.Raw("primaryKeys", stringsJSON(s.PrimaryKeys))
	var opts jackson.Object
	for _, k := range s.optionKeys() {
		opts.String(k, s.Options[k])
	}
	o.Raw("options", opts.Bytes())
	if s.Comment != nil {
		o.String("comment", *s.Comment)
	}
	o.Int("timeMillis", s.TimeMillis)
	out, err := jackson.Pretty(o.Bytes())
	if err != nil {
		return nil, fmt.Errorf("marshal schema %d: %w", s.ID, err)
	}
	return out, nil
}

func stringsJSON(ss []string) []byte {
	b := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jackson.AppendString(b, s)
	}
	return append(b, ']')
}

// optionKeys is the order Marshal writes the options in.
func (s *TableSchema) optionKeys() []string {
	if len(s.optionOrder) == len(s.Options) {
		same := true
		for _, k := range s.optionOrder {
			if _, ok := s.Options[k]; !ok {
				same = false
				break
			}
		}
		if same {
			return s.optionOrder
		}
	}
	return javaCopyOrder(s.insertionOrder())
}

// insertionOrder is the remembered order of the keys still present,
// followed by new keys in sorted order.
func (s *TableSchema) insertionOrder() []string {
	keys := make([]string, 0, len(s.Options))
	seen := make(map[string]bool, len(s.Options))
	for _, k := range s.optionOrder {
		if _, ok := s.Options[k]; ok && !seen[k] {
			keys = append(keys, k)
			seen[k] = true
		}
	}
	rest := make([]string, 0, len(s.Options)-len(keys))
	for k := range s.Options {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(keys, rest...)
}

// Clone returns a copy whose slices and option map may be changed without
// affecting s. Field types are shared; treat them as immutable.
func (s *TableSchema) Clone() *TableSchema {
	c := *s
	c.Fields = slices.Clone(s.Fields)
	c.PartitionKeys = slices.Clone(s.PartitionKeys)
	c.PrimaryKeys = slices.Clone(s.PrimaryKeys)
	c.Options = maps.Clone(s.Options)
	c.optionOrder = slices.Clone(s.optionOrder)
	if s.Comment != nil {
		cm := *s.Comment
		c.Comment = &cm
	}
	return &c
}

// Opts returns the table options with typed accessors.
func (s *TableSchema) Opts() Options { return Options(s.Options) }

// FieldNames returns the names of the top-level fields in order.
func (s *TableSchema) FieldNames() []string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return names
}

// PartitionFields returns the partition key fields in partition-key order.
// Names that are not fields are skipped; Validate reports them.
func (s *TableSchema) PartitionFields() []types.DataField {
	return s.project(s.PartitionKeys)
}

// BucketKeyFields returns the fields of the "bucket-key" option in option
// order, or nil when the option is unset (Java then falls back to the
// trimmed primary keys, which append tables do not have). Names that are not
// fields are skipped; Validate reports them.
func (s *TableSchema) BucketKeyFields() []types.DataField {
	return s.project(s.Opts().BucketKey())
}

func (s *TableSchema) project(names []string) []types.DataField {
	if len(names) == 0 {
		return nil
	}
	out := make([]types.DataField, 0, len(names))
	for _, n := range names {
		if i := types.FieldByName(s.Fields, n); i >= 0 {
			out = append(out, s.Fields[i])
		}
	}
	return out
}

// NewTableSchema builds a version-3 schema with id 0 from columns whose ids
// are assigned as Java's Schema.Builder.column assigns them: each top-level
// column gets the next id, then the fields of its nested ROW types get the
// following ids (ReassignFieldId: children before their parent ROW field).
// The ids already in fields are ignored and fields is not modified.
// TimeMillis is left 0; Manager.Create sets it.
func NewTableSchema(fields []types.DataField, partitionKeys []string, options map[string]string, comment *string) *TableSchema {
	assigned, highest := ReassignFieldIDs(fields, -1)
	if options == nil {
		options = map[string]string{}
	}
	return &TableSchema{
		Version:        CurrentVersion,
		Fields:         assigned,
		HighestFieldID: highest,
		PartitionKeys:  slices.Clone(partitionKeys),
		PrimaryKeys:    []string{},
		Options:        maps.Clone(options),
		Comment:        comment,
	}
}

// ReassignFieldIDs returns copies of fields numbered from highest+1 the way
// Java numbers new columns (Schema.Builder.column and SchemaManager's
// AddColumn): a top-level field takes the next id first, then its type is
// renumbered by ReassignFieldId, where a nested ROW field's own type is
// renumbered before the field takes its id. It returns the new highest id.
func ReassignFieldIDs(fields []types.DataField, highest int) ([]types.DataField, int) {
	out := make([]types.DataField, len(fields))
	for i, f := range fields {
		highest++
		f.ID = highest
		f.Type = reassignType(f.Type, &highest)
		out[i] = f
	}
	return out, highest
}

func reassignType(t types.DataType, counter *int) types.DataType {
	switch t.Kind {
	case types.KindArray, types.KindMultiset:
		if t.Element != nil {
			e := reassignType(*t.Element, counter)
			t.Element = &e
		}
	case types.KindMap:
		if t.Key != nil {
			k := reassignType(*t.Key, counter)
			t.Key = &k
		}
		if t.Value != nil {
			v := reassignType(*t.Value, counter)
			t.Value = &v
		}
	case types.KindRow:
		fs := make([]types.DataField, len(t.Fields))
		for i, f := range t.Fields {
			f.Type = reassignType(f.Type, counter)
			*counter++
			f.ID = *counter
			fs[i] = f
		}
		t.Fields = fs
	}
	return t
}
