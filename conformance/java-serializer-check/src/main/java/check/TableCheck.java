package check;

import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.io.DataInputDeserializer;
import org.apache.paimon.io.DataOutputViewStreamWrapper;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageSerializer;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;

/**
 * Java as the writer or the coordinator of a table, exchanging commit-message files
 * (int version, int length, CommitMessageSerializer#serializeList bytes).
 *
 * <pre>
 * java-write TABLE FILE ID:NAME:DT...   write rows (BIGINT, STRING, STRING columns) with a
 *                                       BatchTableWrite, prepareCommit, messages to FILE
 * java-commit TABLE FILE                commit the messages of FILE with a BatchTableCommit
 * </pre>
 */
public class TableCheck {

    public static void main(String[] args) throws Exception {
        FileStoreTable table =
                FileStoreTableFactory.create(LocalFileIO.create(), new Path(args[1]));
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        CommitMessageSerializer ser = new CommitMessageSerializer();
        switch (args[0]) {
            case "java-write":
                {
                    List<CommitMessage> messages;
                    try (BatchTableWrite write = builder.newWrite()) {
                        for (String spec : Arrays.copyOfRange(args, 3, args.length)) {
                            String[] p = spec.split(":", 3);
                            write.write(
                                    GenericRow.of(
                                            Long.parseLong(p[0]),
                                            BinaryString.fromString(p[1]),
                                            BinaryString.fromString(p[2])));
                        }
                        messages = write.prepareCommit();
                    }
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    ser.serializeList(messages, new DataOutputViewStreamWrapper(out));
                    byte[] body = out.toByteArray();
                    Files.write(
                            Paths.get(args[2]),
                            ByteBuffer.allocate(8 + body.length)
                                    .putInt(ser.getVersion())
                                    .putInt(body.length)
                                    .put(body)
                                    .array());
                    System.out.println(
                            "wrote " + messages.size() + " messages (version "
                                    + ser.getVersion() + ") to " + args[2]);
                    break;
                }
            case "java-commit":
                {
                    byte[] file = Files.readAllBytes(Paths.get(args[2]));
                    ByteBuffer buf = ByteBuffer.wrap(file);
                    int version = buf.getInt();
                    int length = buf.getInt();
                    byte[] body = Arrays.copyOfRange(file, 8, 8 + length);
                    List<CommitMessage> messages =
                            ser.deserializeList(version, new DataInputDeserializer(body));
                    try (BatchTableCommit commit = builder.newCommit()) {
                        commit.commit(messages);
                    }
                    System.out.println(
                            "committed " + messages.size() + " messages (version " + version
                                    + "); latest snapshot "
                                    + table.snapshotManager().latestSnapshotId());
                    break;
                }
            default:
                System.err.println("unknown command " + args[0]);
                System.exit(2);
        }
    }
}
