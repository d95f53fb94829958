// AggOracle runs the test cases of java_oracle_test.go through Java
// Paimon's own aggregate functions (FieldAggregatorFactory.create) and
// AggregateMergeFunction, and prints each step's result in the canonical
// JSON form of the Go test (canonicalValue). Build and run against
// paimon-bundle 1.4.2 (+ slf4j): see java_oracle_test.go.
import org.apache.paimon.CoreOptions;
import org.apache.paimon.KeyValue;
import org.apache.paimon.data.*;
import org.apache.paimon.mergetree.compact.MergeFunction;
import org.apache.paimon.mergetree.compact.aggregate.AggregateMergeFunction;
import org.apache.paimon.mergetree.compact.aggregate.FieldAggregator;
import org.apache.paimon.mergetree.compact.aggregate.factory.FieldAggregatorFactory;
import org.apache.paimon.options.Options;
import org.apache.paimon.types.*;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.*;

import java.io.File;
import java.math.BigDecimal;
import java.util.*;

public class AggOracle {
    static final ObjectMapper M = new ObjectMapper();
    static final JsonNodeFactory F = JsonNodeFactory.instance;

    public static void main(String[] args) throws Exception {
        JsonNode cases = M.readTree(new File(args[0]));
        ObjectNode out = F.objectNode();
        for (JsonNode c : cases) {
            String name = c.get("name").asText();
            try {
                if (c.has("fields")) {
                    out.set(name, runRow(c));
                } else {
                    out.set(name, runFunc(c));
                }
            } catch (Throwable t) {
                ArrayNode a = F.arrayNode();
                a.add(error(t));
                out.set(name, a);
            }
        }
        M.writerWithDefaultPrettyPrinter().writeValue(new File(args[1]), out);
    }

    static Options options(JsonNode c) {
        Options o = new Options();
        if (c.has("options")) {
            c.get("options").fields().forEachRemaining(e -> o.set(e.getKey(), e.getValue().asText()));
        }
        return o;
    }

    static JsonNode error(Throwable t) {
        ObjectNode e = F.objectNode();
        e.put("error", t.getClass().getSimpleName());
        return e;
    }

    static ArrayNode runFunc(JsonNode c) {
        DataType type = DataTypeJsonParser.parseDataType(c.get("type"));
        ArrayNode results = F.arrayNode();
        FieldAggregator agg;
        try {
            agg = FieldAggregatorFactory.create(type, c.get("field").asText(), c.get("func").asText(), new CoreOptions(options(c)));
        } catch (Throwable t) {
            results.add(error(t));
            return results;
        }
        Object acc = null;
        for (JsonNode step : c.get("steps")) {
            String op = step.get(0).asText();
            try {
                if (op.equals("reset")) {
                    agg.reset();
                    acc = null;
                } else {
                    Object in = toJava(step.get(1), type);
                    switch (op) {
                        case "agg": acc = agg.agg(acc, in); break;
                        case "reversed": acc = agg.aggReversed(acc, in); break;
                        case "retract": acc = agg.retract(acc, in); break;
                        default: throw new IllegalStateException(op);
                    }
                }
                results.add(toJson(acc, type));
            } catch (Throwable t) {
                results.add(error(t));
                break;
            }
        }
        return results;
    }

    static ArrayNode runRow(JsonNode c) {
        List<DataField> fields = new ArrayList<>();
        for (JsonNode f : c.get("fields")) {
            fields.add(DataTypeJsonParser.parseDataField(f));
        }
        RowType rowType = new RowType(fields);
        List<String> pks = new ArrayList<>();
        c.get("pks").forEach(p -> pks.add(p.asText()));
        ArrayNode results = F.arrayNode();
        MergeFunction<KeyValue> mf;
        try {
            mf = AggregateMergeFunction.factory(options(c), rowType, pks).create();
        } catch (Throwable t) {
            results.add(error(t));
            return results;
        }
        mf.reset();
        long seq = 0;
        try {
            for (JsonNode r : c.get("rows")) {
                org.apache.paimon.types.RowKind kind = org.apache.paimon.types.RowKind.fromShortString(r.get(0).asText());
                GenericRow row = (GenericRow) toJava(r.get(1), rowType);
                row.setRowKind(kind);
                KeyValue kv = new KeyValue().replace(GenericRow.of(), seq++, kind, row);
                mf.add(kv);
            }
            KeyValue res = mf.getResult();
            ObjectNode o = F.objectNode();
            o.put("kind", res.valueKind().shortString());
            o.set("row", toJson(res.value(), rowType));
            results.add(o);
        } catch (Throwable t) {
            results.add(error(t));
        }
        return results;
    }

    static Object toJava(JsonNode v, DataType t) {
        if (v == null || v.isNull()) {
            return null;
        }
        switch (t.getTypeRoot()) {
            case BOOLEAN: return v.asBoolean();
            case TINYINT: return (byte) v.asInt();
            case SMALLINT: return (short) v.asInt();
            case INTEGER: case DATE: case TIME_WITHOUT_TIME_ZONE: return v.asInt();
            case BIGINT: return v.asLong();
            case FLOAT: return Float.intBitsToFloat((int) Long.parseLong(v.asText().substring(2), 16));
            case DOUBLE: return Double.longBitsToDouble(Long.parseUnsignedLong(v.asText().substring(2), 16));
            case CHAR: case VARCHAR: return BinaryString.fromString(v.asText());
            case BINARY: case VARBINARY: return Base64.getDecoder().decode(v.asText());
            case DECIMAL: {
                DecimalType d = (DecimalType) t;
                return Decimal.fromBigDecimal(new BigDecimal(v.asText()), d.getPrecision(), d.getScale());
            }
            case TIMESTAMP_WITHOUT_TIME_ZONE: case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return Timestamp.fromEpochMillis(v.get(0).asLong(), v.get(1).asInt());
            case ARRAY: {
                DataType e = ((ArrayType) t).getElementType();
                Object[] a = new Object[v.size()];
                for (int i = 0; i < a.length; i++) a[i] = toJava(v.get(i), e);
                return new GenericArray(a);
            }
            case MAP: case MULTISET: {
                DataType kt, vt;
                if (t instanceof MapType) { kt = ((MapType) t).getKeyType(); vt = ((MapType) t).getValueType(); }
                else { kt = ((MultisetType) t).getElementType(); vt = new IntType(); }
                Map<Object, Object> m = new LinkedHashMap<>();
                for (JsonNode e : v) m.put(toJava(e.get(0), kt), toJava(e.get(1), vt));
                return new GenericMap(m);
            }
            case ROW: {
                List<DataType> fs = ((RowType) t).getFieldTypes();
                GenericRow r = new GenericRow(fs.size());
                for (int i = 0; i < fs.size(); i++) r.setField(i, toJava(v.get(i), fs.get(i)));
                return r;
            }
            default: throw new IllegalArgumentException("type " + t);
        }
    }

    static JsonNode toJson(Object v, DataType t) {
        if (v == null) {
            return NullNode.getInstance();
        }
        switch (t.getTypeRoot()) {
            case BOOLEAN: return BooleanNode.valueOf((Boolean) v);
            case TINYINT: return IntNode.valueOf((Byte) v);
            case SMALLINT: return IntNode.valueOf((Short) v);
            case INTEGER: case DATE: case TIME_WITHOUT_TIME_ZONE: return IntNode.valueOf((Integer) v);
            case BIGINT: return LongNode.valueOf((Long) v);
            case FLOAT: return TextNode.valueOf("f:" + Integer.toHexString(Float.floatToRawIntBits((Float) v)));
            case DOUBLE: return TextNode.valueOf("d:" + Long.toHexString(Double.doubleToRawLongBits((Double) v)));
            case CHAR: case VARCHAR: return TextNode.valueOf(v.toString());
            case BINARY: case VARBINARY: return TextNode.valueOf(Base64.getEncoder().encodeToString((byte[]) v));
            case DECIMAL: return TextNode.valueOf(((Decimal) v).toBigDecimal().toPlainString());
            case TIMESTAMP_WITHOUT_TIME_ZONE: case TIMESTAMP_WITH_LOCAL_TIME_ZONE: {
                Timestamp ts = (Timestamp) v;
                ArrayNode a = F.arrayNode();
                a.add(ts.getMillisecond());
                a.add(ts.getNanoOfMillisecond());
                return a;
            }
            case ARRAY: {
                DataType e = ((ArrayType) t).getElementType();
                InternalArray arr = (InternalArray) v;
                InternalArray.ElementGetter g = InternalArray.createElementGetter(e);
                ArrayNode a = F.arrayNode();
                for (int i = 0; i < arr.size(); i++) a.add(toJson(g.getElementOrNull(arr, i), e));
                return a;
            }
            case MAP: case MULTISET: {
                DataType kt, vt;
                if (t instanceof MapType) { kt = ((MapType) t).getKeyType(); vt = ((MapType) t).getValueType(); }
                else { kt = ((MultisetType) t).getElementType(); vt = new IntType(); }
                InternalMap m = (InternalMap) v;
                InternalArray.ElementGetter kg = InternalArray.createElementGetter(kt);
                InternalArray.ElementGetter vg = InternalArray.createElementGetter(vt);
                ArrayNode a = F.arrayNode();
                for (int i = 0; i < m.size(); i++) {
                    ArrayNode e = F.arrayNode();
                    e.add(toJson(kg.getElementOrNull(m.keyArray(), i), kt));
                    e.add(toJson(vg.getElementOrNull(m.valueArray(), i), vt));
                    a.add(e);
                }
                return a;
            }
            case ROW: {
                List<DataType> fs = ((RowType) t).getFieldTypes();
                InternalRow r = (InternalRow) v;
                ArrayNode a = F.arrayNode();
                for (int i = 0; i < fs.size(); i++) {
                    a.add(toJson(InternalRow.createFieldGetter(fs.get(i), i).getFieldOrNull(r), fs.get(i)));
                }
                return a;
            }
            default: throw new IllegalArgumentException("type " + t);
        }
    }
}
