package paimon

import (
	"context"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
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

// BenchmarkDecodeRowKind measures decode with row_kind
// `${! @operation }`, the CDC inputs' shape, read by the metadata
// shortcut of text and, for the ratio, by Benthos' interpolation.
func BenchmarkDecodeRowKind(b *testing.B) {
	batch := make(service.MessageBatch, 1000)
	for i := range batch {
		batch[i] = service.NewMessage([]byte(`{"id": 1}`))
		batch[i].MetaSetMut("operation", "update")
	}
	is, err := service.NewInterpolatedString("${! @operation }")
	if err != nil {
		b.Fatal(err)
	}
	shortcut := newText("${! @operation }", is)
	interpolated := *shortcut
	interpolated.metaKey = ""
	for _, c := range []struct {
		name string
		text *text
	}{{"shortcut", shortcut}, {"interpolation", &interpolated}} {
		b.Run(c.name, func(b *testing.B) {
			k := &tableSink{conf: Config{RowKind: c.text}}
			b.ReportAllocs()
			for b.Loop() {
				if _, errs := k.decode(batch, nil); errs[0] != nil {
					b.Fatal(errs[0])
				}
			}
		})
	}
}

// BenchmarkConvertNative measures what convert costs per message in
// native form, the conversion of the payment event included.
func BenchmarkConvertNative(b *testing.B) {
	fields := types.MustParse("ROW<id BIGINT NOT NULL, ts TIMESTAMP(3) WITH LOCAL TIME ZONE, user STRING, merchant STRING, " +
		"amount DECIMAL(10, 2), currency CHAR(3), status STRING, dt STRING NOT NULL>").Fields
	conv, err := rowconv.NewConverter(fields, rowconv.ConvertOptions{})
	if err != nil {
		b.Fatal(err)
	}
	k := &tableSink{}
	k.state.Store(&writeState{conv: conv})
	batch := make(service.MessageBatch, 1000)
	values := make([]messageValues, len(batch))
	raw := []byte(`{"id":123457,"ts":"2024-05-30T12:00:00.123Z","user":"user-4711","merchant":"merchant-42",` +
		`"amount":"1234.50","currency":"EUR","status":"captured","dt":"2024-05-30"}`)
	for i := range batch {
		batch[i] = service.NewMessage(raw)
		values[i] = messageValues{native: true}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, errs, err := k.convert(context.Background(), batch, values); err != nil || errs[0] != nil {
			b.Fatal(err, errs[0])
		}
	}
}
