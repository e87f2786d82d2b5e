package check;

import org.apache.paimon.data.BinaryArray;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.data.serializer.InternalRowSerializer;
import org.apache.paimon.index.DeletionVectorMeta;
import org.apache.paimon.index.GlobalIndexMeta;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.io.DataInputDeserializer;
import org.apache.paimon.io.DataOutputViewStreamWrapper;
import org.apache.paimon.manifest.FileSource;
import org.apache.paimon.stats.SimpleStats;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.CommitMessageSerializer;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypes;

import java.io.ByteArrayOutputStream;
import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Oracle for {@link CommitMessageSerializer} bytes.
 *
 * <pre>
 * gen DIR        write DIR/full.vN.bin, DIR/minimal.vN.bin (serialize) and DIR/list.vN.bin
 *                (int version, int length, serializeList([full, minimal])), N = getVersion()
 * check FILE     read a list file (int version, int length, serializeList bytes), deserialize
 *                with that version, print each message, compare with [full, minimal] of this
 *                classpath's version (equals) and, if the version is ours, the re-serialized
 *                bytes with the input; exit 1 on any difference
 * dump FILE      read a list file and print its messages (any content)
 * </pre>
 *
 * The expected content below is mirrored by the Rust test in
 * core/src/commit/serializer/tests.rs; change both together.
 */
public class SerializerCheck {

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: gen DIR | check FILE | dump FILE");
            System.exit(2);
        }
        CommitMessageSerializer ser = new CommitMessageSerializer();
        int version = ser.getVersion();
        switch (args[0]) {
            case "gen":
                {
                    Path dir = Paths.get(args[1]);
                    Files.createDirectories(dir);
                    Files.write(dir.resolve("full.v" + version + ".bin"), ser.serialize(full()));
                    Files.write(
                            dir.resolve("minimal.v" + version + ".bin"),
                            ser.serialize(minimal()));
                    Files.write(
                            dir.resolve("list.v" + version + ".bin"),
                            versioned(version, serializeList(ser, expected())));
                    System.out.println("wrote version " + version + " files to " + dir);
                    break;
                }
            case "check":
            case "dump":
                {
                    byte[] file = Files.readAllBytes(Paths.get(args[1]));
                    ByteBuffer buf = ByteBuffer.wrap(file);
                    int fileVersion = buf.getInt();
                    int length = buf.getInt();
                    if (length != file.length - 8) {
                        throw new IllegalStateException(
                                "length " + length + " but " + (file.length - 8) + " bytes");
                    }
                    byte[] payload = Arrays.copyOfRange(file, 8, file.length);
                    List<CommitMessage> got =
                            ser.deserializeList(fileVersion, new DataInputDeserializer(payload));
                    System.out.println(
                            "version " + fileVersion + ", " + got.size() + " message(s)");
                    for (CommitMessage m : got) {
                        System.out.println(m);
                    }
                    if (args[0].equals("dump")) {
                        break;
                    }
                    // Files before version 12 cannot carry a global index's source meta.
                    withSourceMeta = fileVersion >= 12;
                    List<CommitMessage> want = expected();
                    boolean ok = got.equals(want);
                    for (int i = 0; i < Math.min(got.size(), want.size()); i++) {
                        if (!got.get(i).equals(want.get(i))) {
                            System.out.println("message " + i + " differs from expected");
                        }
                    }
                    System.out.println(ok ? "equals expected: OK" : "equals expected: DIFF");
                    if (fileVersion == version) {
                        byte[] again = serializeList(ser, got);
                        boolean same = Arrays.equals(again, payload);
                        if (!same) {
                            int at = Arrays.mismatch(again, payload);
                            System.out.println(
                                    "re-serialized: " + again.length + " bytes vs "
                                            + payload.length + ", first difference at " + at);
                            for (int j = Math.max(0, at - 16); j < Math.min(payload.length, at + 48); j++) {
                                System.out.printf("%d: %02x %02x%n", j, payload[j], again[j]);
                            }
                        }
                        System.out.println(
                                same ? "re-serialized bytes: SAME" : "re-serialized bytes: DIFF");
                        ok &= same;
                    }
                    if (!ok) {
                        System.exit(1);
                    }
                    break;
                }
            default:
                System.err.println("unknown command " + args[0]);
                System.exit(2);
        }
    }

    static byte[] serializeList(CommitMessageSerializer ser, List<CommitMessage> list)
            throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ser.serializeList(list, new DataOutputViewStreamWrapper(out));
        return out.toByteArray();
    }

    /** Flink's SimpleVersionedSerialization layout: int version, int length, bytes. */
    static byte[] versioned(int version, byte[] bytes) {
        return ByteBuffer.allocate(8 + bytes.length)
                .putInt(version)
                .putInt(bytes.length)
                .put(bytes)
                .array();
    }

    static List<CommitMessage> expected() {
        return Arrays.asList(full(), minimal());
    }

    // ------------------------------------------------------------------------------------
    // Expected content (mirrored in Rust)
    // ------------------------------------------------------------------------------------

    static BinaryRow row(DataType[] types, Object... values) {
        return new InternalRowSerializer(types).toBinaryRow(GenericRow.of(values)).copy();
    }

    static BinaryRow partition() {
        return row(
                new DataType[] {DataTypes.STRING(), DataTypes.INT()},
                BinaryString.fromString("2024-01-01"),
                7);
    }

    static BinaryRow key(long id) {
        return row(new DataType[] {DataTypes.BIGINT().notNull()}, id);
    }

    static DataFileMeta fileFull() {
        SimpleStats keyStats =
                new SimpleStats(key(1), key(99), BinaryArray.fromLongArray(new Long[] {0L}));
        DataType[] valueTypes = {DataTypes.BIGINT(), DataTypes.STRING()};
        SimpleStats valueStats =
                new SimpleStats(
                        row(valueTypes, 1L, BinaryString.fromString("alice")),
                        row(valueTypes, 99L, BinaryString.fromString("a-longer-name-value")),
                        BinaryArray.fromLongArray(new Long[] {0L, null}));
        byte[] embedded = new byte[16];
        for (int i = 0; i < embedded.length; i++) {
            embedded[i] = (byte) i;
        }
        return DataFileMeta.create(
                "data-5a1b2c3d-0.parquet",
                4096,
                100,
                key(1),
                key(99),
                keyStats,
                valueStats,
                10,
                109,
                1,
                0,
                Collections.singletonList("data-5a1b2c3d-0.parquet.index"),
                Timestamp.fromEpochMillis(1_700_000_000_123L),
                3L,
                embedded,
                FileSource.APPEND,
                Arrays.asList("id", "name"),
                "s3://bucket/ext/data-5a1b2c3d-0.parquet",
                1000L,
                Arrays.asList("id", "name"));
    }

    static DataFileMeta fileMinimal() {
        return DataFileMeta.create(
                "data-min-1.orc",
                10,
                1,
                BinaryRow.EMPTY_ROW,
                BinaryRow.EMPTY_ROW,
                SimpleStats.EMPTY_STATS,
                SimpleStats.EMPTY_STATS,
                0,
                0,
                0,
                5,
                Collections.emptyList(),
                // Never null: Java reads a null _CREATION_TIME back as epoch 0.
                Timestamp.fromEpochMillis(1_699_999_999_000L),
                null,
                null,
                null,
                null,
                null,
                null,
                null);
    }

    static DataFileMeta fileCompact() {
        return DataFileMeta.create(
                "data-c-2.parquet",
                2048,
                50,
                key(5),
                key(60),
                new SimpleStats(key(5), key(60), BinaryArray.fromLongArray(new Long[] {0L})),
                SimpleStats.EMPTY_STATS,
                20,
                69,
                2,
                1,
                Collections.emptyList(),
                Timestamp.fromEpochMillis(1_700_000_001_000L),
                0L,
                null,
                FileSource.COMPACT,
                Collections.emptyList(),
                null,
                null,
                null);
    }

    static IndexFileMeta dvIndex() {
        LinkedHashMap<String, DeletionVectorMeta> ranges = new LinkedHashMap<>();
        ranges.put(
                "data-5a1b2c3d-0.parquet",
                new DeletionVectorMeta("data-5a1b2c3d-0.parquet", 1, 40, 3L));
        ranges.put("data-min-1.orc", new DeletionVectorMeta("data-min-1.orc", 41, 20, null));
        return new IndexFileMeta("DELETION_VECTORS", "index-dv-0", 200, 2, ranges, null);
    }

    static IndexFileMeta hashIndex() {
        return new IndexFileMeta(
                "HASH",
                "index-hash-0",
                64,
                16,
                (LinkedHashMap<String, DeletionVectorMeta>) null,
                "s3://bucket/ext/index-hash-0");
    }

    /** A GlobalIndexMeta with source meta when the classpath's class has it (2.0.0). */
    static GlobalIndexMeta globalMeta(
            long start, long end, int field, int[] extra, byte[] meta, byte[] source)
            throws Exception {
        for (Constructor<?> c : GlobalIndexMeta.class.getConstructors()) {
            if (c.getParameterCount() == 6) {
                return (GlobalIndexMeta) c.newInstance(start, end, field, extra, meta, source);
            }
        }
        return new GlobalIndexMeta(start, end, field, extra, meta);
    }

    /** Whether {@link #globalIndex} carries source meta (version 12 and later). */
    static boolean withSourceMeta = true;

    static IndexFileMeta globalIndex() {
        try {
            return new IndexFileMeta(
                    "BTREE",
                    "index-global-0",
                    512,
                    100,
                    null,
                    null,
                    globalMeta(
                            0,
                            99,
                            2,
                            new int[] {3, 4},
                            new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9},
                            withSourceMeta ? new byte[] {10, 11} : null));
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static IndexFileMeta globalIndexOld() {
        try {
            return new IndexFileMeta(
                    "BTREE",
                    "index-global-1",
                    256,
                    100,
                    null,
                    null,
                    globalMeta(100, 199, 2, null, null, null));
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static CommitMessage full() {
        return new CommitMessageImpl(
                partition(),
                3,
                4,
                new DataIncrement(
                        list(fileFull(), fileMinimal()),
                        list(fileMinimal()),
                        list(fileCompact()),
                        listIdx(dvIndex()),
                        listIdx(hashIndex())),
                new CompactIncrement(
                        list(fileFull()),
                        list(fileCompact()),
                        list(),
                        listIdx(globalIndex()),
                        listIdx(globalIndexOld())));
    }

    static CommitMessage minimal() {
        return new CommitMessageImpl(
                BinaryRow.EMPTY_ROW,
                0,
                null,
                new DataIncrement(list(fileMinimal()), list(), list()),
                new CompactIncrement(list(), list(), list()));
    }

    static List<DataFileMeta> list(DataFileMeta... files) {
        return new ArrayList<>(Arrays.asList(files));
    }

    static List<IndexFileMeta> listIdx(IndexFileMeta... files) {
        return new ArrayList<>(Arrays.asList(files));
    }
}
