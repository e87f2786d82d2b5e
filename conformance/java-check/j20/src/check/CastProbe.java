package check;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;

import org.apache.paimon.casting.CastExecutor;
import org.apache.paimon.casting.CastExecutors;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DecimalType;

/**
 * Reads lines "FROM_TYPE<TAB>TO_TYPE<TAB>VALUE" (VALUE in a simple text form of the internal
 * value of FROM_TYPE) and prints "RESULT" or "ERR <message>" per line: Java 2.0's
 * CastExecutors result rendered as text.
 */
public final class CastProbe {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] p = line.split("\t", -1);
            DataType from = org.apache.paimon.utils.JsonSerdeUtil.fromJson("\"" + p[0] + "\"", DataType.class);
            DataType to = org.apache.paimon.utils.JsonSerdeUtil.fromJson("\"" + p[1] + "\"", DataType.class);
            try {
                @SuppressWarnings("unchecked")
                CastExecutor<Object, Object> ex = (CastExecutor<Object, Object>) CastExecutors.resolve(from, to);
                if (ex == null) {
                    System.out.println("NORULE");
                    continue;
                }
                Object v;
                try {
                    v = parse(from, p[2]);
                } catch (Throwable e) {
                    System.out.println("BADINPUT");
                    continue;
                }
                Object r = ex.cast(v);
                System.out.println(render(to, r));
            } catch (Throwable e) {
                System.out.println("ERR " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }

    static Object parse(DataType t, String s) {
        switch (t.getTypeRoot()) {
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(s);
            case BOOLEAN:
                return Boolean.parseBoolean(s);
            case TINYINT:
                return Byte.parseByte(s);
            case SMALLINT:
                return Short.parseShort(s);
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                return Integer.parseInt(s);
            case BIGINT:
                return Long.parseLong(s);
            case FLOAT:
                return Float.intBitsToFloat(Integer.parseUnsignedInt(s, 16));
            case DOUBLE:
                return Double.longBitsToDouble(Long.parseUnsignedLong(s, 16));
            case DECIMAL:
                DecimalType d = (DecimalType) t;
                return Decimal.fromBigDecimal(new BigDecimal(s), d.getPrecision(), d.getScale());
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                String[] mn = s.split(",");
                return Timestamp.fromEpochMillis(Long.parseLong(mn[0]), Integer.parseInt(mn[1]));
            case BINARY:
            case VARBINARY:
                return hexToBytes(s);
            default:
                throw new IllegalArgumentException("type " + t);
        }
    }

    static String render(DataType t, Object r) {
        if (r == null) {
            return "NULL";
        }
        switch (t.getTypeRoot()) {
            case FLOAT:
                return "f" + Integer.toHexString(Float.floatToRawIntBits((Float) r));
            case DOUBLE:
                return "d" + Long.toHexString(Double.doubleToRawLongBits((Double) r));
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                Timestamp ts = (Timestamp) r;
                return ts.getMillisecond() + "," + ts.getNanoOfMillisecond();
            case BINARY:
            case VARBINARY:
                StringBuilder sb = new StringBuilder();
                for (byte b : (byte[]) r) {
                    sb.append(String.format("%02x", b));
                }
                return sb.toString();
            case DECIMAL:
                return ((Decimal) r).toBigDecimal().toPlainString();
            case CHAR:
            case VARCHAR:
                StringBuilder e = new StringBuilder();
                for (char c : r.toString().toCharArray()) {
                    if (c == '\\') {
                        e.append("\\\\");
                    } else if (c < 0x20) {
                        e.append(String.format("\\u%04x", (int) c));
                    } else {
                        e.append(c);
                    }
                }
                return e.toString();
            default:
                return r.toString();
        }
    }

    static byte[] hexToBytes(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }
}
