package check;

import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.serializer.InternalRowSerializer;
import org.apache.paimon.data.serializer.InternalSerializers;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.index.IndexFileMetaSerializer;
import org.apache.paimon.index.IndexFileMetaV1Deserializer;
import org.apache.paimon.index.IndexFileMetaV2Deserializer;
import org.apache.paimon.index.IndexFileMetaV3Deserializer;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataFileMetaSerializer;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.io.DataOutputViewStreamWrapper;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.CommitMessageSerializer;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.SerializationUtils;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Bytes of the older CommitMessageSerializer versions 1-10 that release-2.0.0 still reads.
 *
 * <p>No Java release on the class path writes them, so {@code gen-legacy DIR} lays them out
 * from Java's own row serializers and the legacy schemas ({@code DataFileMeta08Serializer},
 * {@code DataFileMeta09Serializer},
 * {@code DataFileMeta10LegacySerializer}, {@code DataFileMeta12LegacySerializer},
 * {@code IndexFileMetaV1/V2/V3Deserializer}), framed as {@code CommitMessageSerializer}
 * reads them, and accepts a file only if Java's {@code deserializeList(version, ...)} gives
 * back exactly the expected messages. Writes DIR/legacy.vN.bin (the list form, no header).
 * The expected content is mirrored in core/src/commit/serializer/tests.rs.
 */
public class LegacyCheck {

    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[1]);
        Files.createDirectories(dir);
        CommitMessageSerializer ser = new CommitMessageSerializer();
        for (int v = 1; v <= 10; v++) {
            List<CommitMessage> expected = expected(v);
            byte[] bytes = write(v, expected);
            List<CommitMessage> got =
                    ser.deserializeList(
                            v, new org.apache.paimon.io.DataInputDeserializer(bytes));
            if (!got.equals(expected)) {
                System.out.println("version " + v + ": Java reads back " + got);
                System.exit(1);
            }
            Files.write(dir.resolve("legacy.v" + v + ".bin"), bytes);
            System.out.println("version " + v + ": " + bytes.length + " bytes, Java reads OK");
        }
    }

    static int dataArity(int v) {
        return v <= 2 ? 15 : v == 3 ? 16 : v <= 5 ? 17 : v <= 7 ? 18 : 20;
    }

    static int indexArity(int v) {
        return v <= 8 ? 5 : 6;
    }

    static DataFileMeta file(int v) {
        DataFileMeta f = SerializerCheck.fileFull();
        return DataFileMeta.create(
                f.fileName(),
                f.fileSize(),
                f.rowCount(),
                f.minKey(),
                f.maxKey(),
                f.keyStats(),
                f.valueStats(),
                f.minSequenceNumber(),
                f.maxSequenceNumber(),
                f.schemaId(),
                f.level(),
                f.extraFiles(),
                f.creationTime(),
                f.deleteRowCount().orElse(null),
                f.embeddedIndex(),
                v >= 3 ? f.fileSource().orElse(null) : null,
                v >= 4 ? f.valueStatsCols() : null,
                v >= 6 ? f.externalPath().orElse(null) : null,
                v >= 8 ? f.firstRowId() : null,
                v >= 9 ? f.writeCols() : null);
    }

    static IndexFileMeta hash(int v) {
        return new IndexFileMeta(
                "HASH",
                "index-hash-0",
                64,
                16,
                (LinkedHashMap<String, org.apache.paimon.index.DeletionVectorMeta>) null,
                v >= 9 ? "s3://bucket/ext/index-hash-0" : null);
    }

    /** A deletion-vector index whose ranges have no cardinality (versions 1-4 carry none). */
    static IndexFileMeta dvNoCardinality() {
        LinkedHashMap<String, org.apache.paimon.index.DeletionVectorMeta> ranges =
                new LinkedHashMap<>();
        ranges.put(
                "data-a.parquet",
                new org.apache.paimon.index.DeletionVectorMeta("data-a.parquet", 1, 22, null));
        ranges.put(
                "data-b.parquet",
                new org.apache.paimon.index.DeletionVectorMeta("data-b.parquet", 23, 9, null));
        return new IndexFileMeta("DELETION_VECTORS", "index-dv-1", 32, 2, ranges, null);
    }

    static List<CommitMessage> expected(int v) {
        if (v <= 2) {
            // Versions 1-2 have no deleted index files: one new-index list per message, in
            // the data increment unless the compaction has files.
            return Arrays.asList(
                    new CommitMessageImpl(
                            SerializerCheck.partition(),
                            1,
                            null,
                            new DataIncrement(
                                    SerializerCheck.list(file(v)),
                                    SerializerCheck.list(file(v)),
                                    SerializerCheck.list(file(v)),
                                    SerializerCheck.listIdx(dvNoCardinality(), hash(v)),
                                    SerializerCheck.listIdx()),
                            new CompactIncrement(
                                    SerializerCheck.list(),
                                    SerializerCheck.list(),
                                    SerializerCheck.list())),
                    new CommitMessageImpl(
                            BinaryRow.EMPTY_ROW,
                            0,
                            null,
                            new DataIncrement(
                                    SerializerCheck.list(),
                                    SerializerCheck.list(),
                                    SerializerCheck.list()),
                            new CompactIncrement(
                                    SerializerCheck.list(file(v)),
                                    SerializerCheck.list(file(v)),
                                    SerializerCheck.list(file(v)),
                                    SerializerCheck.listIdx(hash(v)),
                                    SerializerCheck.listIdx())));
        }
        // Version 3-4 deletion-vector ranges have no cardinality field (Java reads garbage
        // for it), so they carry no DV index here.
        IndexFileMeta dv = v >= 5 ? SerializerCheck.dvIndex() : hash(v);
        CommitMessage data =
                new CommitMessageImpl(
                        SerializerCheck.partition(),
                        1,
                        v >= 7 ? 4 : null,
                        new DataIncrement(
                                SerializerCheck.list(file(v)),
                                SerializerCheck.list(),
                                SerializerCheck.list(),
                                SerializerCheck.listIdx(dv),
                                SerializerCheck.listIdx(hash(v))),
                        new CompactIncrement(
                                SerializerCheck.list(),
                                SerializerCheck.list(),
                                SerializerCheck.list()));
        CommitMessage compact =
                new CommitMessageImpl(
                        BinaryRow.EMPTY_ROW,
                        0,
                        null,
                        new DataIncrement(
                                SerializerCheck.list(),
                                SerializerCheck.list(),
                                SerializerCheck.list()),
                        new CompactIncrement(
                                SerializerCheck.list(file(v)),
                                SerializerCheck.list(file(v)),
                                SerializerCheck.list(),
                                SerializerCheck.listIdx(hash(v)),
                                SerializerCheck.listIdx()));
        return Arrays.asList(data, compact);
    }

    static InternalRow project(InternalRow row, int arity) {
        GenericRow g = (GenericRow) row;
        GenericRow out = new GenericRow(arity);
        for (int i = 0; i < arity; i++) {
            out.setField(i, g.getField(i));
        }
        return out;
    }

    static void dataList(
            List<DataFileMeta> files, int v, DataOutputViewStreamWrapper out) throws Exception {
        int n = dataArity(v);
        RowType type = new RowType(DataFileMeta.SCHEMA.getFields().subList(0, n));
        InternalRowSerializer rows = InternalSerializers.create(type);
        DataFileMetaSerializer current = new DataFileMetaSerializer();
        out.writeInt(files.size());
        for (DataFileMeta f : files) {
            GenericRow row = (GenericRow) project(current.toRow(f), n);
            if (v == 8) {
                // Version 8 readers ignore _WRITE_COLS: write some to check that.
                row.setField(19, ((GenericRow) current.toRow(SerializerCheck.fileFull())).getField(19));
            }
            rows.serialize(row, out);
        }
    }

    static void indexList(
            List<IndexFileMeta> files, int v, DataOutputViewStreamWrapper out) throws Exception {
        int n = indexArity(v);
        RowType type =
                v <= 4
                        ? IndexFileMetaV1Deserializer.SCHEMA
                        : v <= 8
                                ? IndexFileMetaV2Deserializer.SCHEMA
                                : IndexFileMetaV3Deserializer.SCHEMA;
        InternalRowSerializer rows = InternalSerializers.create(type);
        IndexFileMetaSerializer current = new IndexFileMetaSerializer();
        out.writeInt(files.size());
        for (IndexFileMeta f : files) {
            rows.serialize(project(current.toRow(f), n), out);
        }
    }

    static byte[] write(int v, List<CommitMessage> messages) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputViewStreamWrapper out = new DataOutputViewStreamWrapper(bytes);
        out.writeInt(messages.size());
        for (CommitMessage m : messages) {
            CommitMessageImpl c = (CommitMessageImpl) m;
            SerializationUtils.serializeBinaryRow(c.partition(), out);
            out.writeInt(c.bucket());
            if (v >= 7) {
                out.writeBoolean(c.totalBuckets() != null);
                if (c.totalBuckets() != null) {
                    out.writeInt(c.totalBuckets());
                }
            }
            DataIncrement d = c.newFilesIncrement();
            CompactIncrement ci = c.compactIncrement();
            boolean toCompact = !ci.isEmpty();
            if (v >= 10) {
                dataList(d.newFiles(), v, out);
                dataList(d.deletedFiles(), v, out);
                dataList(d.changelogFiles(), v, out);
                indexList(d.newIndexFiles(), v, out);
                indexList(d.deletedIndexFiles(), v, out);
                dataList(ci.compactBefore(), v, out);
                dataList(ci.compactAfter(), v, out);
                dataList(ci.changelogFiles(), v, out);
                indexList(ci.newIndexFiles(), v, out);
                indexList(ci.deletedIndexFiles(), v, out);
            } else {
                dataList(d.newFiles(), v, out);
                dataList(d.deletedFiles(), v, out);
                dataList(d.changelogFiles(), v, out);
                dataList(ci.compactBefore(), v, out);
                dataList(ci.compactAfter(), v, out);
                dataList(ci.changelogFiles(), v, out);
                indexList(toCompact ? ci.newIndexFiles() : d.newIndexFiles(), v, out);
                if (v > 2) {
                    indexList(
                            toCompact ? ci.deletedIndexFiles() : d.deletedIndexFiles(), v, out);
                }
            }
        }
        return bytes.toByteArray();
    }
}
