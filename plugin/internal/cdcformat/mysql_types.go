package cdcformat

import (
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// mysqlColumnType maps a Canal mysqlType ("int(11)", "varchar(255)",
// "decimal(10,2)", "datetime(3)", "bigint unsigned") to its short name and
// Paimon type, as MySqlTypeUtils.getTypeInfo and toDataType with the default
// type mapping. Where Paimon throws (a type it does not know, a malformed
// bracket, a DATETIME length of 10 to 18) the type is STRING; BIT without a
// length is BOOLEAN (Paimon would make an invalid BINARY(0)).
func mysqlColumnType(mysqlType string) (short string, t types.DataType) {
	short, length, scale, ok := mysqlTypeInfo(mysqlType)
	if !ok {
		return short, types.StringType()
	}
	return short, mysqlToPaimon(short, length, scale)
}

// mysqlTypeInfo is MySqlTypeUtils.getTypeInfo: the upper-case name with
// what follows the bracket ("INT UNSIGNED"), and the bracket's length and
// scale (38, 18 for a bare DECIMAL).
func mysqlTypeInfo(s string) (short string, length, scale int, ok bool) {
	l := strings.IndexByte(s, '(')
	if l < 0 {
		short = strings.ToUpper(s)
		if isMySQLDecimal(short) {
			return short, 38, 18, true
		}
		return short, 0, 0, true
	}
	r := strings.IndexByte(s, ')')
	if r < l {
		return strings.ToUpper(strings.TrimSpace(s[:l])), 0, 0, false
	}
	short = strings.ToUpper(strings.TrimSpace(s[:l])) + strings.ToUpper(s[r+1:])
	if short == "ENUM" || short == "SET" {
		return short, 0, 0, true
	}
	inside := strings.TrimSpace(s[l+1 : r])
	var err error
	if a, b, comma := strings.Cut(inside, ","); comma {
		if length, err = strconv.Atoi(strings.TrimSpace(a)); err != nil {
			return short, 0, 0, false
		}
		if scale, err = strconv.Atoi(strings.TrimSpace(b)); err != nil {
			return short, 0, 0, false
		}
		return short, length, scale, true
	}
	if length, err = strconv.Atoi(inside); err != nil {
		return short, 0, 0, false
	}
	return short, length, 0, true
}

func isMySQLDecimal(short string) bool {
	switch short {
	case "NUMERIC", "NUMERIC UNSIGNED", "NUMERIC UNSIGNED ZEROFILL",
		"FIXED", "FIXED UNSIGNED", "FIXED UNSIGNED ZEROFILL",
		"DECIMAL", "DECIMAL UNSIGNED", "DECIMAL UNSIGNED ZEROFILL":
		return true
	}
	return false
}

func mysqlIsBit(short string) bool { return short == "BIT" }

// mysqlToPaimon is MySqlTypeUtils.toDataType with the default TypeMapping.
func mysqlToPaimon(short string, length, scale int) types.DataType {
	switch short {
	case "BIT":
		if length <= 1 {
			return types.BooleanType()
		}
		return types.BinaryType((length + 7) / 8)
	case "BOOLEAN", "BOOL":
		return types.BooleanType()
	case "TINYINT":
		// tinyint(1) is MySQL's boolean, as JDBC drivers read it.
		if length == 1 {
			return types.BooleanType()
		}
		return types.TinyIntType()
	case "TINYINT UNSIGNED", "TINYINT UNSIGNED ZEROFILL", "SMALLINT":
		return types.SmallIntType()
	case "SMALLINT UNSIGNED", "SMALLINT UNSIGNED ZEROFILL", "INT", "INTEGER", "MEDIUMINT", "YEAR":
		return types.IntType()
	case "INT UNSIGNED", "INTEGER UNSIGNED", "INT UNSIGNED ZEROFILL", "INTEGER UNSIGNED ZEROFILL",
		"MEDIUMINT UNSIGNED", "MEDIUMINT UNSIGNED ZEROFILL", "BIGINT", "LONG":
		return types.BigIntType()
	case "BIGINT UNSIGNED", "BIGINT UNSIGNED ZEROFILL", "SERIAL":
		return types.DecimalType(20, 0)
	case "FLOAT", "FLOAT UNSIGNED", "FLOAT UNSIGNED ZEROFILL":
		return types.FloatType()
	case "REAL", "REAL UNSIGNED", "REAL UNSIGNED ZEROFILL", "DOUBLE", "DOUBLE UNSIGNED", "DOUBLE UNSIGNED ZEROFILL",
		"DOUBLE PRECISION", "DOUBLE PRECISION UNSIGNED", "DOUBLE PRECISION UNSIGNED ZEROFILL":
		return types.DoubleType()
	case "NUMERIC", "NUMERIC UNSIGNED", "NUMERIC UNSIGNED ZEROFILL", "FIXED", "FIXED UNSIGNED", "FIXED UNSIGNED ZEROFILL",
		"DECIMAL", "DECIMAL UNSIGNED", "DECIMAL UNSIGNED ZEROFILL":
		if length >= 1 && length <= 38 {
			if scale < 0 || scale > length {
				scale = 0
			}
			return types.DecimalType(length, scale)
		}
		return types.StringType()
	case "DATE":
		return types.DateType()
	case "TIME":
		return types.TimeType(0)
	case "DATETIME", "TIMESTAMP":
		switch {
		case length <= 0:
			return types.TimestampType(0)
		case length >= 19:
			// A JDBC display length: "2023-03-23 17:20:00" is 19, the point 1 more.
			if length > 20 && length-20 <= 9 {
				return types.TimestampType(length - 20)
			}
			if length <= 20 {
				return types.TimestampType(0)
			}
			return types.StringType()
		case length <= 9:
			return types.TimestampType(length)
		}
		return types.StringType()
	case "CHAR":
		if length <= 0 {
			return types.StringType()
		}
		return types.CharType(length)
	case "VARCHAR":
		if length <= 0 {
			return types.StringType()
		}
		return types.VarCharType(length)
	case "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "JSON", "ENUM", "STRING",
		"GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION":
		return types.StringType()
	case "BINARY", "VARBINARY":
		if length <= 0 {
			return types.VarBinaryType(1)
		}
		return types.VarBinaryType(length)
	case "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB":
		return types.BytesType()
	case "SET":
		return types.ArrayType(types.StringType())
	}
	return types.StringType()
}
