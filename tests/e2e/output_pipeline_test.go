package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// eventsInput generates n events with ids 1..n: a user, an amount with two
// decimals and an epoch-millisecond time four seconds after the previous
// one, starting 2024-06-01 00:00:00 UTC, so that 100,000 events span five
// days.
func eventsInput(n int) string {
	return fmt.Sprintf(`
generate:
  count: %d
  interval: ""
  batch_size: 1000
  mapping: |
    let id = counter()
    root.id = $id
    root.user = "user-%%d".format($id %% 977)
    root.amount = "%%d.%%02d".format($id %% 1000, $id %% 100)
    root.ts = (1717200000 + $id * 4) * 1000
processors:
  - mapping: |
      root = this
      root.dt = (this.ts / 1000).ts_format("2006-01-02", "UTC")
`, n)
}

// eventsTable is the create_table of the events written by eventsInput.
const eventsTable = `
    create_table:
      enabled: true
      schema:
        - { name: id, type: BIGINT NOT NULL }
        - { name: user, type: STRING }
        - { name: amount, type: "DECIMAL(10, 2)" }
        - { name: ts, type: TIMESTAMP(3) WITH LOCAL TIME ZONE }
        - { name: dt, type: STRING NOT NULL }
      partition_keys: [ dt ]
`

// eventsOutput is the paimon output of the events table in warehouse;
// extra is YAML added to its fields (four spaces deep), for example a
// batching policy, or to create_table's (six spaces deep, first).
func eventsOutput(warehouse, extra string) string {
	return fmt.Sprintf(`
paimon:
    warehouse: %s
    table: events
%s
%s`, warehouse, eventsTable, extra)
}

// eventsStream is a stream of eventsInput(n) into output, logging warnings
// only.
func eventsStream(t testing.TB, n int, output string) *service.StreamBuilder {
	t.Helper()
	sb := service.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: warn"); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddInputYAML(eventsInput(n)); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddOutputYAML(output); err != nil {
		t.Fatal(err)
	}
	return sb
}

// batchedBy5000 is the batching of the pipeline tests. The period matters:
// an input that waits for its acks before it ends (generate does) would
// otherwise wait forever for a partial last batch.
const batchedBy5000 = `
    batching:
      count: 5000
      period: 500ms
`

// expectedDay is the dt eventsInput derives for id.
func expectedDay(id int64) string {
	return time.Unix(1717200000+id*4, 0).UTC().Format("2006-01-02")
}

// checkEvents asserts that the table holds exactly the events 1..n, each
// once, with the values eventsInput generated, every row in the partition
// directory of its dt.
func checkEvents(t *testing.T, tbl *lakecore.Table, rows [][]any, n int) {
	t.Helper()
	if len(rows) != n {
		t.Errorf("table has %d rows, want %d", len(rows), n)
	}
	idCol, userCol, amountCol, tsCol, dtCol := column(t, tbl, "id"), column(t, tbl, "user"), column(t, tbl, "amount"),
		column(t, tbl, "ts"), column(t, tbl, "dt")
	seen := make([]int, n+1)
	bad := 0
	for _, r := range rows {
		id, ok := r[idCol].(int64)
		if !ok || id < 1 || id > int64(n) {
			t.Fatalf("row with id %#v", r[idCol])
		}
		seen[id]++
		want := []any{fmt.Sprintf("user-%d", id%977), fmt.Sprintf("%d.%02d", id%1000, id%100),
			types.Timestamp{Millis: (1717200000 + id*4) * 1000}, expectedDay(id)}
		got := []any{r[userCol], fmt.Sprint(r[amountCol]), r[tsCol], r[dtCol]}
		for i := range want {
			if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
				if bad++; bad <= 5 {
					t.Errorf("id %d: column %d is %v, want %v", id, i, got[i], want[i])
				}
			}
		}
	}
	missing, dup := 0, 0
	for id := 1; id <= n; id++ {
		switch {
		case seen[id] == 0:
			missing++
		case seen[id] > 1:
			dup++
		}
	}
	if missing > 0 || dup > 0 {
		t.Errorf("%d ids missing, %d ids more than once", missing, dup)
	}

	// Partitions: every split's rows carry its partition value, and its
	// files live in its dt=<value> directory.
	ctx := context.Background()
	snap, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tbl.Planner().Full(ctx, snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := tbl.NewRead(nil)
	if err != nil {
		t.Fatal(err)
	}
	days := map[string]int{}
	for _, sp := range plan.Splits {
		day, _ := sp.PartitionValues[0].(string)
		for i := range sp.Files {
			p, err := rd.FilePath(&sp, &sp.Files[i])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p, fmt.Sprintf("/dt=%s/bucket-%d/", day, sp.Bucket)) {
				t.Errorf("file %s of partition dt=%s is not in its directory", p, day)
			}
		}
		it, err := rd.Open(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		for {
			next, err := it.Next(ctx)
			batch := next.Rows
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range batch {
				if r[dtCol] != day {
					t.Fatalf("row %v in partition dt=%s", r, day)
				}
				days[day]++
			}
		}
		_ = it.Close()
	}
	want := map[string]int{}
	for id := int64(1); id <= int64(n); id++ {
		want[expectedDay(id)]++
	}
	if fmt.Sprint(days) != fmt.Sprint(want) {
		t.Errorf("rows per partition %v, want %v", days, want)
	}
}

// TestOutputHundredThousandRows writes 100,000 generated events through a
// YAML pipeline and finds exactly those rows in the table, in the right
// partitions, with the output's metrics agreeing.
func TestOutputHundredThousandRows(t *testing.T) {
	const n = 100_000
	wh := t.TempDir()
	sb := eventsStream(t, n, eventsOutput(wh, batchedBy5000))
	met := withMetrics(t, sb)
	start := time.Now()
	runStream(t, sb, 3*time.Minute)
	t.Logf("%d rows in %v", n, time.Since(start).Round(time.Millisecond))

	tbl, rows := readTable(t, wh, "default", "events")
	checkEvents(t, tbl, rows, n)

	ctx := context.Background()
	latest, err := tbl.Snapshots().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if latest.CommitUser != "benthos-paimon-default.events" {
		t.Errorf("commit user %q", latest.CommitUser)
	}
	live, err := tbl.Planner().LiveEntries(ctx, latest, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"paimon_rows_written":     n,
		"paimon_commits":          float64(latest.ID),
		"paimon_last_snapshot_id": float64(latest.ID),
		"paimon_files_written":    float64(len(live)),
		"paimon_commit_failures":  -1, // never incremented
		"paimon_rows_rejected":    -1,
	} {
		if got := met.get(t, name); got != want {
			t.Errorf("metric %s = %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{"paimon_bytes_written", "paimon_commit_latency_ns"} {
		if got := met.get(t, name); got <= 0 {
			t.Errorf("%s = %v", name, got)
		}
	}
	// Identifiers of the commit user increase by one per snapshot.
	for id := int64(1); id <= latest.ID; id++ {
		s, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.CommitIdentifier != id || s.CommitKind != "APPEND" {
			t.Errorf("snapshot %d: identifier %d, kind %s", id, s.CommitIdentifier, s.CommitKind)
		}
	}
}

// TestOutputBadMessagesFailAlone sends one batch with good and bad
// messages: the good ones are committed, and the input's ack gets a
// BatchError with one error per bad message naming its field.
func TestOutputBadMessagesFailAlone(t *testing.T) {
	wh := t.TempDir()
	in := newBatchInput()
	sb := in.env(t).NewStreamBuilder()
	met := withMetrics(t, sb)
	if err := sb.SetLoggerYAML("level: none"); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddInputYAML(batchInputName + ": {}"); err != nil {
		t.Fatal(err)
	}
	if err := sb.AddOutputYAML(eventsOutput(wh, "    keep_input_batches: true\n")); err != nil {
		t.Fatal(err)
	}
	stream, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stream.Run(ctx) }()

	payloads := []string{
		`{"id": 1, "user": "a", "amount": "1.50", "ts": "2024-06-01T10:00:00Z", "dt": "2024-06-01"}`,
		`{"id": 2, "user": "b", "amount": "abc", "ts": "2024-06-01T10:00:00Z", "dt": "2024-06-01"}`,
		`{"id": 3, "user": "c", "amount": 2, "ts": "2024-06-02T10:00:00Z", "dt": "2024-06-02"}`,
		`{"user": "d", "dt": "2024-06-01"}`,
		`not json at all`,
		`{"id": 6, "user": "f", "amount": "0.01", "dt": "2024-06-02", "colour": "red"}`,
		`{"id": 7, "user": "g", "amount": "123.456", "dt": "2024-06-02"}`,
		`{"id": 8, "user": "h", "amount": null, "ts": 1717236000000, "dt": "2024-06-01"}`,
	}
	wantErr := map[int]string{
		1: `field "amount": cannot convert string "abc" to DECIMAL(10, 2)`,
		3: `field "id": missing, and the column is BIGINT NOT NULL`,
		4: `message is not valid JSON`,
		5: `field "colour": not a column of the table`,
		6: `field "amount": cannot convert string "123.456" to DECIMAL(10, 2): more than 2 fraction digits`,
	}
	var batch service.MessageBatch
	for _, p := range payloads {
		batch = append(batch, service.NewMessage([]byte(p)))
	}
	ackErr := in.send(ctx, t, batch)
	var bErr *service.BatchError
	if !errors.As(ackErr, &bErr) {
		t.Fatalf("ack error %v (%T), want a *service.BatchError", ackErr, ackErr)
	}
	if n := bErr.IndexedErrors(); n != len(wantErr) {
		t.Errorf("%d messages failed, want %d: %v", n, len(wantErr), ackErr)
	}
	bErr.WalkMessagesIndexedBy(batch.Index(), func(i int, _ *service.Message, err error) bool {
		want, bad := wantErr[i]
		switch {
		case bad && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("message %d: error %v, want one containing %q", i, err, want)
		case !bad && err != nil:
			t.Errorf("message %d failed: %v", i, err)
		}
		return true
	})

	tbl, rows := readTable(t, wh, "default", "events")
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r[column(t, tbl, "id")].(int64))
	}
	if fmt.Sprint(sortedInts(ids)) != "[1 3 8]" {
		t.Errorf("committed ids %v, want [1 3 8]", ids)
	}
	if got := met.get(t, "paimon_rows_rejected"); got != float64(len(wantErr)) {
		t.Errorf("paimon_rows_rejected = %v, want %d", got, len(wantErr))
	}

	// A batch in which every message fails commits nothing.
	before, _ := tbl.Snapshots().Latest(ctx)
	ackErr = in.send(ctx, t, service.MessageBatch{service.NewMessage([]byte(`[]`)), service.NewMessage([]byte(`{"id": "x"}`))})
	if !errors.As(ackErr, &bErr) || bErr.IndexedErrors() != 2 {
		t.Errorf("all-bad batch: %v", ackErr)
	}
	after, _ := tbl.Snapshots().Latest(ctx)
	if after.ID != before.ID {
		t.Errorf("an all-bad batch committed snapshot %d", after.ID)
	}
	in.end()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func sortedInts(v []int64) []int64 {
	out := append([]int64(nil), v...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
