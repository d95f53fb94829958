// Test helpers shared by the internal and black-box tests of package schema.
package schema

import "time"

// OptionOrder is the option order remembered from a parsed file.
func OptionOrder(s *TableSchema) []string { return s.optionOrder }

// JavaCopyOrder exposes javaCopyOrder.
func JavaCopyOrder(keys []string) []string { return javaCopyOrder(keys) }

// SetClock makes m stamp new schemas with now.
func SetClock(m *Manager, now func() time.Time) { m.now = now }
