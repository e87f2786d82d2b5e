package check;

import org.apache.paimon.Snapshot;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.serializer.InternalRowSerializer;
import org.apache.paimon.deletionvectors.BitmapDeletionVector;
import org.apache.paimon.deletionvectors.DeletionVector;
import org.apache.paimon.deletionvectors.append.BaseAppendDeleteFileMaintainer;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.index.IndexFileHandler;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.FileKind;
import org.apache.paimon.manifest.IndexManifestEntry;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.schema.SchemaManager;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.SpecialFields;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.KeyAndBucketExtractor;
import org.apache.paimon.table.sink.TableWriteImpl;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.TableRead;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.JsonSerdeUtil;

import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.io.File;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code run SCENARIO.json WAREHOUSE}: Java Paimon 2.0.0 running a scenario of
 * conformance/scenarios (create, write, delete, update, alter, compact, tag, rollback,
 * checkpoint), as {@code paimon-kernel run} does, and writing {@code WAREHOUSE/<table>.expected.json}
 * (generator.tool "java-check run").
 *
 * <p>Exit 0: every checkpoint read its rows; 1: an error or a checkpoint that differs (both row
 * lists on stderr); 2: bad command line; 3: a step Java 2.0.0's core API cannot run
 * ("unsupported scenario step OP: why").
 */
public final class Run {

    private Run() {}

    /** A step the core API of Java Paimon 2.0.0 cannot run. */
    static final class Unsupported extends RuntimeException {
        Unsupported(String op, String why) {
            super("unsupported scenario step " + op + ": " + why);
        }
    }

    /** What a checkpoint read. */
    static final class Checkpoint {
        String name;
        Long snapshotId;
        List<String> rows;
    }

    public static void main(String[] argv) {
        if (argv.length != 2) {
            System.err.println("usage: run SCENARIO.json WAREHOUSE");
            System.exit(2);
        }
        try {
            run(argv[0], argv[1]);
        } catch (Unsupported u) {
            System.err.println(u.getMessage());
            System.exit(3);
        } catch (Throwable t) {
            if (System.getenv("JAVA_CHECK_TRACE") != null) {
                t.printStackTrace();
            }
            System.err.println("run: " + Main.describe(t));
            System.exit(1);
        }
        System.exit(0);
    }

    static void run(String scenarioFile, String warehouseDir) throws Exception {
        JsonNode scenario =
                JsonSerdeUtil.OBJECT_MAPPER_INSTANCE.readTree(
                        new String(
                                Files.readAllBytes(new File(scenarioFile).toPath()),
                                StandardCharsets.UTF_8));
        JsonNode version = scenario.get("format_version");
        if (version == null || !version.canConvertToLong() || version.asLong() != 1) {
            throw new IllegalArgumentException(
                    "scenario "
                            + scenarioFile
                            + ": format_version "
                            + (version == null ? "missing" : version.toString())
                            + " is not supported (this build runs 1)");
        }
        String name =
                scenario.hasNonNull("name")
                        ? scenario.get("name").asText()
                        : new File(scenarioFile).getName().replaceFirst("\\.json$", "");
        JsonNode steps = scenario.get("steps");
        if (steps == null || !steps.isArray()) {
            throw new IllegalArgumentException("scenario " + scenarioFile + ": 'steps' must be a list");
        }
        File warehouse = new File(warehouseDir).getAbsoluteFile();
        warehouse.mkdirs();
        Map<String, List<Checkpoint>> checkpoints = new TreeMap<>();
        int n = 0;
        for (JsonNode step : steps) {
            n++;
            String op = text(step, "op");
            if (op == null) {
                throw new IllegalArgumentException("step " + n + ": 'op' must be a string");
            }
            String ident = text(step, "table");
            if (ident == null) {
                throw new IllegalArgumentException(
                        "step " + n + " (" + op + "): 'table' must be a string 'db.table'");
            }
            String location = tableDir(warehouse, ident);
            try {
                if ("checkpoint".equals(op)) {
                    Checkpoint cp = checkpoint(step, location, n);
                    System.out.println(
                            "step " + n + ": checkpoint " + cp.name + " of " + ident + ": "
                                    + cp.rows.size() + " rows at snapshot "
                                    + (cp.snapshotId == null ? "none" : cp.snapshotId));
                    checkpoints.computeIfAbsent(ident, k -> new ArrayList<>()).add(cp);
                    continue;
                }
                System.out.println("step " + n + ": " + op + " " + ident);
                step(step, op, location);
            } catch (Unsupported u) {
                throw u;
            } catch (Exception e) {
                throw new RuntimeException("step " + n + " (" + op + " " + ident + ")", e);
            }
        }
        for (Map.Entry<String, List<Checkpoint>> e : checkpoints.entrySet()) {
            String ident = e.getKey();
            File file = new File(warehouse, ident.substring(ident.indexOf('.') + 1) + ".expected.json");
            Files.write(
                    file.toPath(),
                    (Pretty.pretty(expectedJson(name, ident, e.getValue())) + "\n")
                            .getBytes(StandardCharsets.UTF_8));
            System.out.println("wrote " + file);
        }
    }

    private static String text(JsonNode step, String key) {
        JsonNode v = step.get(key);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException("'" + key + "' must be a string");
        }
        return v.asText();
    }

    private static boolean bool(JsonNode step, String key) {
        JsonNode v = step.get(key);
        if (v == null || v.isNull()) {
            return false;
        }
        if (!v.isBoolean()) {
            throw new IllegalArgumentException("'" + key + "' must be true or false");
        }
        return v.asBoolean();
    }

    /** {@code db.t} → {@code WAREHOUSE/db.db/t}. */
    static String tableDir(File warehouse, String ident) {
        int dot = ident.indexOf('.');
        if (dot <= 0 || dot == ident.length() - 1 || ident.indexOf('.', dot + 1) >= 0) {
            throw new IllegalArgumentException("table '" + ident + "' is not 'db.table'");
        }
        return new File(new File(warehouse, ident.substring(0, dot) + ".db"), ident.substring(dot + 1))
                .getPath();
    }

    static FileStoreTable open(String dir) {
        Map<String, String> open = new LinkedHashMap<>();
        open.put("path", new File(dir).getAbsolutePath());
        return FileStoreTableFactory.create(LocalFileIO.create(), Options.fromMap(open));
    }

    private static IOManager ioManager() {
        return IOManager.create(System.getProperty("java.io.tmpdir"));
    }

    // ------------------------------------------------------------------ steps

    static void step(JsonNode step, String op, String location) throws Exception {
        switch (op) {
            case "create":
                create(step, location);
                break;
            case "write":
                write(step, location);
                break;
            case "delete":
                delete(step, location);
                break;
            case "update":
                update(step, location);
                break;
            case "alter":
                alter(step, location);
                break;
            case "compact":
                compact(step, location);
                break;
            case "tag":
                {
                    String name = text(step, "name");
                    if (name == null) {
                        throw new IllegalArgumentException("'name' is missing");
                    }
                    FileStoreTable table = open(location);
                    JsonNode s = step.get("snapshot");
                    if (s != null && s.canConvertToLong()) {
                        table.createTag(name, s.asLong());
                    } else {
                        table.createTag(name);
                    }
                    break;
                }
            case "rollback":
                {
                    JsonNode s = step.get("snapshot");
                    String tag = text(step, "tag");
                    boolean hasSnapshot = s != null && s.canConvertToLong();
                    if (hasSnapshot == (tag != null)) {
                        throw new IllegalArgumentException(
                                "rollback needs exactly one of 'snapshot' and 'tag'");
                    }
                    FileStoreTable table = open(location);
                    if (hasSnapshot) {
                        table.rollbackTo(s.asLong());
                    } else {
                        table.rollbackTo(tag);
                    }
                    break;
                }
            default:
                throw new Unsupported(op, "no such step in format version 1");
        }
    }

    static void create(JsonNode step, String location) throws Exception {
        JsonNode schema = step.get("schema");
        if (schema == null || !schema.isObject()) {
            throw new IllegalArgumentException("'schema' is missing");
        }
        Schema.Builder b = Schema.newBuilder();
        for (JsonNode f : schema.get("fields")) {
            DataType type = DataTypeJsonParser.parseDataType(f.get("type"));
            String description = f.hasNonNull("description") ? f.get("description").asText() : null;
            b.column(f.get("name").asText(), type, description);
        }
        b.partitionKeys(strings(schema.get("partitionKeys")));
        b.primaryKey(strings(schema.get("primaryKeys")));
        JsonNode options = schema.get("options");
        if (options != null) {
            for (Iterator<Map.Entry<String, JsonNode>> it = options.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                b.option(e.getKey(), e.getValue().asText());
            }
        }
        if (schema.hasNonNull("comment")) {
            b.comment(schema.get("comment").asText());
        }
        Path path = new Path(new File(location).getAbsolutePath());
        new SchemaManager(LocalFileIO.create(), path).createTable(b.build());
    }

    private static List<String> strings(JsonNode list) {
        List<String> out = new ArrayList<>();
        if (list != null) {
            for (JsonNode v : list) {
                out.add(v.asText());
            }
        }
        return out;
    }

    /** The rows of a write or update step as rows of {@code type} (absent fields are null). */
    static List<GenericRow> rows(JsonNode step, RowType type) {
        JsonNode rows = step.get("rows");
        if (rows == null || !rows.isArray()) {
            throw new IllegalArgumentException("'rows' must be a list of objects");
        }
        List<GenericRow> out = new ArrayList<>();
        for (JsonNode node : rows) {
            GenericRow row = new GenericRow(type.getFieldCount());
            JsonNode kind = node.get("_ROW_KIND");
            if (kind != null && !kind.isNull()) {
                row.setRowKind(RowKind.fromShortString(kind.asText()));
            }
            for (int i = 0; i < type.getFieldCount(); i++) {
                DataField f = type.getFields().get(i);
                row.setField(i, Write.value(node.get(f.name()), f.type(), f.name()));
            }
            out.add(row);
        }
        return out;
    }

    static Map<String, String> partitionSpec(String spec) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String part : spec.split(",")) {
            if (part.trim().isEmpty()) {
                continue;
            }
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("partition '" + part + "' is not k=v");
            }
            out.put(part.substring(0, eq).trim(), part.substring(eq + 1));
        }
        return out;
    }

    static void write(JsonNode step, String location) throws Exception {
        FileStoreTable table = open(location);
        boolean overwrite = bool(step, "overwrite");
        String partition = text(step, "partition");
        if (partition != null && !overwrite) {
            throw new IllegalArgumentException("'partition' needs \"overwrite\": true");
        }
        if (text(step, "commit_user") != null) {
            throw new Unsupported(
                    "write", "'commit_user': Java's BatchWriteBuilder picks its own commit user");
        }
        List<GenericRow> rows = rows(step, table.rowType());
        BucketMode mode = table.bucketMode();
        if (mode == BucketMode.POSTPONE_MODE) {
            writePostpone(table, rows, text(step, "commit_user"), overwrite, partition);
            return;
        }
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        if (overwrite) {
            builder =
                    builder.withOverwrite(
                            partition == null ? Collections.emptyMap() : partitionSpec(partition));
        }
        try (BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(ioManager());
            if (mode == BucketMode.HASH_DYNAMIC) {
                writeDynamic(table, (TableWriteImpl<?>) write, rows);
            } else if (mode == BucketMode.KEY_DYNAMIC) {
                writeCrossPartition(table, (TableWriteImpl<?>) write, rows);
            } else {
                for (GenericRow row : rows) {
                    write.write(row);
                }
            }
            commit.commit(write.prepareCommit());
        }
    }

    /**
     * Dynamic bucket mode (bucket = -1 with the partition keys in the primary key): Java's batch
     * writer cannot pick buckets (DynamicBucketRowKeyExtractor refuses); Flink and Spark assign
     * them with HashBucketAssigner (on the table's hash index) and write(row, bucket). Same here,
     * one assigner.
     */
    static void writeDynamic(FileStoreTable table, TableWriteImpl<?> write, List<GenericRow> rows)
            throws Exception {
        KeyAndBucketExtractor<InternalRow> extractor = table.createRowKeyExtractor();
        HashBucketAssigner assigner =
                new HashBucketAssigner(
                        table.snapshotManager(),
                        UUID.randomUUID().toString(),
                        table.store().newIndexFileHandler(),
                        1,
                        1,
                        0,
                        table.coreOptions().dynamicBucketTargetRowNum(),
                        maxBuckets(table));
        for (GenericRow row : rows) {
            extractor.setRecord(row);
            int bucket = assigner.assign(extractor.partition(), extractor.trimmedPrimaryKey().hashCode());
            write.write(row, bucket);
        }
    }

    private static int maxBuckets(FileStoreTable table) {
        Integer max = table.coreOptions().dynamicBucketMaxBuckets();
        return max == null ? -1 : max;
    }

    /**
     * Cross-partition upsert (bucket = -1, a primary key without all partition keys): Flink and
     * Spark run GlobalIndexAssigner (RocksDB, which paimon-bundle does not ship). The same
     * logic by hand: bootstrap key → (partition, bucket) from the latest snapshot; a key that
     * moves to another partition retracts its old row there (DeleteExistingProcessor, the
     * deduplicate engine's); a key new to a partition gets the first bucket of that partition
     * with fewer than dynamic-bucket.target-row-num keys (crosspartition.BucketAssigner).
     */
    static void writeCrossPartition(
            FileStoreTable table, TableWriteImpl<?> write, List<GenericRow> rows) throws Exception {
        String engine = table.coreOptions().mergeEngine().toString();
        if (!"deduplicate".equals(engine)) {
            throw new Unsupported(
                    "write",
                    "cross-partition upsert with merge-engine "
                            + engine
                            + " (only deduplicate is done by hand here)");
        }
        KeyAndBucketExtractor<InternalRow> extractor = table.createRowKeyExtractor();
        Map<BinaryRow, Object[]> index = new HashMap<>(); // key -> {partition, bucket}
        Map<BinaryRow, TreeMap<Integer, Integer>> counts = new HashMap<>();
        RowType type = table.rowType();
        ReadBuilder rb = table.newReadBuilder();
        TableRead read = rb.newRead();
        for (Split split : rb.newScan().plan().splits()) {
            DataSplit ds = (DataSplit) split;
            try (RecordReader<InternalRow> reader = read.createReader(split)) {
                reader.forEachRemaining(
                        row -> {
                            extractor.setRecord(row);
                            BinaryRow part = ds.partition().copy();
                            index.put(
                                    extractor.trimmedPrimaryKey().copy(),
                                    new Object[] {part, ds.bucket()});
                            counts.computeIfAbsent(part, k -> new TreeMap<>())
                                    .merge(ds.bucket(), 1, Integer::sum);
                        });
            }
        }
        long target = table.coreOptions().dynamicBucketTargetRowNum();
        List<String> partitionKeys = table.partitionKeys();
        for (GenericRow row : rows) {
            extractor.setRecord(row);
            BinaryRow key = extractor.trimmedPrimaryKey().copy();
            BinaryRow part = extractor.partition().copy();
            Object[] old = index.get(key);
            int bucket;
            if (old != null && old[0].equals(part)) {
                bucket = (Integer) old[1];
            } else {
                if (old != null) {
                    GenericRow retract = new GenericRow(type.getFieldCount());
                    for (int i = 0; i < type.getFieldCount(); i++) {
                        retract.setField(i, row.getField(i));
                    }
                    BinaryRow oldPart = (BinaryRow) old[0];
                    InternalRow.FieldGetter[] getters = new InternalRow.FieldGetter[partitionKeys.size()];
                    for (int p = 0; p < partitionKeys.size(); p++) {
                        int idx = type.getFieldIndex(partitionKeys.get(p));
                        Object v =
                                InternalRow.createFieldGetter(type.getTypeAt(idx), p)
                                        .getFieldOrNull(oldPart);
                        retract.setField(idx, v);
                    }
                    retract.setRowKind(RowKind.DELETE);
                    write.write(retract, (Integer) old[1]);
                    counts.get(oldPart).compute((Integer) old[1], (k, v) -> v == null ? 0 : v - 1);
                }
                TreeMap<Integer, Integer> m = counts.computeIfAbsent(part, k -> new TreeMap<>());
                bucket = -1;
                for (Map.Entry<Integer, Integer> e : m.entrySet()) {
                    if (e.getValue() < target) {
                        bucket = e.getKey();
                        break;
                    }
                }
                if (bucket < 0) {
                    bucket = 0;
                    while (m.containsKey(bucket)) {
                        bucket++;
                    }
                }
                m.merge(bucket, 1, Integer::sum);
                index.put(key, new Object[] {part, bucket});
            }
            write.write(row, bucket);
        }
    }

    /**
     * Postpone bucket (bucket = -2): the core batch writer writes to the postpone bucket, which a
     * batch read does not see until Flink's postpone compaction redistributes it. Flink and Spark
     * batch writes (postpone.batch-write-fixed-bucket, default true) write into fixed buckets
     * instead: the partition's known bucket count, else postpone.default-bucket-num, through
     * PostponeUtils.tableForFixBucketWrite and committed as the postpone table. Same here.
     */
    static void writePostpone(
            FileStoreTable table,
            List<GenericRow> rows,
            String commitUser,
            boolean overwrite,
            String partition)
            throws Exception {
        if (!table.coreOptions().postponeBatchWriteFixedBucket()) {
            throw new Unsupported(
                    "write",
                    "postpone bucket table with postpone.batch-write-fixed-bucket=false: the rows"
                            + " stay invisible until Flink's postpone compaction");
        }
        Map<BinaryRow, Integer> known = org.apache.paimon.table.PostponeUtils.getKnownNumBuckets(table);
        int defaultNum = table.coreOptions().postponeDefaultBucketNum();
        FileStoreTable writeTable = org.apache.paimon.table.PostponeUtils.tableForFixBucketWrite(table);
        FileStoreTable commitTable = org.apache.paimon.table.PostponeUtils.tableForCommit(table);
        KeyAndBucketExtractor<InternalRow> extractor = table.createRowKeyExtractor();
        Map<Integer, KeyAndBucketExtractor<InternalRow>> byNum = new HashMap<>();
        BatchWriteBuilder wb = writeTable.newBatchWriteBuilder();
        BatchWriteBuilder cb = commitTable.newBatchWriteBuilder();
        if (overwrite) {
            cb = cb.withOverwrite(partition == null ? Collections.emptyMap() : partitionSpec(partition));
        }
        List<CommitMessage> out = new ArrayList<>();
        try (BatchTableWrite write = wb.newWrite(); BatchTableCommit commit = cb.newCommit()) {
            write.withIOManager(ioManager());
            for (GenericRow row : rows) {
                extractor.setRecord(row);
                int num = known.getOrDefault(extractor.partition(), defaultNum);
                KeyAndBucketExtractor<InternalRow> e =
                        byNum.computeIfAbsent(
                                num,
                                k ->
                                        table.copy(
                                                        Collections.singletonMap(
                                                                "bucket", String.valueOf(k)))
                                                .createRowKeyExtractor());
                e.setRecord(row);
                ((TableWriteImpl<?>) write).write(row, e.bucket());
            }
            for (CommitMessage m : write.prepareCommit()) {
                CommitMessageImpl c = (CommitMessageImpl) m;
                out.add(
                        new CommitMessageImpl(
                                c.partition(),
                                c.bucket(),
                                known.getOrDefault(c.partition(), defaultNum),
                                c.newFilesIncrement(),
                                c.compactIncrement()));
            }
            commit.commit(out);
        }
    }

    // ------------------------------------------------------------------ delete

    /** One comparison of a filter: column, operator, integer. */
    static final class Cmp {
        String column;
        String op;
        long value;

        boolean test(Long v) {
            if (v == null) {
                return false;
            }
            switch (op) {
                case "<":
                    return v < value;
                case "<=":
                    return v <= value;
                case ">":
                    return v > value;
                case ">=":
                    return v >= value;
                case "=":
                    return v == value;
                default:
                    return v != value;
            }
        }
    }

    private static final Pattern CMP =
            Pattern.compile("\\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\\s*(<=|>=|<>|!=|=|<|>)\\s*(-?\\d+)\\s*");

    /** `a OP int [AND b OP int ...]`; anything else is unsupported. */
    static List<Cmp> parseWhere(String where, RowType type) {
        List<Cmp> out = new ArrayList<>();
        for (String part : where.split("(?i)\\s+AND\\s+")) {
            Matcher m = CMP.matcher(part);
            if (!m.matches()) {
                throw new Unsupported(
                        "delete",
                        "filter '" + where + "': only COLUMN OP INTEGER joined by AND is understood here");
            }
            Cmp c = new Cmp();
            c.column = m.group(1);
            c.op = m.group(2);
            c.value = Long.parseLong(m.group(3));
            if (!type.containsField(c.column)) {
                throw new IllegalArgumentException("filter '" + where + "': no column " + c.column);
            }
            switch (type.getField(c.column).type().getTypeRoot()) {
                case TINYINT:
                case SMALLINT:
                case INTEGER:
                case BIGINT:
                    break;
                default:
                    throw new Unsupported(
                            "delete", "filter '" + where + "': column " + c.column + " is not an integer");
            }
            out.add(c);
        }
        return out;
    }

    static boolean matches(List<Cmp> filter, InternalRow row, RowType type) {
        for (Cmp c : filter) {
            int i = type.getFieldIndex(c.column);
            Long v;
            if (row.isNullAt(i)) {
                v = null;
            } else {
                switch (type.getTypeAt(i).getTypeRoot()) {
                    case TINYINT:
                        v = (long) row.getByte(i);
                        break;
                    case SMALLINT:
                        v = (long) row.getShort(i);
                        break;
                    case INTEGER:
                        v = (long) row.getInt(i);
                        break;
                    default:
                        v = row.getLong(i);
                }
            }
            if (!c.test(v)) {
                return false;
            }
        }
        return true;
    }

    static void delete(JsonNode step, String location) throws Exception {
        String where = text(step, "where");
        if (where == null) {
            throw new IllegalArgumentException("'where' is missing");
        }
        FileStoreTable table = open(location);
        RowType type = table.rowType();
        List<Cmp> filter = parseWhere(where, type);
        if (!table.primaryKeys().isEmpty()) {
            deletePk(table, filter);
        } else if (table.coreOptions().deletionVectorsEnabled()) {
            deleteAppendDv(table, filter);
        } else {
            throw new Unsupported(
                    "delete",
                    "append table without deletion vectors: Java 2.0.0 deletes such rows only in"
                            + " Spark/Flink (rewriting files)");
        }
    }

    /**
     * Primary-key table: the matching rows of the latest snapshot, written back as -D in one
     * commit (what Flink's and Spark's DELETE do for a primary-key table).
     */
    static void deletePk(FileStoreTable table, List<Cmp> filter) throws Exception {
        RowType type = table.rowType();
        List<InternalRow> doomed = new ArrayList<>();
        InternalRowSerializer ser = new InternalRowSerializer(type);
        ReadBuilder rb = table.newReadBuilder();
        TableRead read = rb.newRead();
        for (Split split : rb.newScan().plan().splits()) {
            try (RecordReader<InternalRow> reader = read.createReader(split)) {
                reader.forEachRemaining(
                        row -> {
                            if (matches(filter, row, type)) {
                                doomed.add(ser.copy(row));
                            }
                        });
            }
        }
        if (table.bucketMode() == BucketMode.HASH_DYNAMIC
                || table.bucketMode() == BucketMode.KEY_DYNAMIC
                || table.bucketMode() == BucketMode.POSTPONE_MODE) {
            throw new Unsupported("delete", "primary-key table in bucket mode " + table.bucketMode());
        }
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(ioManager());
            for (InternalRow row : doomed) {
                row.setRowKind(RowKind.DELETE);
                write.write(row);
            }
            commit.commit(write.prepareCommit());
        }
    }

    /**
     * Append table with deletion vectors: as Spark's DELETE does it, the positions of the matching
     * rows of every data file of the latest snapshot become deletion vectors (merged with the
     * file's old one) through BaseAppendDeleteFileMaintainer, committed as index-file changes.
     */
    static void deleteAppendDv(FileStoreTable table, List<Cmp> filter) throws Exception {
        Snapshot snapshot = table.snapshotManager().latestSnapshot();
        if (snapshot == null) {
            return;
        }
        RowType type = table.rowType();
        IndexFileHandler handler = table.store().newIndexFileHandler();
        boolean unaware = table.bucketMode() == BucketMode.BUCKET_UNAWARE;
        Map<String, List<ManifestEntry>> groups = new LinkedHashMap<>();
        for (ManifestEntry e : table.store().newScan().withSnapshot(snapshot).plan().files()) {
            groups.computeIfAbsent(e.partition().hashCode() + "/" + e.partition() + "/" + e.bucket(), k -> new ArrayList<>())
                    .add(e);
        }
        TableRead read = table.newReadBuilder().newRead();
        List<CommitMessage> messages = new ArrayList<>();
        for (List<ManifestEntry> group : groups.values()) {
            ManifestEntry first = group.get(0);
            BinaryRow partition = first.partition();
            int bucket = first.bucket();
            BaseAppendDeleteFileMaintainer maintainer =
                    unaware
                            ? BaseAppendDeleteFileMaintainer.forUnawareAppend(handler, snapshot, partition)
                            : BaseAppendDeleteFileMaintainer.forBucketedAppend(
                                    handler, snapshot, partition, bucket);
            boolean any = false;
            for (ManifestEntry e : group) {
                DataFileMeta file = e.file();
                DataSplit split =
                        DataSplit.builder()
                                .withSnapshot(snapshot.id())
                                .withPartition(partition)
                                .withBucket(bucket)
                                .withTotalBuckets(e.totalBuckets())
                                .withBucketPath(table.store().pathFactory().bucketPath(partition, bucket).toString())
                                .withDataFiles(Collections.singletonList(file))
                                .rawConvertible(true)
                                .build();
                DeletionVector dv = new BitmapDeletionVector();
                long[] pos = {0};
                try (RecordReader<InternalRow> reader = read.createReader(split)) {
                    reader.forEachRemaining(
                            row -> {
                                if (matches(filter, row, type)) {
                                    dv.delete(pos[0]);
                                }
                                pos[0]++;
                            });
                }
                if (pos[0] != file.rowCount()) {
                    throw new IllegalStateException(
                            "read " + pos[0] + " rows of " + file.fileName() + ", which has " + file.rowCount());
                }
                if (!dv.isEmpty()) {
                    maintainer.notifyNewDeletionVector(file.fileName(), dv);
                    any = true;
                }
            }
            if (!any) {
                continue;
            }
            List<IndexFileMeta> added = new ArrayList<>();
            List<IndexFileMeta> removed = new ArrayList<>();
            for (IndexManifestEntry ie : maintainer.persist()) {
                (ie.kind() == FileKind.ADD ? added : removed).add(ie.indexFile());
            }
            messages.add(
                    new CommitMessageImpl(
                            partition,
                            maintainer.getBucket(),
                            first.totalBuckets(),
                            new DataIncrement(
                                    Collections.emptyList(),
                                    Collections.emptyList(),
                                    Collections.emptyList(),
                                    added,
                                    removed),
                            CompactIncrement.emptyIncrement()));
        }
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableCommit commit = builder.newCommit()) {
            commit.commit(messages);
        }
    }

    // ------------------------------------------------------------------ update

    /**
     * Data-evolution update by _ROW_ID (what Spark's MERGE INTO does on such a table): for every
     * row range (first_row_id, row_count) of the latest snapshot holding an updated row, the
     * updated columns of all its rows (the old values, the update's where given) are written as
     * one file of only those columns (BatchTableWrite.withWriteType) whose first_row_id is the
     * range's, committed together; a read merges the newest file of each column.
     */
    static void update(JsonNode step, String location) throws Exception {
        FileStoreTable table = open(location);
        JsonNode rowsNode = step.get("rows");
        if (rowsNode == null || !rowsNode.isArray()) {
            throw new IllegalArgumentException("'rows' must be a list of objects");
        }
        List<JsonNode> rows = new ArrayList<>();
        rowsNode.forEach(rows::add);
        List<CommitMessage> messages = Write.update(table, rows, false);
        if (!messages.isEmpty()) {
            Write.commit(table, messages);
        }
    }

    // ------------------------------------------------------------------ alter, compact

    static void alter(JsonNode step, String location) throws Exception {
        JsonNode changes = step.get("changes");
        if (changes == null || !changes.isArray()) {
            throw new IllegalArgumentException("'changes' must be a list of [flag, value] pairs");
        }
        List<SchemaChange> out = new ArrayList<>();
        for (JsonNode c : changes) {
            if (!c.isArray() || c.size() != 2 || !c.get(0).isTextual() || !c.get(1).isTextual()) {
                throw new IllegalArgumentException("change " + c + " is not a [flag, value] pair");
            }
            String flag = c.get(0).asText();
            String spec = c.get(1).asText().trim();
            switch (flag) {
                case "add-column":
                    {
                        String[] nt = nameAndRest(spec, flag);
                        out.add(SchemaChange.addColumn(nt[0], DataTypeJsonParser.parseAtomicTypeSQLString(nt[1])));
                        break;
                    }
                case "drop-column":
                    out.add(SchemaChange.dropColumn(nameAndRest(spec, flag)[0]));
                    break;
                case "rename-column":
                    {
                        String[] kv = keyValue(spec, flag);
                        out.add(SchemaChange.renameColumn(kv[0], kv[1].trim()));
                        break;
                    }
                case "alter-type":
                    {
                        String[] nt = nameAndRest(spec, flag);
                        out.add(SchemaChange.updateColumnType(nt[0], DataTypeJsonParser.parseAtomicTypeSQLString(nt[1])));
                        break;
                    }
                case "set":
                    {
                        String[] kv = keyValue(spec, flag);
                        out.add(SchemaChange.setOption(kv[0], kv[1]));
                        break;
                    }
                case "reset":
                    out.add(SchemaChange.removeOption(spec));
                    break;
                default:
                    throw new Unsupported("alter", "flag --" + flag);
            }
        }
        Path path = new Path(new File(location).getAbsolutePath());
        new SchemaManager(LocalFileIO.create(), path).commitChanges(out);
    }

    private static String[] nameAndRest(String spec, String flag) {
        if (spec.startsWith("`") || spec.matches("(?is).*\\s(FIRST|AFTER\\s+\\S+)$")) {
            throw new Unsupported("alter", "--" + flag + " '" + spec + "': quoted names and positions are not handled here");
        }
        String[] p = spec.split("\\s+", 2);
        return new String[] {p[0], p.length > 1 ? p[1].trim() : ""};
    }

    private static String[] keyValue(String spec, String flag) {
        int eq = spec.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("--" + flag + " '" + spec + "': expected KEY=VALUE");
        }
        return new String[] {spec.substring(0, eq).trim(), spec.substring(eq + 1)};
    }

    static void compact(JsonNode step, String location) throws Exception {
        FileStoreTable table = open(location);
        boolean full = bool(step, "full");
        String partition = text(step, "partition");
        if (table.bucketMode() == BucketMode.POSTPONE_MODE) {
            // Java compacts a postpone-bucket table only in Flink (redistributing the files of
            // bucket -2); rows written into fixed buckets by batch writes stay as they are.
            for (ManifestEntry e : table.store().newScan().plan().files()) {
                if (e.bucket() == BucketMode.POSTPONE_BUCKET) {
                    throw new Unsupported(
                            "compact", "postpone-bucket files: only Flink's postpone compaction moves them");
                }
            }
            System.out.println("  postpone-bucket table without postpone files: nothing for Java to compact");
            return;
        }
        // A compaction job compacts a write-only table as if it were not write-only (Flink's
        // CompactAction and Spark's compact procedure copy it with write-only=false).
        table = table.copy(Collections.singletonMap("write-only", "false"));
        if (table.coreOptions().rowTrackingEnabled() && table.coreOptions().dataEvolutionEnabled()) {
            if (partition != null) {
                throw new Unsupported("compact", "'partition' on a data-evolution table");
            }
            List<CommitMessage> messages = Write.compactDataEvolution(table);
            if (!messages.isEmpty()) {
                Write.commit(table, messages);
            }
            return;
        }
        if (table.bucketMode() == BucketMode.BUCKET_UNAWARE) {
            compactUnaware(table, partition);
            return;
        }
        Map<String, String> spec = partition == null ? null : partitionSpec(partition);
        if (spec != null) {
            // Only (partition, bucket)s whose partition values print as the spec.
            org.apache.paimon.utils.InternalRowPartitionComputer pc =
                    new org.apache.paimon.utils.InternalRowPartitionComputer(
                            table.coreOptions().partitionDefaultName(),
                            table.schema().logicalPartitionType(),
                            table.partitionKeys().toArray(new String[0]),
                            table.coreOptions().legacyPartitionName());
            Set<String> seen = new LinkedHashSet<>();
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            try (BatchTableWrite write = builder.newWrite();
                    BatchTableCommit commit = builder.newCommit()) {
                write.withIOManager(ioManager());
                for (ManifestEntry e : table.store().newScan().plan().files()) {
                    Map<String, String> values = pc.generatePartValues(e.partition());
                    if (!values.entrySet().containsAll(spec.entrySet())) {
                        continue;
                    }
                    if (seen.add(e.partition().hashCode() + "/" + e.bucket() + "/" + e.partition())) {
                        write.compact(e.partition(), e.bucket(), full);
                    }
                }
                commit.commit(write.prepareCommit());
            }
        } else {
            Write.commit(table, Write.compact(table, full));
        }
    }

    /**
     * An unaware-bucket append table is compacted as Spark's compact procedure does it: the
     * tasks of one AppendCompactCoordinator (batch) run, each AppendCompactTask.doCompact on the
     * table's append write (rewriting deletion vectors of compacted files), committed together.
     * Java has no full compaction for these tables: `full` picks nothing else.
     */
    static void compactUnaware(FileStoreTable table, String partition) throws Exception {
        if (partition != null) {
            throw new Unsupported("compact", "'partition' on an unaware-bucket append table");
        }
        List<CommitMessage> messages = Write.compactUnaware(table);
        if (messages.isEmpty()) {
            System.out.println("  nothing to compact");
            return;
        }
        Write.commit(table, messages);
    }

    // ------------------------------------------------------------------ checkpoint

    static Checkpoint checkpoint(JsonNode step, String location, int n) throws Exception {
        Checkpoint cp = new Checkpoint();
        cp.name = text(step, "name") != null ? text(step, "name") : "step-" + n;
        FileStoreTable table = open(location);
        cp.snapshotId = table.snapshotManager().latestSnapshotId();
        List<String> rows = new ArrayList<>();
        if (cp.snapshotId != null) {
            Main.Args a = new Main.Args();
            a.table = location;
            StringWriter w = new StringWriter();
            Main.read(a, w);
            for (String line : w.toString().split("\n")) {
                if (!line.isEmpty()) {
                    rows.add(line);
                }
            }
        }
        Collections.sort(rows);
        cp.rows = rows;
        JsonNode expected = step.get("rows");
        if (expected != null) {
            if (!expected.isArray()) {
                throw new IllegalArgumentException("checkpoint 'rows' must be a list of objects");
            }
            List<String> exp = new ArrayList<>();
            List<String> expKeys = new ArrayList<>();
            for (JsonNode r : expected) {
                exp.add(JsonSerdeUtil.OBJECT_MAPPER_INSTANCE.writeValueAsString(r));
                expKeys.add(Pretty.normalized(r));
            }
            List<String> readKeys = new ArrayList<>();
            for (String r : rows) {
                readKeys.add(Pretty.normalized(JsonSerdeUtil.OBJECT_MAPPER_INSTANCE.readTree(r)));
            }
            Collections.sort(exp);
            Collections.sort(expKeys);
            Collections.sort(readKeys);
            if (!expKeys.equals(readKeys)) {
                throw new IllegalStateException(
                        "checkpoint "
                                + cp.name
                                + ": the table's rows differ from the scenario's ("
                                + rows.size()
                                + " read, "
                                + exp.size()
                                + " expected)\nread:\n  "
                                + String.join("\n  ", rows)
                                + "\nexpected:\n  "
                                + String.join("\n  ", exp));
            }
        }
        return cp;
    }

    static String expectedJson(String scenario, String ident, List<Checkpoint> cps) {
        int dot = ident.indexOf('.');
        String db = dot < 0 ? "" : ident.substring(0, dot);
        String t = dot < 0 ? ident : ident.substring(dot + 1);
        Checkpoint last = cps.isEmpty() ? null : cps.get(cps.size() - 1);
        StringBuilder sb = new StringBuilder();
        sb.append("{\"format_version\":1,\"generator\":{\"tool\":\"java-check run\",\"scenario\":");
        Pretty.string(sb, scenario);
        sb.append("},\"table\":");
        Pretty.string(sb, t);
        sb.append(",\"database\":");
        Pretty.string(sb, db);
        sb.append(",\"identifier\":");
        Pretty.string(sb, ident);
        sb.append(",\"path\":");
        Pretty.string(sb, db + ".db/" + t);
        sb.append(",\"snapshot_id\":").append(last == null || last.snapshotId == null ? "null" : last.snapshotId);
        sb.append(",\"row_count\":").append(last == null ? 0 : last.rows.size());
        sb.append(",\"rows\":[").append(last == null ? "" : String.join(",", last.rows)).append(']');
        sb.append(",\"checkpoints\":[");
        for (int i = 0; i < cps.size(); i++) {
            Checkpoint c = cps.get(i);
            if (i > 0) {
                sb.append(',');
            }
            sb.append("{\"name\":");
            Pretty.string(sb, c.name);
            sb.append(",\"snapshot_id\":").append(c.snapshotId == null ? "null" : c.snapshotId);
            sb.append(",\"row_count\":").append(c.rows.size());
            sb.append(",\"rows\":[").append(String.join(",", c.rows)).append("]}");
        }
        sb.append("]}");
        return sb.toString();
    }

    /** JSON text helpers: serde_json's pretty layout of compact JSON, sorted-key normal form. */
    static final class Pretty {
        private Pretty() {}

        /** Appends {@code s} as a JSON string, escaped as serde_json escapes. */
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
                    case '\n':
                        sb.append("\\n");
                        break;
                    case '\r':
                        sb.append("\\r");
                        break;
                    case '\t':
                        sb.append("\\t");
                        break;
                    case '\b':
                        sb.append("\\b");
                        break;
                    case '\f':
                        sb.append("\\f");
                        break;
                    default:
                        if (c < 0x20) {
                            sb.append(String.format("\\u%04x", (int) c));
                        } else {
                            sb.append(c);
                        }
                }
            }
            sb.append('"');
        }

        /** serde_json::to_string_pretty's layout (two spaces) of compact JSON text. */
        static String pretty(String compact) {
            StringBuilder out = new StringBuilder(compact.length() * 2);
            int depth = 0;
            boolean inString = false;
            for (int i = 0; i < compact.length(); i++) {
                char c = compact.charAt(i);
                if (inString) {
                    out.append(c);
                    if (c == '\\') {
                        out.append(compact.charAt(++i));
                    } else if (c == '"') {
                        inString = false;
                    }
                    continue;
                }
                switch (c) {
                    case '"':
                        inString = true;
                        out.append(c);
                        break;
                    case '{':
                    case '[':
                        {
                            char close = c == '{' ? '}' : ']';
                            if (i + 1 < compact.length() && compact.charAt(i + 1) == close) {
                                out.append(c).append(close);
                                i++;
                            } else {
                                depth++;
                                out.append(c).append('\n');
                                indent(out, depth);
                            }
                            break;
                        }
                    case '}':
                    case ']':
                        depth--;
                        out.append('\n');
                        indent(out, depth);
                        out.append(c);
                        break;
                    case ',':
                        out.append(",\n");
                        indent(out, depth);
                        break;
                    case ':':
                        out.append(": ");
                        break;
                    default:
                        out.append(c);
                }
            }
            return out.toString();
        }

        private static void indent(StringBuilder out, int depth) {
            for (int d = 0; d < depth; d++) {
                out.append("  ");
            }
        }

        /** A JSON value's text with object keys sorted (for order-insensitive comparison). */
        static String normalized(JsonNode v) {
            StringBuilder sb = new StringBuilder();
            normalize(sb, v);
            return sb.toString();
        }

        private static void normalize(StringBuilder sb, JsonNode v) {
            if (v.isObject()) {
                List<String> keys = new ArrayList<>();
                v.fieldNames().forEachRemaining(keys::add);
                Collections.sort(keys);
                sb.append('{');
                for (int i = 0; i < keys.size(); i++) {
                    if (i > 0) {
                        sb.append(',');
                    }
                    string(sb, keys.get(i));
                    sb.append(':');
                    normalize(sb, v.get(keys.get(i)));
                }
                sb.append('}');
            } else if (v.isArray()) {
                sb.append('[');
                for (int i = 0; i < v.size(); i++) {
                    if (i > 0) {
                        sb.append(',');
                    }
                    normalize(sb, v.get(i));
                }
                sb.append(']');
            } else if (v.isIntegralNumber()) {
                sb.append(v.bigIntegerValue());
            } else {
                sb.append(v.toString());
            }
        }
    }
}
