package e2e

import (
	"context"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// batchInputName is the test input of batchInput.
const batchInputName = "e2e_batches"

// batchInput is a batch input fed by the test: each batch sent is read by
// the stream as is, and send returns the error its ack got, which for a
// partial failure is a *service.BatchError (the public form Benthos hands
// to inputs, not to producer funcs).
type batchInput struct {
	batches chan sentBatch
	closed  chan struct{}
}

type sentBatch struct {
	batch service.MessageBatch
	acked chan error
}

func newBatchInput() *batchInput {
	return &batchInput{batches: make(chan sentBatch), closed: make(chan struct{})}
}

// env returns a copy of the global environment with the input registered.
func (in *batchInput) env(t testing.TB) *service.Environment {
	t.Helper()
	env := service.NewEnvironment()
	err := env.RegisterBatchInput(batchInputName, service.NewConfigSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.BatchInput, error) { return in, nil })
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// send hands batch to the stream and waits for its ack.
func (in *batchInput) send(ctx context.Context, t testing.TB, batch service.MessageBatch) error {
	t.Helper()
	sb := sentBatch{batch: batch, acked: make(chan error, 1)}
	select {
	case in.batches <- sb:
	case <-ctx.Done():
		t.Fatalf("send batch: %v", ctx.Err())
	}
	select {
	case err := <-sb.acked:
		return err
	case <-ctx.Done():
		t.Fatalf("wait for the ack: %v", ctx.Err())
		return nil
	}
}

// end ends the input, and so the stream.
func (in *batchInput) end() { close(in.closed) }

func (in *batchInput) Connect(context.Context) error { return nil }

func (in *batchInput) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	select {
	case sb := <-in.batches:
		return sb.batch, func(_ context.Context, err error) error {
			sb.acked <- err
			return nil
		}, nil
	case <-in.closed:
		return nil, nil, service.ErrEndOfInput
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

func (in *batchInput) Close(context.Context) error { return nil }
