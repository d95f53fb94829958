package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/jackson"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

const consumerPrefix = "consumer-"

// Consumer is the progress of one streaming reader: every snapshot below
// NextSnapshot has been consumed, and snapshot expiration keeps the
// snapshots from NextSnapshot on (apache/paimon
// paimon-core/src/main/java/org/apache/paimon/consumer/Consumer.java).
type Consumer struct {
	NextSnapshot int64
}

// Marshal writes {"nextSnapshot" : N} as Java's Consumer.toJson does.
func (c Consumer) Marshal() []byte {
	var o jackson.Object
	o.Int("nextSnapshot", c.NextSnapshot)
	out, _ := jackson.Pretty(o.Bytes()) // cannot fail on this input
	return out
}

// ParseConsumer reads a consumer file; unknown keys are ignored and
// "nextSnapshot" is required. Errors wrap ErrInvalidConsumer.
func ParseConsumer(data []byte) (Consumer, error) {
	ms, err := jackson.Members(data)
	if err != nil {
		return Consumer{}, fmt.Errorf("%w: not a JSON object: %v", ErrInvalidConsumer, err)
	}
	for _, m := range ms {
		if m.Key != "nextSnapshot" {
			continue
		}
		var n json.Number
		if string(m.Value) == "null" || json.Unmarshal(m.Value, &n) != nil {
			return Consumer{}, fmt.Errorf("%w: \"nextSnapshot\" must be an integer, got %s", ErrInvalidConsumer, abbreviate(m.Value))
		}
		v, err := n.Int64()
		if err != nil {
			return Consumer{}, fmt.Errorf("%w: \"nextSnapshot\" must be a 64-bit integer, got %s", ErrInvalidConsumer, n)
		}
		return Consumer{NextSnapshot: v}, nil
	}
	return Consumer{}, fmt.Errorf("%w: missing \"nextSnapshot\"", ErrInvalidConsumer)
}

// ConsumerManager reads and writes <table>/consumer/consumer-<id> as
// apache/paimon paimon-core/src/main/java/org/apache/paimon/consumer/
// ConsumerManager.java does. It is safe for concurrent use; concurrent Puts
// of one id leave one of the values.
type ConsumerManager struct {
	fio       storage.FileIO
	tablePath string
}

// NewConsumerManager returns the consumer manager of the table at
// tablePath (relative to fio's root).
func NewConsumerManager(fio storage.FileIO, tablePath string) *ConsumerManager {
	return &ConsumerManager{fio: fio, tablePath: strings.TrimSuffix(tablePath, "/")}
}

// Dir is the table's consumer directory.
func (c *ConsumerManager) Dir() string { return path.Join(c.tablePath, "consumer") }

// Path is the file of consumer id; the id must be valid (CheckConsumerID).
func (c *ConsumerManager) Path(id string) string { return c.Dir() + "/" + consumerPrefix + id }

// CheckConsumerID rejects ids that cannot name a consumer file: "" and ids
// containing "/". Errors wrap ErrInvalidConsumer.
func CheckConsumerID(id string) error {
	if id == "" || strings.Contains(id, "/") {
		return fmt.Errorf("%w: consumer id %q must be non-empty and must not contain \"/\"", ErrInvalidConsumer, id)
	}
	return nil
}

// Get reads consumer id; ok is false when it has no file.
func (c *ConsumerManager) Get(ctx context.Context, id string) (Consumer, bool, error) {
	if err := CheckConsumerID(id); err != nil {
		return Consumer{}, false, err
	}
	p := c.Path(id)
	data, err := c.fio.ReadFile(ctx, p)
	if errors.Is(err, storage.ErrNotExist) {
		return Consumer{}, false, nil
	}
	if err != nil {
		return Consumer{}, false, fmt.Errorf("read consumer %s: %w", p, err)
	}
	con, err := ParseConsumer(data)
	if err != nil {
		return Consumer{}, false, fmt.Errorf("read consumer %s: %w", p, err)
	}
	return con, true, nil
}

// Put overwrites consumer id (ConsumerManager.resetConsumer); the file
// appears atomically.
func (c *ConsumerManager) Put(ctx context.Context, id string, con Consumer) error {
	if err := CheckConsumerID(id); err != nil {
		return err
	}
	if err := c.fio.WriteFile(ctx, c.Path(id), con.Marshal()); err != nil {
		return fmt.Errorf("write consumer %s: %w", c.Path(id), err)
	}
	return nil
}

// Delete removes consumer id; a missing consumer is not an error.
func (c *ConsumerManager) Delete(ctx context.Context, id string) error {
	if err := CheckConsumerID(id); err != nil {
		return err
	}
	if err := c.fio.Delete(ctx, c.Path(id)); err != nil {
		return fmt.Errorf("delete consumer %s: %w", c.Path(id), err)
	}
	return nil
}

// ConsumerInfo is one consumer file as listed.
type ConsumerInfo struct {
	ID       string
	Consumer Consumer
	// ModTime is the file's modification time; consumer.expiration-time
	// compares it with now.
	ModTime time.Time
}

// ListInfo reads every consumer, sorted by id. Files that vanish while
// listing are skipped; hidden temporary files are ignored.
func (c *ConsumerManager) ListInfo(ctx context.Context) ([]ConsumerInfo, error) {
	infos, err := c.fio.List(ctx, c.Dir(), false)
	if err != nil {
		return nil, fmt.Errorf("list consumers of %s: %w", c.tablePath, err)
	}
	var out []ConsumerInfo
	for _, fi := range infos {
		id, ok := strings.CutPrefix(path.Base(fi.Path), consumerPrefix)
		if fi.IsDir || !ok || id == "" {
			continue
		}
		con, found, err := c.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if found {
			out = append(out, ConsumerInfo{ID: id, Consumer: con, ModTime: fi.ModTime})
		}
	}
	return out, nil
}

// List reads every consumer (ConsumerManager.consumers).
func (c *ConsumerManager) List(ctx context.Context) (map[string]Consumer, error) {
	infos, err := c.ListInfo(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Consumer, len(infos))
	for _, in := range infos {
		out[in.ID] = in.Consumer
	}
	return out, nil
}

// MinNextSnapshot returns the smallest NextSnapshot of all consumers; ok is
// false when there are none. Snapshot expiration must keep snapshots from
// there on (ExpireSnapshotsImpl, unless consumer.changelog-only).
func (c *ConsumerManager) MinNextSnapshot(ctx context.Context) (next int64, ok bool, err error) {
	infos, err := c.ListInfo(ctx)
	if err != nil {
		return 0, false, err
	}
	for _, in := range infos {
		if !ok || in.Consumer.NextSnapshot < next {
			next, ok = in.Consumer.NextSnapshot, true
		}
	}
	return next, ok, nil
}

// ExpireBefore deletes the consumers whose files were last modified before
// t (ConsumerManager.expire, run with now - consumer.expiration-time) and
// returns their ids.
func (c *ConsumerManager) ExpireBefore(ctx context.Context, t time.Time) ([]string, error) {
	infos, err := c.ListInfo(ctx)
	if err != nil {
		return nil, err
	}
	var deleted []string
	for _, in := range infos {
		if in.ModTime.Before(t) {
			if err := c.Delete(ctx, in.ID); err != nil {
				return deleted, err
			}
			deleted = append(deleted, in.ID)
		}
	}
	return deleted, nil
}
