//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Primary-key specs (testdata/pk/*.json, README.md "Primary-key tables"):
// what Java's pk-write command runs, plus the Go-only keys "random" (a
// change stream generated from a seed, expanded here before Java sees the
// spec), "model" (false: the map-based model of pk_model_test.go does not
// cover the spec) and "streams" (the scan modes to compare).

type pkField struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type pkChange struct {
	Kind string `json:"kind"`
	Row  []any  `json:"row"`
}

type pkCommit struct {
	Kind           string            `json:"kind"`
	Changes        []pkChange        `json:"changes,omitempty"`
	WaitCompaction *bool             `json:"waitCompaction,omitempty"`
	Full           *bool             `json:"full,omitempty"`
	AddColumns     []pkField         `json:"addColumns,omitempty"`
	SetOptions     map[string]string `json:"setOptions,omitempty"`
	RemoveOptions  []string          `json:"removeOptions,omitempty"`
}

// pkRandom generates a change stream: a source table of Keys keys (per
// partition value) changed by Changes random operations per commit, as a
// CDC source would emit them: +I for a new key; for an existing key -D (of
// the current row) with DeleteRate, an update with UpdateRate (-U of the
// current row first with BeforeRate, then +U), else +I again (an upsert
// without before image). Keys repeat within and across commits.
type pkRandom struct {
	Seed    int64 `json:"seed"`
	Commits int   `json:"commits"`
	Changes int   `json:"changes"`
	// FirstChanges > 0 is the number of changes of the first commit (a big
	// first run lets Java's universal compaction stop below the max level).
	FirstChanges int     `json:"firstChanges,omitempty"`
	Keys         int     `json:"keys"`
	Partitions   []any   `json:"partitions,omitempty"` // values of the (first) partition column
	DeleteRate   float64 `json:"deleteRate"`
	UpdateRate   float64 `json:"updateRate"`
	BeforeRate   float64 `json:"beforeRate"`
	NullRate     float64 `json:"nullRate"`
	// IntRange > 0 draws integer values from [-IntRange/2, IntRange/2)
	// (small products that cannot overflow).
	IntRange     int `json:"intRange,omitempty"`
	CompactEvery int `json:"compactEvery,omitempty"` // a full "compact" step after every N commits
	// SeqField is a BIGINT column set to commit*1000 + a random 0..999:
	// out of order within a commit, increasing across commits.
	SeqField string `json:"seqField,omitempty"`
	// AlterAt > 0 adds AddColumns before commit AlterAt (0-based).
	AlterAt    int       `json:"alterAt,omitempty"`
	AddColumns []pkField `json:"addColumns,omitempty"`
}

type pkSpec struct {
	Description    string            `json:"description,omitempty"`
	Schema         []pkField         `json:"schema"`
	PartitionKeys  []string          `json:"partitionKeys,omitempty"`
	PrimaryKeys    []string          `json:"primaryKeys"`
	Options        map[string]string `json:"options"`
	CommitUser     string            `json:"commitUser,omitempty"`
	WaitCompaction *bool             `json:"waitCompaction,omitempty"`
	DynamicBuckets int               `json:"dynamicBuckets,omitempty"`
	Commits        []pkCommit        `json:"commits,omitempty"`
	Random         *pkRandom         `json:"random,omitempty"`
	Model          *bool             `json:"model,omitempty"`
	Streams        []string          `json:"streams,omitempty"`
}

// loadPKSpecs reads testdata/pk/*.json (names sorted; PK_SPECS=substring
// keeps only the names containing it) and expands the random ones.
func loadPKSpecs() ([]string, map[string]*pkSpec, error) {
	files, err := filepath.Glob(filepath.Join(env.here, "testdata", "pk", "*.json"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	var names []string
	specs := map[string]*pkSpec{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		dec.DisallowUnknownFields()
		var s pkSpec
		if err := dec.Decode(&s); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		if s.Random != nil {
			if err := expandRandom(&s); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", f, err)
			}
		}
		n := strings.TrimSuffix(filepath.Base(f), ".json")
		if only := os.Getenv("PK_SPECS"); only != "" && !strings.Contains(n, only) {
			continue
		}
		names = append(names, n)
		specs[n] = &s
	}
	return names, specs, nil
}

// pkFields parses the spec's schema into lakecore fields.
func pkFields(fs []pkField) ([]types.DataField, error) {
	out := make([]types.DataField, len(fs))
	for i, f := range fs {
		t, err := types.Parse(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		out[i] = types.DataField{ID: i, Name: f.Name, Type: t}
	}
	return out, nil
}

func expandRandom(s *pkSpec) error {
	r := s.Random
	if len(s.Commits) > 0 {
		return fmt.Errorf("a spec has either commits or random")
	}
	if r.Keys <= 0 || r.Commits <= 0 || r.Changes <= 0 {
		return fmt.Errorf("random: keys, commits and changes must be > 0")
	}
	rng := rand.New(rand.NewSource(r.Seed))
	fields, err := pkFields(s.Schema)
	if err != nil {
		return err
	}
	isPK := map[string]bool{}
	for _, k := range s.PrimaryKeys {
		isPK[k] = true
	}
	part := ""
	if len(s.PartitionKeys) > 0 {
		part = s.PartitionKeys[0]
		if len(r.Partitions) == 0 {
			return fmt.Errorf("random: partitioned table needs partitions")
		}
	}
	state := map[string][]any{} // source table: key text -> current row
	gen := func(fs []types.DataField, key []any, commit int) []any {
		row := make([]any, len(fs))
		copy(row, key)
		for i := len(key); i < len(fs); i++ {
			row[i] = randomValue(rng, fs[i], r, commit)
		}
		return row
	}
	// key columns first: the partition column then the other PK columns,
	// in schema order; rows are stored in schema order.
	schemaRow := func(fs []types.DataField, vals map[string]any, rest []any) []any {
		row := make([]any, len(fs))
		j := 0
		for i, f := range fs {
			if v, ok := vals[f.Name]; ok {
				row[i] = v
			} else {
				row[i] = rest[j]
				j++
			}
		}
		return row
	}
	for c := 0; c < r.Commits; c++ {
		if r.AlterAt > 0 && c == r.AlterAt {
			s.Commits = append(s.Commits, pkCommit{Kind: "alter", AddColumns: r.AddColumns})
			if fields, err = pkFields(append(append([]pkField{}, s.Schema...), r.AddColumns...)); err != nil {
				return err
			}
			// the source rows get the new column as null
			for k, row := range state {
				state[k] = append(row, make([]any, len(r.AddColumns))...)
			}
		}
		var valueFields []types.DataField
		for _, f := range fields {
			if !isPK[f.Name] {
				valueFields = append(valueFields, f)
			}
		}
		var changes []pkChange
		n := r.Changes
		if c == 0 && r.FirstChanges > 0 {
			n = r.FirstChanges
		}
		for i := 0; i < n; i++ {
			keyVals := map[string]any{}
			var keyText []string
			for _, f := range fields {
				if !isPK[f.Name] {
					continue
				}
				var v any
				if f.Name == part {
					v = r.Partitions[rng.Intn(len(r.Partitions))]
				} else {
					v = randomKey(f, rng.Intn(r.Keys))
				}
				keyVals[f.Name] = v
				keyText = append(keyText, fmt.Sprint(v))
			}
			k := strings.Join(keyText, "\x00")
			newRow := func() []any { return schemaRow(fields, keyVals, gen(valueFields, nil, c)) }
			old, exists := state[k]
			if !exists {
				row := newRow()
				state[k] = row
				changes = append(changes, pkChange{Kind: "+I", Row: row})
				continue
			}
			p := rng.Float64()
			switch {
			case p < r.DeleteRate:
				changes = append(changes, pkChange{Kind: "-D", Row: old})
				delete(state, k)
			case p < r.DeleteRate+r.UpdateRate:
				if rng.Float64() < r.BeforeRate {
					changes = append(changes, pkChange{Kind: "-U", Row: old})
				}
				row := newRow()
				state[k] = row
				changes = append(changes, pkChange{Kind: "+U", Row: row})
			default:
				row := newRow()
				state[k] = row
				changes = append(changes, pkChange{Kind: "+I", Row: row})
			}
		}
		s.Commits = append(s.Commits, pkCommit{Kind: "changes", Changes: changes})
		if r.CompactEvery > 0 && (c+1)%r.CompactEvery == 0 {
			s.Commits = append(s.Commits, pkCommit{Kind: "compact"})
		}
	}
	return nil
}

func randomKey(f types.DataField, i int) any {
	switch f.Type.Kind {
	case types.KindVarChar, types.KindChar:
		return fmt.Sprintf("k%03d", i)
	default:
		return json.Number(fmt.Sprint(i))
	}
}

func randomValue(rng *rand.Rand, f types.DataField, r *pkRandom, commit int) any {
	if f.Name == r.SeqField {
		return json.Number(fmt.Sprint(int64(commit+1)*1000 + int64(rng.Intn(1000))))
	}
	if f.Type.Nullable && rng.Float64() < r.NullRate {
		return nil
	}
	if r.IntRange > 0 {
		switch f.Type.Kind {
		case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
			return json.Number(fmt.Sprint(rng.Intn(r.IntRange) - r.IntRange/2))
		}
	}
	switch f.Type.Kind {
	case types.KindBoolean:
		return rng.Intn(2) == 0
	case types.KindTinyInt, types.KindSmallInt:
		return json.Number(fmt.Sprint(rng.Intn(20) - 5))
	case types.KindInt:
		return json.Number(fmt.Sprint(rng.Intn(2000) - 1000))
	case types.KindBigInt:
		return json.Number(fmt.Sprint(rng.Int63n(2_000_000) - 1_000_000))
	case types.KindDouble:
		return json.Number(fmt.Sprint(float64(rng.Intn(4000)-2000) / 4))
	case types.KindVarChar:
		return fmt.Sprintf("v%d", rng.Intn(10000))
	}
	panic("random: no generator for " + f.Type.String())
}

// writeSpecFile writes the (expanded) spec as JSON for Java.
func writeSpecFile(dir, name string, s *pkSpec) (string, error) {
	data, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name+".json")
	return p, os.WriteFile(p, data, 0o644)
}
