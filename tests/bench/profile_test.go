package bench

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
)

func TestParsePprofTop(t *testing.T) {
	out := `File: report
Type: cpu
Time: 2026-11-29 13:00:00 UTC
Duration: 3.20s, Total samples = 4.10s (128.12%)
Showing nodes accounting for 2.50s, 60.98% of 4.10s total
Dropped 120 nodes (cum <= 0.02s)
Showing top 3 nodes out of 180
      flat  flat%   sum%        cum   cum%
     0.74s 18.05% 18.05%      0.90s 21.95%  runtime.mallocgc
     0.49s 11.95% 30.00%      0.60s 14.63%  runtime.mapassign_faststr
     0.33s  8.05% 38.05%      3.01s 73.41%  github.com/benthos-paimon/benthos-paimon/plugin/input.(*messageBuilder).message (inline)
`
	rows, err := parsePprofTop(out, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"`runtime.mallocgc`", "18.05%", "21.95%"}, {"`runtime.mapassign_faststr`", "11.95%", "14.63%"}}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("rows %q, want %q", rows, want)
	}
	rows, err = parsePprofTop(out, 10)
	if err != nil || len(rows) != 3 || rows[2][0] != "`input.(*messageBuilder).message (inline)`" {
		t.Errorf("all rows: %q, %v", rows, err)
	}
	if _, err := parsePprofTop("go: unknown tool\n", 5); err == nil {
		t.Error("output without the header accepted")
	}
}

// burnCPU hashes for d of wall time, half with sha256 and half with
// lakecore's binrow.Hash: functions the profile must show.
func burnCPU(d time.Duration) {
	sum := sha256.Sum256(nil)
	row := make([]byte, 4096)
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 1000 {
			sum = sha256.Sum256(sum[:])
			row[0] = byte(binrow.Hash(row))
		}
	}
}

func TestProfileTables(t *testing.T) {
	if testing.Short() {
		t.Skip("profiles half a second of work and runs go tool pprof")
	}
	runs := 0
	tables, err := profileTables(t.TempDir(), "burn", func(int) error { runs++; burnCPU(500 * time.Millisecond); return nil }, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 || len(tables[0].Rows) == 0 {
		t.Fatalf("tables %+v", tables)
	}
	if runs < int(profileMinDuration/(500*time.Millisecond)) || !strings.Contains(tables[0].Caption, fmt.Sprintf("%d more runs", runs)) {
		t.Errorf("%d runs of 500 ms for a profile of at least %v; caption %q", runs, profileMinDuration, tables[0].Caption)
	}
	var flat []string
	for _, r := range tables[0].Rows {
		flat = append(flat, r[0])
	}
	// Which of the two hashes dominates depends on the CPU (SHA extensions
	// make sha256 cheap); one of them must lead.
	if top := strings.Join(flat, " "); !strings.Contains(top, "sha256") && !strings.Contains(top, "binrow.") {
		t.Errorf("the top functions %v do not show the hashing that took the time", flat)
	}
	if len(tables[1].Rows) == 0 || tables[1].Rows[0][0] != "`binrow.Hash`" {
		t.Errorf("the product table %v does not start with binrow.Hash, the only product function that ran", tables[1].Rows)
	}
	for _, r := range tables[1].Rows {
		if strings.Contains(r[0], "bench.") {
			t.Errorf("the product table lists %s, a function of the harness", r[0])
		}
	}
}

func TestProfileUnmet(t *testing.T) {
	if testing.Short() {
		t.Skip("profiles half a second of work and runs go tool pprof")
	}
	e := &Env{dir: t.TempDir()}
	var burned []string
	burn := func(key string) func(int) error {
		return func(int) error { burned = append(burned, key); burnCPU(time.Second); return nil }
	}
	// write judges two targets; only the missed one is profiled, with its
	// own workload.
	s := &Section{Name: "write", Figures: map[string]float64{"ratio_paimon_file": 1.5, "ratio_writer_parquet": 0.5}}
	s.profile("ratio_paimon_file", burn("paimon"))
	s.profile("ratio_writer_parquet", burn("writer"))
	profileUnmet(e, s)
	if len(s.Tables) != 2 || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "Target not met (#3 table writer rows/s") {
		t.Errorf("a missed target: tables %d, notes %q", len(s.Tables), s.Notes)
	}
	if slices.Contains(burned, "paimon") || !slices.Contains(burned, "writer") {
		t.Errorf("profiled workloads %v, want only the writer's", burned)
	}

	met := &Section{Name: "tail", Figures: map[string]float64{"ratio_input_parquet": 0.9}}
	met.profile("ratio_input_parquet", burn("tail"))
	profileUnmet(e, met)
	if len(met.Tables) != 0 || len(met.Notes) != 0 {
		t.Errorf("a met target was profiled: %+v", met)
	}
}
