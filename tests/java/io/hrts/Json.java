package io.hrts;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for the tests (the dumps and {@code hrts stats --json}): objects become
 * {@code Map<String, Object>}, arrays {@code List<Object>}, integers that fit {@code Long}
 * as such, other numbers {@code Double}, null {@code null}. Rejects what is not JSON.
 */
final class Json {
    private final String s;
    private int i;

    private Json(String s) {
        this.s = s;
    }

    static Object parse(String text) {
        Json j = new Json(text);
        Object v = j.value();
        j.space();
        if (j.i != text.length()) {
            throw j.error("trailing text");
        }
        return v;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(String text) {
        return (Map<String, Object>) parse(text);
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("JSON: " + what + " at " + i + " in: " + s);
    }

    private void space() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
    }

    private void expect(char c) {
        space();
        if (i >= s.length() || s.charAt(i) != c) {
            throw error("expected '" + c + "'");
        }
        i++;
    }

    private boolean take(char c) {
        space();
        if (i < s.length() && s.charAt(i) == c) {
            i++;
            return true;
        }
        return false;
    }

    private Object value() {
        space();
        if (i >= s.length()) {
            throw error("unexpected end");
        }
        char c = s.charAt(i);
        if (c == '{') {
            i++;
            Map<String, Object> m = new LinkedHashMap<>();
            if (!take('}')) {
                do {
                    space();
                    String k = string();
                    expect(':');
                    m.put(k, value());
                } while (take(','));
                expect('}');
            }
            return m;
        }
        if (c == '[') {
            i++;
            List<Object> l = new ArrayList<>();
            if (!take(']')) {
                do {
                    l.add(value());
                } while (take(','));
                expect(']');
            }
            return l;
        }
        if (c == '"') {
            return string();
        }
        for (String word : new String[] {"null", "true", "false"}) {
            if (s.startsWith(word, i)) {
                i += word.length();
                return word.equals("null") ? null : Boolean.valueOf(word);
            }
        }
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        if (start == i) {
            throw error("unexpected '" + c + "'");
        }
        String n = s.substring(start, i);
        if (n.matches("-?[0-9]+")) {
            try {
                return Long.valueOf(n); // exact: epoch-ns timestamps do not fit a double
            } catch (NumberFormatException e) {
                // beyond a long: a double
            }
        }
        return Double.valueOf(n);
    }

    private String string() {
        if (i >= s.length() || s.charAt(i) != '"') {
            throw error("expected a string");
        }
        StringBuilder b = new StringBuilder();
        for (i++; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"') {
                i++;
                return b.toString();
            }
            if (c == '\\') {
                char e = s.charAt(++i);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u':
                        b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                        i += 4;
                        break;
                    default: b.append(e);
                }
            } else {
                b.append(c);
            }
        }
        throw error("unterminated string");
    }
}
