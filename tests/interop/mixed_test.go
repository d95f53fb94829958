//go:build interop

package interop

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// TestMixedWriters: Go, Java 1.x, Java 2.x and pypaimon commit in turn into
// one table on a local disk (an unaware-bucket and a fixed-bucket one, where
// Go's writer must continue the sequence numbers of Java's files, with a
// Java and a Go compaction in between). Afterwards the snapshot ids are
// contiguous (none lost), their kinds and record counts are what each
// commit made, and every reader reads every row, at the latest and at
// every snapshot, also after Java expired snapshots of Go's and Java's
// files and Go expired after it.
func TestMixedWriters(t *testing.T) {
	requireOracles(t)
	cases := []struct {
		name string
		spec specFile
	}{
		{"mixed_unaware", specFile{
			Schema:        []specField{{"id", "BIGINT NOT NULL"}, {"grp", "STRING"}, {"who", "STRING"}, {"d", "DECIMAL(10, 3)"}},
			PartitionKeys: []string{"grp"},
			Options:       map[string]string{"compaction.min.file-num": "3"},
			Filters:       []string{"who = 'go'", "id >= 20", "d > 1.5"},
		}},
		{"mixed_bucket", specFile{
			Schema:        []specField{{"id", "BIGINT NOT NULL"}, {"grp", "STRING"}, {"who", "STRING"}, {"d", "DECIMAL(10, 3)"}},
			PartitionKeys: []string{"grp"},
			Options:       map[string]string{"bucket": "3", "bucket-key": "id"},
			Filters:       []string{"who = 'go'", "id >= 20", "d > 1.5"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := ctxT(t)
			g := runGoSpec(t, t.TempDir(), c.name, &c.spec)
			writers := []string{"go", java1, "go", java2, "go", py}
			id := 0
			users := map[int64]string{}
			commitBy := func(who string) {
				var rows []json.RawMessage
				for j := 0; j < 3; j++ {
					grp := []string{"g1", "g2", "日本/ü"}[(id+j)%3]
					rows = append(rows, row("id", id, "grp", grp, "who", who, "d", fmt.Sprintf("%d.%03d", id/10, id%1000)))
					id++
				}
				if who == "go" {
					g.writer = nil // a new writer restores the sequence numbers of the other writers' files
					parsed, err := g.parseRows(rows)
					if err != nil {
						t.Fatal(err)
					}
					if err := g.appendRows(ctx, parsed); err != nil {
						t.Fatalf("Go appends to %s after %s: %v", c.name, users[g.lastID], err)
					}
				} else {
					oracleWrite(t, who, g.ref, specFile{Commits: []specCommit{appendStep(rows...)}})
					parsed, err := g.parseRows(rows)
					if err != nil {
						t.Fatal(err)
					}
					g.rows = append(g.rows, parsed...)
					if err := g.record(ctx); err != nil {
						t.Fatal(err)
					}
				}
				users[g.lastID] = who
			}
			for round := 0; round < 2; round++ {
				for _, w := range writers {
					commitBy(w)
				}
			}
			// Go compacts what all wrote, Java appends after it and compacts
			// (an empty APPEND and a COMPACT), Go appends after that
			if err := g.compact(ctx); err != nil {
				t.Fatalf("Go compacts %s: %v", c.name, err)
			}
			if g.states[g.lastID].kind != "COMPACT" {
				t.Fatalf("table %s: Go's compaction made no COMPACT snapshot", c.name)
			}
			for _, w := range []string{java1, "go", java2, "go", java1} {
				commitBy(w)
			}
			oracleWrite(t, java2, g.ref, specFile{Commits: []specCommit{{Kind: "compact"}}})
			if err := g.record(ctx); err != nil {
				t.Fatal(err)
			}
			if g.states[g.lastID].kind != "COMPACT" {
				t.Fatalf("table %s: Java's compaction made no COMPACT snapshot", c.name)
			}
			commitBy("go")
			commitBy(py)

			ids, err := g.tb.Snapshots().ListIDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]int64, g.lastID)
			for i := range want {
				want[i] = int64(i + 1)
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("table %s: snapshot ids %v, want 1..%d contiguous", c.name, ids, g.lastID)
			}
			var kinds []string
			for _, id := range ids {
				kinds = append(kinds, fmt.Sprintf("%d:%s", id, g.states[id].kind))
			}
			t.Logf("table %s: snapshots %v; %d rows", c.name, kinds, len(g.rows))

			// Java expires snapshots whose files Go and Java wrote and
			// compacted; after more commits Go expires in turn
			if _, err := env.oracles[java2].Call(append(append([]string{"expire"}, g.ref.flags()...), "--retain-max", "8")...); err != nil {
				t.Fatalf("java2 expires %s: %v", c.name, err)
			}
			if err := g.forgetExpired(ctx); err != nil {
				t.Fatal(err)
			}
			commitBy("go")
			commitBy(java1)
			if err := g.expire(ctx, 5, 1); err != nil {
				t.Fatalf("Go expires %s after Java's expiry: %v", c.name, err)
			}
			ids, err = g.tb.Snapshots().ListIDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := []int64{g.lastID - 4, g.lastID - 3, g.lastID - 2, g.lastID - 1, g.lastID}; !slices.Equal(ids, want) {
				t.Fatalf("table %s: after the expiries snapshots %v, want %v", c.name, ids, want)
			}
			checkGoTable(t, g, nil)
		})
	}
}

// TestConsumers: consumer files pin snapshots against the other side's
// expiry. A Go consumer (snapshot.ConsumerManager.Put) keeps Java's
// `expire --retain-max 1` (1.x and 2.x) from expiring the snapshots from
// its nextSnapshot on, which stay readable by Go (and Java), and a Go stream
// resumed from the consumer reads exactly their deltas; a Java consumer
// keeps Go's ExpireSnapshots from expiring them.
func TestConsumers(t *testing.T) {
	requireOracles(t)
	spec := func() *specFile {
		s := &specFile{
			Schema:        []specField{{"id", "INT NOT NULL"}, {"p", "STRING"}},
			PartitionKeys: []string{"p"},
		}
		for k := 0; k < 6; k++ {
			s.Commits = append(s.Commits, appendStep(row("id", 2*k, "p", "a"), row("id", 2*k+1, "p", fmt.Sprintf("k%d", k))))
		}
		return s
	}
	for _, expirer := range []string{java1, java2} {
		t.Run("go consumer vs "+expirer+" expire", func(t *testing.T) {
			ctx := ctxT(t)
			g := runGoSpec(t, t.TempDir(), "consumer_go", spec())
			if err := g.tb.Consumers().Put(ctx, "go-reader", snapshot.Consumer{NextSnapshot: 4}); err != nil {
				t.Fatal(err)
			}
			expire := func(retainMax int) {
				if _, err := env.oracles[expirer].Call(append(append([]string{"expire"}, g.ref.flags()...), "--retain-max", fmt.Sprint(retainMax))...); err != nil {
					t.Fatalf("%s expires %s: %v", expirer, g.ref, err)
				}
				if err := g.forgetExpired(ctx); err != nil {
					t.Fatal(err)
				}
			}
			expire(1)
			ids, err := g.tb.Snapshots().ListIDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids, []int64{4, 5, 6}) {
				t.Fatalf("table %s: after %s's expire --retain-max 1 with consumer go-reader at 4: snapshots %v, want [4 5 6]", g.ref, expirer, ids)
			}
			// the pinned snapshots are whole: Go and Java read them
			for _, id := range ids {
				want, err := canonicalRows(g.states[id].fields, g.states[id].rows)
				if err != nil {
					t.Fatal(err)
				}
				fields, rows, err := goReadSnapshot(ctx, g.tb, id)
				got, rerr := canonicalRows(fields, rows)
				verdict(t, where{table: g.ref.String(), snapshot: id, writer: "go", reader: "go after " + expirer + "'s expiry"}, nil, want, got, errors2(err, rerr))
				got, err = oracleRead(expirer, g.ref, readOpts{snapshot: id})
				verdict(t, where{table: g.ref.String(), snapshot: id, writer: "go", reader: expirer + " after its expiry"}, nil, want, got, err)
			}
			// a stream resumed from the consumer reads the deltas of 4, 5, 6
			sc := g.tb.NewStreamScan(scan.StreamOptions{NextSnapshot: 4, Bounded: true})
			r, err := g.tb.NewRead(nil)
			if err != nil {
				t.Fatal(err)
			}
			for want := int64(4); ; want++ {
				plan, err := sc.Next(ctx)
				if errors.Is(err, scan.ErrEndOfScan) {
					if want != 7 {
						t.Fatalf("stream from consumer ended before snapshot %d", want)
					}
					break
				}
				if err != nil || plan == nil {
					t.Fatalf("stream from consumer at snapshot %d: %v", want, err)
				}
				if plan.Snapshot.ID != want || plan.Full {
					t.Fatalf("stream from consumer: plan of snapshot %d (full %v), want the delta of %d", plan.Snapshot.ID, plan.Full, want)
				}
				var got []string
				for _, split := range plan.Splits {
					rows, err := readSplit(ctx, r, split)
					if err != nil {
						t.Fatal(err)
					}
					lines, err := canonicalRows(g.fields, rows)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, lines...)
				}
				sortCodePoints(got)
				prev := g.states[want].rows[:len(g.states[want].rows)-2]
				wantLines, _ := canonicalRows(g.fields, g.states[want].rows[len(prev):])
				verdict(t, where{table: g.ref.String() + " (delta)", snapshot: want, writer: "go", reader: "go stream from consumer"}, nil, wantLines, got, nil)
			}
			// moving the consumer on releases the older snapshots
			if err := g.tb.Consumers().Put(ctx, "go-reader", snapshot.Consumer{NextSnapshot: 6}); err != nil {
				t.Fatal(err)
			}
			expire(1)
			if ids, _ = g.tb.Snapshots().ListIDs(ctx); !slices.Equal(ids, []int64{6}) {
				t.Fatalf("table %s: after moving the consumer to 6 and %s's expiry: snapshots %v, want [6]", g.ref, expirer, ids)
			}
			checkGoTable(t, g, nil)
		})
	}
	t.Run("java consumer vs go expire", func(t *testing.T) {
		ctx := ctxT(t)
		g := runGoSpec(t, t.TempDir(), "consumer_java", spec())
		oracleWrite(t, java1, g.ref, specFile{Commits: []specCommit{{Kind: "consumer", ID: "java-reader", NextSnapshot: 3}}})
		c, ok, err := g.tb.Consumers().Get(ctx, "java-reader")
		if err != nil || !ok || c.NextSnapshot != 3 {
			t.Fatalf("Go reads Java's consumer file: %+v %v %v, want nextSnapshot 3", c, ok, err)
		}
		if _, err := g.tb.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMax: 1, RetainMin: 1, OlderThan: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := g.forgetExpired(ctx); err != nil {
			t.Fatal(err)
		}
		ids, _ := g.tb.Snapshots().ListIDs(ctx)
		if !slices.Equal(ids, []int64{3, 4, 5, 6}) {
			t.Fatalf("table %s: after Go's expiry with Java's consumer java-reader at 3: snapshots %v, want [3 4 5 6]", g.ref, ids)
		}
		checkGoTable(t, g, nil)
	})
}
