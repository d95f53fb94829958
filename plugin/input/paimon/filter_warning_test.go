package paimon

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
)

// TestBoundedReadFilterMatchesNothing: a bounded read whose
// partition_filter matches no partition with data warns, naming the
// filter, before it ends; one that matches, or has no filter, does not.
func TestBoundedReadFilterMatchesNothing(t *testing.T) {
	tt := newTestTable(t, []string{"dt"}, nil)
	tt.appendRows(row("2024-05-30", "eu", 1), row("2024-05-30", "us", 2))
	tt.appendRows(row("2024-05-31", "eu", 3))
	const warning = "matched no partition with data in the snapshots read"
	for _, tc := range []struct {
		name, extra string
		rows        int
		warns       string // "" for no warning
	}{
		{"no partition", "partition_filter: { dt: '2024-06-01' }\n", 0, "paimon input on default.events in " + tt.warehouse + ": partition_filter dt IN (2024-06-01) " + warning},
		{"one of two alternatives", "partition_filter: [ { dt: '2024-06-01' }, { dt: '2024-05-31' } ]\n", 1, ""},
		{"no filter", "", 3, ""},
		{"incremental, no partition", "scan_mode: from-snapshot\nscan_snapshot_id: 2\npartition_filter: { dt: '2024-05-30' }\n", 0, "partition_filter dt IN (2024-05-30) " + warning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs testenv.LockedBuffer
			res := service.MockResources(service.MockResourcesOptUseLogger(service.NewLoggerFromSlog(slog.New(slog.NewTextHandler(&logs, nil)))))
			in := newInputWith(t, tt.yaml("bounded: true\n"+tc.extra), res)
			t.Cleanup(func() { _ = in.Close(context.Background()) })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := in.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			rows := 0
			for {
				b, ack, err := in.ReadBatch(ctx)
				if errors.Is(err, service.ErrEndOfInput) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rows += len(b)
				_ = ack(ctx, nil)
			}
			if rows != tc.rows {
				t.Errorf("read %d rows, want %d", rows, tc.rows)
			}
			out := logs.String()
			switch {
			case tc.warns == "" && strings.Contains(out, warning):
				t.Errorf("warned:\n%s", out)
			case tc.warns != "" && (!strings.Contains(out, tc.warns) || !strings.Contains(out, "level=WARN")):
				t.Errorf("no warning %q:\n%s", tc.warns, out)
			}
		})
	}
}
