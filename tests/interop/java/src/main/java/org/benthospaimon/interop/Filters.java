package org.benthospaimon.interop;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.TextNode;

import org.apache.paimon.predicate.Predicate;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.RowType;

/**
 * The --filter language, compiled to a Paimon {@link Predicate} over the table's row type:
 *
 * <pre>
 * expr    := cond (AND cond)*
 * cond    := col op literal | col [NOT] IN (literal, ...) | col IS [NOT] NULL
 * op      := = | != | &lt;&gt; | &lt; | &lt;= | &gt; | &gt;=
 * col     := identifier | `any text`
 * literal := 'text' ('' for a quote) | number | TRUE | FALSE
 * </pre>
 *
 * Literals are read like canonical JSON values of the column's type (so a DATE is '2024-01-31', a TIMESTAMP
 * '2024-01-31T10:00:00', a DECIMAL 12.30 or '12.30', BYTES base64 text).
 */
final class Filters {

    private final String src;
    private final List<String> toks = new ArrayList<>();
    private final List<Character> kinds = new ArrayList<>(); // w word, s string, n number, ` quoted ident, p punct
    private int pos;
    private final RowType rowType;
    private final PredicateBuilder builder;

    private Filters(String src, RowType rowType) {
        this.src = src;
        this.rowType = rowType;
        this.builder = new PredicateBuilder(rowType);
    }

    static Predicate parse(String expr, RowType rowType) {
        Filters f = new Filters(expr, rowType);
        f.lex();
        List<Predicate> conds = new ArrayList<>();
        conds.add(f.cond());
        while (f.pos < f.toks.size()) {
            f.expectWord("AND");
            conds.add(f.cond());
        }
        return conds.size() == 1 ? conds.get(0) : PredicateBuilder.and(conds);
    }

    private Predicate cond() {
        String name = next('w', '`');
        int idx = builder.indexOf(name);
        if (idx < 0) {
            throw new IllegalArgumentException("filter " + src + ": no column " + name + " in " + rowType);
        }
        DataType type = rowType.getTypeAt(idx);
        if (isWord("IS")) {
            pos++;
            boolean not = isWord("NOT");
            if (not) {
                pos++;
            }
            expectWord("NULL");
            return not ? builder.isNotNull(idx) : builder.isNull(idx);
        }
        boolean not = false;
        if (isWord("NOT")) {
            pos++;
            not = true;
        }
        if (isWord("IN")) {
            pos++;
            expectPunct("(");
            List<Object> lits = new ArrayList<>();
            while (true) {
                lits.add(literal(type));
                if (isPunct(",")) {
                    pos++;
                    continue;
                }
                expectPunct(")");
                break;
            }
            return not ? builder.notIn(idx, lits) : builder.in(idx, lits);
        }
        if (not) {
            throw new IllegalArgumentException("filter " + src + ": NOT must be followed by IN");
        }
        String op = next('p');
        Object lit = literal(type);
        switch (op) {
            case "=":
                return builder.equal(idx, lit);
            case "!=":
            case "<>":
                return builder.notEqual(idx, lit);
            case "<":
                return builder.lessThan(idx, lit);
            case "<=":
                return builder.lessOrEqual(idx, lit);
            case ">":
                return builder.greaterThan(idx, lit);
            case ">=":
                return builder.greaterOrEqual(idx, lit);
            default:
                throw new IllegalArgumentException("filter " + src + ": unknown operator " + op);
        }
    }

    private Object literal(DataType type) {
        if (pos >= toks.size()) {
            throw new IllegalArgumentException("filter " + src + ": missing literal");
        }
        String t = toks.get(pos);
        char k = kinds.get(pos);
        pos++;
        JsonNode n;
        if (k == 's') {
            n = TextNode.valueOf(t);
        } else if (k == 'n') {
            if (t.matches("-?\\d+")) {
                n = BigIntegerNode.valueOf(new BigInteger(t));
            } else {
                n = DecimalNode.valueOf(new BigDecimal(t));
            }
        } else if (k == 'w' && (t.equalsIgnoreCase("TRUE") || t.equalsIgnoreCase("FALSE"))) {
            n = BooleanNode.valueOf(t.equalsIgnoreCase("TRUE"));
        } else {
            throw new IllegalArgumentException("filter " + src + ": bad literal " + t);
        }
        Object v = Canonical.fromJson(type.copy(true), n);
        if (v == null) {
            throw new IllegalArgumentException("filter " + src + ": null literal");
        }
        return v;
    }

    private void lex() {
        int i = 0;
        while (i < src.length()) {
            char c = src.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '\'') {
                StringBuilder sb = new StringBuilder();
                i++;
                while (true) {
                    if (i >= src.length()) {
                        throw new IllegalArgumentException("filter " + src + ": unterminated string");
                    }
                    char d = src.charAt(i++);
                    if (d == '\'') {
                        if (i < src.length() && src.charAt(i) == '\'') {
                            sb.append('\'');
                            i++;
                            continue;
                        }
                        break;
                    }
                    sb.append(d);
                }
                add(sb.toString(), 's');
            } else if (c == '`') {
                int end = src.indexOf('`', i + 1);
                if (end < 0) {
                    throw new IllegalArgumentException("filter " + src + ": unterminated `name`");
                }
                add(src.substring(i + 1, end), '`');
                i = end + 1;
            } else if (Character.isDigit(c) || (c == '-' && i + 1 < src.length()
                    && (Character.isDigit(src.charAt(i + 1)) || src.charAt(i + 1) == '.'))) {
                int start = i++;
                while (i < src.length() && (Character.isDigit(src.charAt(i)) || ".eE".indexOf(src.charAt(i)) >= 0
                        || ((src.charAt(i) == '-' || src.charAt(i) == '+')
                                && (src.charAt(i - 1) == 'e' || src.charAt(i - 1) == 'E')))) {
                    i++;
                }
                add(src.substring(start, i), 'n');
            } else if (Character.isLetter(c) || c == '_') {
                int start = i;
                while (i < src.length() && (Character.isLetterOrDigit(src.charAt(i)) || src.charAt(i) == '_')) {
                    i++;
                }
                add(src.substring(start, i), 'w');
            } else if ("<>!=".indexOf(c) >= 0) {
                int start = i++;
                if (i < src.length() && "=>".indexOf(src.charAt(i)) >= 0) {
                    i++;
                }
                add(src.substring(start, i), 'p');
            } else if ("(),".indexOf(c) >= 0) {
                add(String.valueOf(c), 'p');
                i++;
            } else {
                throw new IllegalArgumentException("filter " + src + ": unexpected character '" + c + "'");
            }
        }
    }

    private void add(String t, char k) {
        toks.add(t);
        kinds.add(k);
    }

    private String next(char... allowed) {
        if (pos >= toks.size()) {
            throw new IllegalArgumentException("filter " + src + ": unexpected end");
        }
        for (char a : allowed) {
            if (kinds.get(pos) == a) {
                return toks.get(pos++);
            }
        }
        throw new IllegalArgumentException("filter " + src + ": unexpected " + toks.get(pos));
    }

    private boolean isWord(String w) {
        return pos < toks.size() && kinds.get(pos) == 'w' && toks.get(pos).equalsIgnoreCase(w);
    }

    private boolean isPunct(String p) {
        return pos < toks.size() && kinds.get(pos) == 'p' && toks.get(pos).equals(p);
    }

    private void expectWord(String w) {
        if (!isWord(w)) {
            throw new IllegalArgumentException("filter " + src + ": expected " + w + " at token " + pos);
        }
        pos++;
    }

    private void expectPunct(String p) {
        if (!isPunct(p)) {
            throw new IllegalArgumentException("filter " + src + ": expected " + p + " at token " + pos);
        }
        pos++;
    }
}
