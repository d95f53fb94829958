package bench

import (
	"reflect"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/paymentevent"
)

// TestBaselineRowsArePaymentEvents: the parquet-go baseline's rows are the
// payment events lakecore writes, value for value.
func TestBaselineRowsArePaymentEvents(t *testing.T) {
	for _, n := range []int64{1, 2, 99, 4999, 5000, 123457, 1_000_000} {
		if got, want := anyRow(pqRowAt(n, 4)), paymentevent.Row(n, 4); !reflect.DeepEqual(got, want) {
			t.Errorf("row %d: baseline %v, paymentevent %v", n, got, want)
		}
	}
}
