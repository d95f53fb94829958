package paimon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/cputime"
)

// BenchmarkTailChanges tails the changes of a primary-key table with an
// input changelog (10 snapshots of 20,000 changes to 5,000 keys, -U/+U
// pairs and deletes) with changelog true and false, reporting the changes
// read per second (change_rows/s: the changelog records the snapshots
// hold), the same per CPU-second of the process (change_rows/cpu-s, GC
// included, steadier on a shared machine) and the messages emitted per
// snapshot.
//
//	go test -run '^$' -bench BenchmarkTailChanges -benchtime 3x ./plugin/input/paimon/
func BenchmarkTailChanges(b *testing.B) {
	tt := newPKTestTable(b, map[string]string{"bucket": "4", "changelog-producer": "input"})
	rng := rand.New(rand.NewPCG(1, 2))
	state := map[int64]string{}
	var records int64
	for s := range 10 {
		changes := randomChanges(rng, state, s, 20000, 5000)
		records += int64(len(changes))
		tt.writeChanges(changes...)
	}
	for _, changelog := range []bool{true, false} {
		b.Run(fmt.Sprintf("changelog=%v", changelog), func(b *testing.B) {
			var msgs int64
			start, cpu := time.Now(), cputime.Process()
			for range b.N {
				in := newInput(b, tt.yaml(fmt.Sprintf("scan_mode: from-snapshot\nscan_snapshot_id: 1\nbounded: true\nchangelog: %v\n", changelog)))
				if err := in.Connect(context.Background()); err != nil {
					b.Fatal(err)
				}
				msgs = 0
				eachBatch(b, in, func(batch service.MessageBatch, ack service.AckFunc) {
					msgs += int64(len(batch))
					_ = ack(context.Background(), nil)
				})
				_ = in.Close(context.Background())
			}
			b.ReportMetric(float64(records)*float64(b.N)/time.Since(start).Seconds(), "change_rows/s")
			b.ReportMetric(float64(records)*float64(b.N)/(cputime.Process()-cpu).Seconds(), "change_rows/cpu-s")
			b.ReportMetric(float64(msgs)/10, "msgs/snapshot")
		})
	}
}
