package main

import (
	"os"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/binarytest"
)

// TestMain removes the binary the CLI tests build (binarytest.Path).
func TestMain(m *testing.M) {
	code := m.Run()
	binarytest.Remove()
	os.Exit(code)
}
