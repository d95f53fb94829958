package org.benthospaimon.interop;

import java.util.ArrayList;
import java.util.List;

import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowType;

/**
 * Parses Paimon type strings as written in the specs: atomic types go to Paimon's own
 * DataTypeJsonParser.parseAtomicTypeSQLString ("INT", "DECIMAL(23, 5)", "TIMESTAMP(3) WITH LOCAL TIME ZONE",
 * "STRING NOT NULL", ...); the nested forms ARRAY&lt;T&gt;, MULTISET&lt;T&gt;, MAP&lt;K, V&gt; and
 * ROW&lt;name T, ...&gt; (each optionally followed by NOT NULL) are parsed here, because Paimon only reads them
 * from its JSON object form. Nested ROW field ids are assigned by Paimon when the schema is created.
 */
final class TypeParser {
    private final String s;
    private int pos;

    private TypeParser(String s) {
        this.s = s;
    }

    static DataType parse(String s) {
        TypeParser p = new TypeParser(s);
        DataType t = p.type();
        p.skipSpace();
        if (p.pos != s.length()) {
            throw new IllegalArgumentException("type " + s + ": unexpected text at " + p.pos);
        }
        return t;
    }

    private DataType type() {
        skipSpace();
        int start = pos;
        String word = word();
        DataType t;
        switch (word.toUpperCase()) {
            case "ARRAY":
                expect('<');
                t = DataTypes.ARRAY(type());
                expect('>');
                break;
            case "MULTISET":
                expect('<');
                t = DataTypes.MULTISET(type());
                expect('>');
                break;
            case "MAP":
                expect('<');
                DataType k = type();
                expect(',');
                DataType v = type();
                expect('>');
                t = DataTypes.MAP(k, v);
                break;
            case "ROW":
                t = row();
                break;
            default:
                // atomic: take everything up to the next top-level ',' '>' or end
                pos = start;
                int depth = 0;
                while (pos < s.length()) {
                    char c = s.charAt(pos);
                    if (c == '(') {
                        depth++;
                    } else if (c == ')') {
                        depth--;
                    } else if (depth == 0 && (c == ',' || c == '>')) {
                        break;
                    }
                    pos++;
                }
                return DataTypeJsonParser.parseAtomicTypeSQLString(s.substring(start, pos).trim());
        }
        return notNull(t);
    }

    private DataType row() {
        skipSpace();
        char close = s.charAt(pos) == '(' ? ')' : '>';
        expect(close == ')' ? '(' : '<');
        List<DataField> fields = new ArrayList<>();
        skipSpace();
        if (peek() == close) {
            pos++;
            return RowType.of();
        }
        while (true) {
            skipSpace();
            String name;
            if (peek() == '`') {
                int end = s.indexOf('`', pos + 1);
                name = s.substring(pos + 1, end);
                pos = end + 1;
            } else {
                name = word();
            }
            skipSpace();
            if (peek() == ':') {
                pos++;
            }
            DataType ft = type();
            skipSpace();
            String description = null;
            if (peek() == '\'') {
                int end = s.indexOf('\'', pos + 1);
                description = s.substring(pos + 1, end);
                pos = end + 1;
            }
            fields.add(new DataField(fields.size(), name, ft, description));
            skipSpace();
            if (peek() == ',') {
                pos++;
                continue;
            }
            expect(close);
            return new RowType(fields);
        }
    }

    private DataType notNull(DataType t) {
        int save = pos;
        skipSpace();
        String w = word();
        if (w.equalsIgnoreCase("NOT")) {
            skipSpace();
            if (word().equalsIgnoreCase("NULL")) {
                return t.copy(false);
            }
            throw new IllegalArgumentException("type " + s + ": expected NULL after NOT");
        }
        if (w.equalsIgnoreCase("NULL")) {
            return t;
        }
        pos = save;
        return t;
    }

    private String word() {
        int start = pos;
        while (pos < s.length() && (Character.isLetterOrDigit(s.charAt(pos)) || s.charAt(pos) == '_')) {
            pos++;
        }
        return s.substring(start, pos);
    }

    private char peek() {
        return pos < s.length() ? s.charAt(pos) : 0;
    }

    private void skipSpace() {
        while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
            pos++;
        }
    }

    private void expect(char c) {
        skipSpace();
        if (peek() != c) {
            throw new IllegalArgumentException("type " + s + ": expected '" + c + "' at " + pos);
        }
        pos++;
    }
}
