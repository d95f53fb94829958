package paimon

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// BenchmarkDecodeNative measures what decode costs per message in native
// form without row_kind: reading the row kind (none given: +I).
func BenchmarkDecodeNative(b *testing.B) {
	batch := make(service.MessageBatch, 1000)
	for i := range batch {
		batch[i] = service.NewMessage([]byte(`{"id": 1}`))
	}
	k := &tableSink{}
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := k.decode(batch, nil); errs[0] != nil {
			b.Fatal(errs[0])
		}
	}
}
