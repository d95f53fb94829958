package maintain

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// javaLocalDateTime is LocalDateTime.toString of a wall clock held in UTC.
func javaLocalDateTime(t time.Time) string {
	var b strings.Builder
	y := t.Year()
	switch {
	case y < 0 && y > -1000:
		fmt.Fprintf(&b, "-%04d", -y)
	case y >= 0 && y < 1000:
		fmt.Fprintf(&b, "%04d", y)
	case y > 9999:
		fmt.Fprintf(&b, "+%d", y)
	default:
		fmt.Fprintf(&b, "%d", y)
	}
	fmt.Fprintf(&b, "-%02d-%02dT%02d:%02d", int(t.Month()), t.Day(), t.Hour(), t.Minute())
	if t.Second() > 0 || t.Nanosecond() > 0 {
		fmt.Fprintf(&b, ":%02d", t.Second())
		switch n := t.Nanosecond(); {
		case n == 0:
		case n%1_000_000 == 0:
			fmt.Fprintf(&b, ".%03d", n/1_000_000)
		case n%1000 == 0:
			fmt.Fprintf(&b, ".%06d", n/1000)
		default:
			fmt.Fprintf(&b, ".%09d", n)
		}
	}
	return b.String()
}

// TestPartitionTimeMatchesJava replays the answers of Java's
// PartitionTimeExtractor recorded in testdata/partition_time.tsv.
func TestPartitionTimeMatchesJava(t *testing.T) {
	f, err := os.Open("testdata/partition_time.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 5 {
			t.Fatalf("bad line %q", line)
		}
		n++
		x, err := newTimeExtractor(cols[0], cols[1])
		if err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		keys := strings.Split(cols[2], ",")
		var vals []*string
		for _, v := range strings.Split(cols[3], ",") {
			if v == "NULL" {
				vals = append(vals, nil)
			} else {
				vals = append(vals, &v)
			}
		}
		got, err := x.extract(keys, vals)
		var out string
		switch {
		case errors.Is(err, errNullValue):
			out = "NULL"
		case errors.Is(err, errUnparseable):
			out = "UNPARSEABLE"
		case err != nil:
			out = "ERROR " + err.Error()
		default:
			out = javaLocalDateTime(got)
		}
		if out != cols[4] {
			t.Errorf("pattern %q formatter %q values %q: got %s, Java %s", cols[0], cols[1], cols[3], out, cols[4])
		}
	}
	if n < 60 {
		t.Fatalf("only %d cases", n)
	}
}

func TestJavaTimeFormatRejectsUnsupportedPatterns(t *testing.T) {
	for _, p := range []string{"yyyy-MM-dd G", "yyyy-ww", "yyyy-MM-dd'T", "yyyy]", "yyyy{MM}", "yyyy-MM-dd HHH", "VV"} {
		if _, err := newTimeExtractor("", p); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%q: err = %v, want ErrInvalidOptions", p, err)
		}
	}
}

func FuzzPartitionTime(f *testing.F) {
	for _, s := range []string{"2024-01-15", "2024-1-5 1:2:3.5", "20240115", "x", ""} {
		f.Add("yyyyMMddHH", s)
		f.Add("", s)
	}
	f.Fuzz(func(t *testing.T, formatter, value string) {
		x, err := newTimeExtractor("", formatter)
		if err != nil {
			return
		}
		_, _ = x.extract([]string{"dt"}, []*string{&value})
	})
}
