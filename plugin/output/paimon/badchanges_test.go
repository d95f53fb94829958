package paimon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// mustParse parses yaml as the output's config.
func mustParse(t *testing.T, yaml string) Config {
	t.Helper()
	conf, err := ConfigSpec().ParseYAML(yaml, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// openTestOutput parses yaml as the output's config and connects it.
func openTestOutput(t *testing.T, yaml string) *paimonOutput {
	t.Helper()
	o := newOutput(mustParse(t, yaml), service.MockResources(), options{})
	ctx := context.Background()
	if err := o.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close(ctx) })
	return o
}

// openKVOutput opens an output creating table t (id BIGINT, v STRING)
// with primary key id; createExtra are more create_table lines (indented
// two spaces), rootExtra more top-level lines.
func openKVOutput(t *testing.T, createExtra, rootExtra string) *paimonOutput {
	t.Helper()
	return openTestOutput(t, fmt.Sprintf(`
warehouse: %s
table: t
create_table:
  enabled: true
  schema:
    - { name: id, type: BIGINT }
    - { name: v, type: STRING }
  primary_keys: [ id ]
%s
%s
`, t.TempDir(), createExtra, rootExtra))
}

// opMessage is a message with body and operation metadata op.
func opMessage(op, body string) *service.Message {
	m := service.NewMessage([]byte(body))
	m.MetaSetMut("operation", op)
	return m
}

// TestOutputBadChanges: every bad change fails alone, with an error that
// names what is wrong; the good changes of the same batch are committed.
func TestOutputBadChanges(t *testing.T) {
	for _, c := range []struct {
		name, format, options string
		good                  []string
		bad                   map[string]string // message -> text its error must hold
	}{{
		name: "native", format: "native",
		good: []string{`{"id":1,"v":"a"}`, `{"id":2,"v":"b"}`},
		bad: map[string]string{
			`{"v":"no key"}`:                  `id`,
			`{"id":"x","v":"wrong key type"}`: `id`,
			`{"id":3,"op":"upsert"}`:          `row kind "upsert"`,
			`not json`:                        `not valid JSON`,
		},
	}, {
		name: "debezium", format: "debezium-json",
		good: []string{`{"before":null,"after":{"id":1,"v":"a"},"op":"c"}`, `{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"b"},"op":"u"}`},
		bad: map[string]string{
			`{"before":null,"after":{"v":"no key"},"op":"c"}`:   `id`,
			`{"before":null,"after":{"id":5},"op":"x"}`:         `"op"`,
			`{"after":{"id":5}}`:                                `"op"`,
			`{"before":null,"after":{"id":6,"v":"a"},"op":"u"}`: `before`,
			`[1,2]`: `debezium-json`,
		},
	}, {
		name: "canal", format: "canal-json",
		good: []string{`{"data":[{"id":"1","v":"a"},{"id":"2","v":"b"}],"type":"INSERT"}`},
		bad: map[string]string{
			`{"type":"INSERT"}`:                    `"data"`,
			`{"data":[{"id":"3"}],"type":"MERGE"}`: `"type"`,
		},
	}, {
		name: "append table takes inserts only", format: "native", options: "primary_keys: []",
		good: []string{`{"id":1,"v":"a"}`},
		bad: map[string]string{
			`{"id":2,"op":"-D"}`: `has no primary key`,
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			keys := "primary_keys: [ id ]\n  bucket: 2"
			if c.options != "" {
				keys = c.options
			}
			rowKind := `row_kind: '${! this.op.or("+I") }'`
			if c.format != "native" {
				rowKind = ""
			}
			o := openTestOutput(t, fmt.Sprintf(`
warehouse: %s
table: t
cdc_format: %s
unknown_fields: ignore
%s
create_table:
  enabled: true
  schema:
    - { name: id, type: BIGINT }
    - { name: v, type: STRING }
  %s
maintenance: { enabled: false, table_metrics: false }
`, t.TempDir(), c.format, rowKind, keys))
			var batch service.MessageBatch
			want := map[int]string{}
			for i, g := range c.good {
				batch = append(batch, service.NewMessage([]byte(g)))
				if len(c.bad) > i { // interleave good and bad messages
					for m, frag := range c.bad {
						if _, used := usedBad(want, batch, m); used {
							continue
						}
						want[len(batch)] = frag
						batch = append(batch, service.NewMessage([]byte(m)))
						break
					}
				}
			}
			for m, frag := range c.bad {
				if _, used := usedBad(want, batch, m); !used {
					want[len(batch)] = frag
					batch = append(batch, service.NewMessage([]byte(m)))
				}
			}
			idx := batch.Index() // before the batch is written, to find its messages in the BatchError
			err := o.WriteBatch(context.Background(), batch)
			var bErr *service.BatchError
			if !errors.As(err, &bErr) || bErr.IndexedErrors() != len(c.bad) {
				t.Fatalf("want a BatchError for %d messages, got %v", len(c.bad), err)
			}
			for i, msg := range batch {
				frag, isBad := want[i]
				merr := indexedError(bErr, idx, i)
				switch {
				case isBad && (merr == nil || !strings.Contains(merr.Error(), frag)):
					b, _ := msg.AsBytes()
					t.Errorf("message %d %s: error %v, want one naming %s", i, b, merr, frag)
				case !isBad && merr != nil:
					t.Errorf("good message %d failed: %v", i, merr)
				}
			}
			rows, err := o.staticSink().tbl.ReadAll(context.Background(), 0)
			if err != nil || len(rows) == 0 {
				t.Fatalf("the good changes: %v rows, %v", len(rows), err)
			}
		})
	}
}

// usedBad reports whether the bad message m is in batch already.
func usedBad(want map[int]string, batch service.MessageBatch, m string) (int, bool) {
	for i := range want {
		if b, _ := batch[i].AsBytes(); string(b) == m {
			return i, true
		}
	}
	return 0, false
}

// indexedError is the error bErr holds for message i of the batch idx
// indexes.
func indexedError(bErr *service.BatchError, idx *service.Indexer, i int) error {
	var found error
	bErr.WalkMessagesIndexedBy(idx, func(j int, _ *service.Message, err error) bool {
		if j == i {
			found = err
			return false
		}
		return true
	})
	return found
}
