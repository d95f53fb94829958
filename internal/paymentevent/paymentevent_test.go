package paymentevent

import (
	"fmt"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestMix64 pins splitmix64 to its reference outputs (Vigna's splitmix64.c
// seeded with 0 and 1): Java's and Python's mirrors compute the same.
func TestMix64(t *testing.T) {
	for _, c := range []struct{ in, want uint64 }{
		{0, 0xE220A8397B1DCDAF},
		{0x9E3779B97F4A7C15, 0x6E789E6AA1B965F4}, // the second output of seed 0
	} {
		if got := Mix64(c.in); got != c.want {
			t.Errorf("Mix64(%#x) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

// TestUniqueRowGolden pins near-unique rows to the values AppendBench.java
// and peer_bench.py produce for them (--dataset unique): a change here is a
// change to mirror in both.
func TestUniqueRowGolden(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{1, "1 452414 u1-e2338aca 33223122.17 FR card 2025-12-31 23:59:42.375487 d001"},
		{2, "2 648549 u2-ef953636 58614512.61 IN sepa 2026-01-01 00:00:07.640813 d002"},
		{999_999, "999999 635059 u999999-aa5a19fd 9617297.46 US sepa 2026-01-01 00:16:14.016459 d003"},
		{1_000_000, "1000000 103376 u1000000-7f1cb603 36622982.39 JP sepa 2026-01-01 00:16:39.859917 d000"},
	} {
		r := UniqueRow(c.n, 4)
		ts := r[6].(types.Timestamp)
		got := fmt.Sprintf("%d %d %s %s %s %s %s %s", r[0], r[1], r[2], r[3].(types.Decimal), r[4], r[5],
			ts.Time().UTC().Format("2006-01-02 15:04:05.000000"), r[7])
		if got != c.want {
			t.Errorf("UniqueRow(%d) = %s, want %s", c.n, got, c.want)
		}
	}
}

// TestUniqueRowsDoNotRepeat: the properties the peers section relies on, at
// 100,000 rows: every user string distinct, event times out of order, the
// amounts within DECIMAL(10, 2).
func TestUniqueRowsDoNotRepeat(t *testing.T) {
	const n = 100_000
	users := make(map[string]bool, n)
	descents := 0
	prev := int64(0)
	for i := int64(1); i <= n; i++ {
		u := UniqueUserName(i)
		if users[u] {
			t.Fatalf("row %d repeats user %q", i, u)
		}
		users[u] = true
		us := UniqueEventMicros(i)
		if us < prev {
			descents++
		}
		prev = us
		if a := UniqueAmountCents(i); a < 0 || a > 9_999_999_999 {
			t.Fatalf("row %d: amount %d cents does not fit DECIMAL(10, 2)", i, a)
		}
	}
	if descents < n/4 {
		t.Errorf("event_time goes back %d times in %d rows, want them out of order", descents, n)
	}
}
