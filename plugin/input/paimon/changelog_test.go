package paimon

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// kvSchema is the primary-key test tables' schema; k is the key.
const kvSchema = "ROW<k BIGINT, v STRING>"

// newPKTestTable creates the table events (k, v) with primary key k in a
// temporary warehouse.
func newPKTestTable(t testing.TB, options map[string]string) *testTable {
	t.Helper()
	return createTable(t, t.TempDir(), lakecore.TableSpec{
		Fields: types.MustParse(kvSchema).Fields, PrimaryKeys: []string{"k"}, Options: options,
	})
}

// change is one change of a primary-key test table.
type change struct {
	kind kv.RowKind
	k    int64
	v    string
}

// writeChanges commits changes as one write (an APPEND snapshot, maybe
// followed by a COMPACT one) and returns the last snapshot.
func (tt *testTable) writeChanges(changes ...change) *snapshot.Snapshot {
	tt.t.Helper()
	ctx := context.Background()
	w, err := tt.tbl.NewKeyValueWriter(ctx)
	if err != nil {
		tt.t.Fatal(err)
	}
	for _, c := range changes {
		if err := w.Write(ctx, c.kind, []any{c.k, c.v}); err != nil {
			tt.t.Fatal(err)
		}
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		tt.t.Fatal(err)
	}
	return tt.commit(msgs)
}

// randomChanges returns n changes to keys below keys from the state
// (updated): inserts of new keys, -U/+U pairs and deletes.
func randomChanges(rng *rand.Rand, state map[int64]string, snap, n, keys int) []change {
	var out []change
	for i := range n {
		k := int64(rng.IntN(keys))
		v := fmt.Sprintf("s%d-%d", snap, i)
		switch old, ok := state[k]; {
		case !ok:
			out = append(out, change{kv.Insert, k, v})
			state[k] = v
		case rng.IntN(4) == 0:
			out = append(out, change{kv.Delete, k, old})
			delete(state, k)
		default:
			out = append(out, change{kv.UpdateBefore, k, old}, change{kv.UpdateAfter, k, v})
			state[k] = v
		}
	}
	return out
}

// merged returns the merged table at snapshot id as key -> value.
func (tt *testTable) merged(id int64) map[int64]string {
	tt.t.Helper()
	rows, err := tt.tbl.ReadAll(context.Background(), id)
	if err != nil {
		tt.t.Fatal(err)
	}
	out := map[int64]string{}
	for _, r := range rows {
		out[r[0].(int64)] = r[1].(string)
	}
	return out
}

// kvMsg is one message of a primary-key test table.
type kvMsg struct {
	snapshot  int64
	partition string
	bucket    int64
	kind, op  string
	k         int64
	v         string
	file      string
	pos       int64
	shardFrom int // the shard that read it (sharded tests)
}

func decodeKV(t testing.TB, m *service.Message) kvMsg {
	t.Helper()
	g := decode(t, m)
	var r struct {
		K  int64
		V  string
		ID *int64 // append test tables (eventsSchema): id is the key
	}
	if err := json.Unmarshal([]byte(g.Row), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != nil {
		r.K = *r.ID
	}
	out := kvMsg{snapshot: g.Snapshot, partition: g.Partition, bucket: g.Bucket, k: r.K, v: r.V, file: g.File, pos: g.Pos}
	if v, ok := m.MetaGetMut("paimon_row_kind"); ok {
		out.kind, _ = v.(string)
	}
	if v, ok := m.MetaGetMut("operation"); ok {
		out.op, _ = v.(string)
	}
	return out
}

// replay applies messages in order to a map: +I and +U set the key, -U
// and -D remove it.
func replay(t testing.TB, msgs []kvMsg) map[int64]string {
	t.Helper()
	state := map[int64]string{}
	for _, m := range msgs {
		switch m.kind {
		case "+I", "+U":
			state[m.k] = m.v
		case "-U", "-D":
			delete(state, m.k)
		default:
			t.Fatalf("message %+v without a row kind", m)
		}
	}
	return state
}

// TestChangelogOrLatestValues writes many updates and deletes per key
// across snapshots to primary-key tables and tails them from a full read
// of snapshot 3. With changelog: true every change comes, and replaying
// the messages gives the merged table. With changelog: false the full read
// is the merged table at 3, and every later message is the latest value
// of its key as of its snapshot (or a delete of a key absent then), with
// no -U and at most one message per key per snapshot; the replay also
// gives the merged table.
func TestChangelogOrLatestValues(t *testing.T) {
	tables := []struct {
		name    string
		options map[string]string
	}{
		{"changelog-producer none", map[string]string{"bucket": "2"}},
		{"changelog-producer input", map[string]string{"bucket": "2", "changelog-producer": "input"}},
		{"many files per snapshot", map[string]string{"bucket": "2", "changelog-producer": "input", "write-buffer-size": "1 kb", "write-buffer-spillable": "false"}},
	}
	for _, tc := range tables {
		tt := newPKTestTable(t, tc.options)
		rng := rand.New(rand.NewPCG(11, 12))
		state := map[int64]string{}
		var last int64
		for s := range 10 {
			last = tt.writeChanges(randomChanges(rng, state, s, 60, 25)...).ID
		}
		final := tt.merged(last)
		if !maps.Equal(final, state) {
			t.Fatalf("%s: merged table %v, want the written state %v", tc.name, final, state)
		}
		for _, changelog := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/changelog %v", tc.name, changelog), func(t *testing.T) {
				in := newInput(t, tt.yaml(fmt.Sprintf("scan_mode: from-snapshot-full\nscan_snapshot_id: 3\nbounded: true\nbatch_size: 17\nchangelog: %v\n", changelog)))
				if err := in.Connect(context.Background()); err != nil {
					t.Fatal(err)
				}
				defer in.Close(context.Background())
				var msgs []kvMsg
				eachBatch(t, in, func(b service.MessageBatch, ack service.AckFunc) {
					for _, m := range b {
						msgs = append(msgs, decodeKV(t, m))
					}
					if err := ack(context.Background(), nil); err != nil {
						t.Fatal(err)
					}
				})
				if got := replay(t, msgs); !maps.Equal(got, final) {
					t.Errorf("replay of %d messages:\n %v\nwant the merged table\n %v", len(msgs), got, final)
				}
				ops := map[string]string{"+I": "insert", "-U": "update_before", "+U": "update_after", "-D": "delete"}
				var updateBefore int
				for _, m := range msgs {
					if m.op != ops[m.kind] {
						t.Errorf("%+v: operation %q, want %q", m, m.op, ops[m.kind])
					}
					if m.kind == "-U" {
						updateBefore++
					}
				}
				if changelog {
					if tc.options["changelog-producer"] == "input" && updateBefore == 0 {
						t.Error("no -U in the changelog of a table with an input changelog")
					}
					return
				}
				full := map[int64]string{}
				perSnapshot := map[string]bool{}
				states := map[int64]map[int64]string{}
				for _, m := range msgs {
					if m.snapshot == 3 {
						if m.kind != "+I" && m.kind != "+U" {
							t.Errorf("full read: %+v", m)
						}
						full[m.k] = m.v
						continue
					}
					key := fmt.Sprintf("%d/%d", m.snapshot, m.k)
					if perSnapshot[key] {
						t.Errorf("snapshot %d: key %d emitted twice", m.snapshot, m.k)
					}
					perSnapshot[key] = true
					if states[m.snapshot] == nil {
						states[m.snapshot] = tt.merged(m.snapshot)
					}
					v, ok := states[m.snapshot][m.k]
					switch m.kind {
					case "+I", "+U":
						if !ok || v != m.v {
							t.Errorf("snapshot %d: %s %d=%s, but the key's value then is %q (present %v)", m.snapshot, m.kind, m.k, m.v, v, ok)
						}
					case "-D":
						if ok {
							t.Errorf("snapshot %d: -D of key %d, which then has the value %q", m.snapshot, m.k, v)
						}
					default:
						t.Errorf("snapshot %d: %+v", m.snapshot, m)
					}
				}
				if want := tt.merged(3); !maps.Equal(full, want) {
					t.Errorf("full read %v, want the merged table at snapshot 3 %v", full, want)
				}
				if len(perSnapshot) == 0 {
					t.Error("no changes after the full read")
				}
			})
		}
	}
}

// TestLatestValuesRefused: changelog: false is refused at Connect where
// the latest change is not a value, naming the field.
func TestLatestValuesRefused(t *testing.T) {
	cases := []struct {
		name string
		tt   *testTable
		want string
	}{
		{"append table", newTestTable(t, nil, nil), "changelog: false needs a primary-key table"},
		{"partial-update", newPKTestTable(t, map[string]string{"bucket": "1", "merge-engine": "partial-update"}),
			"changelog: false needs whole rows, but the table's merge-engine partial-update with changelog-producer none"},
		{"aggregation with input changelog", newPKTestTable(t, map[string]string{"bucket": "1", "merge-engine": "aggregation", "changelog-producer": "input"}),
			"merge-engine aggregation with changelog-producer input"},
	}
	for _, tc := range cases {
		in := newInput(t, tc.tt.yaml("changelog: false\n"))
		err := in.Connect(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Connect: %v, want %q", tc.name, err, tc.want)
		}
		_ = in.Close(context.Background())
	}
	for _, ok := range []map[string]string{
		{"bucket": "1"},
		{"bucket": "1", "merge-engine": "partial-update", "changelog-producer": "lookup"},
	} {
		in := newInput(t, newPKTestTable(t, ok).yaml("changelog: false\n"))
		if err := in.Connect(context.Background()); err != nil {
			t.Errorf("%v: Connect: %v", ok, err)
		}
		_ = in.Close(context.Background())
	}
}
