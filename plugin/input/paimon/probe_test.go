package paimon

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// look is one step of a probeSchedule: the wait, whether it is the first
// look since a snapshot was read, and whether the look after it is a full
// poll.
type look struct {
	wait        time.Duration
	first, poll bool
}

func looks(s *probeSchedule, n int) []look {
	out := make([]look, n)
	for i := range out {
		out[i].wait, out[i].first, out[i].poll = s.next()
	}
	return out
}

const ms = time.Millisecond

// TestProbeSchedule: after a snapshot was read, the waits start at
// probeFirstWait and grow by half up to discovery_interval; the first look
// is marked (a hit then means a backlog) unless a poll came first; every
// 16th look is a full poll (Java's RANGE_CHECK_INTERVAL); reading a
// snapshot starts the schedule and the count again, a poll only the count.
func TestProbeSchedule(t *testing.T) {
	p := func(d time.Duration) look { return look{wait: d} }
	first := look{wait: 10 * ms, first: true}
	poll := func(d time.Duration) look { return look{wait: d, poll: true} }
	const us = time.Microsecond
	// The ramp to 100 ms: 10, 15, 22.5, 33.75, 50.625, 75.9375 ms.
	ramp := []look{first, p(15 * ms), p(22500 * us), p(33750 * us), p(50625 * us), p(75937500)}
	rampTo := func(max time.Duration, n int) []look {
		out := slices.Clone(ramp)
		for len(out) < n {
			out = append(out, p(max))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		max   time.Duration
		steps func(s *probeSchedule) []look
		want  []look
	}{
		{
			name:  "ramp to 100ms, range check on the 16th look",
			max:   100 * ms,
			steps: func(s *probeSchedule) []look { return looks(s, 18) },
			want:  append(rampTo(100*ms, 15), poll(100*ms), p(100*ms), p(100*ms)),
		},
		{
			name:  "ramp to 1s: 12 probes in 2.6 s",
			max:   time.Second,
			steps: func(s *probeSchedule) []look { return looks(s, 14) },
			want: append(slices.Clone(ramp), p(113906250), p(170859375), p(256289062), p(384433593), p(576650389), p(864975583),
				p(time.Second), p(time.Second)),
		},
		{
			name:  "an interval below the first wait caps every wait",
			max:   3 * ms,
			steps: func(s *probeSchedule) []look { return looks(s, 3) },
			want:  []look{{wait: 3 * ms, first: true}, p(3 * ms), p(3 * ms)},
		},
		{
			name: "a snapshot read restarts the ramp and the count",
			max:  100 * ms,
			steps: func(s *probeSchedule) []look {
				out := looks(s, 10)
				s.read()
				return append(out, looks(s, 17)...)
			},
			want: append(rampTo(100*ms, 10), append(rampTo(100*ms, 15), poll(100*ms), p(100*ms))...),
		},
		{
			name: "a poll restarts the count, not the ramp",
			max:  40 * ms,
			steps: func(s *probeSchedule) []look {
				out := looks(s, 5)
				s.polled()
				return append(out, looks(s, 16)...)
			},
			want: append([]look{first, p(15 * ms), p(22500 * us), p(33750 * us), p(40 * ms)},
				append(slices.Repeat([]look{p(40 * ms)}, 15), poll(40*ms))...),
		},
		{
			name: "a poll right after a snapshot read was the first look",
			max:  100 * ms,
			steps: func(s *probeSchedule) []look {
				s.polled()
				return looks(s, 2)
			},
			want: []look{p(10 * ms), p(15 * ms)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newProbeSchedule(tc.max)
			s.read()
			if got := tc.steps(&s); !slices.Equal(got, tc.want) {
				t.Errorf("looks:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// statSignal is a FileIO that, once armed, hands each Stat of path to
// the test over stats before it runs: the reader waits for the test to
// take it. Unarmed, it notes whether a Stat of path came after a GET of
// it (polled): the range check of a scanner's poll that found nothing.
type statSignal struct {
	storage.FileIO
	path   string
	armed  atomic.Bool
	stats  chan struct{}
	got    atomic.Bool // a GET of path ran
	polled atomic.Bool // a Stat of path ran after a GET of it
}

func (s *statSignal) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if p == s.path {
		s.got.Store(true)
	}
	return s.FileIO.ReadFile(ctx, p)
}

func (s *statSignal) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	if p == s.path && s.got.Load() {
		s.polled.Store(true)
	}
	if p == s.path && s.armed.Load() {
		select {
		case s.stats <- struct{}{}:
		case <-ctx.Done():
			return storage.FileInfo{}, ctx.Err()
		}
	}
	return s.FileIO.Stat(ctx, p)
}

// secondSnapshot is the path of snapshot 2 of the test tables.
const secondSnapshot = "default.db/events/snapshot/snapshot-2"

// tailHeld connects an input of yaml to fio through a counting FileIO
// (which is not a local disk, so the reader probes as on S3) and a
// statSignal on snapshot 2, reads the message of snapshot 1, waits for the
// scanner's poll that finds nothing after it (the failed GET of snapshot
// 2, then the range check, whose LatestID HEADs snapshot 2 after the
// LATEST hint) and arms the signal: from then on, each HEAD of snapshot 2
// waits for the test, and it is a probe's, not that poll's (the next poll
// is rangeCheckEvery looks away). The input is closed when the test ends.
func tailHeld(t *testing.T, fio storage.FileIO, yaml string) (*Input, *statSignal, *faultfs.FS) {
	t.Helper()
	signal := &statSignal{FileIO: fio, path: secondSnapshot, stats: make(chan struct{})}
	counted := faultfs.New(signal, 1)
	in := newInput(t, yaml)
	in.fileIO = func(context.Context) (storage.FileIO, error) { return counted, nil }
	if err := in.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(context.Background()) })
	if got := readN(t, in, 1); got[0].Snapshot != 1 {
		t.Fatalf("first message: %+v", got[0])
	}
	for deadline := time.Now().Add(60 * time.Second); !signal.polled.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no poll of %s in 60 s after snapshot 1 was read", secondSnapshot)
		}
	}
	signal.armed.Store(true)
	return in, signal, counted
}

// idleRequests tails a table whose one snapshot is 1 (tailHeld), lets the
// reader look for snapshot 2 probes times, stops it, and returns the calls
// made meanwhile: HEADs (Stat) and GETs (ReadFile) of snapshot-2, and all
// calls.
func idleRequests(t *testing.T, fio storage.FileIO, yaml string, probes int) (heads, gets, all int) {
	t.Helper()
	in, signal, counted := tailHeld(t, fio, yaml)
	before := counted.Calls(faultfs.OpAll)
	beforeHeads, beforeGets := counted.PathCalls(faultfs.OpStat)[secondSnapshot], counted.PathCalls(faultfs.OpReadFile)[secondSnapshot]
	for i := range probes {
		select {
		case <-signal.stats:
		case <-time.After(60 * time.Second):
			t.Fatalf("%d probes of %s, then none for 60 s; want %d", i, secondSnapshot, probes)
		}
	}
	in.reader.stop() // no more calls from here on; Close stops it again harmlessly
	return counted.PathCalls(faultfs.OpStat)[secondSnapshot] - beforeHeads, counted.PathCalls(faultfs.OpReadFile)[secondSnapshot] - beforeGets,
		counted.Calls(faultfs.OpAll) - before
}

// TestIdleReaderRequests: a reader that has caught up on a table nobody
// writes to looks for the next snapshot with one HEAD of its name, and
// every 16th time with the scanner's full poll instead (the GET of the
// name and four requests of the range check, one of them a HEAD of the
// name): 20 requests per 16 looks, where a full poll every time costs 80.
// Each look HEADs snapshot-2 once, so the HEADs count the looks.
func TestIdleReaderRequests(t *testing.T) {
	tt := newTestTable(t, nil, nil)
	tt.appendRows(row("d", "eu", 1))
	heads, gets, all := idleRequests(t, tt.tbl.FileIO(), tt.yaml("scan_mode: latest-full\ndiscovery_interval: 1ms\n"), 160)
	t.Logf("%d looks, %d of them polls, %d requests", heads, gets, all)
	if want := float64(heads) / 16; float64(gets) < want-1 || float64(gets) > want+1 {
		t.Errorf("%d looks (HEAD) and %d polls (GET) of snapshot-2, want a poll every 16 looks (Java's RANGE_CHECK_INTERVAL)", heads, gets)
	}
	if float64(all) > 1.25*float64(heads)+5 {
		t.Errorf("%d requests for %d looks (%d of them polls), want at most 1.25 a look", all, heads, gets)
	}
}

// TestProbeFindsSnapshotOnS3: on S3 a reader that has caught up sees a
// snapshot committed while it waits long before discovery_interval (30 s)
// passes, and reads it with a HEAD and a GET of its name.
func TestProbeFindsSnapshotOnS3(t *testing.T) {
	cfg, bucket := s3test.Server(t)
	ctx := context.Background()
	wh := "s3://" + bucket + "/wh"
	cat, err := lakecore.OpenCatalog(ctx, wh, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "default", "events", lakecore.TableSpec{Fields: types.MustParse(eventsSchema).Fields})
	if err != nil {
		t.Fatal(err)
	}
	tt := &testTable{t: t, warehouse: wh, tbl: tbl}
	tt.committer = newCommitter(tt)
	tt.appendRows(row("d", "eu", 1))

	counted := faultfs.New(tbl.FileIO(), 1)
	in := newInput(t, tt.yaml(fmt.Sprintf("scan_mode: latest-full\ndiscovery_interval: 30s\ns3: { endpoint: %s, region: %s, force_path_style: true, credentials: { id: %s, secret: %s } }\n",
		cfg.Endpoint, cfg.Region, cfg.AccessKeyID, cfg.SecretAccessKey)))
	in.fileIO = func(context.Context) (storage.FileIO, error) { return counted, nil }
	if err := in.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	if got := readN(t, in, 1); got[0].Snapshot != 1 {
		t.Fatalf("first message: %+v", got[0])
	}
	for id := int64(2); id <= 3; id++ {
		p := fmt.Sprintf("default.db/events/snapshot/snapshot-%d", id)
		gets := counted.PathCalls(faultfs.OpReadFile)[p] // the poll that found nothing yet, for snapshot 2
		start := time.Now()
		tt.appendRows(row("d", "eu", id))
		got := readN(t, in, 1)
		if got[0].Snapshot != id {
			t.Fatalf("message after commit %d: %+v", id, got[0])
		}
		// The ramp restarted at the last snapshot read, so the probe
		// comes within a second or so of the commit; 15 s leaves room
		// for a loaded machine and is still half the interval.
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("snapshot %d seen %v after its commit, want well before discovery_interval (30 s)", id, took)
		}
		t.Logf("snapshot %d seen %v after its commit began", id, time.Since(start))
		if h := counted.PathCalls(faultfs.OpStat)[p]; h < 1 {
			t.Errorf("%s: %d HEADs, want the probe that found it", p, h)
		}
		if g := counted.PathCalls(faultfs.OpReadFile)[p] - gets; g != 1 {
			t.Errorf("%s: %d GETs after the commit, want 1", p, g)
		}
	}
}

// TestProbeFindsBacklog: when the first probe after a snapshot was read
// finds the next one, that means a backlog, which the reader then reads by
// polling the scanner, without a HEAD before each snapshot. The reader is
// held at its probe for snapshot 2 while snapshots 2 to 6 are committed.
func TestProbeFindsBacklog(t *testing.T) {
	tt := newTestTable(t, nil, nil)
	tt.appendRows(row("d", "eu", 1))
	in, signal, counted := tailHeld(t, tt.tbl.FileIO(), tt.yaml("scan_mode: latest-full\ndiscovery_interval: 30s\n"))
	for id := int64(2); id <= 6; id++ {
		tt.appendRows(row("d", "eu", id))
	}
	select {
	case <-signal.stats: // the reader's next probe of snapshot-2 runs now
	case <-time.After(60 * time.Second):
		t.Fatal("no probe of snapshot-2 in 60 s")
	}
	for i, g := range readN(t, in, 5) {
		if g.Snapshot != int64(i+2) {
			t.Fatalf("message %d: %+v, want snapshot %d", i, g, i+2)
		}
	}
	heads := counted.PathCalls(faultfs.OpStat)
	for id := 4; id <= 6; id++ {
		if n := heads[fmt.Sprintf("default.db/events/snapshot/snapshot-%d", id)]; n != 0 {
			t.Errorf("snapshot-%d: %d HEADs, want none in a backlog", id, n)
		}
	}
	if n := heads["default.db/events/snapshot/snapshot-3"]; n != 1 {
		t.Errorf("snapshot-3: %d HEADs, want 1 (the first probe after snapshot 2, which found the backlog)", n)
	}
}
