package storage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

func TestFaultyNthWriteExclusive(t *testing.T) {
	ctx := context.Background()
	f := storage.NewFaulty(newLocal(t), 1, storage.Fault{
		Ops: storage.OpWriteExclusive, Path: "t/snapshot/snapshot-*", Nth: 2, Times: 1,
	})
	var errs []error
	for i := 1; i <= 3; i++ {
		errs = append(errs, f.WriteExclusive(ctx, fmt.Sprintf("t/snapshot/snapshot-%d", i), []byte("x")))
	}
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("errors %v; only the second call should fail", errs)
	}
	if !errors.Is(errs[1], storage.ErrInjected) || errors.Is(errs[1], storage.ErrAmbiguous) {
		t.Fatalf("second call: %v, want ErrInjected only", errs[1])
	}
	if ok, _ := storage.Exists(ctx, f, "t/snapshot/snapshot-2"); ok {
		t.Fatal("a FailBefore fault wrote the file")
	}
	// Other operations and paths are not counted by the rule.
	if err := f.WriteExclusive(ctx, "t/schema/schema-0", nil); err != nil {
		t.Fatal(err)
	}
	got := f.Injected()
	if len(got) != 1 || got[0].Op != storage.OpWriteExclusive || got[0].Path != "t/snapshot/snapshot-2" || got[0].Rule != 0 {
		t.Fatalf("Injected = %+v", got)
	}
	if n := f.Calls(storage.OpWriteExclusive); n != 4 {
		t.Fatalf("Calls = %d, want 4", n)
	}
}

func TestFaultyModes(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		fault       storage.Fault
		run         func(f *storage.Faulty) error
		wantIs      []error
		wantNot     []error
		wantWritten bool
	}{
		{
			name:        "WriteExclusive applied, then ambiguous",
			fault:       storage.Fault{Ops: storage.OpWriteExclusive, Mode: storage.ApplyThenFail},
			run:         func(f *storage.Faulty) error { return f.WriteExclusive(ctx, "p", []byte("v")) },
			wantIs:      []error{storage.ErrInjected, storage.ErrAmbiguous},
			wantNot:     []error{storage.ErrExist},
			wantWritten: true,
		},
		{
			name:    "WriteExclusive ambiguous but not applied",
			fault:   storage.Fault{Ops: storage.OpWriteExclusive, Err: storage.ErrAmbiguous},
			run:     func(f *storage.Faulty) error { return f.WriteExclusive(ctx, "p", []byte("v")) },
			wantIs:  []error{storage.ErrInjected, storage.ErrAmbiguous},
			wantNot: []error{storage.ErrExist},
		},
		{
			name:  "Close fails before publishing",
			fault: storage.Fault{Ops: storage.OpClose},
			run: func(f *storage.Faulty) error {
				w, err := f.Create(ctx, "p")
				if err != nil {
					return err
				}
				w.Write([]byte("v"))
				err = w.Close()
				if aerr := w.Abort(); aerr != nil {
					return aerr
				}
				return err
			},
			wantIs: []error{storage.ErrInjected},
		},
		{
			name:  "Close publishes, then fails",
			fault: storage.Fault{Ops: storage.OpClose, Mode: storage.ApplyThenFail},
			run: func(f *storage.Faulty) error {
				w, err := f.Create(ctx, "p")
				if err != nil {
					return err
				}
				w.Write([]byte("v"))
				return w.Close()
			},
			wantIs:      []error{storage.ErrInjected},
			wantWritten: true,
		},
		{
			name:   "Write fails",
			fault:  storage.Fault{Ops: storage.OpWrite, Err: errors.New("disk full")},
			wantIs: []error{storage.ErrInjected},
			run: func(f *storage.Faulty) error {
				w, err := f.Create(ctx, "p")
				if err != nil {
					return err
				}
				_, err = w.Write([]byte("v"))
				w.Abort()
				return err
			},
		},
		{
			name:        "WriteFile applied, then fails",
			fault:       storage.Fault{Ops: storage.OpWriteFile, Mode: storage.ApplyThenFail},
			run:         func(f *storage.Faulty) error { return f.WriteFile(ctx, "p", []byte("v")) },
			wantIs:      []error{storage.ErrInjected},
			wantNot:     []error{storage.ErrAmbiguous},
			wantWritten: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := newLocal(t)
			f := storage.NewFaulty(inner, 1, tc.fault)
			err := tc.run(f)
			for _, want := range tc.wantIs {
				if !errors.Is(err, want) {
					t.Errorf("error %v does not wrap %v", err, want)
				}
			}
			for _, not := range tc.wantNot {
				if errors.Is(err, not) {
					t.Errorf("error %v wraps %v", err, not)
				}
			}
			b, rerr := inner.ReadFile(ctx, "p")
			if tc.wantWritten != (rerr == nil) || (rerr == nil && string(b) != "v") {
				t.Errorf("file: %q, %v; want written = %v", b, rerr, tc.wantWritten)
			}
			// No temporary file is left behind in any mode.
			if got, _ := inner.List(ctx, "", true); len(got) > 1 || (len(got) == 1 && got[0].Path != "p") {
				t.Errorf("left behind: %q", paths(got))
			}
		})
	}
}

func TestFaultyReadsAndPatterns(t *testing.T) {
	ctx := context.Background()
	inner := newLocal(t)
	for _, p := range []string{"db.db/t/a", "db.db/t/x/y/b", "db.db/u/c"} {
		mustWrite(t, inner, p, []byte("content"))
	}
	f := storage.NewFaulty(inner, 1,
		storage.Fault{Ops: storage.OpRead, Path: "db.db/t/**"},
		storage.Fault{Ops: storage.OpStat, Match: func(op storage.Op, p string) bool { return strings.HasSuffix(p, "/c") }},
	)
	for p, wantFail := range map[string]bool{"db.db/t/a": true, "db.db/t/x/y/b": true, "db.db/u/c": false} {
		file, err := f.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = file.ReadAt(make([]byte, 3), 0)
		file.Close()
		if wantFail != errors.Is(err, storage.ErrInjected) {
			t.Errorf("ReadAt %s: %v, want failure %v", p, err, wantFail)
		}
	}
	if _, err := f.Stat(ctx, "db.db/u/c"); !errors.Is(err, storage.ErrInjected) {
		t.Errorf("Stat with Match: %v", err)
	}
	if _, err := f.Stat(ctx, "db.db/t/a"); err != nil {
		t.Errorf("Stat not matched: %v", err)
	}
	f.Clear()
	if _, err := f.Stat(ctx, "db.db/u/c"); err != nil {
		t.Errorf("after Clear: %v", err)
	}
	f.Add(storage.Fault{Path: "["})
	if _, err := f.Stat(ctx, "x"); err == nil || !strings.Contains(err.Error(), "bad path pattern") {
		t.Errorf("bad pattern: %v", err)
	}
}

func TestFaultySlow(t *testing.T) {
	inner := newLocal(t)
	f := storage.NewFaulty(inner, 1, storage.Fault{Ops: storage.OpWriteFile, Mode: storage.Slow, Delay: 50 * time.Millisecond})
	start := time.Now()
	if err := f.WriteFile(context.Background(), "p", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("slow write took %v", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if err := f.WriteFile(ctx, "q", []byte("v")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow write past its deadline: %v", err)
	}
	if ok, _ := storage.Exists(context.Background(), inner, "q"); ok {
		t.Fatal("a write whose context ended during the delay happened")
	}
}

// TestFaultyDeterministic: the same seed and calls give the same faults.
func TestFaultyDeterministic(t *testing.T) {
	ctx := context.Background()
	run := func(seed uint64) []int {
		f := storage.NewFaulty(newLocal(t), seed, storage.Fault{Ops: storage.OpStat, Probability: 0.3})
		var failed []int
		for i := range 200 {
			if _, err := f.Stat(ctx, "x"); errors.Is(err, storage.ErrInjected) {
				failed = append(failed, i)
			}
		}
		return failed
	}
	a, b, c := run(42), run(42), run(43)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different faults")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds, same faults")
	}
	if len(a) < 30 || len(a) > 90 {
		t.Fatalf("%d of 200 calls failed with probability 0.3", len(a))
	}
}

func TestOpString(t *testing.T) {
	if s := (storage.OpWriteExclusive | storage.OpClose).String(); s != "close|create exclusively" {
		t.Fatalf("String = %q", s)
	}
	if s := storage.OpAll.String(); strings.Count(s, "|") != 10 {
		t.Fatalf("OpAll = %q", s)
	}
}
