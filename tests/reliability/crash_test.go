package reliability

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// The crash test.
//
// The harness runs the real binary with an http_server input and the
// paimon output. It is the source: senders POST multipart batches of
// messages, each with a unique id, and count a message acked only when its
// request is answered 200, which http_server does only after the output
// acknowledged the batch, i.e. after the snapshot holding it was committed.
// The acks live in the harness's memory, outside the process under test.
// Every round starts the binary, sends (the ids not acked yet first, then
// new ones) and kills it with SIGKILL: at a random moment, as soon as a
// commit starts writing its manifests, or right after a snapshot file
// appears (before the acks reach the senders). The next round resends every
// id not acked. A final round sends what is left without a kill and stops
// the binary with SIGTERM. Then the table is audited (auditTable) and every
// row is accounted for:
//   - every acked (id, attempt) is in the table exactly once;
//   - no (id, attempt) is there twice: a batch never lands twice;
//   - a row from a send that was not acked is a duplicate only if that send
//     was cut off by a kill (the snapshot landed, the answer did not); a
//     send answered with an error must not have landed.

// crashSpec is one table shape of the crash test.
type crashSpec struct {
	name   string
	table  string
	bucket string // create_table lines for the bucket layout
	// extra is appended to the output's config (maintenance, options).
	extra  string
	rounds int
	// maintained: the output expires snapshots and compacts, so the audit
	// allows expired snapshots.
	maintained bool
}

func TestCrashRecovery(t *testing.T) {
	skipShort(t)
	bin := binarytest.Path(t)
	for _, spec := range []crashSpec{
		{name: "unaware-bucket", table: "crash_unaware", bucket: "bucket: -1", rounds: pick(20, 140)},
		{name: "fixed-bucket", table: "crash_fixed", bucket: "bucket: 2\n      bucket_key: [id]", rounds: pick(10, 60)},
		{name: "with-maintenance", table: "crash_maintained", bucket: crashMaintainedOptions, extra: crashMaintenance,
			rounds: pick(10, 60), maintained: true},
	} {
		t.Run(spec.name, func(t *testing.T) { runCrashTest(t, bin, spec) })
	}
}

// httpSourceConfig starts the crash tests' pipelines: the harness is the
// source, POSTing to an http_server input on the port (the first verb).
const httpSourceConfig = `
http:
  enabled: false
logger:
  level: info
  format: logfmt
shutdown_timeout: 5s
input:
  http_server:
    address: 127.0.0.1:%d
    path: /post
    timeout: 120s
`

// crashConfig is the pipeline under test.
const crashConfig = httpSourceConfig + `output:
  paimon:
    warehouse: %s
    database: rel
    table: %s
    create_table:
      enabled: true
      schema:
        - { name: id, type: BIGINT NOT NULL }
        - { name: attempt, type: INT NOT NULL }
        - { name: round, type: INT }
        - { name: p, type: INT }
        - { name: payload, type: STRING }
      partition_keys: [ p ]
      %s
    batching:
      count: 40
      period: 15ms
    max_in_flight: 4
%s
`

// crashMaintainedOptions and crashMaintenance make the output expire
// snapshots and compact files after its commits, often, so that kills land
// inside maintenance too.
const (
	crashMaintainedOptions = `bucket: -1
      options:
        snapshot.num-retained.min: "3"
        snapshot.num-retained.max: "6"
        snapshot.time-retained: "1 ms"
        target-file-size: "64 kb"
        compaction.min.file-num: "3"`
	crashMaintenance = `    maintenance:
      enabled: true
      interval: 50ms
    compaction:
      enabled: true`
)

// Send outcomes recorded in the ledger.
const (
	outcomeAcked  = "acked (200)"
	outcomeKilled = "cut off by the kill"
)

// sendKey is one send of one id: the attempt number counts from 1.
type sendKey struct {
	id      int64
	attempt int
}

// ledger is the source's memory: which ids exist, which are acked, and the
// outcome of every send.
type ledger struct {
	mu       sync.Mutex
	next     int64
	pending  []int64 // to send (again), oldest first
	sends    map[int64]int
	acked    map[int64]int // id -> attempt that was acked
	outcomes map[sendKey]string
	round    map[sendKey]int
}

func newLedger() *ledger {
	return &ledger{sends: map[int64]int{}, acked: map[int64]int{}, outcomes: map[sendKey]string{}, round: map[sendKey]int{}}
}

// take returns up to n ids to send in round r, pending ones first, then new
// ones if fresh allows.
func (l *ledger) take(n int, r int, fresh bool) []sendKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []sendKey
	for len(out) < n && len(l.pending) > 0 {
		id := l.pending[0]
		l.pending = l.pending[1:]
		out = append(out, l.newSend(id, r))
	}
	for fresh && len(out) < n {
		id := l.next
		l.next++
		out = append(out, l.newSend(id, r))
	}
	return out
}

func (l *ledger) newSend(id int64, r int) sendKey {
	l.sends[id]++
	k := sendKey{id, l.sends[id]}
	l.round[k] = r
	return k
}

// done records the outcome of sends; unacked ids are queued again.
func (l *ledger) done(keys []sendKey, outcome string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		l.outcomes[k] = outcome
		if outcome == outcomeAcked {
			l.acked[k.id] = k.attempt
		} else {
			l.pending = append(l.pending, k.id)
		}
	}
}

func (l *ledger) allAcked() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending) == 0 && len(l.acked) == int(l.next)
}

// Kill modes.
const (
	killRandom   = "at a random moment"
	killManifest = "when a commit starts writing manifests"
	killSnapshot = "right after a snapshot file appears"
)

// crashRun is the state of one crash test.
type crashRun struct {
	t       *testing.T
	bin     string
	dir     string // work directory: config, logs
	wh      string // warehouse
	spec    crashSpec
	rng     *rand.Rand
	led     *ledger
	kills   map[string]int
	sent    int // messages sent (all attempts)
	killsAt []string
	// manifestLists maps a manifest list name to the round it appeared in.
	manifestLists map[string]int
	logs          []string
}

func runCrashTest(t *testing.T, bin string, spec crashSpec) {
	r := &crashRun{
		t: t, bin: bin, dir: workDir(t), spec: spec, rng: rand.New(rand.NewPCG(seed(t), 8)),
		led: newLedger(), kills: map[string]int{}, manifestLists: map[string]int{},
	}
	r.wh = filepath.Join(r.dir, "warehouse")
	start := time.Now()
	for round := 1; round <= spec.rounds; round++ {
		r.round(round, false)
	}
	r.round(spec.rounds+1, true)
	if !r.led.allAcked() {
		t.Fatalf("the final round ended with %d ids not acked", len(r.led.pending))
	}
	r.check(time.Since(start))
}

// round runs the binary once: until a kill, or (final) until every id is
// acked, then a graceful stop.
func (r *crashRun) round(n int, final bool) {
	t := r.t
	p := startRound(t, r.bin, r.dir, n, func(port int) string {
		return fmt.Sprintf(crashConfig, port, r.wh, r.spec.table, r.spec.bucket, r.spec.extra)
	})
	cmd, exited, logPath, port := p.cmd, p.exited, p.logPath, p.port
	r.logs = append(r.logs, logPath)

	var killed sync.WaitGroup
	stopSend := make(chan struct{})
	var killing bool
	var killMu sync.Mutex
	kill := func(mode string) {
		killMu.Lock()
		defer killMu.Unlock()
		if killing {
			return
		}
		killing = true
		_ = cmd.Process.Signal(syscall.SIGKILL)
		r.kills[mode]++
		r.killsAt = append(r.killsAt, mode)
	}
	isKilled := func() bool { killMu.Lock(); defer killMu.Unlock(); return killing }

	client := &http.Client{Timeout: 90 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	url := fmt.Sprintf("http://127.0.0.1:%d/post", port)
	const senders = 6
	for s := 0; s < senders; s++ {
		srng := rand.New(rand.NewPCG(r.rng.Uint64(), uint64(s)))
		killed.Add(1)
		go func() {
			defer killed.Done()
			for {
				select {
				case <-stopSend:
					return
				default:
				}
				if isKilled() {
					return
				}
				keys := r.led.take(1+srng.IntN(16), n, !final)
				if len(keys) == 0 {
					if final && r.led.allAcked() {
						return
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				r.send(client, url, n, keys, isKilled)
			}
		}()
	}

	if final {
		killed.Wait()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("final round: the binary did not stop on SIGTERM\n%s", tail(logPath))
		}
		if p.waitErr != nil {
			t.Errorf("final round: the binary exited with %v\n%s", p.waitErr, tail(logPath))
		}
		r.noteManifests(n)
		return
	}

	mode := []string{killRandom, killManifest, killSnapshot}[r.rng.IntN(3)]
	switch mode {
	case killRandom:
		time.Sleep(time.Duration(50+r.rng.IntN(1500)) * time.Millisecond)
		kill(mode)
	default:
		dir := filepath.Join(r.wh, "rel.db", r.spec.table, "manifest")
		if mode == killSnapshot {
			dir = filepath.Join(r.wh, "rel.db", r.spec.table, "snapshot")
		}
		skip := r.rng.IntN(6)
		if !watchDir(dir, skip, 10*time.Second, exited) {
			mode = killRandom // nothing happened in time: count it as a plain kill
		}
		kill(mode)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("round %d: the binary survived SIGKILL", n)
	}
	killed.Wait()
	close(stopSend)
	if bytes.Contains(readFile(logPath), []byte("panic:")) {
		t.Errorf("round %d: the binary panicked\n%s", n, tail(logPath))
	}
	r.noteManifests(n)
}

// send POSTs keys as one multipart batch and records the outcome.
func (r *crashRun) send(client *http.Client, url string, round int, keys []sendKey, killed func() bool) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, k := range keys {
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", "application/json")
		w, err := mw.CreatePart(h)
		if err != nil {
			r.t.Error(err)
			return
		}
		fmt.Fprintf(w, `{"id":%d,"attempt":%d,"round":%d,"p":%d,"payload":"%s"}`,
			k.id, k.attempt, round, k.id%4, strings.Repeat("x", int(k.id%64)))
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, url, &body)
	if err != nil {
		r.t.Error(err)
		return
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r.led.mu.Lock()
	r.sent += len(keys)
	r.led.mu.Unlock()
	resp, err := client.Do(req)
	if err != nil {
		if killed() {
			r.led.done(keys, outcomeKilled)
		} else {
			r.led.done(keys, "transport error: "+err.Error())
		}
		return
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		r.led.done(keys, outcomeAcked)
	case killed():
		r.led.done(keys, outcomeKilled)
	default:
		r.led.done(keys, fmt.Sprintf("answered %d: %s", resp.StatusCode, strings.TrimSpace(string(msg))))
	}
}

// watchDir waits until dir has changed skip+1 times (its modification time
// moves whenever a file is created or renamed into it) and returns true, or
// returns false after timeout or when the process exits.
func watchDir(dir string, skip int, timeout time.Duration, exited <-chan struct{}) bool {
	last := time.Time{}
	if fi, err := os.Stat(dir); err == nil {
		last = fi.ModTime()
	}
	deadline := time.Now().Add(timeout)
	changes := 0
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if fi, err := os.Stat(dir); err == nil && !fi.ModTime().Equal(last) {
			last = fi.ModTime()
			if changes == skip {
				return true
			}
			changes++
		}
		time.Sleep(500 * time.Microsecond)
	}
	return false
}

// noteManifests records the round in which each manifest list appeared.
func (r *crashRun) noteManifests(round int) {
	entries, err := os.ReadDir(filepath.Join(r.wh, "rel.db", r.spec.table, "manifest"))
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "manifest-list-") {
			if _, ok := r.manifestLists[e.Name()]; !ok {
				r.manifestLists[e.Name()] = round
			}
		}
	}
}

// check audits the table and accounts for every row.
func (r *crashRun) check(elapsed time.Duration) {
	t := r.t
	ctx := context.Background()
	fio, err := storage.NewLocal(r.wh)
	if err != nil {
		t.Fatal(err)
	}
	tbl := openTable(t, ctx, fio, "rel", r.spec.table)
	// Every listed snapshot reads even when a kill interrupted an expiry
	// (auditTable fails otherwise).
	a := auditTable(t, ctx, tbl, auditOptions{expired: r.spec.maintained})
	idCol, attCol := 0, 1
	count := map[int64]int{}
	perSend := map[sendKey]int{}
	for _, row := range a.latest {
		id, att := row[idCol].(int64), int(row[attCol].(int32))
		count[id]++
		perSend[sendKey{id, att}]++
	}
	led := r.led
	// Every acked send is there exactly once; every id was acked.
	for id := int64(0); id < led.next; id++ {
		att, ok := led.acked[id]
		if !ok {
			t.Errorf("id %d was never acked", id)
			continue
		}
		if n := perSend[sendKey{id, att}]; n != 1 {
			t.Errorf("id %d: its acked send (attempt %d) is in the table %d times", id, att, n)
		}
	}
	// Every row comes from a send; a send lands at most once; unacked sends
	// land only when a kill cut them off.
	dupCauses := map[string]int{}
	dupRounds := map[int]bool{}
	for k, n := range perSend {
		outcome, sent := led.outcomes[k]
		switch {
		case !sent:
			t.Errorf("row id %d attempt %d was never sent", k.id, k.attempt)
		case n > 1:
			t.Errorf("id %d attempt %d landed %d times: a batch was committed twice", k.id, k.attempt, n)
		case outcome == outcomeAcked:
		case outcome == outcomeKilled:
			dupCauses["committed, then the process was killed before the answer reached the source"]++
			dupRounds[led.round[k]] = true
		default:
			t.Errorf("id %d attempt %d landed although the output answered it with an error: %s", k.id, k.attempt, outcome)
			dupCauses["landed after an error answer: "+outcome]++
		}
	}
	rows, dups := len(a.latest), len(a.latest)-len(count)
	lost := 0
	for id := range led.acked {
		if count[id] == 0 {
			lost++
		}
	}
	failedRounds := map[int]bool{}
	for _, l := range a.unreferencedLists {
		if rd, ok := r.manifestLists[l]; ok {
			failedRounds[rd] = true
		}
	}
	outcomes := map[string]int{}
	for _, o := range led.outcomes {
		if strings.HasPrefix(o, "answered") || strings.HasPrefix(o, "transport") {
			o = strings.SplitN(o, ":", 2)[0]
		}
		outcomes[o]++
	}
	var modes []string
	for m, n := range r.kills {
		modes = append(modes, fmt.Sprintf("%s: %d", m, n))
	}
	sort.Strings(modes)
	figure(t, "%d rounds in %v, kills {%s}; %d rounds left a failed commit attempt (manifest lists without snapshot)",
		r.spec.rounds, elapsed.Round(time.Second), strings.Join(modes, ", "), len(failedRounds))
	figure(t, "%d messages sent (%d ids), send outcomes %v", r.sent, led.next, outcomes)
	figure(t, "%d rows in %d snapshots, %d ids acked, rows lost %d, duplicates %d in %d rounds %v",
		rows, len(a.snapshots), len(led.acked), lost, dups, len(dupRounds), dupCauses)
	figure(t, "table files: %s", a.summary())
	figure(t, "binary logs: %v", logStats(r.logs))
	if t.Failed() {
		for _, l := range r.logs[max(0, len(r.logs)-2):] {
			t.Logf("%s:\n%s", l, tail(l))
		}
	}
}

// logPatterns are the log lines logStats counts.
var logPatterns = []string{
	"Automatic compaction", "Automatic snapshot expiry", "failed (retried after the next commit)",
	"has an unknown outcome", "did land; its batches are acknowledged", "did not land; committing it again",
	"Failed to commit", "level=error", "level=warn",
}

// logStats counts the lines of the logs that match logPatterns.
func logStats(paths []string) map[string]int {
	out := map[string]int{}
	for _, p := range paths {
		for _, line := range strings.Split(string(readFile(p)), "\n") {
			for _, pat := range logPatterns {
				if strings.Contains(line, pat) {
					out[pat]++
				}
			}
		}
	}
	return out
}

func readFile(p string) []byte {
	b, _ := os.ReadFile(p)
	return b
}

// tail returns the last lines of a log file.
func tail(p string) string {
	lines := strings.Split(strings.TrimSpace(string(readFile(p))), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}
