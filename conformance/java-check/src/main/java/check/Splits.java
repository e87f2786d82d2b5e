package check;

import org.apache.paimon.io.DataInputDeserializer;
import org.apache.paimon.io.DataOutputViewStreamWrapper;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.Split;

import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Java's own {@link DataSplit} serialization ({@code DataSplit#serialize(DataOutputView)} and
 * {@code DataSplit.deserialize(DataInputView)}, version 8 in Paimon 2.0.0), for checking splits
 * that another implementation serialized, and for handing Java's splits to it:
 *
 * <pre>
 * read-split TABLE_DIR SPLIT_FILE [read flags]   the rows of the split(s) in SPLIT_FILE, read
 *     with TABLE_DIR's reader and the flags of read (--columns, --row-kind, --option, ...),
 *     printed as read prints them. SPLIT_FILE holds either the bytes of one serialized DataSplit
 *     (it starts with DataSplit's magic number) or what write-split writes.
 * write-split TABLE_DIR OUT_FILE [read flags]    the splits of Java's plan of TABLE_DIR (with
 *     the flags' options: --snapshot, --option, ...), each as int32 big-endian length followed
 *     by that many bytes of DataSplit#serialize, in plan order; prints the count. A split that
 *     is not a DataSplit (e.g. IndexedSplit, ChainSplit) is an error naming its class.
 * </pre>
 */
public final class Splits {

    /** The first 8 bytes of a serialized DataSplit of version 2 and later (DataSplit.MAGIC). */
    private static final long MAGIC = -2394839472490812314L;

    private Splits() {}

    public static void main(String[] argv) {
        Writer out =
                new BufferedWriter(
                        new OutputStreamWriter(
                                new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8),
                        1 << 16);
        int code;
        try {
            code = run(argv, out);
        } catch (Throwable t) {
            code = 1;
            if (Arrays.asList(argv).contains("--trace")) {
                t.printStackTrace();
            } else {
                System.err.println(argv[0] + ": " + Main.describe(t));
            }
        }
        try {
            out.flush();
        } catch (IOException ignored) {
            // stdout is gone; the exit code tells
        }
        System.exit(code);
    }

    /** Runs read-split or write-split ({@code argv[0]}); the exit code (2: bad command line). */
    static int run(String[] argv, Writer out) throws Exception {
        if (argv.length < 3 || !("read-split".equals(argv[0]) || "write-split".equals(argv[0]))) {
            System.err.println(
                    "usage: read-split TABLE_DIR SPLIT_FILE [read flags] | write-split TABLE_DIR"
                            + " OUT_FILE [read flags]");
            return 2;
        }
        String file = argv[2];
        List<String> rest = new ArrayList<>();
        rest.add(argv[1]);
        rest.addAll(Arrays.asList(argv).subList(3, argv.length));
        Main.Args args;
        try {
            args = Main.parse(rest.toArray(new String[0]));
        } catch (IllegalArgumentException e) {
            System.err.println(argv[0] + ": " + e.getMessage());
            return 2;
        }
        if (args == null) {
            return 2;
        }
        Main.Opened table = Main.open(args);
        if ("read-split".equals(argv[0])) {
            Main.print(readSplits(Files.readAllBytes(Paths.get(file))), table, args, out);
        } else {
            int n = writeSplits(table.builder.newScan().plan().splits(), file);
            out.append(Integer.toString(n)).append(" split(s)\n");
        }
        return 0;
    }

    /** The splits of {@code bytes}: one serialized DataSplit, or length-prefixed ones. */
    static List<DataSplit> readSplits(byte[] bytes) throws IOException {
        List<DataSplit> splits = new ArrayList<>();
        if (bytes.length >= 8 && ByteBuffer.wrap(bytes).getLong() == MAGIC) {
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            splits.add(DataSplit.deserialize(in));
            if (in.available() != 0) {
                throw new IOException(
                        in.available() + " byte(s) after the split (" + bytes.length + " bytes)");
            }
            return splits;
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) {
            if (buf.remaining() < 4) {
                throw new IOException("truncated length at byte " + buf.position());
            }
            int length = buf.getInt();
            if (length < 0 || length > buf.remaining()) {
                throw new IOException(
                        "split length " + length + " at byte " + (buf.position() - 4)
                                + " but " + buf.remaining() + " byte(s) left");
            }
            byte[] one = new byte[length];
            buf.get(one);
            DataInputDeserializer in = new DataInputDeserializer(one);
            splits.add(DataSplit.deserialize(in));
            if (in.available() != 0) {
                throw new IOException(
                        in.available() + " byte(s) left in split " + splits.size());
            }
        }
        return splits;
    }

    /** Writes {@code splits} length-prefixed to {@code file}; returns their count. */
    static int writeSplits(List<Split> splits, String file) throws IOException {
        try (OutputStream os = Files.newOutputStream(Paths.get(file));
                DataOutputStream out = new DataOutputStream(os)) {
            for (Split split : splits) {
                if (!(split instanceof DataSplit)) {
                    throw new IllegalArgumentException(
                            "split " + split.getClass().getName() + " is not a DataSplit");
                }
                ByteArrayOutputStream one = new ByteArrayOutputStream();
                ((DataSplit) split).serialize(new DataOutputViewStreamWrapper(one));
                out.writeInt(one.size());
                one.writeTo(out);
            }
        }
        return splits.size();
    }
}
