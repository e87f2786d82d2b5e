package check;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;

import org.apache.paimon.append.dataevolution.DataEvolutionCompactCoordinator;
import org.apache.paimon.append.dataevolution.DataEvolutionCompactTask;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Blob;
import org.apache.paimon.data.BlobPlaceholder;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.data.variant.GenericVariant;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.schema.SchemaManager;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeChecks;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

/**
 * gen-tables OUT_DIR: writes the tables of {@code conformance/java-tables} that Java Paimon 2.0
 * writes (names {@code j20_*}) with its public table API ({@code SchemaManager.createTable},
 * {@code FileStoreTableFactory.create}, {@code BatchTableWrite} / {@code BatchTableCommit},
 * {@code BatchTableWrite.compact}, {@code DataEvolutionCompactCoordinator},
 * {@code SchemaManager.commitChanges}, {@code createTag}), then reads each back with Java's
 * reader ({@link Main#read}) and writes {@code <table>.expected.json} (the rows of the latest
 * snapshot and of every additional read: an earlier snapshot, a tag, a projection) and
 * {@code manifest.json}. Values come from a fixed seed; file names, commit users and times are
 * Java's own (not reproducible, so the expected rows are captured from the same run).
 */
public final class GenTables {

    private static final long SEED = 20261205L;

    private final File out;
    private final IOManager io;
    private final Random rnd = new Random(SEED);
    private final List<String> names = new ArrayList<>();

    private GenTables(File out, IOManager io) {
        this.out = out;
        this.io = io;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: gen-tables OUT_DIR [NAME_PREFIX...]");
            System.exit(2);
        }
        File out = new File(args[0]).getAbsoluteFile();
        Files.createDirectories(out.toPath());
        IOManager io = IOManager.create(Files.createTempDirectory("gen-tables-io").toString());
        GenTables g = new GenTables(out, io);
        Set<String> only = new LinkedHashSet<>(Arrays.asList(args).subList(1, args.length));
        g.run(only);
        g.manifest();
        System.out.println(g.names.size() + " tables in " + out);
    }

    // ------------------------------------------------------------------------------------------
    // Plumbing
    // ------------------------------------------------------------------------------------------

    /** A table being written: its files, how it was written and the reads to capture. */
    final class T {
        final String name;
        final File dir;
        FileStoreTable table;
        final StringBuilder writtenBy = new StringBuilder();
        final List<String[]> reads = new ArrayList<>();

        T(String name, Schema schema, String what) throws Exception {
            this.name = name;
            this.dir = new File(out, name);
            if (dir.exists()) {
                throw new IllegalStateException(dir + " exists");
            }
            Path path = new Path(dir.toURI().toString());
            new SchemaManager(LocalFileIO.create(), path).createTable(schema);
            this.table = FileStoreTableFactory.create(LocalFileIO.create(), path);
            writtenBy.append(what);
        }

        SchemaManager schemas() {
            return new SchemaManager(LocalFileIO.create(), table.location());
        }

        void reload() {
            table = FileStoreTableFactory.create(LocalFileIO.create(), table.location());
        }

        long snapshot() {
            return table.snapshotManager().latestSnapshotId();
        }

        T note(String s) {
            writtenBy.append("; ").append(s);
            return this;
        }

        T write(InternalRow... rows) throws Exception {
            return write(Arrays.asList(rows));
        }

        T write(List<InternalRow> rows) throws Exception {
            return write(rows, -1);
        }

        /** `bucket` >= 0: every row into that bucket (`write(row, bucket)`, dynamic bucket). */
        T write(List<InternalRow> rows, int bucket) throws Exception {
            BatchWriteBuilder b = table.newBatchWriteBuilder();
            try (BatchTableWrite w = b.newWrite(); BatchTableCommit c = b.newCommit()) {
                w.withIOManager(io);
                for (InternalRow r : rows) {
                    if (bucket >= 0) {
                        w.write(r, bucket);
                    } else {
                        w.write(r);
                    }
                }
                c.commit(w.prepareCommit());
            }
            reload();
            return this;
        }

        /**
         * A postpone-bucket table's batch write into `numBuckets` real buckets (Flink's
         * `PostponeBatchWriteOperator` over the core API).
         */
        T writeFixedBuckets(int numBuckets, List<InternalRow> rows) throws Exception {
            FileStoreTable w0 = org.apache.paimon.table.PostponeUtils.tableForFixBucketWrite(table);
            org.apache.paimon.bucket.BucketFunction fn =
                    org.apache.paimon.bucket.BucketFunction.create(
                            new org.apache.paimon.CoreOptions(table.options()),
                            table.schema().logicalBucketKeyType());
            org.apache.paimon.codegen.Projection keys =
                    org.apache.paimon.codegen.CodeGenUtils.newProjection(
                            table.schema().logicalRowType(),
                            table.schema().projection(table.schema().bucketKeys()));
            BatchWriteBuilder b = w0.newBatchWriteBuilder();
            try (BatchTableWrite w = b.newWrite(); BatchTableCommit c = b.newCommit()) {
                w.withIOManager(io);
                ((org.apache.paimon.table.sink.TableWriteImpl<?>) w).getWrite()
                        .withIgnoreNumBucketCheck(true);
                for (InternalRow r : rows) {
                    w.write(r, fn.bucket(keys.apply(r), numBuckets));
                }
                List<CommitMessage> msgs = new ArrayList<>();
                for (CommitMessage m : w.prepareCommit()) {
                    CommitMessageImpl i = (CommitMessageImpl) m;
                    msgs.add(new CommitMessageImpl(i.partition(), i.bucket(), numBuckets,
                            i.newFilesIncrement(), i.compactIncrement()));
                }
                c.commit(msgs);
            }
            reload();
            return this;
        }

        /** Rows of the columns `cols` only, assigned to the row ids from `firstRowId`. */
        T writeColumns(long firstRowId, List<String> cols, List<InternalRow> rows)
                throws Exception {
            RowType type = table.schema().logicalRowType().project(cols);
            BatchWriteBuilder b = table.newBatchWriteBuilder();
            try (BatchTableWrite w = b.newWrite().withWriteType(type);
                    BatchTableCommit c = b.newCommit()) {
                w.withIOManager(io);
                for (InternalRow r : rows) {
                    w.write(r);
                }
                List<CommitMessage> msgs = w.prepareCommit();
                for (CommitMessage m : msgs) {
                    CommitMessageImpl impl = (CommitMessageImpl) m;
                    List<DataFileMeta> files =
                            new ArrayList<>(impl.newFilesIncrement().newFiles());
                    impl.newFilesIncrement().newFiles().clear();
                    for (DataFileMeta f : files) {
                        impl.newFilesIncrement().newFiles().add(f.assignFirstRowId(firstRowId));
                    }
                }
                c.commit(msgs);
            }
            reload();
            return this;
        }

        /** Java's compaction of every bucket holding data (full or incremental). */
        T compact(boolean full) throws Exception {
            Map<String, Object[]> targets = new TreeMap<>();
            for (Split s : table.newReadBuilder().newScan().plan().splits()) {
                DataSplit d = (DataSplit) s;
                targets.put(d.partition().toString() + "/" + d.bucket(),
                        new Object[] {d.partition(), d.bucket()});
            }
            BatchWriteBuilder b = table.newBatchWriteBuilder();
            try (BatchTableWrite w = b.newWrite(); BatchTableCommit c = b.newCommit()) {
                w.withIOManager(io);
                for (Object[] t : targets.values()) {
                    w.compact((BinaryRow) t[0], (Integer) t[1], full);
                }
                c.commit(w.prepareCommit());
            }
            reload();
            return this;
        }

        /** Data-evolution compaction (Java's coordinator, every planned task). */
        T compactDataEvolution() throws Exception {
            FileStoreTable t = table.copy(Collections.singletonMap("compaction.min.file-num", "2"));
            DataEvolutionCompactCoordinator coord =
                    new DataEvolutionCompactCoordinator(t, true, false, t.latestSnapshot().get());
            List<CommitMessage> msgs = new ArrayList<>();
            String user = UUID.randomUUID().toString();
            for (DataEvolutionCompactTask task : coord.plan()) {
                msgs.add(task.doCompact(t, user));
            }
            try (BatchTableCommit c = t.newBatchWriteBuilder().newCommit()) {
                c.commit(msgs);
            }
            reload();
            return this;
        }

        T alter(SchemaChange... changes) throws Exception {
            schemas().commitChanges(changes);
            reload();
            return this;
        }

        T tag(String tag, long snapshotId) {
            table.createTag(tag, snapshotId);
            return this;
        }

        /** An additional read: its label and the java-check read flags (our CLI takes the same). */
        T read(String label, String... args) {
            String[] r = new String[args.length + 1];
            r[0] = label;
            System.arraycopy(args, 0, r, 1, args.length);
            reads.add(r);
            return this;
        }

        /** Tag `t1` on snapshot 1, and the reads of snapshot 1, of the tag and of `cols`. */
        T standardReads(String cols) {
            tag("t1", 1);
            read("snapshot 1", "--snapshot", "1");
            read("tag t1", "--tag", "t1");
            if (cols != null) {
                read("columns " + cols, "--columns", cols);
            }
            return this;
        }

        void done() throws Exception {
            StringBuilder json = new StringBuilder();
            json.append("{\n \"table\": ").append(str(name));
            json.append(",\n \"path\": ").append(str(name));
            json.append(",\n \"paimon_version\": \"2.0.0\"");
            json.append(",\n \"written_by\": ").append(str(writtenBy.toString()));
            json.append(",\n \"expected_rows_from\": ")
                    .append(str("Java Paimon 2.0.0 (conformance/java-check read, JVM time zone UTC)"));
            json.append(",\n \"rows\": ").append(rows(new String[0]));
            json.append(",\n \"additional_reads\": [");
            for (int i = 0; i < reads.size(); i++) {
                String[] r = reads.get(i);
                String[] args = Arrays.copyOfRange(r, 1, r.length);
                json.append(i == 0 ? "\n  " : ",\n  ");
                json.append("{\"label\": ").append(str(r[0]));
                json.append(", \"args\": [");
                for (int k = 0; k < args.length; k++) {
                    json.append(k == 0 ? "" : ", ").append(str(args[k]));
                }
                json.append("], \"rows\": ").append(rows(args)).append("}");
            }
            json.append(reads.isEmpty() ? "]" : "\n ]").append("\n}\n");
            Files.write(new File(out, name + ".expected.json").toPath(),
                    json.toString().getBytes(StandardCharsets.UTF_8));
            names.add(name);
            System.out.println("  " + name + ": " + (reads.size() + 1) + " reads");
        }

        /** Java's rows of a read with the java-check flags `args`, as a JSON array. */
        private String rows(String[] args) throws IOException {
            String[] argv = new String[args.length + 1];
            argv[0] = dir.getAbsolutePath();
            System.arraycopy(args, 0, argv, 1, args.length);
            StringWriter w = new StringWriter();
            Main.read(Main.parse(argv), w);
            String[] lines = w.toString().split("\n");
            StringBuilder sb = new StringBuilder("[");
            int n = 0;
            for (String l : lines) {
                if (l.isEmpty()) {
                    continue;
                }
                sb.append(n++ == 0 ? "\n  " : ",\n  ").append(l);
            }
            if (n == 0 && args.length == 0) {
                throw new IllegalStateException(name + ": the latest snapshot has no rows");
            }
            return n == 0 ? "[]" : sb.append("\n ]").toString();
        }
    }

    private static String str(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
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
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        return sb.append('"').toString();
    }

    private void manifest() throws IOException {
        List<String> all = new ArrayList<>();
        for (File f : out.listFiles()) {
            String n = f.getName();
            if (n.endsWith(".expected.json")) {
                all.add(n.substring(0, n.length() - ".expected.json".length()));
            }
        }
        Collections.sort(all);
        StringBuilder sb = new StringBuilder("{\n \"tables\": [");
        for (int i = 0; i < all.size(); i++) {
            sb.append(i == 0 ? "\n  " : ",\n  ");
            sb.append("{\"path\": ").append(str(all.get(i)))
                    .append(", \"expected\": ").append(str(all.get(i) + ".expected.json"))
                    .append("}");
        }
        sb.append("\n ]\n}\n");
        Files.write(new File(out, "manifest.json").toPath(), sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    // ------------------------------------------------------------------------------------------
    // Values
    // ------------------------------------------------------------------------------------------

    private static BinaryString s(String v) {
        return v == null ? null : BinaryString.fromString(v);
    }

    private static GenericRow row(Object... v) {
        return GenericRow.of(v);
    }

    private static GenericRow row(RowKind kind, Object... v) {
        return GenericRow.ofKind(kind, v);
    }

    private String word() {
        String[] w = {"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "ünï", "日本"};
        return w[rnd.nextInt(w.length)] + rnd.nextInt(100);
    }

    private static Blob blob(String text) {
        return Blob.fromData(text.getBytes(StandardCharsets.UTF_8));
    }

    private static Timestamp ts(long millis, int nanos) {
        return Timestamp.fromEpochMillis(millis, nanos);
    }

    private static Decimal dec(String v, int p, int s) {
        return Decimal.fromBigDecimal(new BigDecimal(v), p, s);
    }

    private static GenericMap map(Object... kv) {
        Map<Object, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return new GenericMap(m);
    }

    private static GenericArray arr(Object... v) {
        return new GenericArray(v);
    }

    private static GenericVariant variant(String json) {
        return GenericVariant.fromJson(json);
    }

    // ------------------------------------------------------------------------------------------
    // The tables
    // ------------------------------------------------------------------------------------------

    private interface Gen {
        void run() throws Exception;
    }

    private void run(Set<String> only) throws Exception {
        Map<String, Gen> gens = new LinkedHashMap<>();
        for (String engine : new String[] {"deduplicate", "partial-update", "aggregation", "first-row"}) {
            String e = engine.replace("-", "_");
            gens.put("j20_pk_" + e + "_full", () -> mergeEngine(engine, true, false));
            gens.put("j20_pk_" + e + "_incremental", () -> mergeEngine(engine, false, false));
            if (!engine.equals("first-row")) {
                // Java refuses deletion vectors with first-row.
                gens.put("j20_pk_" + e + "_dv", () -> mergeEngine(engine, true, true));
            }
        }
        gens.put("j20_pk_dedup_seqfield", this::pkSequenceField);
        gens.put("j20_pk_partitioned_multikey", this::pkPartitioned);
        gens.put("j20_pk_dynamic_bucket", this::pkDynamicBucket);
        for (String p : new String[] {"input", "lookup", "full-compaction"}) {
            gens.put("j20_pk_changelog_" + p.replace("-", "_"), () -> changelog(p));
        }
        gens.put("j20_pk_postpone", this::postpone);
        gens.put("j20_pk_managed_blob", () -> pkBlob(false));
        gens.put("j20_pk_managed_blob_compacted", () -> pkBlob(true));
        gens.put("j20_pk_blob_array_map", this::pkBlobCollections);
        gens.put("j20_append_row_tracking", this::appendRowTracking);
        gens.put("j20_de_update_columns", () -> dataEvolution(false));
        gens.put("j20_de_compacted", () -> dataEvolution(true));
        gens.put("j20_de_blob_placeholder", () -> deBlobPlaceholder(false));
        gens.put("j20_de_blob_placeholder_compacted", () -> deBlobPlaceholder(true));
        gens.put("j20_variant_plain", () -> variantTable(null));
        gens.put("j20_variant_shredded", () -> variantTable("static"));
        gens.put("j20_variant_inferred", () -> variantTable("infer"));
        for (String f : new String[] {"parquet", "orc", "avro"}) {
            gens.put("j20_all_types_" + f, () -> allTypes(f));
            gens.put("j20_evo_casts_append_" + f, () -> evolutionCasts(f, "append"));
        }
        gens.put("j20_evo_casts_pk", () -> evolutionCasts("parquet", "pk"));
        gens.put("j20_evo_casts_de", () -> evolutionCasts("parquet", "de"));
        gens.put("j20_evo_nested", this::evolutionNested);
        gens.put("j20_map_shared_parquet", () -> sharedMap("parquet", 8));
        gens.put("j20_map_shared_orc", () -> sharedMap("orc", 8));
        gens.put("j20_map_shared_overflow", () -> sharedMap("parquet", 1));
        gens.put("j20_append_partitioned_tags", this::appendPartitioned);
        for (Map.Entry<String, Gen> e : gens.entrySet()) {
            if (!only.isEmpty() && only.stream().noneMatch(e.getKey()::startsWith)) {
                continue;
            }
            try {
                e.getValue().run();
            } catch (Exception ex) {
                throw new RuntimeException(e.getKey() + ": " + ex, ex);
            }
        }
    }

    /** PK table (k INT, v1 INT, v2 STRING, v3 BIGINT), bucket 2, with `engine`. */
    private void mergeEngine(String engine, boolean full, boolean dv) throws Exception {
        String name = "j20_pk_" + engine.replace("-", "_") + (dv ? "_dv" : full ? "_full" : "_incremental");
        Schema.Builder b = Schema.newBuilder()
                .column("k", DataTypes.INT().notNull())
                .column("v1", DataTypes.INT())
                .column("v2", DataTypes.STRING())
                .column("v3", DataTypes.BIGINT())
                .primaryKey("k")
                .option("bucket", "2")
                .option("merge-engine", engine);
        if (engine.equals("aggregation")) {
            b.option("fields.v1.aggregate-function", "sum")
                    .option("fields.v2.aggregate-function", "listagg")
                    .option("fields.v3.aggregate-function", "max")
                    .option("aggregation.remove-record-on-delete", "true");
        }
        if (engine.equals("partial-update")) {
            b.option("fields.v3.sequence-group", "v2");
        }
        if (!full) {
            b.option("num-sorted-run.compaction-trigger", "3");
        }
        if (dv) {
            b.option("deletion-vectors.enabled", "true");
        }
        T t = new T(name, b.build(), "primary-key table (k INT, v1 INT, v2 STRING, v3 BIGINT), bucket 2, merge-engine "
                + engine + (dv ? ", deletion-vectors.enabled" : "")
                + (engine.equals("aggregation") ? " (v1 sum, v2 listagg, v3 max, aggregation.remove-record-on-delete)" : "")
                + (engine.equals("partial-update") ? " (sequence group v3 -> v2)" : ""));
        for (int c = 0; c < 4; c++) {
            List<InternalRow> rows = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                int k = rnd.nextInt(12);
                boolean nulls = engine.equals("partial-update") && rnd.nextInt(3) == 0;
                rows.add(row(k, nulls ? null : rnd.nextInt(1000), nulls ? null : s(word()),
                        engine.equals("partial-update") ? (long) c * 10 + i : (long) rnd.nextInt(100)));
            }
            t.write(rows);
            if (c == 1) {
                t.note("commits 1-2 of 8 random rows (keys 0..11)");
            }
        }
        t.compact(full).note("commits 3-4; then Java's " + (full ? "full" : "incremental") + " compaction");
        if (!engine.equals("first-row")) {
            t.write(row(RowKind.DELETE, 1, null, null, null), row(3, 7, s("late"), 99L));
            t.note("then a commit deleting k=1 and upserting k=3");
        } else {
            t.write(row(3, 7, s("late"), 99L), row(40, 1, s("new"), 1L));
            t.note("then a commit of k=3 (ignored by first-row) and k=40");
        }
        t.standardReads("v2,k");
        t.done();
    }

    private void pkSequenceField() throws Exception {
        T t = new T("j20_pk_dedup_seqfield", Schema.newBuilder()
                .column("k", DataTypes.INT().notNull()).column("seq", DataTypes.BIGINT())
                .column("v", DataTypes.STRING())
                .primaryKey("k").option("bucket", "1").option("sequence.field", "seq").build(),
                "deduplicate with sequence.field = seq, bucket 1; later commits carry lower seq for some keys");
        t.write(row(1, 10L, s("a10")), row(2, 10L, s("b10")), row(3, 5L, s("c5")));
        t.write(row(1, 5L, s("a5")), row(2, 20L, s("b20")), row(4, 1L, s("d1")));
        t.compact(true).write(row(3, 1L, s("c1")), row(4, 9L, s("d9")));
        t.standardReads("v");
        t.done();
    }

    private void pkPartitioned() throws Exception {
        T t = new T("j20_pk_partitioned_multikey", Schema.newBuilder()
                .column("dt", DataTypes.STRING().notNull()).column("k1", DataTypes.INT().notNull())
                .column("k2", DataTypes.STRING().notNull()).column("v", DataTypes.DOUBLE())
                .partitionKeys("dt").primaryKey("dt", "k1", "k2").option("bucket", "2").build(),
                "partitioned (dt) primary key (dt, k1, k2), bucket 2, three commits with updates and a delete");
        for (int c = 0; c < 3; c++) {
            List<InternalRow> rows = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                rows.add(row(s("2024-01-0" + (1 + rnd.nextInt(3))), rnd.nextInt(4), s("x" + rnd.nextInt(2)),
                        rnd.nextInt(1000) / 8.0));
            }
            t.write(rows);
        }
        t.write(row(RowKind.DELETE, s("2024-01-01"), 0, s("x0"), null));
        t.standardReads("k2,dt");
        t.done();
    }

    private void pkDynamicBucket() throws Exception {
        T t = new T("j20_pk_dynamic_bucket", Schema.newBuilder()
                .column("k", DataTypes.BIGINT().notNull()).column("v", DataTypes.STRING())
                .primaryKey("k").option("bucket", "-1").build(),
                "dynamic bucket (bucket -1): HASH index files; rows written with write(row, bucket), buckets 0 and 1");
        for (int c = 0; c < 3; c++) {
            for (int bucket = 0; bucket < 2; bucket++) {
                List<InternalRow> rows = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    rows.add(row((long) (bucket * 100 + rnd.nextInt(10)), s(word())));
                }
                t.write(rows, bucket);
            }
        }
        t.standardReads("v");
        t.done();
    }

    private void changelog(String producer) throws Exception {
        String name = "j20_pk_changelog_" + producer.replace("-", "_");
        T t = new T(name, Schema.newBuilder()
                .column("k", DataTypes.INT().notNull()).column("v", DataTypes.STRING())
                .primaryKey("k").option("bucket", "1").option("changelog-producer", producer).build(),
                "changelog-producer " + producer + ", bucket 1, three commits and a full compaction");
        t.write(row(1, s("a")), row(2, s("b")));
        t.write(row(1, s("a2")), row(RowKind.DELETE, 2, null), row(3, s("c")));
        t.compact(true);
        t.write(row(3, s("c2")), row(4, s("d")));
        t.standardReads("v");
        t.done();
    }

    private void postpone() throws Exception {
        T t = new T("j20_pk_postpone", Schema.newBuilder()
                .column("k", DataTypes.INT().notNull()).column("v", DataTypes.STRING())
                .primaryKey("k").option("bucket", "-2").build(),
                "postpone bucket (bucket -2): commit 1 into the postpone bucket (not visible to batch reads); commit 2 by the batch fixed-bucket write (PostponeUtils.tableForFixBucketWrite, rows routed to 2 real buckets by the bucket function, messages of 2 total buckets, as Flink's PostponeBatchWriteOperator); commit 3 into the postpone bucket again");
        t.write(row(1, s("p1")), row(9, s("p9")));
        t.writeFixedBuckets(2, Arrays.asList(row(1, s("a")), row(2, s("b")), row(3, s("c")),
                row(4, s("d")), row(5, s("e"))));
        t.write(row(2, s("b-late")), row(6, s("f")));
        t.tag("t2", 2);
        t.read("snapshot 2", "--snapshot", "2");
        t.read("tag t2", "--tag", "t2");
        t.read("columns v", "--columns", "v");
        t.done();
    }

    private void pkBlob(boolean compacted) throws Exception {
        String name = compacted ? "j20_pk_managed_blob_compacted" : "j20_pk_managed_blob";
        T t = new T(name, Schema.newBuilder()
                .column("k", DataTypes.INT().notNull()).column("label", DataTypes.STRING())
                .column("payload", DataTypes.BLOB())
                .primaryKey("k").option("bucket", "1").build(),
                "primary-key table with a managed BLOB column (.managed.blob + .blobref files), bucket 1");
        t.write(row(1, s("one"), blob("payload-1")), row(2, s("two"), blob("payload-2")),
                row(3, s("three"), null));
        t.write(row(2, s("two-v2"), blob("payload-2-v2")), row(4, s("four"), blob("payload-4")));
        t.write(row(RowKind.DELETE, 1, null, null));
        t.note("commits: {1, 2, 3 (NULL blob)}, {2 updated, 4}, delete 1");
        if (compacted) {
            t.compact(true).note("then Java's full compaction");
            t.write(row(5, s("five"), blob("payload-5")));
        }
        t.standardReads("payload,k");
        t.done();
    }

    private void pkBlobCollections() throws Exception {
        T t = new T("j20_pk_blob_array_map", Schema.newBuilder()
                .column("k", DataTypes.INT().notNull())
                .column("blobs", DataTypes.ARRAY(DataTypes.BLOB()))
                .column("named", DataTypes.MAP(DataTypes.STRING(), DataTypes.BLOB()))
                .primaryKey("k").option("bucket", "1").build(),
                "primary-key table with ARRAY<BLOB> and MAP<STRING, BLOB> managed blob columns, bucket 1");
        t.write(row(1, arr(blob("a0"), blob("a1")), map(s("x"), blob("mx"))),
                row(2, arr(), map()), row(3, null, null));
        t.write(row(2, arr(blob("b0")), map(s("y"), blob("my"), s("z"), null)));
        t.standardReads("named");
        t.done();
    }

    private void appendRowTracking() throws Exception {
        T t = new T("j20_append_row_tracking", Schema.newBuilder()
                .column("id", DataTypes.INT()).column("v", DataTypes.STRING())
                .option("row-tracking.enabled", "true").build(),
                "append table with row-tracking.enabled: three commits");
        for (int c = 0; c < 3; c++) {
            List<InternalRow> rows = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                rows.add(row(c * 10 + i, s(word())));
            }
            t.write(rows);
        }
        t.standardReads("v,_ROW_ID,_SEQUENCE_NUMBER");
        t.read("row id and sequence number", "--columns", "id,_ROW_ID,_SEQUENCE_NUMBER");
        t.done();
    }

    private void dataEvolution(boolean compacted) throws Exception {
        String name = compacted ? "j20_de_compacted" : "j20_de_update_columns";
        T t = new T(name, Schema.newBuilder()
                .column("id", DataTypes.INT()).column("a", DataTypes.STRING()).column("b", DataTypes.BIGINT())
                .option("row-tracking.enabled", "true").option("data-evolution.enabled", "true").build(),
                "data-evolution table (row tracking): 6 rows, then files of column b alone for row ids 0..5 and of a for 2..3");
        List<InternalRow> rows = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            rows.add(row(i, s("a" + i), (long) i));
        }
        t.write(rows);
        List<InternalRow> bs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            bs.add(row(100L + i));
        }
        t.writeColumns(0, Arrays.asList("b"), bs);
        t.write(row(6, s("a6"), 6L), row(7, s("a7"), 7L));
        if (compacted) {
            t.compactDataEvolution().note("then Java's DataEvolutionCompactCoordinator compaction");
        }
        t.standardReads("b,_ROW_ID");
        t.done();
    }

    private void deBlobPlaceholder(boolean compacted) throws Exception {
        String name = compacted ? "j20_de_blob_placeholder_compacted" : "j20_de_blob_placeholder";
        T t = new T(name, Schema.newBuilder()
                .column("id", DataTypes.INT()).column("name", DataTypes.STRING()).column("data", DataTypes.BLOB())
                .option("row-tracking.enabled", "true").option("data-evolution.enabled", "true").build(),
                "data-evolution BLOB table: 4 rows, then a blob-column update of row ids 0..3 with placeholders for 0, 2, 3 (row 1 replaced), then a second update with a placeholder everywhere but row 3");
        t.write(row(0, s("r0"), blob("blob-0")), row(1, s("r1"), blob("blob-1")),
                row(2, s("r2"), blob("blob-2")), row(3, s("r3"), null));
        t.writeColumns(0, Arrays.asList("data"), Arrays.asList(
                row(BlobPlaceholder.INSTANCE), row(blob("updated-1")),
                row(BlobPlaceholder.INSTANCE), row(BlobPlaceholder.INSTANCE)));
        t.writeColumns(0, Arrays.asList("data"), Arrays.asList(
                row(BlobPlaceholder.INSTANCE), row(BlobPlaceholder.INSTANCE),
                row(BlobPlaceholder.INSTANCE), row(blob("updated-3"))));
        if (compacted) {
            t.compactDataEvolution().note("then Java's DataEvolutionCompactCoordinator compaction");
        }
        t.standardReads("data,id");
        t.done();
    }

    private static final String[] VARIANTS = {
        "{\"city\":\"Berlin\",\"n\":3}",
        "{\"other\":true}",
        null,
        "{\"city\":\"Paris\",\"n\":1099511627776,\"extra\":[1,2.5,\"x\"]}",
        "{\"n\":7,\"zz\":{\"deep\":null}}",
        "[1,2,3]",
        "\"just a string\"",
        "{\"city\":12,\"n\":\"not a number\"}",
        "12.345",
        "{\"a\":{\"b\":[{\"c\":1},{\"c\":2}]},\"city\":\"Köln\"}",
    };

    private void variantTable(String shredding) throws Exception {
        String name = shredding == null ? "j20_variant_plain"
                : shredding.equals("static") ? "j20_variant_shredded" : "j20_variant_inferred";
        Schema.Builder b = Schema.newBuilder()
                .column("id", DataTypes.INT()).column("payload", DataTypes.VARIANT())
                .column("tags", DataTypes.ARRAY(DataTypes.VARIANT()));
        String what = "append table with VARIANT columns (payload, tags ARRAY<VARIANT>)";
        if ("static".equals(shredding)) {
            b.option("variant.shreddingSchema", "{\"type\":\"ROW\",\"fields\":[{\"name\":\"payload\",\"type\":"
                    + "{\"type\":\"ROW\",\"fields\":[{\"name\":\"city\",\"type\":\"STRING\"},"
                    + "{\"name\":\"n\",\"type\":\"BIGINT\"},{\"name\":\"a\",\"type\":{\"type\":\"ROW\","
                    + "\"fields\":[{\"name\":\"b\",\"type\":{\"type\":\"ARRAY\",\"element\":{\"type\":\"ROW\","
                    + "\"fields\":[{\"name\":\"c\",\"type\":\"INT\"}]}}}]}}]}}]}");
            what += ", variant.shreddingSchema shredding payload.city STRING, payload.n BIGINT, payload.a.b[].c INT";
        } else if ("infer".equals(shredding)) {
            b.option("variant.inferShreddingSchema", "true");
            what += ", variant.inferShreddingSchema = true";
        }
        T t = new T(name, b.build(), what);
        for (int c = 0; c < 2; c++) {
            List<InternalRow> rows = new ArrayList<>();
            for (int i = 0; i < VARIANTS.length; i++) {
                String j = VARIANTS[(i + c * 3) % VARIANTS.length];
                rows.add(row(c * 100 + i, j == null ? null : variant(j),
                        i % 4 == 0 ? null : arr(variant("{\"t\":" + i + "}"), variant("\"s" + c + "\""))));
            }
            t.write(rows);
        }
        t.standardReads("payload");
        t.done();
    }

    private static Schema.Builder typesColumns(Schema.Builder b, String format) {
        b.column("id", DataTypes.INT().notNull())
                .column("c_bool", DataTypes.BOOLEAN())
                .column("c_tinyint", DataTypes.TINYINT())
                .column("c_smallint", DataTypes.SMALLINT())
                .column("c_int", DataTypes.INT())
                .column("c_bigint", DataTypes.BIGINT())
                .column("c_float", DataTypes.FLOAT())
                .column("c_double", DataTypes.DOUBLE())
                .column("c_dec_small", DataTypes.DECIMAL(9, 2))
                .column("c_dec_mid", DataTypes.DECIMAL(18, 4))
                .column("c_dec_big", DataTypes.DECIMAL(38, 10))
                .column("c_char", DataTypes.CHAR(5))
                .column("c_varchar", DataTypes.VARCHAR(20))
                .column("c_string", DataTypes.STRING())
                .column("c_binary", DataTypes.BINARY(4))
                .column("c_varbinary", DataTypes.VARBINARY(10))
                .column("c_bytes", DataTypes.BYTES())
                .column("c_date", DataTypes.DATE())
                .column("c_time", DataTypes.TIME(3))
                .column("c_ts0", DataTypes.TIMESTAMP(0))
                .column("c_ts3", DataTypes.TIMESTAMP(3))
                .column("c_ts6", DataTypes.TIMESTAMP(6))
                .column("c_ts9", DataTypes.TIMESTAMP(format.equals("avro") ? 6 : 9))
                .column("c_ltz3", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3))
                .column("c_ltz6", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(6))
                .column("c_array", DataTypes.ARRAY(DataTypes.INT()))
                .column("c_array_str", DataTypes.ARRAY(DataTypes.STRING()))
                .column("c_map", DataTypes.MAP(DataTypes.STRING(), DataTypes.BIGINT()))
                .column("c_map_int", DataTypes.MAP(DataTypes.INT(), DataTypes.STRING()))
                .column("c_multiset", DataTypes.MULTISET(DataTypes.STRING()))
                .column("c_row", DataTypes.ROW(DataTypes.FIELD(100, "x", DataTypes.INT()),
                        DataTypes.FIELD(101, "y", DataTypes.ARRAY(DataTypes.STRING()))));
        if (format.equals("parquet")) {
            b.column("c_variant", DataTypes.VARIANT());
        }
        return b;
    }

    private InternalRow typesRow(int id, String format) {
        boolean nul = id % 5 == 4;
        long base = 1_700_000_000_000L + (long) id * 86_400_123L * (id % 2 == 0 ? 1 : -40);
        Map<Object, Object> ms = new LinkedHashMap<>();
        ms.put(s("a" + id), 2);
        ms.put(s("b"), 1);
        List<Object> v = new ArrayList<>(Arrays.asList(
                id,
                nul ? null : id % 2 == 0,
                nul ? null : (byte) (id * 37 - 100),
                nul ? null : (short) (id * 3000 - 20000),
                nul ? null : rnd.nextInt(),
                nul ? null : rnd.nextLong(),
                nul ? null : (id == 3 ? Float.NaN : rnd.nextFloat() * 1000 - 500),
                nul ? null : (id == 2 ? Double.NEGATIVE_INFINITY : rnd.nextGaussian() * 1e6),
                nul ? null : dec(String.valueOf(rnd.nextInt(2_000_000) - 1_000_000) + ".25", 9, 2),
                nul ? null : dec("-" + rnd.nextInt(1_000_000_000) + ".0001", 18, 4),
                nul ? null : dec(rnd.nextInt(1000) + "12345678901234567890.0123456789", 38, 10),
                nul ? null : s("c" + id),
                nul ? null : s(word()),
                nul ? null : s(id == 1 ? "" : word() + " " + word()),
                nul ? null : new byte[] {1, (byte) id, (byte) 0xff, 0},
                nul ? null : new byte[] {(byte) id, 42},
                nul ? null : word().getBytes(StandardCharsets.UTF_8),
                nul ? null : (id - 3) * 7777,
                nul ? null : (id * 12_345_678) % 86_400_000,
                nul ? null : ts((base / 1000) * 1000, 0),
                nul ? null : ts(base, 0),
                nul ? null : ts(base, 456_000),
                nul ? null : ts(base, 456_789),
                nul ? null : ts(base - 1, 0),
                nul ? null : ts(base + 7, 999_000),
                nul ? null : arr(1, null, id),
                nul ? null : arr(s("x"), null, s(word())),
                nul ? null : map(s("k" + id), (long) id, s("nul"), null),
                nul ? null : map(id, s("v" + id), -id, null),
                nul ? null : new GenericMap(ms),
                nul ? null : GenericRow.of(id * 2, arr(s("r" + id)))));
        if (format.equals("avro")) {
            // Avro holds TIMESTAMP(6) at most: c_ts9 is TIMESTAMP(6) there.
            v.set(22, nul ? null : ts(base, 456_000));
        }
        if (format.equals("parquet")) {
            v.add(nul ? null : variant(VARIANTS[id % VARIANTS.length] == null ? "null" : VARIANTS[id % VARIANTS.length]));
        }
        return GenericRow.of(v.toArray());
    }

    private void allTypes(String format) throws Exception {
        T t = new T("j20_all_types_" + format,
                typesColumns(Schema.newBuilder(), format).primaryKey("id").option("bucket", "1")
                        .option("file.format", format).build(),
                "primary-key table of every type (" + format + " data files"
                        + (format.equals("avro") ? "; c_ts9 is TIMESTAMP(6), Avro's limit" : "")
                        + (format.equals("parquet") ? ", with a VARIANT column" : "") + "), bucket 1, two commits; every 5th row all NULL");
        List<InternalRow> rows = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            rows.add(typesRow(i, format));
        }
        t.write(rows);
        rows.clear();
        for (int i = 5; i < 13; i++) {
            rows.add(typesRow(i, format));
        }
        t.write(rows);
        t.standardReads("c_ts9,c_row,c_map,id");
        t.done();
    }

    /**
     * Columns whose types change through Java's casts: written before the change, read after.
     */
    private void evolutionCasts(String format, String kind) throws Exception {
        String name = kind.equals("append") ? "j20_evo_casts_append_" + format : "j20_evo_casts_" + kind;
        Schema.Builder b = Schema.newBuilder()
                .column("id", DataTypes.INT().notNull())
                .column("ts3_to_str", DataTypes.TIMESTAMP(3))
                .column("ts6_to_str", DataTypes.TIMESTAMP(6))
                .column("ltz_to_str", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3))
                .column("int_to_str", DataTypes.INT())
                .column("big_to_varchar3", DataTypes.BIGINT())
                .column("dbl_to_str", DataTypes.DOUBLE())
                .column("flt_to_dbl", DataTypes.FLOAT())
                .column("dec_to_str", DataTypes.DECIMAL(10, 3))
                .column("dec_rescale", DataTypes.DECIMAL(10, 3))
                .column("dec_to_int", DataTypes.DECIMAL(10, 3))
                .column("date_to_str", DataTypes.DATE())
                .column("bool_to_str", DataTypes.BOOLEAN())
                .column("str_to_int", DataTypes.STRING())
                .column("str_to_dec", DataTypes.STRING())
                .column("str_to_date", DataTypes.STRING())
                .column("str_to_ts", DataTypes.STRING())
                .column("str_to_bool", DataTypes.STRING())
                .column("int_to_big", DataTypes.INT())
                .column("big_to_int", DataTypes.BIGINT())
                .column("int_to_dbl", DataTypes.INT())
                .column("int_to_dec", DataTypes.INT())
                .column("ts6_to_ts3", DataTypes.TIMESTAMP(6))
                .column("ts_to_date", DataTypes.TIMESTAMP(3))
                .column("ts_to_big", DataTypes.TIMESTAMP(3))
                .column("big_to_ts", DataTypes.BIGINT())
                .column("date_to_ts", DataTypes.DATE())
                .column("char_to_varchar", DataTypes.CHAR(6))
                .column("vc_to_char", DataTypes.VARCHAR(10))
                .column("bin_to_str", DataTypes.BYTES())
                .column("str_to_bytes", DataTypes.STRING())
                .column("arr_to_str", DataTypes.ARRAY(DataTypes.INT()))
                .column("map_to_str", DataTypes.MAP(DataTypes.STRING(), DataTypes.DOUBLE()))
                .column("row_to_str", DataTypes.ROW(DataTypes.FIELD(200, "p", DataTypes.INT()),
                        DataTypes.FIELD(201, "q", DataTypes.DATE())))
                .option("file.format", format);
        if (format.equals("orc")) {
            // ORC has no TIME; nothing here uses it.
        }
        String what = kind + " table (" + format + ") written with one set of column types, then ALTERed column by column through casts Java allows (TIMESTAMP/LTZ/INT/BIGINT/DOUBLE/DECIMAL/DATE/BOOLEAN/BYTES/ARRAY/MAP/ROW to STRING, STRING to INT/DECIMAL/DATE/TIMESTAMP/BOOLEAN/BYTES, widenings and narrowings, DECIMAL rescale, TIMESTAMP(6) to TIMESTAMP(3), TIMESTAMP to DATE/BIGINT, BIGINT and DATE to TIMESTAMP, CHAR/VARCHAR lengths), then more rows";
        if (kind.equals("pk")) {
            b.primaryKey("id").option("bucket", "2");
        } else if (kind.equals("de")) {
            b.option("row-tracking.enabled", "true").option("data-evolution.enabled", "true");
        }
        T t = new T(name, b.build(), what);
        String[] strInts = {"12", "-7", "300", "0", "2147483647", "12.9", "-0.5", "42"};
        String[] strDecs = {"1.2345", "-0.005", "99999.995", "0.0049", "1e3", "-12", "3.14159", "7"};
        String[] strDates = {"2024-01-05", "1999-12-31", "2024-02-29", "1970-01-01", "2024-3-7", "2000-01-01 10:00:00", "-1", "19000"};
        String[] strTs = {"2024-01-05 12:34:56", "2024-01-05 12:34:56.123456789", "2024-1-5 3:4:5", "2024-01-05", "1700000000123", "1999-12-31 23:59:59.999", "2024-02-30 01:02:03", "2024-01-05 24:00:00"};
        String[] strBools = {"true", "FALSE", "1", "0", "yes", "n", "T", "f"};
        for (int c = 0; c < 2; c++) {
            List<InternalRow> rows = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                int id = c * 8 + i;
                long base = 1_700_000_000_000L + (long) id * 3_600_123L * (id % 3 == 0 ? -9000 : 1);
                boolean nul = id == 5;
                rows.add(GenericRow.of(
                        id,
                        nul ? null : ts(base, 0),
                        nul ? null : ts(base, (id % 4) * 250_000),
                        nul ? null : ts(base + 5, 0),
                        nul ? null : id * 1000 - 3500,
                        nul ? null : (long) id * 123_457L,
                        nul ? null : (id == 2 ? 1e7 : id == 3 ? 1.0 / 3 : id * 0.1 - 0.3),
                        nul ? null : id * 0.1f,
                        nul ? null : dec((id * 1234 - 5000) + "." + (id % 10) + "05", 10, 3),
                        nul ? null : dec((id * 17) + ".125", 10, 3),
                        nul ? null : dec("-" + (id * 99) + ".999", 10, 3),
                        nul ? null : (id - 4) * 10_000,
                        nul ? null : id % 3 == 0,
                        nul ? null : s(strInts[i]),
                        nul ? null : s(strDecs[i]),
                        nul ? null : s(strDates[i]),
                        nul ? null : s(strTs[i]),
                        nul ? null : s(strBools[i]),
                        nul ? null : Integer.MAX_VALUE - id,
                        nul ? null : 3_000_000_000L * (id % 2 == 0 ? 1 : -1) + id,
                        nul ? null : id * 7,
                        nul ? null : id * 100_003,
                        nul ? null : ts(base, 123_000),
                        nul ? null : ts(-86_400_001L * (id + 1), 0),
                        nul ? null : ts(base - 999, 0),
                        nul ? null : 1_700_000_000L + id,
                        nul ? null : id * 1000 - 200,
                        nul ? null : s("ch" + id),
                        nul ? null : s("vc" + id),
                        nul ? null : ("b" + id + (id == 4 ? "\u00e9" : "")).getBytes(StandardCharsets.UTF_8),
                        nul ? null : s("bytes" + id),
                        nul ? null : arr(id, null, -id),
                        nul ? null : map(s("k"), id * 1.5, s("z"), null),
                        nul ? null : GenericRow.of(id, id * 100)));
            }
            t.write(rows);
            if (c == 0) {
                t.alter(
                        SchemaChange.updateColumnType("ts3_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("ts6_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("ltz_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("int_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("big_to_varchar3", DataTypes.VARCHAR(3)),
                        SchemaChange.updateColumnType("dbl_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("flt_to_dbl", DataTypes.DOUBLE()),
                        SchemaChange.updateColumnType("dec_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("dec_rescale", DataTypes.DECIMAL(6, 1)),
                        SchemaChange.updateColumnType("dec_to_int", DataTypes.INT()),
                        SchemaChange.updateColumnType("date_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("bool_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("str_to_int", DataTypes.INT()),
                        SchemaChange.updateColumnType("str_to_dec", DataTypes.DECIMAL(8, 2)),
                        SchemaChange.updateColumnType("str_to_date", DataTypes.DATE()),
                        SchemaChange.updateColumnType("str_to_ts", DataTypes.TIMESTAMP(6)),
                        SchemaChange.updateColumnType("str_to_bool", DataTypes.BOOLEAN()),
                        SchemaChange.updateColumnType("int_to_big", DataTypes.BIGINT()),
                        SchemaChange.updateColumnType("big_to_int", DataTypes.INT()),
                        SchemaChange.updateColumnType("int_to_dbl", DataTypes.DOUBLE()),
                        SchemaChange.updateColumnType("int_to_dec", DataTypes.DECIMAL(9, 2)),
                        SchemaChange.updateColumnType("ts6_to_ts3", DataTypes.TIMESTAMP(3)),
                        SchemaChange.updateColumnType("ts_to_date", DataTypes.DATE()),
                        SchemaChange.updateColumnType("ts_to_big", DataTypes.BIGINT()),
                        SchemaChange.updateColumnType("big_to_ts", DataTypes.TIMESTAMP(3)),
                        SchemaChange.updateColumnType("date_to_ts", DataTypes.TIMESTAMP(0)),
                        SchemaChange.updateColumnType("char_to_varchar", DataTypes.VARCHAR(10)),
                        SchemaChange.updateColumnType("vc_to_char", DataTypes.CHAR(8)),
                        SchemaChange.updateColumnType("bin_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("str_to_bytes", DataTypes.VARBINARY(4)),
                        SchemaChange.updateColumnType("arr_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("map_to_str", DataTypes.STRING()),
                        SchemaChange.updateColumnType("row_to_str", DataTypes.STRING()));
                break;
            }
        }
        // Rows of the new schema.
        List<InternalRow> rows = new ArrayList<>();
        RowType rt = t.table.rowType();
        for (int id = 20; id < 23; id++) {
            Object[] v = new Object[rt.getFieldCount()];
            v[0] = id;
            for (int f = 1; f < v.length; f++) {
                v[f] = id == 22 ? null : sample(rt.getTypeAt(f), id);
            }
            rows.add(GenericRow.of(v));
        }
        if (kind.equals("pk")) {
            Object[] v = new Object[rt.getFieldCount()];
            v[0] = 3;
            for (int f = 1; f < v.length; f++) {
                v[f] = sample(rt.getTypeAt(f), 3);
            }
            rows.add(GenericRow.of(v));
        }
        t.write(rows);
        t.standardReads("ts3_to_str,str_to_ts,row_to_str,id");
        t.read("schema-0 snapshot with the old types", "--snapshot", "1", "--columns", "id,dec_rescale,big_to_int");
        t.done();
    }

    /** A value of a simple type for rows written after the change. */
    private static Object sample(DataType t, int id) {
        switch (t.getTypeRoot()) {
            case CHAR:
            case VARCHAR:
                return s("new" + id);
            case BOOLEAN:
                return id % 2 == 0;
            case TINYINT:
                return (byte) id;
            case SMALLINT:
                return (short) id;
            case INTEGER:
                return id;
            case BIGINT:
                return (long) id;
            case FLOAT:
                return (float) id;
            case DOUBLE:
                return id + 0.5;
            case DECIMAL:
                org.apache.paimon.types.DecimalType d = (org.apache.paimon.types.DecimalType) t;
                return dec(String.valueOf(id), d.getPrecision(), d.getScale());
            case DATE:
                return 19000 + id;
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                // Within the type's precision: Java stores and reads back digits beyond it
                // (a TIMESTAMP(0) Parquet column keeps milliseconds), which no writer that
                // casts to the column type (Flink, Spark) produces.
                return ts(1_710_000_000_000L + id * (DataTypeChecks.getPrecision(t) < 3 ? 1000L : 1L), 0);
            case BINARY:
            case VARBINARY:
                return new byte[] {(byte) id};
            default:
                return null;
        }
    }

    /** Nested changes: an ARRAY element, a MAP value and a ROW field change type. */
    private void evolutionNested() throws Exception {
        T t = new T("j20_evo_nested", Schema.newBuilder()
                .column("id", DataTypes.INT())
                .column("arr", DataTypes.ARRAY(DataTypes.INT()))
                .column("m", DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()))
                .column("r", DataTypes.ROW(DataTypes.FIELD(10, "x", DataTypes.INT()),
                        DataTypes.FIELD(11, "y", DataTypes.STRING())))
                .build(),
                "append table: ARRAY<INT> element to BIGINT, MAP<STRING, INT> value to STRING, ROW field r.x INT to STRING and r.y renamed to r.z, then more rows");
        t.write(row(1, arr(1, null, 3), map(s("a"), 1, s("b"), null), GenericRow.of(7, s("y7"))),
                row(2, null, map(), GenericRow.of(null, s("y8"))), row(3, arr(), null, null));
        t.alter(SchemaChange.updateColumnType(new String[] {"arr", "element"}, DataTypes.BIGINT(), true),
                SchemaChange.updateColumnType(new String[] {"m", "value"}, DataTypes.STRING(), true),
                SchemaChange.updateColumnType(new String[] {"r", "x"}, DataTypes.STRING(), true),
                SchemaChange.renameColumn(new String[] {"r", "y"}, "z"));
        t.write(row(4, arr(4L), map(s("c"), s("see")), GenericRow.of(s("x4"), s("z4"))));
        t.standardReads("r,id");
        t.done();
    }

    private void sharedMap(String format, int maxColumns) throws Exception {
        String name = maxColumns == 1 ? "j20_map_shared_overflow" : "j20_map_shared_" + format;
        T t = new T(name, Schema.newBuilder()
                .column("id", DataTypes.INT()).column("m", DataTypes.MAP(DataTypes.STRING().notNull(), DataTypes.BIGINT()))
                .option("file.format", format)
                .option("fields.m.map.storage-layout", "shared-shredding")
                .option("fields.m.map.shared-shredding.max-columns", String.valueOf(maxColumns))
                .build(),
                "append table (" + format + ") with MAP<STRING, BIGINT> m stored as map.storage-layout = shared-shredding, max-columns "
                        + maxColumns + (maxColumns == 1 ? " (most keys overflow)" : ""));
        for (int c = 0; c < 2; c++) {
            List<InternalRow> rows = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                Map<Object, Object> m = new LinkedHashMap<>();
                int n = rnd.nextInt(5);
                for (int k = 0; k < n; k++) {
                    m.put(s("key" + rnd.nextInt(12)), rnd.nextInt(4) == 0 ? null : (long) rnd.nextInt(1000));
                }
                rows.add(row(c * 10 + i, i == 3 ? null : new GenericMap(m)));
            }
            t.write(rows);
        }
        t.standardReads("m");
        t.done();
    }

    private void appendPartitioned() throws Exception {
        T t = new T("j20_append_partitioned_tags", Schema.newBuilder()
                .column("dt", DataTypes.STRING()).column("id", DataTypes.INT()).column("v", DataTypes.STRING())
                .column("n", DataTypes.BIGINT())
                .partitionKeys("dt").option("bucket", "2").option("bucket-key", "id").build(),
                "append table partitioned by dt, fixed bucket 2 (bucket-key id), three commits, tags t1 (snapshot 1) and t2 (snapshot 2)");
        for (int c = 0; c < 3; c++) {
            List<InternalRow> rows = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                rows.add(row(s("2024-0" + (1 + rnd.nextInt(2)) + "-01"), rnd.nextInt(50), s(word()), (long) c));
            }
            t.write(rows);
        }
        t.tag("t2", 2);
        t.read("tag t2", "--tag", "t2");
        t.standardReads("n,dt");
        t.done();
    }
}
