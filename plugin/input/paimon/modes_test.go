package paimon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// idleGate parks the reader each time it has caught up, until the test
// releases it: tests change the table while the reader provably waits.
type idleGate struct {
	idle    chan struct{}
	release chan struct{}
}

func gate(in *Input) *idleGate {
	g := &idleGate{idle: make(chan struct{}), release: make(chan struct{})}
	in.idle = func(ctx context.Context, _ time.Duration) bool {
		select {
		case g.idle <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		select {
		case <-g.release:
			return true
		case <-ctx.Done():
			return false
		}
	}
	return g
}

func (g *idleGate) waitIdle(t testing.TB) {
	t.Helper()
	select {
	case <-g.idle:
	case <-time.After(20 * time.Second):
		t.Fatal("the reader did not catch up")
	}
}

// idOf returns the id column of a rendered row.
func idOf(t testing.TB, g got) int64 {
	var r struct{ ID int64 }
	if err := json.Unmarshal([]byte(g.Row), &r); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// eachBatch reads a bounded input to its end and hands every batch to fn
// with its ack, which fn may call at once or keep.
func eachBatch(t testing.TB, in *Input, fn func(service.MessageBatch, service.AckFunc)) {
	t.Helper()
	for n := 0; ; n++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		b, ack, err := in.ReadBatch(ctx)
		cancel()
		if errors.Is(err, service.ErrEndOfInput) {
			return
		}
		if err != nil {
			t.Fatalf("after %d batches: %v", n, err)
		}
		fn(b, ack)
	}
}

// readAll reads a bounded input to its end, acking every batch.
func readAll(t testing.TB, in *Input) []got {
	t.Helper()
	var out []got
	eachBatch(t, in, func(b service.MessageBatch, ack service.AckFunc) {
		for _, m := range b {
			out = append(out, decode(t, m))
		}
		if err := ack(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	})
	return out
}

// summary renders messages as "snapshot:id" in arrival order.
func summary(t testing.TB, msgs []got) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = fmt.Sprintf("%d:%d", m.Snapshot, idOf(t, m))
	}
	return strings.Join(parts, " ")
}

// fiveSnapshots makes a table whose snapshot n (1..5), committed at
// baseTime + n s, appends ids 10n and 10n+1.
func fiveSnapshots(t testing.TB) *testTable {
	tt := newTestTable(t, nil, nil)
	for n := int64(1); n <= 5; n++ {
		tt.appendRows(row("d", "eu", 10*n), row("d", "eu", 10*n+1))
	}
	return tt
}

// TestScanModes runs every scan mode against a table with known snapshot
// times and checks which rows come, in which order, tagged with which
// snapshot.
func TestScanModes(t *testing.T) {
	tt := fiveSnapshots(t)
	allAt := func(s int) string {
		var p []string
		for n := 1; n <= 5; n++ {
			p = append(p, fmt.Sprintf("%d:%d %d:%d", s, 10*n, s, 10*n+1))
		}
		return strings.Join(p, " ")
	}
	cases := []struct {
		name, yaml, want string
	}{
		{"latest-full", "scan_mode: latest-full\n", allAt(5)},
		{"full alias", "scan_mode: full\n", allAt(5)},
		{"from-timestamp at snapshot 3's time", "scan_mode: from-timestamp\nscan_timestamp: 2024-05-30T10:00:03Z\n",
			"3:30 3:31 4:40 4:41 5:50 5:51"},
		{"from-timestamp just after snapshot 3, epoch ms", fmt.Sprintf("scan_mode: from-timestamp\nscan_timestamp: %q\n", fmt.Sprint(snapshotTime(3).UnixMilli()+1)),
			"4:40 4:41 5:50 5:51"},
		{"from-timestamp with an offset", "scan_mode: from-timestamp\nscan_timestamp: 2024-05-30T12:00:04+02:00\n",
			"4:40 4:41 5:50 5:51"},
		{"from-timestamp before every snapshot", "scan_mode: from-timestamp\nscan_timestamp: 2024-05-30T09:00:00Z\n",
			"1:10 1:11 2:20 2:21 3:30 3:31 4:40 4:41 5:50 5:51"},
		{"from-snapshot 2", "scan_mode: from-snapshot\nscan_snapshot_id: 2\n", "2:20 2:21 3:30 3:31 4:40 4:41 5:50 5:51"},
		{"from-snapshot-full 3", "scan_mode: from-snapshot-full\nscan_snapshot_id: 3\n", "3:10 3:11 3:20 3:21 3:30 3:31 4:40 4:41 5:50 5:51"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := newInput(t, tt.yaml(tc.yaml+"bounded: true\n"))
			if err := in.Connect(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer in.Close(context.Background())
			msgs := readAll(t, in)
			if got := summary(t, msgs); got != tc.want {
				t.Errorf("snapshot:id\n got  %s\n want %s", got, tc.want)
			}
			for _, m := range msgs {
				if want := snapshotTime(m.Snapshot).Format("2006-01-02T15:04:05.000Z"); m.Time != want || m.Kind != "APPEND" {
					t.Errorf("snapshot %d: commit time %s kind %s, want %s APPEND", m.Snapshot, m.Time, m.Kind, want)
				}
			}
		})
	}

	t.Run("latest", func(t *testing.T) {
		in := newInput(t, tt.yaml("scan_mode: latest\n"))
		g := gate(in)
		if err := in.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer in.Close(context.Background())
		g.waitIdle(t)
		tt.appendRows(row("d", "eu", 60), row("d", "eu", 61))
		g.release <- struct{}{}
		if got := summary(t, readN(t, in, 2)); got != "6:60 6:61" {
			t.Errorf("latest read %s, want 6:60 6:61", got)
		}
	})
}

// TestConsumerResume: a bounded read with consumer_id saves the position
// past the last snapshot before the input ends; a restart reads nothing
// until a new snapshot, and then only that one, even though scan_mode asks
// for everything.
func TestConsumerResume(t *testing.T) {
	tt := fiveSnapshots(t)
	conf := tt.yaml("consumer_id: c1\nbounded: true\nscan_mode: from-snapshot\nscan_snapshot_id: 1\n")
	in := newInput(t, conf)
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, in)); n != 10 {
		t.Fatalf("first run read %d rows, want 10", n)
	}
	if pos := tt.consumer("c1"); pos != 6 {
		t.Fatalf("consumer after the bounded read: %d, want 6", pos)
	}
	if err := in.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	in = newInput(t, conf)
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if msgs := readAll(t, in); len(msgs) != 0 {
		t.Fatalf("restart at the end read %s, want nothing", summary(t, msgs))
	}
	in.Close(context.Background())

	tt.appendRows(row("d", "eu", 60))
	in = newInput(t, conf)
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := summary(t, readAll(t, in)); got != "6:60" {
		t.Fatalf("restart after snapshot 6 read %s, want 6:60", got)
	}
	in.Close(context.Background())
	if pos := tt.consumer("c1"); pos != 7 {
		t.Fatalf("consumer: %d, want 7", pos)
	}
}

// TestOutOfOrderAcks reads every batch of a run of snapshots, some of
// which have no rows for the reader (filtered partitions), then acks the
// batches in shuffled orders: after every ack the consumer file holds
// exactly the position after the longest run of fully acked snapshots.
func TestOutOfOrderAcks(t *testing.T) {
	for seed := range 8 {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			tt := newTestTable(t, []string{"region"}, nil)
			sizes := []struct {
				region string
				rows   int
			}{{"eu", 3}, {"us", 2}, {"eu", 1}, {"eu", 5}, {"us", 1}, {"eu", 2}}
			id := int64(0)
			for _, s := range sizes {
				var rows [][]any
				for range s.rows {
					rows = append(rows, row("d", s.region, id))
					id++
				}
				tt.appendRows(rows...)
			}
			in := newInput(t, tt.yaml("consumer_id: ooo\nbounded: true\nscan_mode: from-snapshot\nscan_snapshot_id: 1\nbatch_size: 2\npartition_filter: { region: eu }\n"))
			if err := in.Connect(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer in.Close(context.Background())
			type pending struct {
				snapshot int64
				ack      service.AckFunc
			}
			var batches []pending
			perSnapshot := map[int64]int{}
			eachBatch(t, in, func(b service.MessageBatch, ack service.AckFunc) {
				s := decode(t, b[0]).Snapshot
				batches = append(batches, pending{s, ack})
				perSnapshot[s]++
			})
			if fmt.Sprint(perSnapshot) != "map[1:2 3:1 4:3 6:1]" {
				t.Fatalf("batches per snapshot %v, want map[1:2 3:1 4:3 6:1]", perSnapshot)
			}
			if pos := tt.consumer("ooo"); pos != 0 {
				t.Fatalf("consumer before any ack: %d, want none", pos)
			}
			expected := func() int64 {
				var pos int64
				for s := int64(1); s <= 6; s++ {
					if perSnapshot[s] > 0 {
						return pos
					}
					pos = s + 1
				}
				return pos
			}
			order := rngPerm(seed, len(batches))
			for _, i := range order {
				b := batches[i]
				if err := b.ack(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				perSnapshot[b.snapshot]--
				if got, want := tt.consumer("ooo"), expected(); got != want {
					t.Fatalf("after acking a batch of snapshot %d: consumer %d, want %d", b.snapshot, got, want)
				}
			}
			if pos := tt.consumer("ooo"); pos != 7 {
				t.Fatalf("consumer after all acks: %d, want 7", pos)
			}
		})
	}
}

// rngPerm is a deterministic permutation of 0..n-1 that differs by seed.
func rngPerm(seed, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	x := uint64(seed)*0x9e3779b97f4a7c15 + 1
	for i := n - 1; i > 0; i-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		j := int(x % uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	if seed == 0 {
		slices.Reverse(p)
	}
	return p
}

// TestNackWithoutReplay: with auto_replay_nacks off a nack drops the rows
// and the position moves on, as Benthos' contract says.
func TestNackWithoutReplay(t *testing.T) {
	tt := fiveSnapshots(t)
	in := newInput(t, tt.yaml("consumer_id: nack\nbounded: true\nscan_mode: from-snapshot\nscan_snapshot_id: 4\nauto_replay_nacks: false\n"))
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer in.Close(context.Background())
	var acks []service.AckFunc
	eachBatch(t, in, func(_ service.MessageBatch, ack service.AckFunc) { acks = append(acks, ack) })
	if len(acks) != 2 {
		t.Fatalf("%d batches, want 2 (snapshots 4 and 5)", len(acks))
	}
	if err := acks[0](context.Background(), errors.New("downstream said no")); err != nil {
		t.Fatal(err)
	}
	if pos := tt.consumer("nack"); pos != 5 {
		t.Fatalf("consumer after a nack without replay: %d, want 5", pos)
	}
	if err := acks[1](context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if pos := tt.consumer("nack"); pos != 6 {
		t.Fatalf("consumer: %d, want 6", pos)
	}
}

// TestOnExpired: a snapshot expired while the reader waited for it is an
// error naming it (on_expired: error) or is skipped to the earliest one
// (on_expired: earliest).
func TestOnExpired(t *testing.T) {
	for _, mode := range []string{"error", "earliest"} {
		t.Run(mode, func(t *testing.T) {
			tt := newTestTable(t, nil, nil)
			tt.appendRows(row("d", "eu", 10))
			tt.appendRows(row("d", "eu", 20))
			in := newInput(t, tt.yaml("scan_mode: from-snapshot\nscan_snapshot_id: 1\non_expired: "+mode+"\n"))
			g := gate(in)
			if err := in.Connect(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer in.Close(context.Background())
			if got := summary(t, readN(t, in, 2)); got != "1:10 2:20" {
				t.Fatalf("read %s", got)
			}
			g.waitIdle(t)
			tt.appendRows(row("d", "eu", 30))
			tt.appendRows(row("d", "eu", 40))
			tt.appendRows(row("d", "eu", 50))
			tt.expire(4)
			g.release <- struct{}{}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			b, ack, err := in.ReadBatch(ctx)
			if mode == "error" {
				if err == nil {
					t.Fatalf("read %d rows of an expired range, want an error", len(b))
				}
				for _, s := range []string{"snapshot with id 3 has expired", "earliest snapshot id: 5", "consumer_id", "on_expired: earliest"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_ = ack(ctx, nil)
			if got := decode(t, b[0]); got.Snapshot != 5 || idOf(t, got) != 50 || len(b) != 1 {
				t.Fatalf("after the gap read %d rows, first %+v; want snapshot 5 id 50", len(b), got)
			}
		})
	}
}
