package io.hrts.stats;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** JSON text to Map (LinkedHashMap), List, String, Long, Double, Boolean or null. */
final class PortableJson {
    private final String s;
    private int i;

    private PortableJson(String s) {
        this.s = s;
    }

    static Object parse(String text, String prefix) {
        PortableJson j = new PortableJson(text);
        try {
            j.ws();
            Object v = j.value();
            j.ws();
            if (j.i != text.length()) {
                throw j.error("trailing characters");
            }
            return v;
        } catch (IllegalArgumentException e) {
            throw PortableStats.invalid(prefix + e.getMessage());
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at character " + (i + 1));
    }

    private void ws() {
        while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
    }

    private char peek() {
        if (i >= s.length()) {
            throw error("EOF while parsing a value");
        }
        return s.charAt(i);
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        i++;
    }

    private Object value() {
        char c = peek();
        if (c == '{') {
            i++;
            Map<String, Object> m = new LinkedHashMap<>();
            ws();
            if (peek() == '}') {
                i++;
                return m;
            }
            while (true) {
                ws();
                String k = string();
                ws();
                expect(':');
                ws();
                m.put(k, value());
                ws();
                if (peek() == ',') {
                    i++;
                    continue;
                }
                expect('}');
                return m;
            }
        }
        if (c == '[') {
            i++;
            List<Object> l = new ArrayList<>();
            ws();
            if (peek() == ']') {
                i++;
                return l;
            }
            while (true) {
                ws();
                l.add(value());
                ws();
                if (peek() == ',') {
                    i++;
                    continue;
                }
                expect(']');
                return l;
            }
        }
        if (c == '"') {
            return string();
        }
        for (String w : new String[] {"true", "false", "null"}) {
            if (s.startsWith(w, i)) {
                i += w.length();
                return w.equals("null") ? null : Boolean.valueOf(w);
            }
        }
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        String n = s.substring(start, i);
        if (n.isEmpty()) {
            throw error("expected a value");
        }
        try {
            if (n.matches("-?(0|[1-9][0-9]*)")) {
                try {
                    return Long.parseLong(n);
                } catch (NumberFormatException big) {
                    return Double.parseDouble(n);
                }
            }
            if (!n.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
                throw new NumberFormatException();
            }
            return Double.parseDouble(n);
        } catch (NumberFormatException e) {
            i = start;
            throw error("invalid number");
        }
    }

    private String string() {
        expect('"');
        StringBuilder b = new StringBuilder();
        while (true) {
            char c = peek();
            i++;
            if (c == '"') {
                return b.toString();
            }
            if (c == '\\') {
                char e = peek();
                i++;
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u':
                        if (i + 4 > s.length()) {
                            throw error("invalid escape");
                        }
                        try {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException x) {
                            throw error("invalid escape");
                        }
                        i += 4;
                        break;
                    case '"': case '\\': case '/': b.append(e); break;
                    default: throw error("invalid escape");
                }
            } else if (c < 0x20) {
                throw error("control character in a string");
            } else {
                b.append(c);
            }
        }
    }

    /** A value as JSON text (for error messages). */
    @SuppressWarnings("unchecked")
    static String text(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof String) {
            return quote((String) v);
        }
        if (v instanceof Double) {
            return number((Double) v);
        }
        if (v instanceof List) {
            StringBuilder b = new StringBuilder("[");
            for (Object o : (List<Object>) v) {
                b.append(b.length() > 1 ? "," : "").append(text(o));
            }
            return b.append(']').toString();
        }
        if (v instanceof Map) {
            StringBuilder b = new StringBuilder("{");
            for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                b.append(b.length() > 1 ? "," : "").append(quote(e.getKey())).append(':').append(text(e.getValue()));
            }
            return b.append('}').toString();
        }
        return String.valueOf(v);
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    /** A number as the native dump writes it: whole values up to 2^53 without a fraction, NaN as null. */
    static String number(double x) {
        if (x != x || Double.isInfinite(x)) {
            return "null";
        }
        if (x == Math.rint(x) && Math.abs(x) <= 9007199254740992.0) {
            return Long.toString((long) x);
        }
        String t = Double.toString(x);
        int e = t.indexOf('E');
        if (e < 0) {
            return t;
        }
        String mant = t.substring(0, e);
        if (mant.endsWith(".0")) {
            mant = mant.substring(0, mant.length() - 2);
        }
        return mant + "e" + t.substring(e + 1);
    }
}
