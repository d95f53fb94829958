package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/fatal"
)

// reraiseInterval is how often the stopper raises SIGTERM again until the
// run ends (see stopper.raise).
const reraiseInterval = 5 * time.Second

// stopper ends the run of a stream one of whose components reported a
// permanent error (internal/fatal) and makes the binary exit non-zero
// with it.
//
// Benthos stops a stream gracefully (inputs stop, what is in flight is
// written and acknowledged, components close) on SIGINT or SIGTERM, and
// offers no other way to do it from inside the process: cancelling the
// context given to RunCLI cuts the shutdown short. So the stopper sends
// the process SIGTERM. Benthos listens for it only once the stream runs,
// so the stopper waits for the stream to start, and it listens for the
// signals itself from then on so that a SIGTERM that arrives before Benthos
// listens cannot kill the process; as such a signal is lost to Benthos, it
// raises SIGTERM again every reraiseInterval until the run ends.
type stopper struct {
	first *fatal.First

	startOnce sync.Once
	started   chan struct{} // closed when the stream has started
	done      chan struct{} // closed when the run has ended
	sigs      chan os.Signal
}

func newStopper() *stopper {
	s := &stopper{started: make(chan struct{}), done: make(chan struct{}), sigs: make(chan os.Signal, 1)}
	s.first = fatal.NewFirst(func() { go s.raise() })
	return s
}

// options are the CLI options that install the stopper in the stream's
// resources and tell it when the stream has started.
func (s *stopper) options() []service.CLIOptFunc {
	return []service.CLIOptFunc{
		service.CLIOptOnConfigParse(func(conf *service.ParsedConfig) error {
			log := conf.Resources().Logger()
			fatal.Install(conf.Resources(), func(err error) {
				log.Infof("Stopping the stream: a component reported an error that retrying cannot fix (the exit code will be 1)")
				s.first.Handle(err)
			})
			return nil
		}),
		service.CLIOptOnStreamStart(func(*service.RunningStreamSummary) error {
			s.startOnce.Do(func() {
				signal.Notify(s.sigs, os.Interrupt, syscall.SIGTERM)
				close(s.started)
			})
			return nil
		}),
	}
}

// raise sends the process SIGTERM once the stream has started, and again
// every reraiseInterval until the run ends.
func (s *stopper) raise() {
	select {
	case <-s.started:
	case <-s.done:
		return
	}
	tick := time.NewTicker(reraiseInterval)
	defer tick.Stop()
	for {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Signal(syscall.SIGTERM)
		}
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
	}
}

// finish marks the run ended and returns the permanent error, if any.
func (s *stopper) finish() error {
	close(s.done)
	signal.Stop(s.sigs)
	return s.first.Err()
}
