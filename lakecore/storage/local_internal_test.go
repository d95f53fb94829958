package storage

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Environment of the helper process that TestLocalExclusiveProcesses
// starts from this test binary.
const (
	envRaceChild = "BP_STORAGE_RACE_CHILD" // child id; set = run as a child
	envRaceRoot  = "BP_STORAGE_RACE_ROOT"
	envRaceLink  = "BP_STORAGE_RACE_LINK" // "1" = force link(2)
)

const (
	raceGoroutinesPerProcess = 4
	racePayloadSize          = 64 << 10
)

func TestMain(m *testing.M) {
	if id := os.Getenv(envRaceChild); id != "" {
		os.Exit(raceChild(id))
	}
	os.Exit(m.Run())
}

// racePayload is racePayloadSize bytes whose every line names its writer,
// so a reader can tell a complete file from a partial or mixed one.
func racePayload(writer string, round int) []byte {
	line := fmt.Sprintf("%s round %d\n", writer, round)
	b := bytes.Repeat([]byte(line), racePayloadSize/len(line)+1)
	return b[:racePayloadSize]
}

// checkRaceContent reports whether b is the complete payload of some writer.
func checkRaceContent(b []byte, round int) error {
	if len(b) != racePayloadSize {
		return fmt.Errorf("partial file: %d bytes", len(b))
	}
	writer, _, ok := strings.Cut(string(b), " round ")
	if !ok || !bytes.Equal(b, racePayload(writer, round)) {
		return fmt.Errorf("mixed or corrupt content starting %q", b[:min(40, len(b))])
	}
	return nil
}

// raceChild is the body of a helper process: for every "<round>" line on
// stdin, raceGoroutinesPerProcess goroutines race WriteExclusive on
// snapshot/snapshot-<round>; it answers one line per goroutine:
// "<round> <writer> WIN|EXIST|ERR <message>".
func raceChild(id string) int {
	l, err := NewLocal(os.Getenv(envRaceRoot))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if os.Getenv(envRaceLink) == "1" {
		l.noRenameat2.Store(true)
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		round, err := strconv.Atoi(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		results := make([]string, raceGoroutinesPerProcess)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range raceGoroutinesPerProcess {
			wg.Go(func() {
				writer := fmt.Sprintf("p%s-g%d", id, g)
				<-start
				err := l.WriteExclusive(context.Background(), fmt.Sprintf("snapshot/snapshot-%d", round), racePayload(writer, round))
				switch {
				case err == nil:
					results[g] = fmt.Sprintf("%d %s WIN", round, writer)
				case errors.Is(err, ErrExist) && !errors.Is(err, ErrAmbiguous):
					results[g] = fmt.Sprintf("%d %s EXIST", round, writer)
				default:
					results[g] = fmt.Sprintf("%d %s ERR %v", round, writer, err)
				}
			})
		}
		close(start)
		wg.Wait()
		for _, r := range results {
			fmt.Fprintln(out, r)
		}
		out.Flush()
	}
	return 0
}

// TestLocalExclusiveProcesses: 4 OS processes of 4 goroutines each race
// WriteExclusive on the same path, round after round, with renameat2 and
// with the link(2) fallback, while this process keeps reading the path.
// Exactly one writer wins each round, the others get ErrExist, the file
// holds the winner's complete payload, and no read ever sees a partial
// file.
func TestLocalExclusiveProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const procs, rounds = 4, 25
	for _, link := range []bool{false, true} {
		t.Run(fmt.Sprintf("link=%v", link), func(t *testing.T) {
			root := t.TempDir()
			l, err := NewLocal(root)
			if err != nil {
				t.Fatal(err)
			}
			type child struct {
				cmd   *exec.Cmd
				stdin io.WriteCloser
				out   *bufio.Scanner
			}
			var children []child
			for i := range procs {
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), envRaceChild+"="+strconv.Itoa(i), envRaceRoot+"="+root)
				if link {
					cmd.Env = append(cmd.Env, envRaceLink+"=1")
				}
				cmd.Stderr = os.Stderr
				stdin, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				children = append(children, child{cmd, stdin, bufio.NewScanner(stdout)})
			}
			defer func() {
				for _, c := range children {
					c.stdin.Close()
					if err := c.cmd.Wait(); err != nil {
						t.Errorf("child: %v", err)
					}
				}
			}()

			var reads, fullReads atomic.Int64
			for round := range rounds {
				p := fmt.Sprintf("snapshot/snapshot-%d", round)
				stopReader := make(chan struct{})
				readerErr := make(chan error, 1)
				go func() {
					defer close(readerErr)
					for {
						select {
						case <-stopReader:
							return
						default:
						}
						b, err := l.ReadFile(context.Background(), p)
						reads.Add(1)
						if errors.Is(err, ErrNotExist) {
							continue
						}
						if err == nil {
							err = checkRaceContent(b, round)
							fullReads.Add(1)
						}
						if err != nil {
							readerErr <- err
							return
						}
					}
				}()
				for _, c := range children {
					fmt.Fprintln(c.stdin, round)
				}
				var wins []string
				for _, c := range children {
					for range raceGoroutinesPerProcess {
						if !c.out.Scan() {
							t.Fatalf("round %d: child output ended: %v", round, c.out.Err())
						}
						f := strings.SplitN(c.out.Text(), " ", 4)
						switch f[2] {
						case "WIN":
							wins = append(wins, f[1])
						case "EXIST":
						default:
							t.Fatalf("round %d: %s", round, c.out.Text())
						}
					}
				}
				close(stopReader)
				if err := <-readerErr; err != nil {
					t.Fatalf("round %d: reader saw %v", round, err)
				}
				if len(wins) != 1 {
					t.Fatalf("round %d: winners %v, want exactly one", round, wins)
				}
				b, err := l.ReadFile(context.Background(), p)
				if err != nil || !bytes.Equal(b, racePayload(wins[0], round)) {
					t.Fatalf("round %d: file is not the payload of winner %s (%v)", round, wins[0], err)
				}
			}
			got, err := l.List(context.Background(), "snapshot", false)
			if err != nil || len(got) != rounds {
				t.Fatalf("List: %d entries (%v), want %d snapshots and no temporary files", len(got), err, rounds)
			}
			t.Logf("%d rounds x %d writers; reader made %d reads, %d of a complete file", rounds, procs*raceGoroutinesPerProcess, reads.Load(), fullReads.Load())
		})
	}
}

// TestLocalExclusiveGoroutines: 16 goroutines of one process, both
// publishing modes, with a concurrent reader.
func TestLocalExclusiveGoroutines(t *testing.T) {
	for _, link := range []bool{false, true} {
		t.Run(fmt.Sprintf("link=%v", link), func(t *testing.T) {
			l, err := NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			l.noRenameat2.Store(link)
			for round := range 20 {
				p := fmt.Sprintf("schema/schema-%d", round)
				stop := make(chan struct{})
				var readerErr error
				var rwg sync.WaitGroup
				rwg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						b, err := l.ReadFile(context.Background(), p)
						if err == nil {
							err = checkRaceContent(b, round)
						}
						if err != nil && !errors.Is(err, ErrNotExist) {
							readerErr = err
							return
						}
					}
				})
				var wins atomic.Int32
				var winner atomic.Value
				start := make(chan struct{})
				var wg sync.WaitGroup
				errs := make([]error, 16)
				for g := range 16 {
					wg.Go(func() {
						w := fmt.Sprintf("g%d", g)
						<-start
						err := l.WriteExclusive(context.Background(), p, racePayload(w, round))
						if err == nil {
							wins.Add(1)
							winner.Store(w)
						} else if !errors.Is(err, ErrExist) {
							errs[g] = err
						}
					})
				}
				close(start)
				wg.Wait()
				close(stop)
				rwg.Wait()
				if readerErr != nil {
					t.Fatalf("round %d: reader: %v", round, readerErr)
				}
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if wins.Load() != 1 {
					t.Fatalf("round %d: %d winners", round, wins.Load())
				}
				b, _ := l.ReadFile(context.Background(), p)
				if !bytes.Equal(b, racePayload(winner.Load().(string), round)) {
					t.Fatalf("round %d: content is not the winner's", round)
				}
			}
			if got, err := l.List(context.Background(), "schema", false); err != nil || len(got) != 20 {
				t.Fatalf("List: %d entries, %v; want 20 and no temporary files", len(got), err)
			}
		})
	}
}

func TestLocalUsesRenameat2(t *testing.T) {
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WriteExclusive(context.Background(), "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if l.noRenameat2.Load() {
		t.Logf("renameat2(RENAME_NOREPLACE) refused on %s; link(2) is used", l.Root())
	}
	if err := l.WriteExclusive(context.Background(), "a", []byte("y")); !errors.Is(err, ErrExist) {
		t.Fatalf("second create: %v", err)
	}
}

func TestLocalTempFiles(t *testing.T) {
	ctx := context.Background()
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := l.Create(ctx, "snapshot/snapshot-1")
	if err != nil {
		t.Fatal(err)
	}
	// While writing, the temporary file sits beside the target, named as
	// Java's Path.createTempPath names it.
	ents, err := os.ReadDir(filepath.Join(l.Root(), "snapshot"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("ReadDir: %v, %v", ents, err)
	}
	re := regexp.MustCompile(`^\.snapshot-1\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$`)
	if !re.MatchString(ents[0].Name()) {
		t.Fatalf("temporary file %q is not .<name>.<uuid>.tmp", ents[0].Name())
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(l.Root(), "snapshot")); len(ents) != 0 {
		t.Fatalf("Abort left %v", ents)
	}
	// A failed exclusive create leaves no temporary file either.
	if err := l.WriteExclusive(ctx, "snapshot/snapshot-2", []byte("a")); err != nil {
		t.Fatal(err)
	}
	l.noRenameat2.Store(true)
	if err := l.WriteExclusive(ctx, "snapshot/snapshot-2", []byte("b")); !errors.Is(err, ErrExist) {
		t.Fatal(err)
	}
	if err := l.WriteExclusive(ctx, "snapshot/snapshot-3", []byte("c")); err != nil {
		t.Fatal(err)
	}
	ents, _ = os.ReadDir(filepath.Join(l.Root(), "snapshot"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "snapshot-2,snapshot-3" {
		t.Fatalf("directory holds %v", names)
	}
}

func TestLocalDirectoriesAndErrors(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "nested", "warehouse")
	l, err := NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		t.Fatalf("NewLocal did not create %s", root)
	}
	if err := l.WriteFile(ctx, "d/f", []byte("x")); err != nil {
		t.Fatal(err)
	}
	st, err := l.Stat(ctx, "d")
	if err != nil || !st.IsDir || st.Size != 0 {
		t.Fatalf("Stat dir = %+v, %v", st, err)
	}
	if _, err := l.Open(ctx, "d"); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("Open dir: %v", err)
	}
	if err := l.WriteExclusive(ctx, "d", []byte("x")); !errors.Is(err, ErrExist) {
		t.Fatalf("WriteExclusive over a directory: %v", err)
	}
	if err := l.Delete(ctx, "d"); err == nil {
		t.Fatal("Delete of a non-empty directory succeeded")
	}
	if err := l.WriteFile(ctx, "d/f/g", []byte("x")); err == nil {
		t.Fatal("writing below a file succeeded")
	}
	_, err = l.ReadFile(ctx, "d/missing")
	want := "read file://" + root + "/d/missing: "
	if !errors.Is(err, ErrNotExist) || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q, want prefix %q wrapping ErrNotExist", err, want)
	}
	if err := l.Delete(ctx, "d/f"); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx, "d"); err != nil {
		t.Fatalf("Delete of an empty directory: %v", err)
	}
	if l.String() != "file://"+root {
		t.Fatalf("String = %s", l)
	}
}
