package check;

import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.DataInputDeserializer;
import org.apache.paimon.io.DataOutputViewStreamWrapper;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.CommitMessageSerializer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;

/**
 * Commit messages as Java's {@link CommitMessageSerializer} writes them (version 12 in Paimon
 * 2.0.0), in list files of {@code int32 BE version ‖ int32 BE length ‖ serializeList bytes}
 * (what {@code paimon-kernel write --prepare-only} and {@code write --prepare-only} write):
 *
 * <pre>
 * messages check FILE          deserializes the list with the file's version, prints one JSON
 *     line per message (its partition bytes in hex, bucket, total buckets and the file names of
 *     each list), then serializes the messages again with this release's serializer: when the
 *     file's version is this serializer's, the bytes must be the file's ("same bytes", else a
 *     line naming the first differing byte and exit 1)
 * messages commit TABLE_DIR FILE   commits the file's messages to the table (BatchTableCommit)
 * </pre>
 */
public final class Messages {

    private Messages() {}

    public static void main(String[] argv) {
        try {
            System.exit(run(argv));
        } catch (Throwable t) {
            if (System.getenv("JAVA_CHECK_TRACE") != null) {
                t.printStackTrace();
            }
            System.err.println("messages: " + Main.describe(t));
            System.exit(1);
        }
    }

    static int run(String[] argv) throws Exception {
        if (argv.length == 2 && "check".equals(argv[0])) {
            return check(Files.readAllBytes(Paths.get(argv[1])));
        }
        if (argv.length == 3 && "commit".equals(argv[0])) {
            FileStoreTable table = Write.open(argv[1]);
            Write.commit(table, readFile(Files.readAllBytes(Paths.get(argv[2]))));
            return 0;
        }
        System.err.println("usage: messages check FILE | messages commit TABLE_DIR FILE");
        return 2;
    }

    /** Writes {@code messages} as a list file of the current version. */
    static void writeFile(List<CommitMessage> messages, String file) throws IOException {
        CommitMessageSerializer ser = new CommitMessageSerializer();
        byte[] list = serializeList(ser, messages);
        Files.write(
                Paths.get(file),
                ByteBuffer.allocate(8 + list.length)
                        .putInt(ser.getVersion())
                        .putInt(list.length)
                        .put(list)
                        .array());
    }

    static List<CommitMessage> readFile(byte[] file) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(file);
        int version = buf.getInt();
        int length = buf.getInt();
        if (length != file.length - 8) {
            throw new IOException("length " + length + " but " + (file.length - 8) + " bytes follow");
        }
        return new CommitMessageSerializer()
                .deserializeList(
                        version, new DataInputDeserializer(Arrays.copyOfRange(file, 8, file.length)));
    }

    static byte[] serializeList(CommitMessageSerializer ser, List<CommitMessage> list)
            throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ser.serializeList(list, new DataOutputViewStreamWrapper(out));
        return out.toByteArray();
    }

    private static int check(byte[] file) throws IOException {
        int version = ByteBuffer.wrap(file).getInt();
        List<CommitMessage> messages = readFile(file);
        for (CommitMessage m : messages) {
            System.out.println(describe((CommitMessageImpl) m));
        }
        CommitMessageSerializer ser = new CommitMessageSerializer();
        if (version != ser.getVersion()) {
            System.out.println("version " + version + ", not re-serialized");
            return 0;
        }
        byte[] payload = Arrays.copyOfRange(file, 8, file.length);
        byte[] again = serializeList(ser, messages);
        if (Arrays.equals(again, payload)) {
            System.out.println("same bytes");
            return 0;
        }
        System.out.println(
                "different bytes: " + again.length + " re-serialized vs " + payload.length
                        + ", first difference at byte " + Arrays.mismatch(again, payload));
        return 1;
    }

    /** One JSON line naming what the message holds. */
    static String describe(CommitMessageImpl m) {
        StringBuilder sb = new StringBuilder();
        sb.append("{\"partition\":\"");
        for (byte b : m.partition().toBytes()) {
            sb.append(String.format("%02x", b));
        }
        sb.append("\",\"bucket\":").append(m.bucket());
        sb.append(",\"total_buckets\":").append(m.totalBuckets());
        files(sb, "new_files", m.newFilesIncrement().newFiles());
        files(sb, "deleted_files", m.newFilesIncrement().deletedFiles());
        files(sb, "changelog_files", m.newFilesIncrement().changelogFiles());
        indexes(sb, "new_index_files", m.newFilesIncrement().newIndexFiles());
        indexes(sb, "deleted_index_files", m.newFilesIncrement().deletedIndexFiles());
        files(sb, "compact_before", m.compactIncrement().compactBefore());
        files(sb, "compact_after", m.compactIncrement().compactAfter());
        files(sb, "compact_changelog", m.compactIncrement().changelogFiles());
        indexes(sb, "compact_new_index_files", m.compactIncrement().newIndexFiles());
        indexes(sb, "compact_deleted_index_files", m.compactIncrement().deletedIndexFiles());
        return sb.append('}').toString();
    }

    private static void files(StringBuilder sb, String key, List<DataFileMeta> files) {
        sb.append(",\"").append(key).append("\":[");
        for (int i = 0; i < files.size(); i++) {
            sb.append(i == 0 ? "\"" : ",\"").append(files.get(i).fileName()).append('"');
        }
        sb.append(']');
    }

    private static void indexes(StringBuilder sb, String key, List<IndexFileMeta> files) {
        sb.append(",\"").append(key).append("\":[");
        for (int i = 0; i < files.size(); i++) {
            sb.append(i == 0 ? "\"" : ",\"").append(files.get(i).fileName()).append('"');
        }
        sb.append(']');
    }
}
