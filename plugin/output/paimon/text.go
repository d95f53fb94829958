package paimon

import (
	"regexp"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// text is one of the output's interpolated string fields (row_kind,
// source_position, unchanged_columns, a routed database or table),
// evaluated per message.
//
// The common shapes skip Benthos' interpolation, which costs about 200 ns
// and four allocations per message: a field without interpolation is its
// text, and a field that is exactly one metadata reference (`${! @key }`
// or `${! metadata("key") }`, the way pipelines pass a CDC input's
// operation and position on) is read from the message's metadata when the
// value there is a string, which is what the interpolation gives for it.
// The deprecated `meta("key")` is not taken: it gives null for an empty
// string. Anything else (a missing key, a value of another type, any other
// expression) goes through the interpolation, so results and errors are
// the interpolation's.
type text struct {
	interp *service.InterpolatedString
	// static is the field's text when it has no interpolation.
	static   string
	isStatic bool
	// metaKey is the key of a field that is one metadata reference.
	metaKey string
}

// metaRef matches a field that is one metadata reference.
var metaRef = regexp.MustCompile(`^\$\{!\s*(?:@([A-Za-z0-9_]+)|metadata\(\s*"([A-Za-z0-9_.-]+)"\s*\))\s*\}$`)

// parseText reads the interpolated string field at path.
func parseText(conf *service.ParsedConfig, path ...string) (*text, error) {
	raw, err := conf.FieldString(path...)
	if err != nil {
		return nil, err
	}
	is, err := conf.FieldInterpolatedString(path...)
	if err != nil {
		return nil, err
	}
	return newText(raw, is), nil
}

// newText is the field whose configured text is raw and whose parsed
// interpolation is is.
func newText(raw string, is *service.InterpolatedString) *text {
	t := &text{interp: is}
	if !strings.Contains(raw, "${") {
		t.static, t.isStatic = raw, true
	} else if m := metaRef.FindStringSubmatch(raw); m != nil {
		t.metaKey = m[1] + m[2]
	}
	return t
}

// over prepares t's evaluation over the messages of batch.
func (t *text) over(batch service.MessageBatch) *textOf {
	return &textOf{t: t, batch: batch}
}

// textOf evaluates a text over one batch; the interpolation executor is
// made at the first message that needs it, once per batch (one per call
// would copy the batch every time).
type textOf struct {
	t     *text
	batch service.MessageBatch
	exec  *service.MessageBatchInterpolationExecutor
}

// TryString is the field's value for message i, as
// MessageBatchInterpolationExecutor.TryString gives it.
func (x *textOf) TryString(i int) (string, error) {
	if x.t.isStatic {
		return x.t.static, nil
	}
	if x.t.metaKey != "" {
		if v, ok := x.batch[i].MetaGetMut(x.t.metaKey); ok {
			if s, ok := v.(string); ok {
				return s, nil
			}
		}
	}
	if x.exec == nil {
		x.exec = x.batch.InterpolationExecutor(x.t.interp)
	}
	return x.exec.TryString(i)
}
