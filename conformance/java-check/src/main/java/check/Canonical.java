package check;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;

import org.apache.paimon.data.Blob;
import org.apache.paimon.data.BlobView;
import org.apache.paimon.data.DataGetters;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.data.variant.Variant;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.LocalZonedTimestampType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.MultisetType;
import org.apache.paimon.types.RowType;
import org.apache.paimon.types.TimestampType;
import org.apache.paimon.types.VectorType;

/**
 * The canonical JSON of paimon-kernel ({@code core/src/canonical.rs}), written byte for byte as
 * {@code serde_json::Value::to_string} writes it there (keys in column order, no spaces, serde's
 * string escapes and float digits), so that a test may compare our lines with its own as
 * strings.
 *
 * <table>
 *   <tr><td>TINYINT..BIGINT</td><td>number</td></tr>
 *   <tr><td>FLOAT, DOUBLE</td><td>shortest round-trip digits of the double (a FLOAT widened
 *       first); "NaN", "Infinity", "-Infinity" as strings; -0.0 kept</td></tr>
 *   <tr><td>DECIMAL(p, s)</td><td>string with exactly s fraction digits</td></tr>
 *   <tr><td>CHAR, VARCHAR</td><td>string</td></tr>
 *   <tr><td>BINARY, VARBINARY</td><td>lowercase hex string</td></tr>
 *   <tr><td>BLOB</td><td>{"len", "sha256", "hex" (only up to 64 bytes)}</td></tr>
 *   <tr><td>DATE</td><td>"YYYY-MM-DD"</td></tr>
 *   <tr><td>TIME</td><td>"HH:MM:SS.mmm"</td></tr>
 *   <tr><td>TIMESTAMP</td><td>"YYYY-MM-DDTHH:MM:SS.fffffffff" (9 digits); LTZ adds "Z"</td></tr>
 *   <tr><td>ARRAY, VECTOR</td><td>array</td></tr>
 *   <tr><td>MAP, MULTISET</td><td>array of [key, value] pairs in stored order</td></tr>
 *   <tr><td>ROW</td><td>object in field order</td></tr>
 *   <tr><td>VARIANT</td><td>{"value": hex, "metadata": hex}</td></tr>
 * </table>
 *
 * <p>NULL is null at any level. Years outside 0..9999 carry a sign and at least four digits.
 */
final class Canonical {

    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private static final long SECONDS_PER_DAY = 86_400L;

    private final MessageDigest sha256;

    Canonical() {
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Appends {@code row} as an object keyed by the field names of {@code type}. */
    void row(StringBuilder sb, InternalRow row, RowType type) {
        List<DataField> fields = type.getFields();
        sb.append('{');
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            string(sb, fields.get(i).name());
            sb.append(':');
            value(sb, row, i, fields.get(i).type());
        }
        sb.append('}');
    }

    /** Appends the value at {@code pos} of a row or array. */
    void value(StringBuilder sb, DataGetters g, int pos, DataType type) {
        if (g.isNullAt(pos)) {
            sb.append("null");
            return;
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                sb.append(g.getBoolean(pos));
                break;
            case TINYINT:
                sb.append(g.getByte(pos));
                break;
            case SMALLINT:
                sb.append(g.getShort(pos));
                break;
            case INTEGER:
                sb.append(g.getInt(pos));
                break;
            case BIGINT:
                sb.append(g.getLong(pos));
                break;
            case FLOAT:
                number(sb, g.getFloat(pos));
                break;
            case DOUBLE:
                number(sb, g.getDouble(pos));
                break;
            case DECIMAL:
                {
                    DecimalType d = (DecimalType) type;
                    BigDecimal v =
                            g.getDecimal(pos, d.getPrecision(), d.getScale()).toBigDecimal();
                    string(sb, v.setScale(d.getScale(), RoundingMode.UNNECESSARY).toPlainString());
                    break;
                }
            case CHAR:
            case VARCHAR:
                string(sb, g.getString(pos).toString());
                break;
            case BINARY:
            case VARBINARY:
                sb.append('"');
                hex(sb, g.getBinary(pos));
                sb.append('"');
                break;
            case BLOB:
                {
                    // An unresolved view (blob-view.resolve.enabled = false) has no bytes of
                    // its own: it is printed as the view struct it was read as (what
                    // paimon-kernel returns for it), re-serialized by BlobViewStruct.
                    Blob b = g.getBlob(pos);
                    blob(
                            sb,
                            b instanceof BlobView && !((BlobView) b).isResolved()
                                    ? ((BlobView) b).viewStruct().serialize()
                                    : b.toData());
                    break;
                }
            case DATE:
                sb.append('"');
                date(sb, g.getInt(pos));
                sb.append('"');
                break;
            case TIME_WITHOUT_TIME_ZONE:
                sb.append('"');
                timeOfDay(sb, g.getInt(pos));
                sb.append('"');
                break;
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                timestamp(sb, g.getTimestamp(pos, ((TimestampType) type).getPrecision()), false);
                break;
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                timestamp(
                        sb,
                        g.getTimestamp(pos, ((LocalZonedTimestampType) type).getPrecision()),
                        true);
                break;
            case ARRAY:
                array(sb, g.getArray(pos), ((ArrayType) type).getElementType());
                break;
            case VECTOR:
                array(sb, g.getVector(pos), ((VectorType) type).getElementType());
                break;
            case MAP:
                {
                    MapType m = (MapType) type;
                    map(sb, g.getMap(pos), m.getKeyType(), m.getValueType());
                    break;
                }
            case MULTISET:
                map(
                        sb,
                        g.getMap(pos),
                        ((MultisetType) type).getElementType(),
                        new org.apache.paimon.types.IntType(false));
                break;
            case ROW:
                {
                    RowType r = (RowType) type;
                    row(sb, g.getRow(pos, r.getFieldCount()), r);
                    break;
                }
            case VARIANT:
                {
                    Variant v = g.getVariant(pos);
                    sb.append("{\"value\":\"");
                    hex(sb, v.value());
                    sb.append("\",\"metadata\":\"");
                    hex(sb, v.metadata());
                    sb.append("\"}");
                    break;
                }
            default:
                throw new UnsupportedOperationException("no canonical JSON for type " + type);
        }
    }

    private void array(StringBuilder sb, InternalArray a, DataType element) {
        sb.append('[');
        for (int i = 0; i < a.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            value(sb, a, i, element);
        }
        sb.append(']');
    }

    private void map(StringBuilder sb, InternalMap m, DataType key, DataType value) {
        InternalArray keys = m.keyArray();
        InternalArray values = m.valueArray();
        sb.append('[');
        for (int i = 0; i < m.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append('[');
            value(sb, keys, i, key);
            sb.append(',');
            value(sb, values, i, value);
            sb.append(']');
        }
        sb.append(']');
    }

    private void blob(StringBuilder sb, byte[] data) {
        sb.append("{\"len\":").append(data.length).append(",\"sha256\":\"");
        hex(sb, sha256.digest(data));
        sb.append('"');
        if (data.length <= 64) {
            sb.append(",\"hex\":\"");
            hex(sb, data);
            sb.append('"');
        }
        sb.append('}');
    }

    static void hex(StringBuilder sb, byte[] bytes) {
        for (byte b : bytes) {
            sb.append(HEX[(b >> 4) & 0xf]).append(HEX[b & 0xf]);
        }
    }

    /** A JSON string with serde_json's escapes (short forms, else lowercase \\u00xx). */
    static void string(StringBuilder sb, String s) {
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
                        sb.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    /** A finite float as a JSON number; NaN and the infinities as strings. */
    static void number(StringBuilder sb, double v) {
        if (Double.isNaN(v)) {
            sb.append("\"NaN\"");
        } else if (Double.isInfinite(v)) {
            sb.append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        } else {
            sb.append(formatDouble(v));
        }
    }

    /**
     * The shortest decimal that reads back as {@code v} (the closest one when several are as
     * short), laid out as serde_json 1.0.154 does (its float printer, zmij): scientific exponent
     * e in -5..=15 in plain notation with at least one fraction digit ({@code 1000.0},
     * {@code 0.00012}), otherwise {@code d.ddde+N} / {@code de-N}.
     */
    static String formatDouble(double v) {
        if (v == 0) {
            return (Double.doubleToRawLongBits(v) < 0) ? "-0.0" : "0.0";
        }
        boolean negative = v < 0;
        double abs = Math.abs(v);
        BigDecimal shortest = shortest(abs);
        String digits = shortest.unscaledValue().toString();
        int exp = digits.length() - 1 - shortest.scale();
        StringBuilder sb = new StringBuilder(32);
        if (negative) {
            sb.append('-');
        }
        int len = digits.length();
        if (exp >= -5 && exp <= 15) {
            if (len - 1 <= exp) {
                sb.append(digits);
                for (int i = len - 1; i < exp; i++) {
                    sb.append('0');
                }
                sb.append(".0");
            } else if (exp >= 0) {
                sb.append(digits, 0, exp + 1).append('.').append(digits, exp + 1, len);
            } else {
                sb.append("0.");
                for (int i = -1; i > exp; i--) {
                    sb.append('0');
                }
                sb.append(digits);
            }
        } else {
            sb.append(digits.charAt(0));
            if (len > 1) {
                sb.append('.').append(digits, 1, len);
            }
            sb.append('e').append(exp >= 0 ? '+' : '-').append(Math.abs(exp));
        }
        return sb.toString();
    }

    /**
     * The shortest decimal (trailing zeros stripped) whose nearest double is {@code abs} (> 0);
     * of two candidates of that length, the one closer to {@code abs}.
     */
    static BigDecimal shortest(double abs) {
        BigDecimal exact = new BigDecimal(abs);
        for (int p = 1; p <= 17; p++) {
            BigDecimal down = exact.round(new MathContext(p, RoundingMode.DOWN));
            BigDecimal up = exact.round(new MathContext(p, RoundingMode.UP));
            boolean downOk = down.doubleValue() == abs;
            boolean upOk = up.doubleValue() == abs;
            BigDecimal pick = null;
            if (downOk && upOk) {
                int cmp = exact.subtract(down).compareTo(up.subtract(exact));
                if (cmp < 0) {
                    pick = down;
                } else if (cmp > 0) {
                    pick = up;
                } else {
                    pick = down.unscaledValue().testBit(0) ? up : down;
                }
            } else if (downOk) {
                pick = down;
            } else if (upOk) {
                pick = up;
            }
            if (pick != null) {
                return pick.stripTrailingZeros();
            }
        }
        return exact.round(new MathContext(17, RoundingMode.HALF_EVEN)).stripTrailingZeros();
    }

    /** "YYYY-MM-DD" of days since 1970-01-01 (proleptic Gregorian). */
    static void date(StringBuilder sb, long days) {
        // Civil from days (Howard Hinnant's algorithm), in whole 400-year eras.
        long z = days + 719_468;
        long era = Math.floorDiv(z, 146_097);
        long doe = z - era * 146_097;
        long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        long mp = (5 * doy + 2) / 153;
        long d = doy - (153 * mp + 2) / 5 + 1;
        long m = mp < 10 ? mp + 3 : mp - 9;
        long y = yoe + era * 400 + (m <= 2 ? 1 : 0);
        if (y >= 0 && y <= 9999) {
            pad(sb, y, 4);
        } else {
            sb.append(y < 0 ? '-' : '+');
            pad(sb, Math.abs(y), 4);
        }
        sb.append('-');
        pad(sb, m, 2);
        sb.append('-');
        pad(sb, d, 2);
    }

    /** "HH:MM:SS.mmm" of milliseconds since midnight. */
    static void timeOfDay(StringBuilder sb, long millis) {
        long s = Math.floorDiv(millis, 1000);
        long ms = Math.floorMod(millis, 1000);
        pad(sb, s / 3600, 2);
        sb.append(':');
        pad(sb, s / 60 % 60, 2);
        sb.append(':');
        pad(sb, s % 60, 2);
        sb.append('.');
        pad(sb, ms, 3);
    }

    /** "YYYY-MM-DDTHH:MM:SS.fffffffff" (and "Z" for an instant), quoted. */
    static void timestamp(StringBuilder sb, Timestamp ts, boolean instant) {
        long millis = ts.getMillisecond();
        long seconds = Math.floorDiv(millis, 1000);
        long nanos = Math.floorMod(millis, 1000) * 1_000_000L + ts.getNanoOfMillisecond();
        long days = Math.floorDiv(seconds, SECONDS_PER_DAY);
        long secs = Math.floorMod(seconds, SECONDS_PER_DAY);
        sb.append('"');
        date(sb, days);
        sb.append('T');
        pad(sb, secs / 3600, 2);
        sb.append(':');
        pad(sb, secs / 60 % 60, 2);
        sb.append(':');
        pad(sb, secs % 60, 2);
        sb.append('.');
        pad(sb, nanos, 9);
        if (instant) {
            sb.append('Z');
        }
        sb.append('"');
    }

    private static void pad(StringBuilder sb, long v, int width) {
        String s = Long.toString(v);
        for (int i = s.length(); i < width; i++) {
            sb.append('0');
        }
        sb.append(s);
    }
}
