package main

import "testing"

// TestDemoReadCommand: the command the demo suggests reads the warehouse
// the demo wrote, not ./warehouse whatever --warehouse said.
func TestDemoReadCommand(t *testing.T) {
	for _, tc := range []struct{ warehouse, want string }{
		{"./warehouse", "./bin/benthos-paimon -c examples/paimon_to_stdout.yaml"},
		{"warehouse", "./bin/benthos-paimon -c examples/paimon_to_stdout.yaml"},
		{"/tmp/wh", "WAREHOUSE=/tmp/wh ./bin/benthos-paimon -c examples/paimon_to_stdout.yaml"},
		{"s3://lake/wh", "WAREHOUSE=s3://lake/wh ./bin/benthos-paimon -c examples/paimon_to_stdout.yaml"},
		{"/tmp/my lake's", `WAREHOUSE='/tmp/my lake'\''s' ./bin/benthos-paimon -c examples/paimon_to_stdout.yaml`},
	} {
		if got := demoReadCommand("./bin/benthos-paimon", tc.warehouse); got != tc.want {
			t.Errorf("demoReadCommand(%q) = %s, want %s", tc.warehouse, got, tc.want)
		}
	}
}
