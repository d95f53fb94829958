package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"gopkg.in/yaml.v3"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestInputExampleToStdout runs examples/paimon_to_stdout.yaml's input and
// processors (its env variables pointing at a test table, the stdout output
// replaced by a consumer): the rows arrive as JSON objects with the
// snapshot and partition added, and the consumer stdout-tail is saved.
func TestInputExampleToStdout(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixturetest.RepoDir(t), "examples", "paimon_to_stdout.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lints, err := service.GlobalEnvironment().FullConfigSchema("", "").NewStreamConfigLinter().LintYAML(data)
	if err != nil || len(lints) > 0 {
		t.Fatalf("example lints: %v %v", lints, err)
	}
	var conf struct {
		Input    yaml.Node `yaml:"input"`
		Pipeline struct {
			Processors []yaml.Node `yaml:"processors"`
		} `yaml:"pipeline"`
	}
	if err := yaml.Unmarshal(data, &conf); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	wh := t.TempDir()
	cat, err := lakecore.OpenCatalog(ctx, wh, inNoS3)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, "shop", "orders", lakecore.TableSpec{
		Fields: types.MustParse("ROW<id STRING, amount DECIMAL(10, 2), dt STRING>").Fields, PartitionKeys: []string{"dt"},
	})
	if err != nil {
		t.Fatal(err)
	}
	w, err := tbl.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, []any{"a", types.NewDecimal(1250, 2), "2024-05-30"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := w.Prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.NewCommitter("example").Commit(ctx, 1, msgs); err != nil {
		t.Fatal(err)
	}

	t.Setenv("WAREHOUSE", wh)
	t.Setenv("DATABASE", "shop")
	t.Setenv("TABLE", "orders")
	sb := service.NewStreamBuilder()
	_ = sb.SetLoggerYAML("level: WARN")
	in, _ := yaml.Marshal(&conf.Input)
	if err := sb.AddInputYAML(string(in)); err != nil {
		t.Fatal(err)
	}
	for _, p := range conf.Pipeline.Processors {
		b, _ := yaml.Marshal(&p)
		if err := sb.AddProcessorYAML(string(b)); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan string, 1)
	if err := sb.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
		v, err := m.AsStructured()
		if err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		got <- string(b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	strm, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = strm.Run(ctx) }()
	select {
	case line := <-got:
		if want := `{"_partition":"dt=2024-05-30","_snapshot":1,"amount":"12.50","dt":"2024-05-30","id":"a"}`; line != want {
			t.Errorf("line %s, want %s", line, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no row from the example")
	}
	if err := strm.StopWithin(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	c, ok, err := tbl.Consumers().Get(ctx, "stdout-tail")
	if err != nil || !ok || c.NextSnapshot != 2 {
		t.Fatalf("consumer stdout-tail: %+v %v %v, want nextSnapshot 2", c, ok, err)
	}
}
