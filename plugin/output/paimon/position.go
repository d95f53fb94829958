package paimon

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// Source positions: exactly once for sources that can replay.
//
// With source_position each message names the stream it comes from (a Kafka
// topic and partition, a replication slot) and its offset in that stream.
// Every commit of the output records, per stream, the highest offset up to
// which every message it received was committed, in the properties of the
// same snapshot as the rows (the way kafka-delta-ingest keeps Kafka offsets
// in the Delta commit). A message whose offset is at or below that position
// was committed before: it is acknowledged without being written. So a kill
// after a commit and before the source saw the acknowledgement no longer
// duplicates rows, and a CDC source replaying from its last confirmed
// position applies nothing twice.
//
// The position of a stream only moves past a message once that message is
// committed. A message that fails (it cannot become a row, or its batch's
// commit failed) stays outstanding until a later commit writes it; while
// any message of a stream is outstanding the recorded position of that
// stream stays where it was, because Benthos delivers a failed message
// again after the batches written meanwhile. A crash then replays those
// later messages once more (duplicates, never a loss). Batches are written
// one at a time (max_in_flight 1), so no commit can overtake an earlier
// batch still in flight.
//
// Positions are kept per commit user: at Connect the output reads them
// from its user's latest snapshot. Writers with different commit users
// keep their own.

// positionsProperty is the snapshot property holding the source positions:
// a JSON object of stream name to offset text.
const positionsProperty = "benthos-paimon.source-positions"

// maxOutstanding bounds the failed offsets remembered per stream; beyond
// it the stream's position stays frozen until the output restarts.
const maxOutstanding = 100_000

// errInvalidOffset marks an offset that is not a position.
var errInvalidOffset = errors.New("invalid source offset")

// sourceOffset is a parsed offset: one or more unsigned decimal integers
// joined by '.', each without leading zeros, compared element by element
// (a Kafka offset "1042"; a Postgres commit LSN and the change's ordinal
// in its transaction "23876224.3").
type sourceOffset []string

// parseOffset reads an offset. The canonical text (String) drops leading
// zeros, so "007" and "7" are the same offset.
func parseOffset(s string) (sourceOffset, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: empty", errInvalidOffset)
	}
	parts := strings.Split(s, ".")
	for i, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("%w %q: an empty number between dots", errInvalidOffset, s)
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return nil, fmt.Errorf("%w %q: offsets are unsigned decimal integers, optionally several joined by '.'", errInvalidOffset, s)
			}
		}
		if t := strings.TrimLeft(p, "0"); t != "" {
			parts[i] = t
		} else {
			parts[i] = "0"
		}
	}
	return sourceOffset(parts), nil
}

// String is the canonical text of o.
func (o sourceOffset) String() string { return strings.Join(o, ".") }

// compare returns -1, 0 or +1 as o is below, equal to or above p.
func (o sourceOffset) compare(p sourceOffset) int {
	for i := 0; i < len(o) && i < len(p); i++ {
		a, b := o[i], p[i]
		switch {
		case len(a) != len(b):
			if len(a) < len(b) {
				return -1
			}
			return 1
		case a != b:
			if a < b {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(o) < len(p):
		return -1
	case len(o) > len(p):
		return 1
	}
	return 0
}

// streamState is what the output knows of one stream.
type streamState struct {
	// recorded is the position in the latest snapshot (nil: none yet).
	recorded sourceOffset
	// written is the highest offset committed since the output started
	// (or recorded, at start).
	written sourceOffset
	// outstanding are offsets of messages that failed and were not
	// committed since; overflow is set once there were too many to track.
	outstanding map[string]bool
	overflow    bool
}

// covers reports whether the message at off was committed: at or below
// what was written, and not one of the failures since.
func (s *streamState) covers(off sourceOffset) bool {
	if s == nil || s.written == nil || off.compare(s.written) > 0 {
		return false
	}
	if s.overflow {
		return off.compare(s.recorded) <= 0
	}
	return !s.outstanding[off.String()]
}

// batchPositions are the offsets of one batch's messages, by stream.
type batchPositions struct {
	written map[string][]sourceOffset // in the batch's commit
	failed  map[string][]sourceOffset // not written: failed alone
}

func (b *batchPositions) add(to *map[string][]sourceOffset, stream string, off sourceOffset) {
	if *to == nil {
		*to = map[string][]sourceOffset{}
	}
	(*to)[stream] = append((*to)[stream], off)
}

// positionTracker holds the streams of one table's commits. Safe for
// concurrent use.
type positionTracker struct {
	mu      sync.Mutex
	streams map[string]*streamState
}

// newPositionTracker starts from the positions recorded in last, the
// latest snapshot of the output's commit user (nil: none).
func newPositionTracker(last *snapshot.Snapshot) (*positionTracker, error) {
	t := &positionTracker{streams: map[string]*streamState{}}
	if last == nil {
		return t, nil
	}
	text, ok := last.Properties[positionsProperty]
	if !ok {
		return t, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("snapshot %d: property %s is not a JSON object of stream offsets: %w", last.ID, positionsProperty, err)
	}
	for stream, o := range m {
		off, err := parseOffset(o)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d: property %s, stream %q: %w", last.ID, positionsProperty, stream, err)
		}
		t.streams[stream] = &streamState{recorded: off, written: off}
	}
	return t, nil
}

// covered reports whether the message at (stream, off) was committed
// already.
func (t *positionTracker) covered(stream string, off sourceOffset) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.streams[stream].covers(off)
}

// fail records messages that will not be in any commit now: they are
// delivered again and their streams' positions wait for them.
func (t *positionTracker) fail(offsets map[string][]sourceOffset) {
	if len(offsets) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for stream, offs := range offsets {
		s := t.stream(stream)
		for _, o := range offs {
			if s.overflow {
				break
			}
			if s.outstanding == nil {
				s.outstanding = map[string]bool{}
			}
			s.outstanding[o.String()] = true
			if len(s.outstanding) > maxOutstanding {
				s.overflow, s.outstanding = true, nil
			}
		}
	}
}

func (t *positionTracker) stream(name string) *streamState {
	s := t.streams[name]
	if s == nil {
		s = &streamState{}
		t.streams[name] = s
	}
	return s
}

// properties returns the snapshot properties of a commit of batches, and
// apply, to call once that commit landed, which makes the new positions
// the tracker's. Nothing changes until apply.
func (t *positionTracker) properties(batches []*batchPositions) (map[string]string, func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	preview := make(map[string]*streamState, len(t.streams))
	for name, s := range t.streams {
		c := *s
		c.outstanding = maps.Clone(s.outstanding)
		preview[name] = &c
	}
	advance(preview, batches)
	out := make(map[string]string, len(preview))
	for name, s := range preview {
		if s.recorded != nil {
			out[name] = s.recorded.String()
		}
	}
	apply := func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		advance(t.streams, batches)
	}
	if len(out) == 0 {
		return nil, apply
	}
	text, _ := json.Marshal(out) // a map of strings always marshals
	return map[string]string{positionsProperty: string(text)}, apply
}

// advance applies the commit of batches to streams: their offsets are
// written, no longer outstanding, and a stream without outstanding
// failures records its highest written offset.
func advance(streams map[string]*streamState, batches []*batchPositions) {
	for _, b := range batches {
		for stream, offs := range b.written {
			s := streams[stream]
			if s == nil {
				s = &streamState{}
				streams[stream] = s
			}
			for _, o := range offs {
				if s.written == nil || o.compare(s.written) > 0 {
					s.written = o
				}
				delete(s.outstanding, o.String())
			}
		}
	}
	for _, s := range streams {
		if len(s.outstanding) == 0 && !s.overflow {
			s.recorded = s.written
		}
	}
}
