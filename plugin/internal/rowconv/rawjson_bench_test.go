package rowconv

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// paymentEvent is a line of the 8-column payment event of issue #19.
const paymentEvent = `{"id":123457,"ts":"2024-05-30T12:00:00.123Z","user":"user-4711","merchant":"merchant-42",` +
	`"amount":"1234.50","currency":"EUR","status":"captured","dt":"2024-05-30"}`

func paymentConverter(b *testing.B) *Converter {
	fields := types.MustParse("ROW<id BIGINT NOT NULL, ts TIMESTAMP(3) WITH LOCAL TIME ZONE, user STRING, merchant STRING, " +
		"amount DECIMAL(10, 2), currency CHAR(3), status STRING, dt STRING NOT NULL>").Fields
	c, err := NewConverter(fields, ConvertOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkConvertPayment measures a raw JSON message to a row: by the
// one-pass decoder (raw) and by Benthos' parse and Convert (structured).
func BenchmarkConvertPayment(b *testing.B) {
	c := paymentConverter(b)
	raw := []byte(paymentEvent)
	for _, p := range []struct {
		name    string
		convert func(*service.Message) ([]any, []NewColumn, error)
	}{{"raw", c.ConvertMessage}, {"structured", c.convertStructured}} {
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := p.convert(service.NewMessage(raw)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
