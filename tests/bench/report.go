package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Report is the result of one run of the harness.
type Report struct {
	Config            Config
	Machine           Machine
	Started, Finished time.Time
	Sections          []*Section
}

// Section is one measurement's part of the report.
type Section struct {
	Name  string
	Title string
	// Intro says what is measured and how (setup, sizes, definitions).
	Intro string
	// Tables hold the figures; Notes follow them (targets, caveats).
	Tables []Table
	Notes  []string
	// Err is set when the measurement failed.
	Err string
	// Skipped is set, with the reason, when the measurement could not run
	// here and the environment does not require it (a missing oracle).
	Skipped string
	Elapsed time.Duration
	// Figures are the headline numbers by key, for tests and for the
	// targets summary (for example "ratio_paimon_file").
	Figures map[string]float64

	// profiles run, by the figure key of a target, the workload that
	// figure measures once more (k counts the extra runs, for fresh
	// names); the harness runs it under the CPU profiler when the target
	// is not met (see profileUnmet).
	profiles map[string]func(k int) error
}

// profile registers the workload behind figure key (see profiles).
func (s *Section) profile(key string, run func(k int) error) {
	if s.profiles == nil {
		s.profiles = map[string]func(int) error{}
	}
	s.profiles[key] = run
}

func (s *Section) figure(key string, v float64) {
	if s.Figures == nil {
		s.Figures = map[string]float64{}
	}
	s.Figures[key] = v
}

// Table is a markdown table.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// Sample is one figure measured over several runs.
type Sample []float64

// Over returns s[i] / d[i] for each run i: a ratio inside each run. The
// samples are of the same runs.
func (s Sample) Over(d Sample) Sample {
	out := make(Sample, len(s))
	for i := range s {
		out[i] = s[i] / d[i]
	}
	return out
}

// Minus returns s[i] - d[i] for each run i.
func (s Sample) Minus(d Sample) Sample {
	out := make(Sample, len(s))
	for i := range s {
		out[i] = s[i] - d[i]
	}
	return out
}

// Median is the middle value (the mean of the two middle ones for an even
// count); NaN when empty.
func (s Sample) Median() float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	c := slices.Clone(s)
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// Min and Max bound the sample; NaN when empty.
func (s Sample) Min() float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	return slices.Min(s)
}

// Max: see Min.
func (s Sample) Max() float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	return slices.Max(s)
}

// Fmt renders "median (min–max)" with f formatting each value.
func (s Sample) Fmt(f func(float64) string) string {
	if len(s) == 0 {
		return "–"
	}
	if len(s) == 1 {
		return f(s[0])
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median()), f(s.Min()), f(s.Max()))
}

// percentile returns the p-th percentile (0-100, nearest rank) of d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	c := slices.Clone(d)
	slices.Sort(c)
	i := int(math.Ceil(p/100*float64(len(c)))) - 1
	return c[max(0, min(i, len(c)-1))]
}

// Number formats.

func fInt(v float64) string { return group(strconv.FormatInt(int64(math.Round(v)), 10)) }

func fRatio(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func fMB(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func fMs(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// fDur renders a period in milliseconds ("100 ms").
func fDur(d time.Duration) string { return fMs(ms(d)) + " ms" }

func fSec(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// fUs formats microseconds.
func fUs(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func fBytes(v float64) string {
	switch {
	case v >= 1<<30:
		return strconv.FormatFloat(v/(1<<30), 'f', 2, 64) + " GiB"
	case v >= 1<<20:
		return strconv.FormatFloat(v/(1<<20), 'f', 1, 64) + " MiB"
	case v >= 1<<10:
		return strconv.FormatFloat(v/(1<<10), 'f', 1, 64) + " KiB"
	}
	return fInt(v) + " B"
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// group inserts thousands separators.
func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Machine describes where the report was measured.
type Machine struct {
	CPUModel          string
	Cores             int // runtime.NumCPU: what this process may use
	GOMAXPROCS        int
	MemTotal          string
	LoadAvg           string // 1, 5, 15 minutes at the start
	Kernel            string
	GoVersion         string
	Benthos, Parquet  string
	ClientGolang, AWS string
	// Commit is the source's git commit (git rev-parse), with "+dirty"
	// when the work tree differs; empty outside a git checkout.
	Commit string
}

func readMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		if n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(kb, "kB")), 64); err == nil {
			m.MemTotal = fBytes(n * 1024)
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
			m.Commit += "+dirty"
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil {
				v = d.Replace.Version
			}
			switch d.Path {
			case "github.com/redpanda-data/benthos/v4":
				m.Benthos = v
			case "github.com/parquet-go/parquet-go":
				m.Parquet = v
			case "github.com/prometheus/client_golang":
				m.ClientGolang = v
			case "github.com/aws/aws-sdk-go-v2/service/s3":
				m.AWS = v
			}
		}
	}
	return m
}

// procField returns the value of the first "key : value" line of a /proc
// file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmarks\n\n")
	w("Generated by `make bench` (tests/bench) on %s; %s in total.", r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Finished.Sub(r.Started).Round(time.Second))
	if r.Config.Quick {
		w(" **Quick mode: smoke-run sizes, not representative figures.**")
	}
	w("\n\nEvery figure is the **median of %d runs with the min–max range** in parentheses. Every ratio is computed inside each run between variants run back to back (in rotating order), then summarised the same way. The machine is shared with other jobs and noisy, so CPU time (user + system, from getrusage) is given beside wall time: *per core* figures are per CPU-second of the process.\n\n", r.Config.runs())
	m := r.Machine
	w("## Machine and versions\n\n")
	w("| | |\n|---|---|\n")
	w("| CPU | %s, %d cores usable (GOMAXPROCS %d) |\n", orDash(m.CPUModel), m.Cores, m.GOMAXPROCS)
	w("| Memory | %s |\n", orDash(m.MemTotal))
	w("| Load average at start (1, 5, 15 min) | %s |\n", orDash(m.LoadAvg))
	w("| Kernel | %s |\n", orDash(m.Kernel))
	w("| Source | commit %s |\n", orDash(m.Commit))
	w("| Go | %s |\n", m.GoVersion)
	w("| benthos | %s |\n", orDash(m.Benthos))
	w("| parquet-go | %s |\n", orDash(m.Parquet))
	w("| aws-sdk-go-v2 s3 | %s |\n", orDash(m.AWS))
	w("\n## Commands\n\n```sh\n")
	w("make bench                      # go benchmarks of every package (1 iteration) and this report\n")
	w("go run ./tests/bench/cmd/report -out docs/BENCHMARKS.md   # the report alone\n")
	w("go run ./tests/bench/cmd/report -only write,tail          # some sections, printed only\n")
	w("go test ./tests/bench -run TestQuickReport                # the smoke run CI executes\n")
	w("```\n\n")
	if r.Config.Command != "" {
		w("This report: `%s`.\n\n", r.Config.Command)
	}
	if t := r.targets(); len(t.Rows) > 0 {
		w("## Targets\n\n")
		writeTable(&b, t)
	}
	for _, s := range r.Sections {
		title := s.Title
		if title == "" {
			title = s.Name
		}
		w("## %s\n\n", title)
		if s.Intro != "" {
			w("%s\n\n", strings.TrimSpace(s.Intro))
		}
		if s.Err != "" {
			w("**Not measured:** `%s`\n\n", firstLine(s.Err))
		}
		if s.Skipped != "" {
			w("**Skipped:** %s\n\n", s.Skipped)
		}
		for _, t := range s.Tables {
			writeTable(&b, t)
		}
		for _, n := range s.Notes {
			w("- %s\n", n)
		}
		if len(s.Notes) > 0 {
			w("\n")
		}
		w("_Section time: %s._\n\n", s.Elapsed.Round(time.Second))
	}
	return b.String()
}

func writeTable(b *strings.Builder, t Table) {
	if t.Caption != "" {
		fmt.Fprintf(b, "%s\n\n", t.Caption)
	}
	fmt.Fprintf(b, "| %s |\n", strings.Join(t.Header, " | "))
	seps := make([]string, len(t.Header))
	for i := range seps {
		seps[i] = "---"
	}
	fmt.Fprintf(b, "|%s|\n", strings.Join(seps, "|"))
	for _, row := range t.Rows {
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	b.WriteString("\n")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// target is one goal of issues #2, #3, #5, #6 and #19 and the figure that
// judges it.
type target struct {
	issue, goal, section, key string
	// cpuKey, when set, names the same figure in CPU time: on a loaded
	// machine wall time includes waiting for a core, so both are shown.
	cpuKey string
	// met reports whether v meets the goal.
	met    func(v float64) bool
	format func(v float64) string
	// scale is the figure of the section that says at which size it
	// measured (e.g. "plan_files"), shown beside the result in unit;
	// when the goal is stated at a size (need > 0), a smaller run (a
	// quick one) is not judged.
	scaleKey, unit string
	need           float64
}

var targets = []target{
	{"#3", "table writer rows/s / parquet-go writing the same rows ≥ 0.8 (parquet-go's default encodings: plain strings)", "write", "ratio_writer_parquet", "", func(v float64) bool { return v >= 0.8 }, fRatio, "rows", "rows", 0},
	{"#3", "the same against parquet-go encoding strings with dictionaries, as the table writer does", "write", "ratio_writer_parquet_dict", "", func(v float64) bool { return v >= 0.8 }, fRatio, "rows", "rows", 0},
	{"#3", "commit latency p95 at snapshot 10,000 / at snapshot 10 ≤ 1.5", "commit-history", "ratio_p95", "", func(v float64) bool { return v <= 1.5 }, fRatio, "history_snapshots", "snapshots", 10_000},
	{"#5", "generate→paimon / generate→file (JSON lines) rows/s ≥ 0.8, local disk", "write", "ratio_paimon_file", "", func(v float64) bool { return v >= 0.8 }, fRatio, "rows", "rows", 0},
	{"#6", "paimon input rows/s / parquet-go reading the same files ≥ 0.7", "tail", "ratio_input_parquet", "", func(v float64) bool { return v >= 0.7 }, fRatio, "rows", "rows", 0},
	{"#6", fmt.Sprintf("write-to-visible p95 ≤ 300 ms (batching %s, discovery %s, local disk)", fDur(freshBatching), fDur(freshDiscovery)), "freshness", "local_p95_ms", "", func(v float64) bool { return v <= 300 }, func(v float64) string { return fMs(v) + " ms" }, "local_rows", "rows a run", 0},
	{"#19", "lakecore table writer rows per CPU-s / pypaimon's write_arrow, same rows ≥ 1.0", "peers", "ratio_write_pypaimon", "", func(v float64) bool { return v >= 1 }, fRatio, "rows", "rows", 1_000_000},
	{"#19", "data bytes of lakecore's table / Java Paimon 1.4.2's for the same rows ≤ 1.0", "peers", "ratio_bytes_java", "", func(v float64) bool { return v <= 1 }, fRatio, "rows", "rows", 1_000_000},
	{"#19", "the same for near-unique rows (a user string unique to each row, times in no order)", "peers", "ratio_bytes_java_unique", "", func(v float64) bool { return v <= 1 }, fRatio, "rows", "rows", 1_000_000},
	{"#19", "lakecore full read rows per CPU-s / pypaimon's to_arrow, both reading lakecore's table, ≥ 1.0", "peers", "ratio_read_pypaimon", "", func(v float64) bool { return v >= 1 }, fRatio, "rows", "rows", 1_000_000},
	{"#19", "µs of CPU per message the paimon output adds to file → drop ≤ 3", "pipeline", "added_us", "", func(v float64) bool { return v <= 3 }, func(v float64) string { return fUs(v) + " µs" }, "rows", "rows", 0},
	{"#19", "file → paimon rows/s / file → drop ≥ 0.8", "pipeline", "ratio_paimon_drop", "", func(v float64) bool { return v >= 0.8 }, fRatio, "rows", "rows", 0},
	{"#19", "paimon input rows/s / parquet-go reading the same files ≥ 0.8", "tail", "ratio_input_parquet", "", func(v float64) bool { return v >= 0.8 }, fRatio, "rows", "rows", 0},
	{"#19", "the same with `message_format: json` and `metadata_keys: []` (each message the row's JSON text, no metadata)", "tail", "ratio_input_bare_parquet", "", func(v float64) bool { return v >= 0.8 }, fRatio, "rows", "rows", 0},
	{"#19", "benthos-paimon tail process rows/s / Java Paimon's stream read process, same table, start-up included, ≥ 1.5", "tail", "ratio_process_java", "", func(v float64) bool { return v >= 1.5 }, fRatio, "rows", "rows", 1_000_000},
	{"#19", "the same with `message_format: json` and `metadata_keys: []` (the rows alone, as Java's reader gives them)", "tail", "ratio_process_bare_java", "", func(v float64) bool { return v >= 1.5 }, fRatio, "rows", "rows", 1_000_000},
	{"#19", fmt.Sprintf("write-to-visible p95 ≤ 120 ms (batching %s, discovery %s, local disk)", fDur(freshBatching), fDur(freshDiscovery)), "freshness", "local_p95_ms", "", func(v float64) bool { return v <= 120 }, func(v float64) string { return fMs(v) + " ms" }, "local_rows", "rows a run", 0},
	{"#19", fmt.Sprintf("write-to-visible p95 ≤ 250 ms (batching %s, discovery %s, S3)", fDur(freshBatching), fDur(freshDiscovery)), "freshness", "s3_p95_ms", "", func(v float64) bool { return v <= 250 }, func(v float64) string { return fMs(v) + " ms" }, "local_rows", "rows a run", 0},
	{"#2", "full plan of 100,000 live files < 1 s", "planning", "plan_ms", "plan_cpu_ms", func(v float64) bool { return v < 1000 }, func(v float64) string { return fMs(v) + " ms" }, "plan_files", "live files", 100_000},
}

// judged reports whether section s measured target tg at the size its goal
// is stated at, and else why not.
func (tg target) judged(s *Section) (bool, string) {
	if tg.need == 0 {
		return true, ""
	}
	n, ok := s.Figures[tg.scaleKey]
	if !ok {
		return false, fmt.Sprintf("not judged: the size (%s) was not recorded", tg.unit)
	}
	if n < tg.need {
		return false, fmt.Sprintf("not judged: measured at %s %s, the target is at %s", fInt(n), tg.unit, fInt(tg.need))
	}
	return true, ""
}

// unmet returns the targets judged by section s that its figures miss.
func unmet(s *Section) []target {
	var out []target
	for _, tg := range targets {
		v, ok := s.Figures[tg.key]
		if judged, _ := tg.judged(s); ok && judged && tg.section == s.Name && !tg.met(v) {
			out = append(out, tg)
		}
	}
	return out
}

func (r *Report) targets() Table {
	t := Table{Header: []string{"Issue", "Target", "Measured (median)", "Met"}}
	for _, tg := range targets {
		for _, s := range r.Sections {
			if s.Name != tg.section {
				continue
			}
			v, ok := s.Figures[tg.key]
			if !ok {
				t.Rows = append(t.Rows, []string{tg.issue, tg.goal, "not measured", "–"})
				continue
			}
			at := ""
			if n, ok := s.Figures[tg.scaleKey]; ok {
				at = fmt.Sprintf(" at %s %s", fInt(n), tg.unit)
			}
			judged, why := tg.judged(s)
			met := "no"
			if tg.met(v) {
				met = "yes"
			}
			if c, ok := s.Figures[tg.cpuKey]; ok {
				cm := "no"
				if tg.met(c) {
					cm = "yes"
				}
				met = met + " (wall), " + cm + " (CPU)"
				if !judged {
					met = why
				}
				t.Rows = append(t.Rows, []string{tg.issue, tg.goal, tg.format(v) + " wall, " + tg.format(c) + " CPU" + at, met})
				continue
			}
			if !judged {
				met = why
			}
			t.Rows = append(t.Rows, []string{tg.issue, tg.goal, tg.format(v) + at, met})
		}
	}
	return t
}
