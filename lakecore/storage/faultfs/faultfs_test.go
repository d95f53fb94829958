package faultfs_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
)

func TestNthWriteExclusive(t *testing.T) {
	ctx := context.Background()
	f := faultfs.New(newLocal(t), 1, faultfs.Fault{
		Ops: faultfs.OpWriteExclusive, Path: "t/snapshot/snapshot-*", Nth: 2, Times: 1,
	})
	var errs []error
	for i := 1; i <= 3; i++ {
		errs = append(errs, f.WriteExclusive(ctx, fmt.Sprintf("t/snapshot/snapshot-%d", i), []byte("x")))
	}
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("errors %v; only the second call should fail", errs)
	}
	if !errors.Is(errs[1], faultfs.ErrInjected) || errors.Is(errs[1], storage.ErrAmbiguous) {
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
	if len(got) != 1 || got[0].Op != faultfs.OpWriteExclusive || got[0].Path != "t/snapshot/snapshot-2" || got[0].Rule != 0 {
		t.Fatalf("Injected = %+v", got)
	}
	if n := f.Calls(faultfs.OpWriteExclusive); n != 4 {
		t.Fatalf("Calls = %d, want 4", n)
	}
	want := map[string]int{"t/snapshot/snapshot-1": 1, "t/snapshot/snapshot-2": 1, "t/snapshot/snapshot-3": 1, "t/schema/schema-0": 1}
	if got := f.PathCalls(faultfs.OpWriteExclusive); !maps.Equal(got, want) {
		t.Fatalf("PathCalls = %v, want %v", got, want)
	}
	if got := f.PathCalls(faultfs.OpOpen); len(got) != 0 {
		t.Fatalf("PathCalls(OpOpen) = %v, want none", got)
	}
}

func TestModes(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		fault       faultfs.Fault
		run         func(f *faultfs.FS) error
		wantIs      []error
		wantNot     []error
		wantWritten bool
	}{
		{
			name:        "WriteExclusive applied, then ambiguous",
			fault:       faultfs.Fault{Ops: faultfs.OpWriteExclusive, Mode: faultfs.ApplyThenFail},
			run:         func(f *faultfs.FS) error { return f.WriteExclusive(ctx, "p", []byte("v")) },
			wantIs:      []error{faultfs.ErrInjected, storage.ErrAmbiguous},
			wantNot:     []error{storage.ErrExist},
			wantWritten: true,
		},
		{
			name:    "WriteExclusive ambiguous but not applied",
			fault:   faultfs.Fault{Ops: faultfs.OpWriteExclusive, Err: storage.ErrAmbiguous},
			run:     func(f *faultfs.FS) error { return f.WriteExclusive(ctx, "p", []byte("v")) },
			wantIs:  []error{faultfs.ErrInjected, storage.ErrAmbiguous},
			wantNot: []error{storage.ErrExist},
		},
		{
			name:  "Close fails before publishing",
			fault: faultfs.Fault{Ops: faultfs.OpClose},
			run: func(f *faultfs.FS) error {
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
			wantIs: []error{faultfs.ErrInjected},
		},
		{
			name:  "Close publishes, then fails",
			fault: faultfs.Fault{Ops: faultfs.OpClose, Mode: faultfs.ApplyThenFail},
			run: func(f *faultfs.FS) error {
				w, err := f.Create(ctx, "p")
				if err != nil {
					return err
				}
				w.Write([]byte("v"))
				return w.Close()
			},
			wantIs:      []error{faultfs.ErrInjected},
			wantWritten: true,
		},
		{
			name:   "Write fails",
			fault:  faultfs.Fault{Ops: faultfs.OpWrite, Err: errors.New("disk full")},
			wantIs: []error{faultfs.ErrInjected},
			run: func(f *faultfs.FS) error {
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
			fault:       faultfs.Fault{Ops: faultfs.OpWriteFile, Mode: faultfs.ApplyThenFail},
			run:         func(f *faultfs.FS) error { return f.WriteFile(ctx, "p", []byte("v")) },
			wantIs:      []error{faultfs.ErrInjected},
			wantNot:     []error{storage.ErrAmbiguous},
			wantWritten: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := newLocal(t)
			f := faultfs.New(inner, 1, tc.fault)
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
				t.Errorf("left behind: %+v", got)
			}
		})
	}
}

func TestReadsAndPatterns(t *testing.T) {
	ctx := context.Background()
	inner := newLocal(t)
	for _, p := range []string{"db.db/t/a", "db.db/t/x/y/b", "db.db/u/c"} {
		mustWrite(t, inner, p, []byte("content"))
	}
	f := faultfs.New(inner, 1,
		faultfs.Fault{Ops: faultfs.OpRead, Path: "db.db/t/**"},
		faultfs.Fault{Ops: faultfs.OpStat, Match: func(op faultfs.Op, p string) bool { return strings.HasSuffix(p, "/c") }},
	)
	for p, wantFail := range map[string]bool{"db.db/t/a": true, "db.db/t/x/y/b": true, "db.db/u/c": false} {
		file, err := f.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = file.ReadAt(make([]byte, 3), 0)
		file.Close()
		if wantFail != errors.Is(err, faultfs.ErrInjected) {
			t.Errorf("ReadAt %s: %v, want failure %v", p, err, wantFail)
		}
	}
	if _, err := f.Stat(ctx, "db.db/u/c"); !errors.Is(err, faultfs.ErrInjected) {
		t.Errorf("Stat with Match: %v", err)
	}
	if _, err := f.Stat(ctx, "db.db/t/a"); err != nil {
		t.Errorf("Stat not matched: %v", err)
	}
	f.Clear()
	if _, err := f.Stat(ctx, "db.db/u/c"); err != nil {
		t.Errorf("after Clear: %v", err)
	}
	f.Add(faultfs.Fault{Path: "["})
	if _, err := f.Stat(ctx, "x"); err == nil || !strings.Contains(err.Error(), "bad path pattern") {
		t.Errorf("bad pattern: %v", err)
	}
}

func TestSlow(t *testing.T) {
	inner := newLocal(t)
	f := faultfs.New(inner, 1, faultfs.Fault{Ops: faultfs.OpWriteFile, Mode: faultfs.Slow, Delay: 50 * time.Millisecond})
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
func TestDeterministic(t *testing.T) {
	ctx := context.Background()
	run := func(seed uint64) []int {
		f := faultfs.New(newLocal(t), seed, faultfs.Fault{Ops: faultfs.OpStat, Probability: 0.3})
		var failed []int
		for i := range 200 {
			if _, err := f.Stat(ctx, "x"); errors.Is(err, faultfs.ErrInjected) {
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
	if s := (faultfs.OpWriteExclusive | faultfs.OpClose).String(); s != "close|create exclusively" {
		t.Fatalf("String = %q", s)
	}
	if s := faultfs.OpAll.String(); strings.Count(s, "|") != 10 {
		t.Fatalf("OpAll = %q", s)
	}
}

func newLocal(t *testing.T) *storage.Local {
	l, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustWrite(t *testing.T, fio storage.FileIO, p string, data []byte) {
	t.Helper()
	if err := fio.WriteFile(context.Background(), p, data); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

// TestExtraOpens: only opens of files with the prefix count, each beyond
// its expected opens; a file opened twice beyond them is reread.
func TestExtraOpens(t *testing.T) {
	ctx := context.Background()
	f := faultfs.New(newLocal(t), 1)
	for _, p := range []string{"t/b/data-1", "t/b/data-2", "t/b/data-3", "t/b/other"} {
		if err := f.WriteExclusive(ctx, p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	opens := map[string]int{"t/b/data-1": 1, "t/b/data-2": 3, "t/b/data-3": 2, "t/b/other": 4}
	for p, n := range opens {
		for range n {
			r, err := f.Open(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			_ = r.Close()
		}
	}
	extra, reread := f.ExtraOpens("data-", map[string]int{"data-1": 1, "data-3": 1})
	if extra != 4 || reread != 1 {
		t.Fatalf("ExtraOpens = %d, %d; want 4 (data-2 three times, data-3 once), 1 (data-2)", extra, reread)
	}
}
