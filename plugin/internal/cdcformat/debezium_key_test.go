package cdcformat_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
)

func TestDebeziumKeyFields(t *testing.T) {
	tests := []struct {
		key  string
		want []string
	}{
		{`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"pt"},{"type":"int32","optional":false,"field":"_id"}],"optional":false,"name":"dbserver1.inventory.products.Key"},"payload":{"pt":1,"_id":101}}`, []string{"pt", "_id"}},
		{`{"z":1,"a":2}`, []string{"z", "a"}},
		{`{"schema":null,"payload":{"k2":1,"k1":2}}`, []string{"k2", "k1"}},
		{``, nil},
		{`null`, nil},
	}
	for _, tt := range tests {
		got, err := cdcformat.DebeziumKeyFields([]byte(tt.key))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DebeziumKeyFields(%s) = %q, %v; want %q", tt.key, got, err, tt.want)
		}
	}
	for _, bad := range []struct{ key, want string }{
		{`[1]`, `field "key": not a JSON object but an array`},
		{`{"a":`, `field "key": not valid JSON`},
		{`{"schema":{"fields":[{}]}}`, `field "key.schema.fields[0]": not an object with a "field" name`},
		{`{"schema":{}}`, `field "key.schema.fields": missing or not an array`},
		{`{"schema":1}`, `field "key.schema": not an object but a number`},
	} {
		_, err := cdcformat.DebeziumKeyFields([]byte(bad.key))
		if err == nil || !errors.Is(err, cdcformat.ErrInvalidEnvelope) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("DebeziumKeyFields(%s) error %v, want %q", bad.key, err, bad.want)
		}
	}
}
