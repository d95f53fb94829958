package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"   // file output
	_ "github.com/redpanda-data/benthos/v4/public/components/pure" // generate, drop

	_ "github.com/benthos-paimon/benthos-paimon/plugin/input/paimon"  // paimon input
	_ "github.com/benthos-paimon/benthos-paimon/plugin/output/paimon" // paimon output
)

// stream is a Benthos pipeline described in YAML, as a user would write it.
type stream struct {
	input, output string
	// consume replaces output with a Go consumer (for latency probes).
	consume service.MessageBatchHandlerFunc
	log     io.Writer
}

// build returns the built stream; logs at warn and above go to s.log.
func (s stream) build() (*service.Stream, error) {
	sb := service.NewStreamBuilder()
	w := s.log
	if w == nil {
		w = io.Discard
	}
	sb.SetLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := sb.AddInputYAML(s.input); err != nil {
		return nil, fmt.Errorf("input config: %w", err)
	}
	if s.consume != nil {
		if err := sb.AddBatchConsumerFunc(s.consume); err != nil {
			return nil, err
		}
	} else if err := sb.AddOutputYAML(s.output); err != nil {
		return nil, fmt.Errorf("output config: %w", err)
	}
	return sb.Build()
}

// run builds the stream and runs it until its input ends.
func (s stream) run(ctx context.Context) error {
	st, err := s.build()
	if err != nil {
		return err
	}
	return st.Run(ctx)
}
