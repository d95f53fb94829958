package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// measurePipeline measures what the paimon output adds to a pipeline's CPU
// per message (#19 goal 1): the same JSON lines read by the file input into
// drop, into drop behind the batching the output uses, and into the paimon
// output.
func measurePipeline(ctx context.Context, e *Env) (*Section, error) {
	rows := e.pick(1_000_000, 20_000)
	const partitions, batch = 4, 10_000
	path := filepath.Join(e.Dir("pipeline-input"), "events.jsonl")
	gen := stream{input: generateYAML(rows, partitions, 1000), output: fmt.Sprintf("file: { path: %q, codec: lines }", path), log: e.log}
	if err := gen.run(ctx); err != nil {
		return nil, fmt.Errorf("writing the input lines: %w", err)
	}
	whs := map[int]string{} // run -> its paimon warehouse
	wh := func(i int) string {
		if whs[i] == "" {
			whs[i] = e.Dir(fmt.Sprintf("pipeline-wh-%d", i))
		}
		return whs[i]
	}
	input := fmt.Sprintf("file:\n  paths: [ %q ]\n  scanner:\n    lines: {}\n", path)
	variants := []struct {
		key, label string
		output     func(i int) string
		check      func(i int) error
	}{
		{"drop", "file → drop", func(int) string { return "drop: {}" }, nil},
		{"batched", fmt.Sprintf("file → drop behind the output's batching (a broker with count %s, period 1 s)", fInt(batch)),
			func(int) string {
				return fmt.Sprintf("broker:\n  outputs: [ drop: {} ]\n  batching:\n    count: %d\n    period: 1s\n", batch)
			}, nil},
		{"paimon", fmt.Sprintf("file → paimon (batching count %s, period 1 s, max_in_flight 4)", fInt(batch)),
			func(i int) string { return paimonOutputYAML(wh(i), nil, batch, "1s") },
			func(i int) error {
				tbl, err := openBenchTable(ctx, wh(i), nil)
				if err != nil {
					return err
				}
				_, _, n, err := liveFiles(ctx, tbl)
				if err == nil && n != int64(rows) {
					err = fmt.Errorf("the table holds %d rows, want %d", n, rows)
				}
				return err
			}},
	}
	usPerMsg, rate := map[string]Sample{}, map[string]Sample{}
	for i := range e.Config.runs() {
		for _, vi := range rotate(len(variants), i) {
			v := variants[vi]
			st := stream{input: input, output: v.output(i), log: e.log}
			t, err := measure(func() error { return st.run(ctx) })
			if err == nil && v.check != nil {
				err = v.check(i)
			}
			if err != nil {
				return nil, fmt.Errorf("%s, run %d: %w", v.label, i+1, err)
			}
			usPerMsg[v.key] = append(usPerMsg[v.key], t.CPU.Seconds()*1e6/float64(rows))
			rate[v.key] = append(rate[v.key], float64(rows)/t.Wall.Seconds())
			e.Logf("   run %d %-8s %6.2f µs CPU/msg %8.0f rows/s", i+1, v.key, t.CPU.Seconds()*1e6/float64(rows), float64(rows)/t.Wall.Seconds())
		}
		_ = os.RemoveAll(wh(i))
	}
	t := Table{Header: []string{"Pipeline", "µs CPU per message", "rows/s"}}
	for _, v := range variants {
		t.Rows = append(t.Rows, []string{v.label, usPerMsg[v.key].Fmt(fUs), rate[v.key].Fmt(fInt)})
	}
	added, own := usPerMsg["paimon"].Minus(usPerMsg["drop"]), usPerMsg["paimon"].Minus(usPerMsg["batched"])
	batching := usPerMsg["batched"].Minus(usPerMsg["drop"])
	r, bound := rate["paimon"].Over(rate["drop"]), rate["batched"].Over(rate["drop"])
	d := Table{Header: []string{"Same run", "value"}, Rows: [][]string{
		{"µs CPU the paimon output adds to file → drop", added.Fmt(fUs)},
		{"of which Benthos' batching and deferred acknowledgements (batched drop − drop)", batching.Fmt(fUs)},
		{"of which the output's own (paimon − batched drop)", own.Fmt(fUs)},
		{"file → paimon rows/s / file → drop", r.Fmt(fRatio)},
		{"file → paimon rows/s / batched drop", rate["paimon"].Over(rate["batched"]).Fmt(fRatio)},
		{"batched drop rows/s / file → drop: the most any output behind this batching reaches", bound.Fmt(fRatio)},
	}}
	s := &Section{Title: "Pipeline cost per message: what the paimon output adds", Tables: []Table{t, d}}
	s.Intro = fmt.Sprintf(`%s JSON lines of the payment event (the write section's rows, %d partitions), read by Benthos' `+"`file`"+` input (scanner lines, one message each) in a stream in this process, into `+"`drop`"+`, into `+"`drop`"+` behind a broker applying the batching the paimon output uses, and into the paimon output (a new table each run, checked to hold every row). CPU is the process's over the stream's run. The batched drop separates what any batching output costs in Benthos (the input holds one goroutine and one retry-list entry per unacknowledged message until its batch is acknowledged) from the paimon output's own cost.`,
		fInt(float64(rows)), partitions)
	s.figure("added_us", added.Median())
	s.figure("own_us", own.Median())
	s.figure("ratio_paimon_drop", r.Median())
	s.figure("ratio_batched_drop", bound.Median())
	s.figure("rows", float64(rows))
	paimon := variants[len(variants)-1]
	s.profile("added_us", func(k int) error {
		i := e.Config.runs() + k
		defer func() { _ = os.RemoveAll(wh(i)) }()
		return stream{input: input, output: paimon.output(i), log: e.log}.run(ctx)
	})
	return s, nil
}
