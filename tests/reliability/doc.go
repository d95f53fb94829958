// Package reliability is the suite that tries hard to break the guarantees
// of benthos-paimon (docs/RELIABILITY.md): the real binary killed with
// SIGKILL at random moments and inside commits, four writer processes on
// one table on a local disk and on the S3 server (with a compaction and an
// expiry process alongside), an S3 server behind a proxy that injects 5xx
// answers, slow answers, dropped connections and ambiguous commits, a
// catalogue of bad messages and of corrupt table files, and streaming
// readers racing snapshot expiry.
//
// Every test skips under -short. `go test ./tests/reliability/` runs the
// short mode (a few minutes); `-long` (or BP_RELIABILITY_LONG=1) runs the
// long mode, and `-v` prints the figures each test measures, which
// docs/RELIABILITY.md quotes.
package reliability
