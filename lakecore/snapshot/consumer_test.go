package snapshot_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

func TestConsumers(t *testing.T) {
	ctx := context.Background()
	fio := newFIO(t)
	c := snapshot.NewConsumerManager(fio, table)
	if _, ok, err := c.MinNextSnapshot(ctx); ok || err != nil {
		t.Errorf("MinNextSnapshot without consumers = %v, %v", ok, err)
	}
	if _, ok, err := c.Get(ctx, "job"); ok || err != nil {
		t.Errorf("Get of a missing consumer = %v, %v", ok, err)
	}
	for id, next := range map[string]int64{"job": 7, "other.job-2": 3, "x": 12} {
		if err := c.Put(ctx, id, snapshot.Consumer{NextSnapshot: next}); err != nil {
			t.Fatal(err)
		}
	}
	// Java's bytes (Consumer.toJson in Paimon 1.4.2).
	want, err := os.ReadFile("testdata/java142-consumer")
	if err != nil {
		t.Fatal(err)
	}
	got, err := fio.ReadFile(ctx, table+"/consumer/consumer-job")
	if err != nil || string(got) != string(want) {
		t.Errorf("consumer-job = %q, %v; want Java's %q", got, err, want)
	}
	if err := c.Put(ctx, "job", snapshot.Consumer{NextSnapshot: 8}); err != nil {
		t.Fatal(err)
	}
	if con, ok, err := c.Get(ctx, "job"); !ok || err != nil || con.NextSnapshot != 8 {
		t.Errorf("Get after overwrite = %v, %v, %v", con, ok, err)
	}
	// Hidden temp files and other names are not consumers.
	for _, name := range []string{".consumer-job.123.tmp", "consumer-", "readme"} {
		if err := fio.WriteFile(ctx, table+"/consumer/"+name, []byte("garbage")); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w := map[string]snapshot.Consumer{"job": {8}, "other.job-2": {3}, "x": {12}}; !reflect.DeepEqual(all, w) {
		t.Errorf("List = %v, want %v", all, w)
	}
	if min, ok, err := c.MinNextSnapshot(ctx); !ok || err != nil || min != 3 {
		t.Errorf("MinNextSnapshot = %d, %v, %v; want 3", min, ok, err)
	}
	if err := c.Delete(ctx, "other.job-2"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "other.job-2"); err != nil {
		t.Errorf("Delete of a missing consumer = %v", err)
	}
	if min, _, _ := c.MinNextSnapshot(ctx); min != 8 {
		t.Errorf("MinNextSnapshot after Delete = %d, want 8", min)
	}
	deleted, err := c.ExpireBefore(ctx, time.Now().Add(time.Hour))
	if err != nil || len(deleted) != 2 {
		t.Errorf("ExpireBefore(now+1h) = %v, %v; want both deleted", deleted, err)
	}
	if deleted, _ := c.ExpireBefore(ctx, time.Now().Add(-time.Hour)); len(deleted) != 0 {
		t.Errorf("ExpireBefore(now-1h) deleted %v", deleted)
	}

	for _, bad := range []string{"", "a/b", "/"} {
		if err := c.Put(ctx, bad, snapshot.Consumer{}); !errors.Is(err, snapshot.ErrInvalidConsumer) {
			t.Errorf("Put(%q) = %v, want ErrInvalidConsumer", bad, err)
		}
		if _, _, err := c.Get(ctx, bad); !errors.Is(err, snapshot.ErrInvalidConsumer) {
			t.Errorf("Get(%q) = %v, want ErrInvalidConsumer", bad, err)
		}
		if err := c.Delete(ctx, bad); !errors.Is(err, snapshot.ErrInvalidConsumer) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidConsumer", bad, err)
		}
	}
	if err := fio.WriteFile(ctx, table+"/consumer/consumer-broken", []byte(`{"next":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, "broken"); !errors.Is(err, snapshot.ErrInvalidConsumer) {
		t.Errorf("Get of a broken consumer = %v", err)
	}
	if _, err := c.List(ctx); !errors.Is(err, snapshot.ErrInvalidConsumer) {
		t.Errorf("List with a broken consumer = %v", err)
	}
}

func TestParseConsumer(t *testing.T) {
	for in, want := range map[string]int64{
		`{"nextSnapshot":5}`:                   5,
		"{\n  \"nextSnapshot\" : 9\n}":         9,
		`{"other":"x","nextSnapshot":-1}`:      -1,
		`{"nextSnapshot":9223372036854775807}`: 9223372036854775807,
	} {
		got, err := snapshot.ParseConsumer([]byte(in))
		if err != nil || got.NextSnapshot != want {
			t.Errorf("ParseConsumer(%s) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"nextSnapshot":null}`, `{"nextSnapshot":"x"}`, `{"nextSnapshot":1.5}`, `{"nextSnapshot":1e30}`} {
		if _, err := snapshot.ParseConsumer([]byte(bad)); !errors.Is(err, snapshot.ErrInvalidConsumer) {
			t.Errorf("ParseConsumer(%s) = %v, want ErrInvalidConsumer", bad, err)
		}
	}
}

func TestTags(t *testing.T) {
	ctx := context.Background()
	fio := newFIO(t)
	tags := snapshot.NewTagManager(fio, table)
	if list, err := tags.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("List without tags = %v, %v", list, err)
	}
	put := func(name string, s *snapshot.Snapshot, extra string) {
		t.Helper()
		b, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if extra != "" {
			b = append(b[:len(b)-2], []byte(",\n"+extra+"\n}")...)
		}
		if err := fio.WriteFile(ctx, table+"/tag/tag-"+name, b); err != nil {
			t.Fatal(err)
		}
	}
	put("nightly", snap(5, "u", 5, snapshot.CommitAppend, 5), `"tagCreateTime" : [ 2024, 5, 30, 12, 0, 0, 123000000 ], "tagTimeRetained" : 86400.000000000`)
	put("b-first", snap(2, "u", 2, snapshot.CommitAppend, 2), "")
	put("a-first", snap(2, "u", 2, snapshot.CommitAppend, 2), "")
	if err := fio.WriteFile(ctx, table+"/tag/.tag-x.1.tmp", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	list, err := tags.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range list {
		names = append(names, tg.Name)
	}
	if !reflect.DeepEqual(names, []string{"a-first", "b-first", "nightly"}) {
		t.Fatalf("List names = %v", names)
	}
	n := list[2]
	if n.Snapshot.ID != 5 || string(n.CreateTime) != "[ 2024, 5, 30, 12, 0, 0, 123000000 ]" || string(n.TimeRetained) != "86400.000000000" {
		t.Errorf("nightly = id %d create %s retained %s", n.Snapshot.ID, n.CreateTime, n.TimeRetained)
	}
	if list[0].CreateTime != nil {
		t.Errorf("a-first CreateTime = %s", list[0].CreateTime)
	}
	if _, err := tags.Get(ctx, "missing"); !errors.Is(err, snapshot.ErrTagNotFound) {
		t.Errorf("Get(missing) = %v", err)
	}
	if err := fio.WriteFile(ctx, table+"/tag/tag-bad", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := tags.List(ctx); !errors.Is(err, snapshot.ErrInvalidSnapshot) {
		t.Errorf("List with a broken tag = %v", err)
	}
}
