package reliability

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/config"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/s3test"
	paimonout "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon"
)

// TestS3Faults runs the paimon output (through service.NewStreamBuilder)
// against the S3 test server behind faultProxy, which answers a fraction
// of all requests with 503s, drops connections, holds requests beyond the
// client's time-out, and applies requests while losing or spoiling the
// answer (ambiguous commits). The test is the source: it sends batches of
// messages with unique ids and sends again whatever was not acked, until N
// ids are acked. Then, with the faults off: every acked row is in the
// table once, no send landed twice, no commit (user, identifier) landed
// twice, every snapshot reads, and rows of sends that failed landed only
// when the output said their outcome was unknown.
func TestS3Faults(t *testing.T) {
	skipShort(t)
	cfg, bucket := s3test.Server(t)
	n := pick(2500, 15000)
	rate := pick(0.04, 0.10)
	const reqTimeout, slow = 1500 * time.Millisecond, 2200 * time.Millisecond
	sd := seed(t)
	proxy, err := newFaultProxy(cfg.Endpoint, sd, rate, slow)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()

	clientCfg := cfg
	clientCfg.Endpoint = proxy.URL()
	clientCfg.RequestTimeout = reqTimeout
	env := service.NewEnvironment()
	err = paimonout.Register(env, paimonout.WithFileIO(func(ctx context.Context, tb config.Table) (storage.FileIO, error) {
		return storage.Open(ctx, tb.Warehouse, clientCfg)
	}))
	if err != nil {
		t.Fatal(err)
	}
	sb := env.NewStreamBuilder()
	logs := &lineLog{}
	sb.SetLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	produce, err := sb.AddBatchProducerFunc()
	if err != nil {
		t.Fatal(err)
	}
	wh := "s3://" + bucket + "/warehouse"
	err = sb.AddOutputYAML(fmt.Sprintf(`
paimon:
  warehouse: %s
  database: rel
  table: s3faults
  create_table:
    enabled: true
    schema:
      - { name: id, type: BIGINT NOT NULL }
      - { name: attempt, type: INT NOT NULL }
      - { name: p, type: INT }
      - { name: payload, type: STRING }
    partition_keys: [ p ]
  batching:
    count: 60
    period: 50ms
  max_in_flight: 4
  maintenance:
    enabled: false
`, wh))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	stream, runDone := runStream(t, runCtx, sb)

	proxy.enabled.Store(true)
	start := time.Now()
	led := newLedger()
	nackText := map[sendKey]string{}
	var nackMu sync.Mutex
	deadline := time.Now().Add(pick(6*time.Minute, 30*time.Minute))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				led.mu.Lock()
				fresh := led.next < int64(n)
				done := !fresh && len(led.pending) == 0 && len(led.acked) == int(led.next)
				led.mu.Unlock()
				if done {
					return
				}
				keys := led.take(25, 0, fresh)
				if len(keys) == 0 {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				batch := make(service.MessageBatch, len(keys))
				for i, k := range keys {
					batch[i] = service.NewMessage(fmt.Appendf(nil, `{"id":%d,"attempt":%d,"p":%d,"payload":"row %d"}`, k.id, k.attempt, k.id%5, k.id))
				}
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				err := produce(ctx, batch)
				cancel()
				if err == nil {
					led.done(keys, outcomeAcked)
					continue
				}
				nackMu.Lock()
				for _, k := range keys {
					nackText[k] = err.Error()
				}
				nackMu.Unlock()
				led.done(keys, "nacked")
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	proxy.enabled.Store(false)
	if err := stream.StopWithin(time.Minute); err != nil {
		t.Errorf("stop stream: %v", err)
	}
	cancelRun()
	<-runDone
	if !led.allAcked() {
		t.Fatalf("after %v only %d of %d ids acked", elapsed, len(led.acked), led.next)
	}
	proxy.Close()

	ctx := context.Background()
	direct, err := storage.Open(ctx, wh, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tbl := openTable(t, ctx, direct, "rel", "s3faults")
	a := auditTable(t, ctx, tbl, auditOptions{readEvery: 20})

	perSend := map[sendKey]int{}
	ids := map[int64]int{}
	for _, row := range a.latest {
		k := sendKey{row[0].(int64), int(row[1].(int32))}
		perSend[k]++
		ids[k.id]++
	}
	for id := int64(0); id < led.next; id++ {
		if att := led.acked[id]; perSend[sendKey{id, att}] != 1 {
			t.Errorf("id %d: its acked send (attempt %d) is in the table %d times", id, att, perSend[sendKey{id, att}])
		}
	}
	dupCauses := map[string]int{}
	for k, c := range perSend {
		switch outcome := led.outcomes[k]; {
		case c > 1:
			t.Errorf("id %d attempt %d landed %d times: a batch was committed twice", k.id, k.attempt, c)
		case outcome == outcomeAcked:
		case outcome == "":
			t.Errorf("row id %d attempt %d was never sent", k.id, k.attempt)
		case strings.Contains(nackText[k], "unknown"):
			dupCauses["commit outcome unknown, batch delivered again"]++
			if dupCauses["commit outcome unknown, batch delivered again"] == 1 {
				t.Logf("a landed send whose outcome was unknown: %s", nackText[k])
			}
		default:
			t.Errorf("id %d attempt %d landed although its batch failed with: %s", k.id, k.attempt, nackText[k])
		}
	}
	sent, nacked := 0, 0
	for _, o := range led.outcomes {
		sent++
		if o != outcomeAcked {
			nacked++
		}
	}
	lost := 0
	for id := range led.acked {
		if ids[id] == 0 {
			lost++
		}
	}
	byKind, byOp, total := proxy.Stats()
	figure(t, "%d ids acked in %v through %d requests with fault rate %.2f (seed %d): %d faults %s",
		len(led.acked), elapsed.Round(time.Second), total, rate, sd, proxy.injected(), sortedCounts(byKind))
	figure(t, "faults by request: %s", sortedCounts(byOp))
	figure(t, "%d messages sent, %d nacked and sent again; %d rows in %d snapshots, rows lost %d, duplicates %d %v",
		sent, nacked, len(a.latest), len(a.snapshots), lost, len(a.latest)-len(ids), dupCauses)
	figure(t, "output logs: %v", logs.stats())
	for _, l := range firstN(logs.grep("Failed to commit"), 5) {
		t.Logf("a failed commit: %s", truncate(l, 400))
	}
	figure(t, "table files: %s", a.summary())
}

// lineLog collects log lines of a stream and counts the ones logStats
// knows.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, string(p))
	return len(p), nil
}

// grep returns the lines that contain s.
func (l *lineLog) grep(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

func (l *lineLog) stats() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, line := range l.lines {
		for _, pat := range logPatterns {
			if strings.Contains(line, pat) {
				out[pat]++
			}
		}
	}
	return out
}
