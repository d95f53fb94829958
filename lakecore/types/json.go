package types

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MarshalJSON writes the type as Java's DataType.serializeJson does: an atomic
// type is a JSON string (its SQL form, "INT NOT NULL"); a nested type is an
// object whose "type" is "ARRAY", "MAP", "MULTISET" or "ROW" with " NOT NULL"
// appended when it is not nullable.
func (t DataType) MarshalJSON() ([]byte, error) {
	if !t.IsNested() {
		return json.Marshal(t.String())
	}
	var b bytes.Buffer
	name := t.Kind.String()
	if !t.Nullable {
		name += " NOT NULL"
	}
	b.WriteString(`{"type":`)
	writeJSONString(&b, name)
	switch t.Kind {
	case KindArray, KindMultiset:
		if t.Element == nil {
			return nil, fmt.Errorf("%w: %s without an element type", ErrInvalidType, t.Kind)
		}
		if err := writeJSONValue(&b, "element", *t.Element); err != nil {
			return nil, err
		}
	case KindMap:
		if t.Key == nil || t.Value == nil {
			return nil, fmt.Errorf("%w: MAP without key or value type", ErrInvalidType)
		}
		if err := writeJSONValue(&b, "key", *t.Key); err != nil {
			return nil, err
		}
		if err := writeJSONValue(&b, "value", *t.Value); err != nil {
			return nil, err
		}
	case KindRow:
		fs, err := json.Marshal(t.Fields)
		if err != nil {
			return nil, err
		}
		if t.Fields == nil {
			fs = []byte("[]")
		}
		b.WriteString(`,"fields":`)
		b.Write(fs)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}

func writeJSONValue(b *bytes.Buffer, key string, v DataType) error {
	enc, err := v.MarshalJSON()
	if err != nil {
		return err
	}
	b.WriteString(`,"` + key + `":`)
	b.Write(enc)
	return nil
}

// UnmarshalJSON reads the JSON form written by Java (and by MarshalJSON).
// Atomic type strings are parsed with Parse; nested objects are read by
// their "type" key. Errors wrap ErrInvalidType.
func (t *DataType) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidType, err)
		}
		dt, err := Parse(s)
		if err != nil {
			return err
		}
		*t = dt
		return nil
	}
	var obj struct {
		Type    *string         `json:"type"`
		Element json.RawMessage `json:"element"`
		Key     json.RawMessage `json:"key"`
		Value   json.RawMessage `json:"value"`
		Fields  []DataField     `json:"fields"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidType, err)
	}
	if obj.Type == nil {
		return fmt.Errorf("%w: object without \"type\"", ErrInvalidType)
	}
	name := strings.ToUpper(strings.TrimSpace(*obj.Type))
	nullable := true
	if rest, ok := strings.CutSuffix(name, "NOT NULL"); ok {
		name, nullable = strings.TrimSpace(rest), false
	}
	sub := func(key string, raw json.RawMessage) (*DataType, error) {
		if len(raw) == 0 || string(raw) == "null" {
			return nil, fmt.Errorf("%w: %s without %q", ErrInvalidType, name, key)
		}
		var d DataType
		if err := d.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		return &d, nil
	}
	var out DataType
	var err error
	switch name {
	case "ARRAY", "MULTISET":
		out.Kind = KindArray
		if name == "MULTISET" {
			out.Kind = KindMultiset
		}
		out.Element, err = sub("element", obj.Element)
	case "MAP":
		out.Kind = KindMap
		if out.Key, err = sub("key", obj.Key); err == nil {
			out.Value, err = sub("value", obj.Value)
		}
	case "ROW":
		out.Kind = KindRow
		out.Fields = obj.Fields
	default:
		return fmt.Errorf("%w: unknown nested type %q", ErrInvalidType, *obj.Type)
	}
	if err != nil {
		return err
	}
	out.Nullable = nullable
	*t = out
	return nil
}

type dataFieldJSON struct {
	ID           *int      `json:"id"`
	Name         *string   `json:"name"`
	Type         *DataType `json:"type"`
	Description  *string   `json:"description,omitempty"`
	DefaultValue *string   `json:"defaultValue,omitempty"`
}

// MarshalJSON writes {"id", "name", "type", ["description"], ["defaultValue"]}
// in Java's key order (DataField.serializeJson).
func (f DataField) MarshalJSON() ([]byte, error) {
	return json.Marshal(dataFieldJSON{ID: &f.ID, Name: &f.Name, Type: &f.Type, Description: f.Description, DefaultValue: f.DefaultValue})
}

// UnmarshalJSON reads a field; "id", "name" and "type" are required.
func (f *DataField) UnmarshalJSON(data []byte) error {
	var j dataFieldJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("%w: field: %v", ErrInvalidType, err)
	}
	if j.ID == nil || j.Name == nil || j.Type == nil {
		return fmt.Errorf("%w: field %s needs \"id\", \"name\" and \"type\"", ErrInvalidType, string(data))
	}
	*f = DataField{ID: *j.ID, Name: *j.Name, Type: *j.Type, Description: j.Description, DefaultValue: j.DefaultValue}
	return nil
}
