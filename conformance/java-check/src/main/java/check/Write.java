package check;

import org.apache.paimon.Snapshot;
import org.apache.paimon.append.AppendCompactCoordinator;
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.append.dataevolution.DataEvolutionCompactCoordinator;
import org.apache.paimon.append.dataevolution.DataEvolutionCompactTask;
import org.apache.paimon.append.dataevolution.DataEvolutionCompactionCommitPreparation;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.BlobArrayPlaceholder;
import org.apache.paimon.data.BlobData;
import org.apache.paimon.data.BlobMapPlaceholder;
import org.apache.paimon.data.BlobPlaceholder;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.data.serializer.InternalRowSerializer;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.operation.BaseAppendFileStoreWrite;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.SpecialFields;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.source.EndOfScanException;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.TableRead;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.BlobType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.JsonSerdeUtil;

import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.io.File;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Java Paimon 2.0.0 writing to, updating and compacting a table, for the tests that check that
 * Java continues what we wrote and that we read (and commit) what Java wrote:
 *
 * <pre>
 * write TABLE_DIR ROWS.jsonl [--prepare-only OUT]
 *     one batch write of the rows (canonical JSON objects by field name; "_ROW_KIND":
 *     "+I"/"-U"/"+U"/"-D" optional), one commit
 * update TABLE_DIR ROWS.jsonl [--placeholders] [--prepare-only OUT]
 *     a data-evolution table's columns updated by "_ROW_ID" (as Spark's MERGE INTO): for every
 *     row range holding an updated row, one file of only the updated columns for all its rows
 *     (unchanged rows keep their current values; with --placeholders an unchanged BLOB,
 *     ARRAY&lt;BLOB&gt; or MAP&lt;K, BLOB&gt; value is written as Java's blob placeholder instead, as
 *     Spark's DataEvolutionTableDataWrite does), one commit
 * compact TABLE_DIR [--full] [--prepare-only OUT]
 *     what a compaction job does on the latest snapshot, one commit: data-evolution tables the
 *     tasks of DataEvolutionCompactCoordinator (blob files with blob-compaction.enabled, as
 *     Flink's compaction source) and their deletion-vector rewrite; unaware-bucket append
 *     tables the tasks of one AppendCompactCoordinator run (Spark's compact procedure); other
 *     tables TableWrite.compact of every (partition, bucket) (full with --full)
 * </pre>
 *
 * With {@code --prepare-only OUT} nothing is committed: the commit messages go to OUT as
 * {@code int32 BE version ‖ int32 BE length ‖ CommitMessageSerializer#serializeList} (see
 * {@link Messages}). Values: see {@link #value}.
 */
public final class Write {

    private Write() {}

    public static void main(String[] argv) {
        try {
            System.exit(run(argv));
        } catch (Throwable t) {
            if (System.getenv("JAVA_CHECK_TRACE") != null) {
                t.printStackTrace();
            }
            System.err.println("java-write: " + Main.describe(t));
            System.exit(1);
        }
    }

    /** Runs one command line; the exit code (2: bad command line). */
    static int run(String[] argv) throws Exception {
        List<String> pos = new ArrayList<>();
        boolean full = false;
        boolean placeholders = false;
        String prepareOnly = null;
        for (int i = 0; i < argv.length; i++) {
            switch (argv[i]) {
                case "--full":
                    full = true;
                    break;
                case "--placeholders":
                    placeholders = true;
                    break;
                case "--prepare-only":
                    if (++i >= argv.length) {
                        return usage("--prepare-only needs a file");
                    }
                    prepareOnly = argv[i];
                    break;
                default:
                    pos.add(argv[i]);
            }
        }
        String verb = pos.isEmpty() ? "" : pos.get(0);
        List<CommitMessage> messages;
        FileStoreTable table;
        if ("write".equals(verb) && pos.size() == 3) {
            table = open(pos.get(1));
            messages = write(table, lines(pos.get(2)));
        } else if ("update".equals(verb) && pos.size() == 3) {
            table = open(pos.get(1));
            messages = update(table, lines(pos.get(2)), placeholders);
        } else if ("compact".equals(verb) && pos.size() == 2) {
            // A compaction job compacts a write-only table as if it were not write-only (Flink's
            // CompactAction and Spark's compact procedure copy it with write-only=false).
            table = open(pos.get(1)).copy(Collections.singletonMap("write-only", "false"));
            messages = compact(table, full);
        } else {
            return usage("bad command line");
        }
        if (prepareOnly != null) {
            Messages.writeFile(messages, prepareOnly);
        } else {
            commit(table, messages);
        }
        return 0;
    }

    private static int usage(String why) {
        System.err.println(
                "java-write: "
                        + why
                        + "\nusage: write TABLE_DIR ROWS.jsonl | update TABLE_DIR ROWS.jsonl"
                        + " [--placeholders] | compact TABLE_DIR [--full]; each [--prepare-only OUT]");
        return 2;
    }

    static FileStoreTable open(String dir) {
        Map<String, String> open = new LinkedHashMap<>();
        open.put("path", new File(dir).getAbsolutePath());
        return FileStoreTableFactory.create(LocalFileIO.create(), Options.fromMap(open));
    }

    /** The JSON objects of a JSON-lines file (blank lines skipped). */
    static List<JsonNode> lines(String file) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String line : Files.readAllLines(new File(file).toPath(), StandardCharsets.UTF_8)) {
            if (!line.trim().isEmpty()) {
                out.add(JsonSerdeUtil.OBJECT_MAPPER_INSTANCE.readTree(line));
            }
        }
        return out;
    }

    static void commit(FileStoreTable table, List<CommitMessage> messages) throws Exception {
        try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
            commit.commit(messages);
        }
    }

    /** One batch write of {@code rows}; its commit messages. */
    static List<CommitMessage> write(FileStoreTable table, List<JsonNode> rows) throws Exception {
        RowType type = table.rowType();
        try (BatchTableWrite write = table.newBatchWriteBuilder().newWrite()) {
            write.withIOManager(ioManager());
            for (JsonNode node : rows) {
                GenericRow row = new GenericRow(type.getFieldCount());
                JsonNode kind = node.get("_ROW_KIND");
                if (kind != null && !kind.isNull()) {
                    row.setRowKind(RowKind.fromShortString(kind.asText()));
                }
                for (int i = 0; i < type.getFieldCount(); i++) {
                    DataField f = type.getFields().get(i);
                    row.setField(i, value(node.get(f.name()), f.type(), f.name()));
                }
                write.write(row);
            }
            return write.prepareCommit();
        }
    }

    /** The compaction a compaction job runs on the latest snapshot; its commit messages. */
    static List<CommitMessage> compact(FileStoreTable table, boolean full) throws Exception {
        if (table.coreOptions().rowTrackingEnabled() && table.coreOptions().dataEvolutionEnabled()) {
            return compactDataEvolution(table);
        }
        if (table.bucketMode() == BucketMode.BUCKET_UNAWARE) {
            return compactUnaware(table);
        }
        Set<String> seen = new LinkedHashSet<>();
        try (BatchTableWrite write = table.newBatchWriteBuilder().newWrite()) {
            write.withIOManager(ioManager());
            for (ManifestEntry e : table.store().newScan().plan().files()) {
                BinaryRow partition = e.partition();
                String id = partition.hashCode() + "/" + e.bucket() + "/" + partition;
                if (seen.add(id)) {
                    write.compact(partition, e.bucket(), full);
                }
            }
            return write.prepareCommit();
        }
    }

    /** The tasks of one batch AppendCompactCoordinator run (Spark's compact procedure). */
    static List<AppendCompactTask> appendTasks(FileStoreTable table) {
        return new AppendCompactCoordinator(table, false).run();
    }

    /**
     * An unaware-bucket append table compacted as Spark's compact procedure does it: each task's
     * AppendCompactTask.doCompact on the table's append write (rewriting the deletion vectors of
     * compacted files). Java has no full compaction for these tables.
     */
    static List<CommitMessage> compactUnaware(FileStoreTable table) throws Exception {
        List<CommitMessage> messages = new ArrayList<>();
        BaseAppendFileStoreWrite write =
                (BaseAppendFileStoreWrite) table.store().newWrite(UUID.randomUUID().toString());
        try {
            for (AppendCompactTask task : appendTasks(table)) {
                messages.add(task.doCompact(table, write));
            }
        } finally {
            write.close();
        }
        return messages;
    }

    /**
     * The tasks of DataEvolutionCompactCoordinator on {@code snapshot}, every batch of its scan
     * (blob files compacted with blob-compaction.enabled, as Flink's compaction source does).
     */
    static List<DataEvolutionCompactTask> dataEvolutionTasks(
            FileStoreTable table, Snapshot snapshot) {
        DataEvolutionCompactCoordinator coordinator =
                new DataEvolutionCompactCoordinator(
                        table, null, table.coreOptions().blobCompactionEnabled(), false, snapshot);
        List<DataEvolutionCompactTask> tasks = new ArrayList<>();
        try {
            while (true) {
                tasks.addAll(coordinator.plan());
            }
        } catch (EndOfScanException end) {
            return tasks;
        }
    }

    /**
     * A data-evolution table compacted as Spark's compact procedure does it: every task's
     * doCompact, then the deletion vectors and global indexes of the compacted files
     * (DataEvolutionCompactionCommitPreparation).
     */
    static List<CommitMessage> compactDataEvolution(FileStoreTable table) throws Exception {
        Snapshot snapshot = table.snapshotManager().latestSnapshot();
        if (snapshot == null) {
            return new ArrayList<>();
        }
        String user = UUID.randomUUID().toString();
        List<CommitMessage> messages = new ArrayList<>();
        for (DataEvolutionCompactTask task : dataEvolutionTasks(table, snapshot)) {
            messages.add(task.doCompact(table, user));
        }
        if (!messages.isEmpty()) {
            messages.addAll(
                    new DataEvolutionCompactionCommitPreparation(table, snapshot)
                            .prepare(messages));
        }
        return messages;
    }

    /**
     * Updates of a data-evolution table by {@code _ROW_ID} (as Spark's MERGE INTO writes them):
     * for each row range (first_row_id, row count) holding an updated row, the updated columns
     * of all its rows as files of only those columns (BatchTableWrite.withWriteType), given the
     * range's first_row_id. Rows not updated keep their current values, except that with
     * {@code placeholders} a BLOB-file column of such a row is Java's blob placeholder.
     */
    static List<CommitMessage> update(FileStoreTable table, List<JsonNode> rows, boolean placeholders)
            throws Exception {
        if (!table.coreOptions().rowTrackingEnabled() || !table.coreOptions().dataEvolutionEnabled()) {
            throw new Run.Unsupported(
                    "update", "only data-evolution tables (row-tracking and data-evolution enabled) are updated by _ROW_ID");
        }
        if (!table.partitionKeys().isEmpty()) {
            throw new Run.Unsupported("update", "partitioned data-evolution table");
        }
        RowType type = table.rowType();
        // The updated columns (table order) and the updates by row id.
        Set<String> columns = new LinkedHashSet<>();
        TreeMap<Long, JsonNode> updates = new TreeMap<>();
        for (JsonNode r : rows) {
            JsonNode id = r.get("_ROW_ID");
            if (id == null || !id.canConvertToLong()) {
                throw new IllegalArgumentException("update row without _ROW_ID: " + r);
            }
            for (Iterator<String> it = r.fieldNames(); it.hasNext(); ) {
                String f = it.next();
                if (!"_ROW_ID".equals(f)) {
                    if (!type.containsField(f)) {
                        throw new IllegalArgumentException("update: no column " + f);
                    }
                    columns.add(f);
                }
            }
            updates.put(id.asLong(), r);
        }
        List<CommitMessage> messages = new ArrayList<>();
        if (updates.isEmpty()) {
            return messages;
        }
        List<DataField> writeFields = new ArrayList<>();
        for (DataField f : type.getFields()) {
            if (columns.contains(f.name())) {
                writeFields.add(f);
            }
        }
        RowType writeType = new RowType(writeFields);
        // Current values of those columns by row id (not needed for placeholder columns).
        List<DataField> readFields = new ArrayList<>();
        for (DataField f : writeFields) {
            if (!(placeholders && BlobType.isBlobFileField(f.type()))) {
                readFields.add(f);
            }
        }
        Map<Long, InternalRow> current = currentValues(table, readFields);
        // Row ranges (normal files) of the latest snapshot.
        TreeMap<Long, Long> ranges = new TreeMap<>();
        for (ManifestEntry e : table.store().newScan().plan().files()) {
            if (e.file().fileName().endsWith(".blob")) {
                continue; // a range is a normal file's; blob files roll inside it
            }
            Long first = e.file().firstRowId();
            if (first == null) {
                throw new IllegalStateException("file " + e.file().fileName() + " has no first_row_id");
            }
            ranges.merge(first, e.file().rowCount(), Math::max);
        }
        for (Long id : updates.keySet()) {
            Map.Entry<Long, Long> r = ranges.floorEntry(id);
            if (r == null || id >= r.getKey() + r.getValue()) {
                throw new IllegalArgumentException("_ROW_ID " + id + " is not in the table");
            }
        }
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        for (Map.Entry<Long, Long> r : ranges.entrySet()) {
            long start = r.getKey();
            long count = r.getValue();
            if (updates.subMap(start, start + count).isEmpty()) {
                continue;
            }
            try (BatchTableWrite write = builder.newWrite()) {
                write.withWriteType(writeType);
                for (long id = start; id < start + count; id++) {
                    InternalRow old = current.get(id);
                    if (old == null && !readFields.isEmpty()) {
                        throw new IllegalStateException("row " + id + " was not read");
                    }
                    GenericRow row = new GenericRow(writeFields.size());
                    JsonNode upd = updates.get(id);
                    int readPos = 0;
                    for (int i = 0; i < writeFields.size(); i++) {
                        DataField f = writeFields.get(i);
                        boolean placeholder = placeholders && BlobType.isBlobFileField(f.type());
                        if (upd != null && upd.has(f.name())) {
                            row.setField(i, value(upd.get(f.name()), f.type(), f.name()));
                        } else if (placeholder) {
                            row.setField(i, placeholder(f.type()));
                        } else {
                            row.setField(
                                    i,
                                    InternalRow.createFieldGetter(f.type(), readPos)
                                            .getFieldOrNull(old));
                        }
                        if (!placeholder) {
                            readPos++;
                        }
                    }
                    write.write(row);
                }
                for (CommitMessage m : write.prepareCommit()) {
                    messages.add(assignFirstRowIds((CommitMessageImpl) m, start, count));
                }
            }
        }
        return messages;
    }

    /** The values of {@code fields} of every row, by _ROW_ID (copied). */
    private static Map<Long, InternalRow> currentValues(FileStoreTable table, List<DataField> fields)
            throws Exception {
        Map<Long, InternalRow> current = new HashMap<>();
        if (fields.isEmpty()) {
            return current;
        }
        RowType tracking = SpecialFields.rowTypeWithRowTracking(table.rowType());
        List<DataField> rf = new ArrayList<>(fields);
        rf.add(tracking.getField(SpecialFields.ROW_ID.name()));
        InternalRowSerializer ser = new InternalRowSerializer(new RowType(fields));
        ReadBuilder rb = table.newReadBuilder().withReadType(new RowType(rf));
        TableRead read = rb.newRead();
        int idPos = fields.size();
        for (Split split : rb.newScan().plan().splits()) {
            try (RecordReader<InternalRow> reader = read.createReader(split)) {
                reader.forEachRemaining(
                        row -> {
                            GenericRow g = new GenericRow(fields.size());
                            for (int i = 0; i < fields.size(); i++) {
                                g.setField(
                                        i,
                                        InternalRow.createFieldGetter(fields.get(i).type(), i)
                                                .getFieldOrNull(row));
                            }
                            current.put(row.getLong(idPos), ser.copy(g));
                        });
            }
        }
        return current;
    }

    /** The new files of {@code m} given consecutive first row ids from {@code start}. */
    private static CommitMessage assignFirstRowIds(CommitMessageImpl m, long start, long count) {
        List<DataFileMeta> files = m.newFilesIncrement().newFiles();
        // Normal files and each column's blob files cover the range separately.
        Map<String, Long> next = new HashMap<>();
        List<DataFileMeta> assigned = new ArrayList<>();
        for (DataFileMeta f : files) {
            String group = f.fileName().endsWith(".blob") ? "blob:" + f.writeCols() : "data";
            long at = next.getOrDefault(group, start);
            assigned.add(f.assignFirstRowId(at));
            next.put(group, at + f.rowCount());
        }
        for (Map.Entry<String, Long> e : next.entrySet()) {
            if (e.getValue() != start + count) {
                throw new IllegalStateException(
                        "wrote " + (e.getValue() - start) + " rows of " + e.getKey()
                                + " for the range of " + count + " at " + start);
            }
        }
        return new CommitMessageImpl(
                m.partition(),
                m.bucket(),
                m.totalBuckets(),
                new DataIncrement(
                        assigned,
                        m.newFilesIncrement().deletedFiles(),
                        m.newFilesIncrement().changelogFiles(),
                        m.newFilesIncrement().newIndexFiles(),
                        m.newFilesIncrement().deletedIndexFiles()),
                m.compactIncrement());
    }

    /** Lookup tables (first-row, lookup changelog, deletion vectors) spill to a temp directory. */
    static IOManager ioManager() {
        return IOManager.create(System.getProperty("java.io.tmpdir"));
    }

    /** Java's blob placeholder for a BLOB, ARRAY&lt;BLOB&gt; or MAP&lt;K, BLOB&gt; column. */
    static Object placeholder(DataType type) {
        switch (type.getTypeRoot()) {
            case ARRAY:
                return BlobArrayPlaceholder.INSTANCE;
            case MAP:
                return BlobMapPlaceholder.INSTANCE;
            default:
                return BlobPlaceholder.INSTANCE;
        }
    }

    /**
     * The Java value of a JSON value of {@code type}: BOOLEAN, TINYINT..BIGINT, FLOAT, DOUBLE,
     * DECIMAL (a string), CHAR/VARCHAR/STRING, DATE ("YYYY-MM-DD"), TIMESTAMP(p) (ISO local
     * date-time), BINARY/VARBINARY/BYTES (lowercase hex), BLOB (hex of the bytes, or {"placeholder":
     * true} for the blob placeholder), ARRAY (a list), MAP (a list of [key, value] pairs);
     * others are refused.
     */
    static Object value(JsonNode v, DataType type, String name) {
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isObject() && v.path("placeholder").asBoolean(false)) {
            if (!BlobType.isBlobFileField(type)) {
                throw new IllegalArgumentException(
                        "field '" + name + "': a placeholder is only for BLOB columns");
            }
            return placeholder(type);
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return v.asBoolean();
            case TINYINT:
                return (byte) v.asInt();
            case SMALLINT:
                return (short) v.asInt();
            case INTEGER:
                return v.asInt();
            case BIGINT:
                return v.asLong();
            case FLOAT:
                return (float) v.asDouble();
            case DOUBLE:
                return v.asDouble();
            case DECIMAL:
                DecimalType d = (DecimalType) type;
                return Decimal.fromBigDecimal(
                        new BigDecimal(v.asText()), d.getPrecision(), d.getScale());
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(v.asText());
            case DATE:
                return (int) LocalDate.parse(v.asText()).toEpochDay();
            case TIMESTAMP_WITHOUT_TIME_ZONE:
                return Timestamp.fromLocalDateTime(LocalDateTime.parse(v.asText()));
            case BINARY:
            case VARBINARY:
                return hex(v.asText());
            case BLOB:
                return new BlobData(hex(v.asText()));
            case ARRAY:
                {
                    DataType element = ((ArrayType) type).getElementType();
                    List<Object> values = new ArrayList<>();
                    for (JsonNode e : v) {
                        values.add(value(e, element, name + "[]"));
                    }
                    return new GenericArray(values.toArray());
                }
            case MAP:
                {
                    MapType m = (MapType) type;
                    Map<Object, Object> values = new LinkedHashMap<>();
                    for (JsonNode pair : v) {
                        values.put(
                                value(pair.get(0), m.getKeyType(), name + ".key"),
                                value(pair.get(1), m.getValueType(), name + ".value"));
                    }
                    return new GenericMap(values);
                }
            default:
                throw new IllegalArgumentException(
                        "field '" + name + "': type " + type + " is not supported by java-write");
        }
    }

    private static byte[] hex(String s) {
        if (s.length() % 2 != 0) {
            throw new IllegalArgumentException("odd-length hex string");
        }
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }
}
