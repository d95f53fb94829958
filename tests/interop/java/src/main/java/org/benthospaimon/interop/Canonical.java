package org.benthospaimon.interop;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.MultisetType;
import org.apache.paimon.types.RowType;

/**
 * The canonical JSON form of Paimon values shared by every oracle (Java, pypaimon, DuckDB) and the Go driver.
 * The rules are spelled out in tests/interop/README.md ("Canonical JSON"); this class is the reference
 * implementation. Both directions: {@link #value} renders an internal Paimon value, {@link #fromJson}
 * converts a canonical JSON value back into Paimon's internal representation.
 */
final class Canonical {

    private Canonical() {}

    // ------------------------------------------------------------------ rendering

    /** One table row as a canonical JSON object line, keyed by column name in schema order. */
    static String row(RowType type, InternalRow row) {
        StringBuilder sb = new StringBuilder();
        appendRow(sb, type, row);
        return sb.toString();
    }

    private static void appendRow(StringBuilder sb, RowType type, InternalRow row) {
        List<DataField> fields = type.getFields();
        sb.append('{');
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            DataField f = fields.get(i);
            appendQuoted(sb, f.name());
            sb.append(':');
            Object v = InternalRow.createFieldGetter(f.type(), i).getFieldOrNull(row);
            appendValue(sb, f.type(), v);
        }
        sb.append('}');
    }

    /** Renders one internal value (null allowed) of the given type. */
    static String value(DataType type, Object v) {
        StringBuilder sb = new StringBuilder();
        appendValue(sb, type, v);
        return sb.toString();
    }

    private static void appendValue(StringBuilder sb, DataType type, Object v) {
        if (v == null) {
            sb.append("null");
            return;
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                sb.append(((Boolean) v) ? "true" : "false");
                return;
            case TINYINT:
            case SMALLINT:
            case INTEGER:
            case BIGINT:
                sb.append(((Number) v).longValue());
                return;
            case FLOAT:
                sb.append(formatFloat((Float) v));
                return;
            case DOUBLE:
                sb.append(formatDouble((Double) v));
                return;
            case DECIMAL:
                appendQuoted(sb, ((Decimal) v).toBigDecimal().toPlainString());
                return;
            case CHAR:
            case VARCHAR:
                appendQuoted(sb, v.toString());
                return;
            case BINARY:
            case VARBINARY:
                appendQuoted(sb, Base64.getEncoder().encodeToString((byte[]) v));
                return;
            case DATE:
                appendQuoted(sb, formatDate((Integer) v));
                return;
            case TIME_WITHOUT_TIME_ZONE:
                appendQuoted(sb, formatTime((Integer) v));
                return;
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                appendQuoted(sb, formatTimestamp((Timestamp) v));
                return;
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                appendQuoted(sb, formatTimestamp((Timestamp) v) + "Z");
                return;
            case ARRAY: {
                DataType et = ((ArrayType) type).getElementType();
                InternalArray a = (InternalArray) v;
                InternalArray.ElementGetter g = InternalArray.createElementGetter(et);
                sb.append('[');
                for (int i = 0; i < a.size(); i++) {
                    if (i > 0) {
                        sb.append(',');
                    }
                    appendValue(sb, et, g.getElementOrNull(a, i));
                }
                sb.append(']');
                return;
            }
            case MAP:
                appendMap(sb, ((MapType) type).getKeyType(), ((MapType) type).getValueType(), (InternalMap) v);
                return;
            case MULTISET:
                appendMap(sb, ((MultisetType) type).getElementType(),
                        new org.apache.paimon.types.IntType(false), (InternalMap) v);
                return;
            case ROW: {
                RowType rt = (RowType) type;
                appendRow(sb, rt, (InternalRow) v);
                return;
            }
            default:
                throw new IllegalArgumentException("no canonical form for type " + type);
        }
    }

    /** A MAP or MULTISET: [[key, value], ...] sorted by the canonical text of the key (then of the value). */
    private static void appendMap(StringBuilder sb, DataType kt, DataType vt, InternalMap m) {
        InternalArray keys = m.keyArray();
        InternalArray values = m.valueArray();
        InternalArray.ElementGetter kg = InternalArray.createElementGetter(kt);
        InternalArray.ElementGetter vg = InternalArray.createElementGetter(vt);
        List<String[]> pairs = new ArrayList<>();
        for (int i = 0; i < m.size(); i++) {
            pairs.add(new String[] {value(kt, kg.getElementOrNull(keys, i)), value(vt, vg.getElementOrNull(values, i))});
        }
        pairs.sort((a, b) -> {
            int c = compareCodePoints(a[0], b[0]);
            return c != 0 ? c : compareCodePoints(a[1], b[1]);
        });
        sb.append('[');
        for (int i = 0; i < pairs.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append('[').append(pairs.get(i)[0]).append(',').append(pairs.get(i)[1]).append(']');
        }
        sb.append(']');
    }

    static String formatDate(int days) {
        LocalDate d = LocalDate.ofEpochDay(days);
        return String.format("%04d-%02d-%02d", d.getYear(), d.getMonthValue(), d.getDayOfMonth());
    }

    static String formatTime(int millisOfDay) {
        return String.format("%02d:%02d:%02d.%03d", millisOfDay / 3_600_000, millisOfDay / 60_000 % 60,
                millisOfDay / 1000 % 60, millisOfDay % 1000);
    }

    /** Wall clock of the timestamp read as UTC, always 9 fraction digits. */
    static String formatTimestamp(Timestamp ts) {
        LocalDateTime t = ts.toLocalDateTime();
        return String.format("%04d-%02d-%02dT%02d:%02d:%02d.%09d", t.getYear(), t.getMonthValue(),
                t.getDayOfMonth(), t.getHour(), t.getMinute(), t.getSecond(), t.getNano());
    }

    /** Code point order, which is also the byte order of UTF-8 (what Go and Python sort by). */
    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder();
        appendQuoted(sb, s);
        return sb.toString();
    }

    /**
     * JSON string: escapes '"', '\\', \b \f \n \r \t, other controls below 0x20 as \\u00xx (lower-case hex);
     * everything else literal (UTF-8 on output). This is Python's json.dumps(ensure_ascii=False).
     */
    static void appendQuoted(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                case '\b':
                    sb.append("\\b");
                    break;
                case '\f':
                    sb.append("\\f");
                    break;
                case '\n':
                    sb.append("\\n");
                    break;
                case '\r':
                    sb.append("\\r");
                    break;
                case '\t':
                    sb.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    // ------------------------------------------------------------------ floating point

    /** Canonical DOUBLE: see {@link #shortest}. NaN and infinities are JSON strings. */
    static String formatDouble(double v) {
        if (Double.isNaN(v)) {
            return "\"NaN\"";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        }
        if (v == 0) {
            return Double.doubleToRawLongBits(v) < 0 ? "-0.0" : "0.0";
        }
        double down = Math.nextDown(v);
        double up = Math.nextUp(v);
        BigDecimal exact = new BigDecimal(v);
        boolean even = (Double.doubleToRawLongBits(v) & 1) == 0;
        return shortest(exact, neighbour(exact, down, up, true), neighbour(exact, up, down, false), even, 17);
    }

    /** Canonical FLOAT: the same rules at float precision (3.1f is 3.1, not 3.0999999046325684). */
    static String formatFloat(float v) {
        if (Float.isNaN(v)) {
            return "\"NaN\"";
        }
        if (Float.isInfinite(v)) {
            return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        }
        if (v == 0) {
            return Float.floatToRawIntBits(v) < 0 ? "-0.0" : "0.0";
        }
        float down = Math.nextDown(v);
        float up = Math.nextUp(v);
        BigDecimal exact = new BigDecimal(v);
        boolean even = (Float.floatToRawIntBits(v) & 1) == 0;
        return shortest(exact, neighbour(exact, down, up, true), neighbour(exact, up, down, false), even, 9);
    }

    /** Midpoint between v and its neighbour n (when n is infinite, mirror the other neighbour's gap). */
    private static BigDecimal neighbour(BigDecimal exact, double n, double other, boolean lower) {
        BigDecimal two = BigDecimal.valueOf(2);
        if (Double.isInfinite(n)) {
            BigDecimal gap = exact.subtract(new BigDecimal(other)).abs();
            return lower ? exact.subtract(gap.divide(two)) : exact.add(gap.divide(two));
        }
        return exact.add(new BigDecimal(n)).divide(two);
    }

    /**
     * Java's Double.toString / Float.toString as specified since JDK 19 (JDK 17, which runs this, still has
     * the old non-shortest algorithm, so it is computed here exactly): among the decimals that round to v pick
     * one of minimal length m (with m = 1, one of length 1 or 2), the closest to v, ties to an even last digit;
     * lay it out plainly when 10^-3 &lt;= |v| &lt; 10^7 (at least one fraction digit, "100.0", "0.001"),
     * else as d.dddE[-]n ("1.0E7", "1.234E-5").
     */
    static String shortest(BigDecimal exact, BigDecimal lo, BigDecimal hi, boolean inclusive, int maxDigits) {
        BigDecimal best = null;
        for (int p = 1; p <= maxDigits + 1 && best == null; p++) {
            List<BigDecimal> c = candidates(exact, lo, hi, inclusive, p);
            if (c.isEmpty()) {
                continue;
            }
            if (p == 1) {
                c = candidates(exact, lo, hi, inclusive, 2);
            }
            best = c.get(0);
            for (BigDecimal d : c.subList(1, c.size())) {
                int cmp = d.subtract(exact).abs().compareTo(best.subtract(exact).abs());
                if (cmp < 0 || (cmp == 0 && !d.unscaledValue().testBit(0))) {
                    best = d;
                }
            }
        }
        if (best == null) {
            throw new IllegalStateException("no shortest decimal for " + exact);
        }
        BigDecimal d = best.stripTrailingZeros();
        BigDecimal a = exact.abs();
        if (a.compareTo(new BigDecimal("0.001")) >= 0 && a.compareTo(BigDecimal.valueOf(10_000_000)) < 0) {
            String s = d.toPlainString();
            return s.contains(".") ? s : s + ".0";
        }
        String digits = d.unscaledValue().abs().toString();
        int exp = digits.length() - 1 - d.scale();
        return (d.signum() < 0 ? "-" : "") + digits.charAt(0) + "."
                + (digits.length() > 1 ? digits.substring(1) : "0") + "E" + exp;
    }

    private static List<BigDecimal> candidates(BigDecimal exact, BigDecimal lo, BigDecimal hi, boolean inclusive,
            int p) {
        List<BigDecimal> out = new ArrayList<>(2);
        for (RoundingMode m : new RoundingMode[] {RoundingMode.FLOOR, RoundingMode.CEILING}) {
            BigDecimal d = exact.round(new MathContext(p, m));
            int cl = d.compareTo(lo);
            int ch = d.compareTo(hi);
            boolean in = inclusive ? cl >= 0 && ch <= 0 : cl > 0 && ch < 0;
            if (in && out.stream().noneMatch(x -> x.compareTo(d) == 0)) {
                out.add(d);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ parsing (canonical JSON -> internal)

    /** Converts a canonical JSON value into Paimon's internal representation for the type. */
    static Object fromJson(DataType type, JsonNode n) {
        if (n == null || n.isNull()) {
            if (!type.isNullable()) {
                throw new IllegalArgumentException("null for NOT NULL type " + type);
            }
            return null;
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                if (!n.isBoolean()) {
                    throw bad(type, n);
                }
                return n.booleanValue();
            case TINYINT:
                return (byte) integral(type, n, Byte.MIN_VALUE, Byte.MAX_VALUE);
            case SMALLINT:
                return (short) integral(type, n, Short.MIN_VALUE, Short.MAX_VALUE);
            case INTEGER:
                return (int) integral(type, n, Integer.MIN_VALUE, Integer.MAX_VALUE);
            case BIGINT:
                return integral(type, n, Long.MIN_VALUE, Long.MAX_VALUE);
            case FLOAT:
                return (float) floating(type, n, true);
            case DOUBLE:
                return floating(type, n, false);
            case DECIMAL: {
                DecimalType dt = (DecimalType) type;
                BigDecimal bd = n.isNumber() ? n.decimalValue() : new BigDecimal(text(type, n));
                BigDecimal scaled;
                try {
                    scaled = bd.setScale(dt.getScale(), RoundingMode.UNNECESSARY);
                } catch (ArithmeticException e) {
                    throw new IllegalArgumentException(bd + " has more than " + dt.getScale() + " fraction digits");
                }
                Decimal d = Decimal.fromBigDecimal(scaled, dt.getPrecision(), dt.getScale());
                if (d == null) {
                    throw new IllegalArgumentException(bd + " does not fit " + type);
                }
                return d;
            }
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(text(type, n));
            case BINARY:
            case VARBINARY:
                return Base64.getDecoder().decode(text(type, n));
            case DATE:
                if (n.isIntegralNumber()) {
                    return n.intValue();
                }
                return (int) LocalDate.parse(text(type, n)).toEpochDay();
            case TIME_WITHOUT_TIME_ZONE:
                return (int) (LocalTime.parse(text(type, n)).toNanoOfDay() / 1_000_000L);
            case TIMESTAMP_WITHOUT_TIME_ZONE: {
                String s = text(type, n).replace(' ', 'T');
                return Timestamp.fromLocalDateTime(LocalDateTime.parse(s));
            }
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE: {
                String s = text(type, n).replace(' ', 'T');
                Instant i = s.endsWith("Z") ? Instant.parse(s) : LocalDateTime.parse(s).toInstant(ZoneOffset.UTC);
                return Timestamp.fromInstant(i);
            }
            case ARRAY: {
                DataType et = ((ArrayType) type).getElementType();
                if (!n.isArray()) {
                    throw bad(type, n);
                }
                Object[] out = new Object[n.size()];
                for (int i = 0; i < n.size(); i++) {
                    out[i] = fromJson(et, n.get(i));
                }
                return new GenericArray(out);
            }
            case MAP:
                return map(((MapType) type).getKeyType(), ((MapType) type).getValueType(), type, n);
            case MULTISET:
                return map(((MultisetType) type).getElementType(), new org.apache.paimon.types.IntType(false),
                        type, n);
            case ROW:
                return rowFromJson((RowType) type, n);
            default:
                throw new IllegalArgumentException("no canonical form for type " + type);
        }
    }

    /** A ROW from a JSON object keyed by field name (absent = null) or from an array in field order. */
    static GenericRow rowFromJson(RowType type, JsonNode n) {
        List<DataField> fields = type.getFields();
        GenericRow row = new GenericRow(fields.size());
        if (n.isArray()) {
            if (n.size() != fields.size()) {
                throw new IllegalArgumentException("row " + n + " has " + n.size() + " values, want " + fields.size());
            }
            for (int i = 0; i < fields.size(); i++) {
                row.setField(i, field(fields.get(i), n.get(i)));
            }
            return row;
        }
        if (!n.isObject()) {
            throw bad(type, n);
        }
        Map<String, Integer> index = new LinkedHashMap<>();
        for (int i = 0; i < fields.size(); i++) {
            index.put(fields.get(i).name(), i);
        }
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!index.containsKey(k)) {
                throw new IllegalArgumentException("row " + n + ": no field " + k + " in " + type);
            }
        }
        for (int i = 0; i < fields.size(); i++) {
            row.setField(i, field(fields.get(i), n.get(fields.get(i).name())));
        }
        return row;
    }

    private static Object field(DataField f, JsonNode n) {
        try {
            return fromJson(f.type(), n);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("field " + f.name() + ": " + e.getMessage(), e);
        }
    }

    private static GenericMap map(DataType kt, DataType vt, DataType type, JsonNode n) {
        if (!n.isArray()) {
            throw bad(type, n);
        }
        Map<Object, Object> m = new LinkedHashMap<>();
        for (JsonNode pair : n) {
            if (!pair.isArray() || pair.size() != 2) {
                throw new IllegalArgumentException(type + " wants [[key, value], ...], got " + n);
            }
            m.put(fromJson(kt, pair.get(0)), fromJson(vt, pair.get(1)));
        }
        return new GenericMap(m);
    }

    private static long integral(DataType type, JsonNode n, long min, long max) {
        if (!n.isIntegralNumber()) {
            throw bad(type, n);
        }
        BigInteger b = n.bigIntegerValue();
        if (b.compareTo(BigInteger.valueOf(min)) < 0 || b.compareTo(BigInteger.valueOf(max)) > 0) {
            throw new IllegalArgumentException(b + " is out of range for " + type);
        }
        return b.longValue();
    }

    private static double floating(DataType type, JsonNode n, boolean isFloat) {
        if (n.isTextual()) {
            // "NaN", "Infinity", "-Infinity", and any number as text: the spec reader keeps JSON numbers as
            // exact BigDecimals, which have no negative zero, so -0.0 must be written "-0.0".
            String s = n.textValue();
            try {
                return isFloat ? Float.parseFloat(s) : Double.parseDouble(s);
            } catch (NumberFormatException e) {
                throw bad(type, n);
            }
        }
        if (!n.isNumber()) {
            throw bad(type, n);
        }
        String s = n.isBigDecimal() ? n.decimalValue().toString() : n.asText();
        return isFloat ? Float.parseFloat(s) : Double.parseDouble(s);
    }

    private static String text(DataType type, JsonNode n) {
        if (!n.isTextual()) {
            throw bad(type, n);
        }
        return n.textValue();
    }

    private static IllegalArgumentException bad(DataType type, JsonNode n) {
        return new IllegalArgumentException("value " + n + " is not canonical JSON for " + type);
    }
}
