package rowconv

import (
	"errors"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestConvertMessageInvalidUTF8: the JSON parser turns invalid UTF-8 into
// U+FFFD without an error; such a message must fail naming the field, while
// U+FFFD sent as valid UTF-8 (or \ufffd escapes, or a structured value) is
// kept. Found by the reliability suite's bad input catalogue.
func TestConvertMessageInvalidUTF8(t *testing.T) {
	fields := types.MustParse("ROW<id INT, s STRING, tags ARRAY<STRING>, m MAP<STRING, STRING>>").Fields
	c, err := NewConverter(fields, ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		msg     *service.Message
		errPath string // "" = accepted
		want    string // the s column when accepted
	}{
		{"invalid bytes in a string", service.NewMessage([]byte("{\"id\": 1, \"s\": \"a\xffb\"}")), "s", ""},
		{"invalid bytes in an array element", service.NewMessage([]byte("{\"id\": 1, \"tags\": [\"ok\", \"\xc3\"]}")), "tags", ""},
		{"invalid bytes in a map value", service.NewMessage([]byte("{\"id\": 1, \"m\": {\"k\": \"\xfe\"}}")), "m", ""},
		{"U+FFFD as UTF-8", service.NewMessage([]byte("{\"id\": 1, \"s\": \"a\xef\xbf\xbdb\"}")), "", "a\ufffdb"},
		{"U+FFFD escaped", service.NewMessage([]byte(`{"id": 1, "s": "a\ufffdb"}`)), "", "a\ufffdb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row, _, err := c.ConvertMessage(tc.msg)
			if tc.errPath == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if row[1] != tc.want {
					t.Errorf("s = %q, want %q", row[1], tc.want)
				}
				return
			}
			var ce *ConvertError
			if !errors.As(err, &ce) || ce.Path != tc.errPath || !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "not valid UTF-8") {
				t.Fatalf("error %v, want a ConvertError for field %q saying not valid UTF-8", err, tc.errPath)
			}
		})
	}
	// A structured message holding U+FFFD (from a mapping) is kept.
	m := service.NewMessage(nil)
	m.SetStructured(map[string]any{"id": 2, "s": "x\ufffd"})
	if row, _, err := c.ConvertMessage(m); err != nil || row[1] != "x\ufffd" {
		t.Errorf("structured message: %v, %v", row, err)
	}
}
