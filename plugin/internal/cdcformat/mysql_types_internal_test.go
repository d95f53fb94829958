package cdcformat

import "testing"

// MySqlTypeUtils.getTypeInfo + toDataType with the default type mapping,
// and the STRING fallback where Java throws.
func TestMySQLColumnType(t *testing.T) {
	tests := []struct{ in, short, want string }{
		{"int(11)", "INT", "INT"},
		{"INT", "INT", "INT"},
		{"int(11) unsigned", "INT UNSIGNED", "BIGINT"},
		{"bigint unsigned", "BIGINT UNSIGNED", "DECIMAL(20, 0)"},
		{"bigint(20) unsigned zerofill", "BIGINT UNSIGNED ZEROFILL", "DECIMAL(20, 0)"},
		{"tinyint(1)", "TINYINT", "BOOLEAN"},
		{"tinyint(4)", "TINYINT", "TINYINT"},
		{"tinyint unsigned", "TINYINT UNSIGNED", "SMALLINT"},
		{"mediumint unsigned", "MEDIUMINT UNSIGNED", "BIGINT"},
		{"year", "YEAR", "INT"},
		{"bit", "BIT", "BOOLEAN"},
		{"bit(1)", "BIT", "BOOLEAN"},
		{"bit(10)", "BIT", "BINARY(2)"},
		{"varchar(255)", "VARCHAR", "VARCHAR(255)"},
		{"char(3)", "CHAR", "CHAR(3)"},
		{"char", "CHAR", "STRING"},
		{"decimal(10,2)", "DECIMAL", "DECIMAL(10, 2)"},
		{"DECIMAL(8, 0) unsigned zerofill", "DECIMAL UNSIGNED ZEROFILL", "DECIMAL(8, 0)"},
		{"decimal", "DECIMAL", "DECIMAL(38, 18)"},
		{"decimal(40,3)", "DECIMAL", "STRING"},
		{"numeric(5)", "NUMERIC", "DECIMAL(5, 0)"},
		{"float", "FLOAT", "FLOAT"},
		{"double precision", "DOUBLE PRECISION", "DOUBLE"},
		{"real(10,7) unsigned zerofill", "REAL UNSIGNED ZEROFILL", "DOUBLE"},
		{"date", "DATE", "DATE"},
		{"time(3)", "TIME", "TIME(0)"},
		{"datetime", "DATETIME", "TIMESTAMP(0)"},
		{"datetime(3)", "DATETIME", "TIMESTAMP(3)"},
		{"timestamp(6)", "TIMESTAMP", "TIMESTAMP(6)"},
		{"datetime(19)", "DATETIME", "TIMESTAMP(0)"},
		{"datetime(23)", "DATETIME", "TIMESTAMP(3)"},
		{"datetime(12)", "DATETIME", "STRING"},
		{"binary", "BINARY", "VARBINARY(1)"},
		{"binary(16)", "BINARY", "VARBINARY(16)"},
		{"varbinary(20)", "VARBINARY", "VARBINARY(20)"},
		{"longblob", "LONGBLOB", "BYTES"},
		{"longtext", "LONGTEXT", "STRING"},
		{"json", "JSON", "STRING"},
		{"enum('a','b,c')", "ENUM", "STRING"},
		{"set('a','b')", "SET", "ARRAY<STRING>"},
		{"geometry", "GEOMETRY", "STRING"},
		{"point", "POINT", "STRING"},
		{"uuid", "UUID", "STRING"},  // unknown: Java throws
		{"int(x)", "INT", "STRING"}, // malformed: Java throws
		{"int)(", "INT)", "STRING"}, // malformed
		{"", "", "STRING"},          // empty
		{"decimal(3,", "DECIMAL", "STRING"},
	}
	for _, tt := range tests {
		short, typ := mysqlColumnType(tt.in)
		if short != tt.short || typ.String() != tt.want {
			t.Errorf("mysqlColumnType(%q) = %q, %s; want %q, %s", tt.in, short, typ, tt.short, tt.want)
		}
	}
}

func TestMySQLLabels(t *testing.T) {
	got := mysqlLabels("enum('a', 'b' ,'c d')", len("enum('"))
	if len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c d" {
		t.Errorf("labels %q", got)
	}
	if got := mysqlLabels("enum(", len("enum('")); got != nil {
		t.Errorf("short type: %q", got)
	}
}

func TestIsDecimalText(t *testing.T) {
	for s, want := range map[string]bool{
		"1": true, "-12.5": true, "+.5": true, "1.": true, "1e10": true, "1.2E-3": true,
		"": false, "-": false, ".": false, "1e": false, "1.2.3": false, "AQ==": false, "0x10": false, " 1": false,
	} {
		if got := isDecimalText(s); got != want {
			t.Errorf("isDecimalText(%q) = %v", s, got)
		}
	}
}
