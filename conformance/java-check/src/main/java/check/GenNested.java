package check;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryRowWriter;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.fs.Path;
import org.apache.paimon.options.Options;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * GenNested: writes the {@code conformance/java-tables} tables of issue #41 with Java Paimon's
 * public table API (catalog {@code createTable} / {@code alterTable}, {@code BatchTableWrite},
 * {@code BatchTableCommit}, {@code BatchTableWrite.compact}); see
 * {@code conformance/java-tables/README.md}. Built against paimon-bundle 2.0.0.
 *
 * <pre>
 * GenNested WAREHOUSE_DIR [parquet|orc|avro ...] [nested_append|nested_pk|nested_dv|nested_de|agg ...]
 * </pre>
 *
 * Tables (database {@code db}), for each format F:
 *
 * <ul>
 *   <li>{@code j200_nested_append_F}: append table; nested ROW, ARRAY&lt;ROW&gt;,
 *       MAP&lt;_, ROW&gt;, MAP&lt;ROW, _&gt; and ARRAY&lt;ARRAY&lt;ROW&gt;&gt; columns, rows written
 *       under three schemas (nested renames, added, dropped and re-added nested fields, INT to
 *       BIGINT inside a ROW, a renamed intermediate ROW).
 *   <li>{@code j200_nested_pk_F}: the same columns on a primary-key table with {@code
 *       merge-engine = partial-update}, one level-0 file per schema (merge-on-read across
 *       schemas: a later NULL keeps an older file's nested value).
 *   <li>{@code j200_nested_dv_F}: the same columns on a primary-key table with deletion
 *       vectors; old-schema files compacted to the top level, then updated under newer
 *       schemas, so their rows are deleted through deletion vectors.
 *   <li>{@code j200_nested_de_F}: an append table with {@code data-evolution.enabled}: rows
 *       written under schema 0, then, after nested renames, an added nested field and INT to
 *       BIGINT in a ROW, columns {@code v} and {@code ar} of the same rows rewritten alone (field
 *       groups over the same row ids, each file under its own schema), then more nested changes
 *       and more rows.
 *   <li>{@code j200_agg_F}: {@code merge-engine = aggregation} with {@code collect} ({@code
 *       distinct = true}) over many element types, {@code nested_update} and {@code
 *       nested_partial_update} with {@code nested-key}, including elements and keys whose
 *       hashes collide (tree bins of Java's HashMap) and retractions; snapshots before a full
 *       compaction (merge-on-read), the compaction, and writes after it.
 * </ul>
 *
 * All values come from {@code new Random(41)} per table, so a run writes the same rows.
 */
public final class GenNested {

    private GenNested() {}

    public static void main(String[] argv) throws Exception {
        if (argv.length < 1) {
            System.err.println(
                    "usage: GenNested WAREHOUSE_DIR [parquet|orc|avro ...]"
                            + " [nested_append|nested_pk|nested_dv|nested_de|agg ...]");
            System.exit(2);
        }
        String warehouse = new File(argv[0]).getAbsolutePath();
        List<String> formats = new ArrayList<>();
        List<String> kinds = new ArrayList<>();
        for (String a : Arrays.asList(argv).subList(1, argv.length)) {
            (Arrays.asList("parquet", "orc", "avro").contains(a) ? formats : kinds).add(a);
        }
        if (formats.isEmpty()) {
            formats = Arrays.asList("parquet", "orc", "avro");
        }
        if (kinds.isEmpty()) {
            kinds = Arrays.asList("nested_append", "nested_pk", "nested_dv", "nested_de", "agg");
        }
        Options options = new Options();
        options.set("warehouse", warehouse);
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options))) {
            catalog.createDatabase("db", true);
            for (String format : formats) {
                for (String kind : kinds) {
                    switch (kind) {
                        case "nested_append":
                            nestedAppend(catalog, format);
                            break;
                        case "nested_pk":
                            nestedPk(catalog, format);
                            break;
                        case "nested_dv":
                            nestedDv(catalog, format);
                            break;
                        case "nested_de":
                            nestedDataEvolution(catalog, format);
                            break;
                        case "agg":
                            aggregation(catalog, format);
                            break;
                        default:
                            System.err.println("unknown table kind " + kind);
                            System.exit(2);
                    }
                }
            }
        }
        System.exit(0);
    }

    // ---------------------------------------------------------------------------------------
    // Nested schema evolution
    // ---------------------------------------------------------------------------------------

    /** Schema 0 of the nested tables. */
    private static Schema.Builder nestedSchema(String format) {
        return Schema.newBuilder()
                .column("id", DataTypes.INT().notNull())
                .column(
                        "r",
                        DataTypes.ROW(
                                DataTypes.FIELD(0, "x", DataTypes.INT()),
                                DataTypes.FIELD(0, "y", DataTypes.STRING()),
                                DataTypes.FIELD(
                                        0,
                                        "z",
                                        DataTypes.ROW(
                                                DataTypes.FIELD(0, "a", DataTypes.INT()),
                                                DataTypes.FIELD(0, "b", DataTypes.STRING()))),
                                DataTypes.FIELD(0, "d", DataTypes.STRING())))
                .column(
                        "ar",
                        DataTypes.ARRAY(
                                DataTypes.ROW(
                                        DataTypes.FIELD(0, "p", DataTypes.INT()),
                                        DataTypes.FIELD(0, "q", DataTypes.STRING()))))
                .column(
                        "m",
                        DataTypes.MAP(
                                DataTypes.STRING(),
                                DataTypes.ROW(
                                        DataTypes.FIELD(0, "u", DataTypes.INT()),
                                        DataTypes.FIELD(0, "v", DataTypes.STRING()))))
                .column(
                        "mk",
                        DataTypes.MAP(
                                DataTypes.ROW(
                                        DataTypes.FIELD(0, "k1", DataTypes.INT()),
                                        DataTypes.FIELD(0, "k2", DataTypes.STRING())),
                                DataTypes.STRING()))
                .column(
                        "aa",
                        DataTypes.ARRAY(
                                DataTypes.ARRAY(
                                        DataTypes.ROW(
                                                DataTypes.FIELD(0, "e", DataTypes.INT()),
                                                DataTypes.FIELD(0, "f", DataTypes.STRING())))))
                .option("file.format", format);
    }

    /**
     * Schema 0 → 2 (two alterTable calls: Java 2.0 rejects two renames under the same top-level
     * column in one call, "Duplicate key" in applyRenameColumnsToOptions): nested add, renames
     * (ROW, ROW in ROW, ARRAY element, MAP value, ARRAY of ARRAY), INT → BIGINT in a ROW, a
     * nested drop.
     */
    private static List<List<SchemaChange>> alter1() {
        return Arrays.asList(
                Arrays.asList(
                        SchemaChange.addColumn(
                                new String[] {"r", "w"}, DataTypes.INT(), null, null),
                        SchemaChange.renameColumn(new String[] {"r", "y"}, "yy"),
                        SchemaChange.renameColumn(new String[] {"ar", "element", "q"}, "qq"),
                        SchemaChange.updateColumnType(
                                new String[] {"r", "x"}, DataTypes.BIGINT(), true),
                        SchemaChange.renameColumn(new String[] {"m", "value", "v"}, "vv"),
                        SchemaChange.renameColumn(
                                new String[] {"aa", "element", "element", "f"}, "ff"),
                        SchemaChange.dropColumn(new String[] {"r", "d"})),
                Arrays.asList(SchemaChange.renameColumn(new String[] {"r", "z", "b"}, "bb")));
    }

    /**
     * Schema 2 → 3: a dropped nested name re-added (new id), drop and re-add in an ARRAY element
     * and in a ROW in a ROW, a renamed intermediate ROW, a field added to a MAP value.
     */
    private static List<List<SchemaChange>> alter2() {
        return Arrays.asList(
                Arrays.asList(
                        SchemaChange.addColumn(
                                new String[] {"r", "d"}, DataTypes.STRING(), null, null),
                        SchemaChange.dropColumn(new String[] {"ar", "element", "p"}),
                        SchemaChange.addColumn(
                                new String[] {"ar", "element", "p"}, DataTypes.INT(), null, null),
                        SchemaChange.renameColumn(new String[] {"r", "z"}, "zz"),
                        SchemaChange.dropColumn(new String[] {"r", "zz", "a"}),
                        SchemaChange.addColumn(
                                new String[] {"r", "zz", "a"}, DataTypes.STRING(), null, null),
                        SchemaChange.addColumn(
                                new String[] {"m", "value", "t"}, DataTypes.INT(), null, null)));
    }

    private static final String[] WORDS = {
        "alpha", "b", "longer-word-with-dashes", "delta", "", "zeta-zeta-zeta", "eta", "théta"
    };

    private static BinaryString word(Random rnd) {
        return BinaryString.fromString(WORDS[rnd.nextInt(WORDS.length)] + rnd.nextInt(100));
    }

    private static Integer maybeInt(Random rnd, int bound) {
        return rnd.nextInt(8) == 0 ? null : rnd.nextInt(bound) - bound / 2;
    }

    /**
     * A row of the nested tables under schema {@code version} (0, 1 or 2); {@code nullR}: the
     * {@code r} column is NULL (partial-update keeps the older value).
     */
    private static GenericRow nestedRow(Random rnd, int version, int id, boolean nullR) {
        GenericRow z;
        GenericRow r;
        if (version == 0) {
            z = GenericRow.of(maybeInt(rnd, 1000), word(rnd));
            r = GenericRow.of(rnd.nextInt(2_000_000) - 1_000_000, word(rnd), z, word(rnd));
        } else if (version == 1) {
            z = GenericRow.of(maybeInt(rnd, 1000), word(rnd));
            // x BIGINT, yy, z<a, bb>, w
            r = GenericRow.of((long) rnd.nextInt() * 1000L, word(rnd), z, maybeInt(rnd, 50));
        } else {
            // zz<bb, a STRING>
            z = GenericRow.of(word(rnd), word(rnd));
            r = GenericRow.of((long) rnd.nextInt() * 1000L, word(rnd), z, maybeInt(rnd, 50), word(rnd));
        }
        int n = rnd.nextInt(3);
        Object[] ar = new Object[n];
        for (int i = 0; i < n; i++) {
            ar[i] =
                    version < 2
                            ? GenericRow.of(rnd.nextInt(400_000) - 200_000, word(rnd))
                            : GenericRow.of(word(rnd), rnd.nextInt(400_000) - 200_000);
        }
        // A HashMap: its entries are written in the order Java's Avro reader (which reads a
        // MAP into a HashMap) returns them; MAP entry order is not part of the value.
        Map<Object, Object> m = new HashMap<>();
        for (int i = 0; i < rnd.nextInt(3); i++) {
            GenericRow v =
                    version < 2
                            ? GenericRow.of(maybeInt(rnd, 100), word(rnd))
                            : GenericRow.of(maybeInt(rnd, 100), word(rnd), maybeInt(rnd, 10));
            m.put(BinaryString.fromString("k" + i), v);
        }
        Map<Object, Object> mk = new LinkedHashMap<>();
        mk.put(GenericRow.of(id, word(rnd)), word(rnd));
        Object[] inner = new Object[] {GenericRow.of(maybeInt(rnd, 10), word(rnd))};
        Object[] aa = new Object[] {new GenericArray(inner), new GenericArray(new Object[0])};
        return GenericRow.of(
                id,
                nullR ? null : r,
                new GenericArray(ar),
                new GenericMap(m),
                new GenericMap(mk),
                new GenericArray(aa));
    }

    private static Table create(Catalog catalog, String name, Schema schema) throws Exception {
        Identifier id = Identifier.create("db", name);
        catalog.dropTable(id, true);
        catalog.createTable(id, schema, false);
        return catalog.getTable(id);
    }

    /** One alterTable call (one new schema) per list of changes. */
    private static Table alter(Catalog catalog, String name, List<List<SchemaChange>> calls)
            throws Exception {
        Identifier id = Identifier.create("db", name);
        for (List<SchemaChange> changes : calls) {
            catalog.alterTable(id, changes, false);
        }
        return catalog.getTable(id);
    }

    private static void write(Table table, List<GenericRow> rows) throws Exception {
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(IOManager.create(System.getProperty("java.io.tmpdir")));
            for (GenericRow row : rows) {
                write.write(row);
            }
            commit.commit(write.prepareCommit());
        }
    }

    private static void compact(Table table, boolean full) throws Exception {
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(IOManager.create(System.getProperty("java.io.tmpdir")));
            write.compact(BinaryRow.EMPTY_ROW, 0, full);
            commit.commit(write.prepareCommit());
        }
    }

    private static List<GenericRow> nestedRows(Random rnd, int version, int... ids) {
        List<GenericRow> rows = new ArrayList<>();
        for (int id : ids) {
            rows.add(nestedRow(rnd, version, id, false));
        }
        return rows;
    }

    private static void nestedAppend(Catalog catalog, String format) throws Exception {
        String name = "j200_nested_append_" + format;
        Random rnd = new Random(41);
        Table t = create(catalog, name, nestedSchema(format).build());
        write(t, nestedRows(rnd, 0, 1, 2, 3, 4, 5));
        t = alter(catalog, name, alter1());
        write(t, nestedRows(rnd, 1, 6, 7, 8));
        t = alter(catalog, name, alter2());
        write(t, nestedRows(rnd, 2, 9, 10));
    }

    private static void nestedPk(Catalog catalog, String format) throws Exception {
        String name = "j200_nested_pk_" + format;
        Random rnd = new Random(42);
        Schema schema =
                nestedSchema(format)
                        .primaryKey("id")
                        .option("bucket", "1")
                        .option("merge-engine", "partial-update")
                        .build();
        Table t = create(catalog, name, schema);
        write(t, nestedRows(rnd, 0, 1, 2, 3, 4, 5));
        t = alter(catalog, name, alter1());
        List<GenericRow> rows = nestedRows(rnd, 1, 2, 6);
        rows.add(nestedRow(rnd, 1, 3, true));
        write(t, rows);
        t = alter(catalog, name, alter2());
        rows = nestedRows(rnd, 2, 4, 7);
        rows.add(nestedRow(rnd, 2, 5, true));
        rows.add(nestedRow(rnd, 2, 6, true));
        write(t, rows);
    }

    private static void nestedDv(Catalog catalog, String format) throws Exception {
        String name = "j200_nested_dv_" + format;
        Random rnd = new Random(43);
        Schema schema =
                nestedSchema(format)
                        .primaryKey("id")
                        .option("bucket", "1")
                        .option("deletion-vectors.enabled", "true")
                        .build();
        Table t = create(catalog, name, schema);
        write(t, nestedRows(rnd, 0, 1, 2, 3, 4, 5, 6));
        compact(t, true);
        t = alter(catalog, name, alter1());
        write(t, nestedRows(rnd, 1, 2, 3, 7, 8));
        compact(t, false);
        t = alter(catalog, name, alter2());
        write(t, nestedRows(rnd, 2, 4, 7, 9));
        compact(t, false);
    }

    /** Schema 0 of the data-evolution table: ROW in ROW, ARRAY&lt;ROW&gt;, a plain column. */
    private static Schema deSchema(String format) {
        return Schema.newBuilder()
                .column("id", DataTypes.INT())
                .column(
                        "r",
                        DataTypes.ROW(
                                DataTypes.FIELD(0, "x", DataTypes.INT()),
                                DataTypes.FIELD(0, "y", DataTypes.STRING()),
                                DataTypes.FIELD(
                                        0,
                                        "z",
                                        DataTypes.ROW(
                                                DataTypes.FIELD(0, "a", DataTypes.INT()),
                                                DataTypes.FIELD(0, "b", DataTypes.STRING())))))
                .column(
                        "ar",
                        DataTypes.ARRAY(
                                DataTypes.ROW(
                                        DataTypes.FIELD(0, "p", DataTypes.INT()),
                                        DataTypes.FIELD(0, "q", DataTypes.STRING()))))
                .column("v", DataTypes.STRING())
                .option("file.format", format)
                .option("row-tracking.enabled", "true")
                .option("data-evolution.enabled", "true")
                .build();
    }

    /** An {@code ar} value: {@code n} elements, {@code (p INT, q STRING)} or {@code (qq, p)}. */
    private static GenericArray deArray(Random rnd, boolean swapped) {
        int n = rnd.nextInt(3);
        Object[] ar = new Object[n];
        for (int i = 0; i < n; i++) {
            int p = rnd.nextInt(400_000) - 200_000;
            ar[i] = swapped ? GenericRow.of(word(rnd), p) : GenericRow.of(p, word(rnd));
        }
        return new GenericArray(ar);
    }

    /** Write {@code rows} with only the columns {@code columns}, as the row ids from {@code first}. */
    private static void writeColumns(
            Table table, List<String> columns, long firstRowId, List<GenericRow> rows)
            throws Exception {
        RowType writeType = table.rowType().project(columns);
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite().withWriteType(writeType);
                BatchTableCommit commit = builder.newCommit()) {
            for (GenericRow row : rows) {
                write.write(row);
            }
            List<CommitMessage> messages = write.prepareCommit();
            for (CommitMessage m : messages) {
                List<DataFileMeta> files =
                        ((CommitMessageImpl) m).newFilesIncrement().newFiles();
                List<DataFileMeta> stamped = new ArrayList<>();
                for (DataFileMeta f : files) {
                    stamped.add(f.assignFirstRowId(firstRowId));
                }
                files.clear();
                files.addAll(stamped);
            }
            commit.commit(messages);
        }
    }

    private static void nestedDataEvolution(Catalog catalog, String format) throws Exception {
        String name = "j200_nested_de_" + format;
        Random rnd = new Random(45);
        Table t = create(catalog, name, deSchema(format));
        // Snapshot 1: row ids 0-4, every column (schema 0).
        List<GenericRow> rows = new ArrayList<>();
        for (int id = 0; id < 5; id++) {
            GenericRow z = GenericRow.of(maybeInt(rnd, 1000), word(rnd));
            GenericRow r = GenericRow.of(rnd.nextInt(2_000_000) - 1_000_000, word(rnd), z);
            rows.add(GenericRow.of(id, r, deArray(rnd, false), word(rnd)));
        }
        write(t, rows);
        // Schema 1: r.y -> yy, r.w added, r.x INT -> BIGINT; schema 2: ar.element.q -> qq.
        t =
                alter(
                        catalog,
                        name,
                        Arrays.asList(
                                Arrays.asList(
                                        SchemaChange.renameColumn(new String[] {"r", "y"}, "yy"),
                                        SchemaChange.addColumn(
                                                new String[] {"r", "w"},
                                                DataTypes.INT(),
                                                null,
                                                null),
                                        SchemaChange.updateColumnType(
                                                new String[] {"r", "x"}, DataTypes.BIGINT(), true)),
                                Arrays.asList(
                                        SchemaChange.renameColumn(
                                                new String[] {"ar", "element", "q"}, "qq"))));
        // Snapshot 2: v of row ids 0-4 alone; snapshot 3: ar of row ids 0-4 alone (schema 2;
        // Java wants the files of a field group over the same row ids).
        rows = new ArrayList<>();
        for (int id = 0; id < 5; id++) {
            rows.add(GenericRow.of(word(rnd)));
        }
        writeColumns(t, Arrays.asList("v"), 0, rows);
        rows = new ArrayList<>();
        for (int id = 0; id < 5; id++) {
            rows.add(GenericRow.of(deArray(rnd, false)));
        }
        writeColumns(t, Arrays.asList("ar"), 0, rows);
        // Schema 3: r.z -> zz, r.zz.a dropped and re-added as STRING, ar.element.p dropped and
        // re-added; ar's fields are now (qq, p).
        t =
                alter(
                        catalog,
                        name,
                        Arrays.asList(
                                Arrays.asList(
                                        SchemaChange.renameColumn(new String[] {"r", "z"}, "zz"),
                                        SchemaChange.dropColumn(new String[] {"r", "zz", "a"}),
                                        SchemaChange.addColumn(
                                                new String[] {"r", "zz", "a"},
                                                DataTypes.STRING(),
                                                null,
                                                null),
                                        SchemaChange.dropColumn(new String[] {"ar", "element", "p"}),
                                        SchemaChange.addColumn(
                                                new String[] {"ar", "element", "p"},
                                                DataTypes.INT(),
                                                null,
                                                null))));
        // Snapshot 4: row ids 5-6, every column (schema 3).
        rows = new ArrayList<>();
        for (int id = 5; id < 7; id++) {
            GenericRow zz = GenericRow.of(word(rnd), word(rnd));
            GenericRow r =
                    GenericRow.of((long) rnd.nextInt() * 1000L, word(rnd), zz, maybeInt(rnd, 50));
            rows.add(GenericRow.of(id, r, deArray(rnd, true), word(rnd)));
        }
        write(t, rows);
    }

    // ---------------------------------------------------------------------------------------
    // Aggregated collections
    // ---------------------------------------------------------------------------------------

    /** The spread hash of Java's HashMap: {@code h ^ (h >>> 16)}. */
    private static int spread(int h) {
        return h ^ (h >>> 16);
    }

    private static int intKeyHash(int v) {
        BinaryRow row = new BinaryRow(1);
        BinaryRowWriter w = new BinaryRowWriter(row);
        w.writeInt(0, v);
        w.complete();
        return row.hashCode();
    }

    private static int stringLongKeyHash(String s, long v) {
        BinaryRow row = new BinaryRow(2);
        BinaryRowWriter w = new BinaryRowWriter(row);
        w.writeString(0, BinaryString.fromString(s));
        w.writeLong(1, v);
        w.complete();
        return row.hashCode();
    }

    /** {@code n} INT nested keys whose key rows fall into bin 0 of tables up to 256 bins. */
    private static List<Integer> collidingIntKeys(int n) {
        List<Integer> out = new ArrayList<>();
        for (int v = 1; out.size() < n; v++) {
            if ((spread(intKeyHash(v)) & 255) == 0) {
                out.add(v);
            }
        }
        return out;
    }

    /** {@code n} (STRING, BIGINT) nested keys falling into bin 0 of tables up to 256 bins. */
    private static List<Object[]> collidingPairKeys(int n) {
        List<Object[]> out = new ArrayList<>();
        for (long v = 1; out.size() < n; v++) {
            String s = "key-" + (v % 7);
            if ((spread(stringLongKeyHash(s, v)) & 255) == 0) {
                out.add(new Object[] {s, v});
            }
        }
        return out;
    }

    /** {@code n} strings whose BinaryString hashes fall into bin 0 of tables up to 256 bins. */
    private static List<String> collidingStrings(int n) {
        List<String> out = new ArrayList<>();
        for (int v = 0; out.size() < n; v++) {
            String s = "s" + v;
            if ((spread(BinaryString.fromString(s).hashCode()) & 255) == 0) {
                out.add(s);
            }
        }
        return out;
    }

    /** An element of {@code pool}, half the time one of its first {@code colliding}. */
    private static <T> T pick(Random rnd, List<T> pool, int colliding) {
        int bound = rnd.nextBoolean() ? colliding : pool.size();
        return pool.get(rnd.nextInt(bound));
    }

    private static GenericArray array(List<Object> items) {
        return new GenericArray(items.toArray());
    }

    private static final class AggPools {
        final List<Integer> ints = new ArrayList<>();
        final List<String> strings = new ArrayList<>();
        final List<Long> longs = new ArrayList<>();
        final List<Integer> nestedIds = new ArrayList<>();
        final List<Object[]> pairKeys = new ArrayList<>();

        AggPools(Random rnd) {
            for (int i = 1; i <= 14; i++) {
                ints.add(i * 4096); // one bin up to 4096 bins: a tree bin
            }
            for (int i = 0; i < 30; i++) {
                ints.add(rnd.nextInt(2000) - 1000);
            }
            strings.addAll(collidingStrings(12));
            for (int i = 0; i < 25; i++) {
                strings.add(WORDS[rnd.nextInt(WORDS.length)] + "-" + rnd.nextInt(50));
            }
            for (long i = 1; i <= 10; i++) {
                longs.add((i << 32) | i); // hashCode 0: equal hashes, compared by value
            }
            for (int i = 0; i < 20; i++) {
                longs.add(rnd.nextLong() >> rnd.nextInt(40));
            }
            nestedIds.addAll(collidingIntKeys(14));
            for (int i = 0; i < 16; i++) {
                nestedIds.add(rnd.nextInt(100_000));
            }
            pairKeys.addAll(collidingPairKeys(12));
            for (int i = 0; i < 12; i++) {
                pairKeys.add(new Object[] {"key-" + rnd.nextInt(5), (long) rnd.nextInt(1000)});
            }
        }
    }

    private static Schema aggSchema(String format) {
        Schema.Builder b =
                Schema.newBuilder()
                        .column("k", DataTypes.INT().notNull())
                        .column("ci", DataTypes.ARRAY(DataTypes.INT()))
                        .column("cs", DataTypes.ARRAY(DataTypes.STRING()))
                        .column("cb", DataTypes.ARRAY(DataTypes.BIGINT()))
                        .column("cd", DataTypes.ARRAY(DataTypes.DOUBLE()))
                        .column("cf", DataTypes.ARRAY(DataTypes.FLOAT()))
                        .column("cdec", DataTypes.ARRAY(DataTypes.DECIMAL(10, 2)))
                        .column("cdec38", DataTypes.ARRAY(DataTypes.DECIMAL(30, 3)))
                        .column("cts", DataTypes.ARRAY(DataTypes.TIMESTAMP(3)))
                        .column("cts6", DataTypes.ARRAY(DataTypes.TIMESTAMP(6)))
                        .column("cdate", DataTypes.ARRAY(DataTypes.DATE()))
                        .column("csmall", DataTypes.ARRAY(DataTypes.SMALLINT()))
                        .column("ctiny", DataTypes.ARRAY(DataTypes.TINYINT()))
                        .column("cbool", DataTypes.ARRAY(DataTypes.BOOLEAN()))
                        .column(
                                "crow",
                                DataTypes.ARRAY(
                                        DataTypes.ROW(
                                                DataTypes.FIELD(0, "a", DataTypes.INT()),
                                                DataTypes.FIELD(0, "b", DataTypes.STRING()))))
                        .column("cl", DataTypes.ARRAY(DataTypes.INT()))
                        .column(
                                "nu",
                                DataTypes.ARRAY(
                                        DataTypes.ROW(
                                                DataTypes.FIELD(0, "id", DataTypes.INT()),
                                                DataTypes.FIELD(0, "name", DataTypes.STRING()),
                                                DataTypes.FIELD(0, "v", DataTypes.INT()))))
                        .column(
                                "nu2",
                                DataTypes.ARRAY(
                                        DataTypes.ROW(
                                                DataTypes.FIELD(0, "k1", DataTypes.STRING()),
                                                DataTypes.FIELD(0, "k2", DataTypes.BIGINT()),
                                                DataTypes.FIELD(0, "v", DataTypes.STRING()))))
                        .column(
                                "npu",
                                DataTypes.ARRAY(
                                        DataTypes.ROW(
                                                DataTypes.FIELD(0, "id", DataTypes.INT()),
                                                DataTypes.FIELD(0, "a", DataTypes.STRING()),
                                                DataTypes.FIELD(0, "b", DataTypes.INT()))))
                        .primaryKey("k")
                        .option("bucket", "1")
                        .option("file.format", format)
                        .option("merge-engine", "aggregation");
        for (String f :
                new String[] {
                    "ci", "cs", "cb", "cd", "cf", "cdec", "cdec38", "cts", "cts6", "cdate",
                    "csmall", "ctiny", "cbool", "crow"
                }) {
            b.option("fields." + f + ".aggregate-function", "collect");
            b.option("fields." + f + ".distinct", "true");
        }
        b.option("fields.cl.aggregate-function", "collect");
        b.option("fields.nu.aggregate-function", "nested_update");
        b.option("fields.nu.nested-key", "id");
        b.option("fields.nu2.aggregate-function", "nested_update");
        b.option("fields.nu2.nested-key", "k1,k2");
        b.option("fields.npu.aggregate-function", "nested_partial_update");
        b.option("fields.npu.nested-key", "id");
        b.option("fields.npu.ignore-retract", "true");
        return b.build();
    }

    /** A row of the aggregation table: {@code n} elements per collection drawn from the pools. */
    private static GenericRow aggRow(Random rnd, AggPools pools, int k, int n, RowKind kind) {
        List<Object> ci = new ArrayList<>();
        List<Object> cs = new ArrayList<>();
        List<Object> cb = new ArrayList<>();
        List<Object> cd = new ArrayList<>();
        List<Object> cf = new ArrayList<>();
        List<Object> cdec = new ArrayList<>();
        List<Object> cdec38 = new ArrayList<>();
        List<Object> cts = new ArrayList<>();
        List<Object> cts6 = new ArrayList<>();
        List<Object> cdate = new ArrayList<>();
        List<Object> csmall = new ArrayList<>();
        List<Object> ctiny = new ArrayList<>();
        List<Object> cbool = new ArrayList<>();
        List<Object> crow = new ArrayList<>();
        List<Object> cl = new ArrayList<>();
        List<Object> nu = new ArrayList<>();
        List<Object> nu2 = new ArrayList<>();
        List<Object> npu = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ci.add(rnd.nextInt(20) == 0 ? null : pick(rnd, pools.ints, 14));
            cs.add(BinaryString.fromString(pick(rnd, pools.strings, 12)));
            cb.add(pick(rnd, pools.longs, 10));
            cd.add((double) (rnd.nextInt(200) - 100) / 8.0);
            cf.add((float) (rnd.nextInt(100) - 50) / 4.0f);
            cdec.add(Decimal.fromUnscaledLong(rnd.nextInt(20_000) - 10_000, 10, 2));
            cdec38.add(
                    Decimal.fromBigDecimal(
                            new java.math.BigDecimal(
                                    new java.math.BigInteger(90, rnd).subtract(
                                            java.math.BigInteger.ONE.shiftLeft(89)),
                                    3),
                            30,
                            3));
            long millis = 1_700_000_000_000L + rnd.nextInt(1000) * 60_000L;
            cts.add(Timestamp.fromEpochMillis(millis));
            cts6.add(Timestamp.fromEpochMillis(millis, rnd.nextInt(1000) * 1000));
            cdate.add(19_000 + rnd.nextInt(60));
            csmall.add((short) (rnd.nextInt(400) - 200));
            ctiny.add((byte) (rnd.nextInt(40) - 20));
            cbool.add(rnd.nextInt(5) == 0 ? null : rnd.nextBoolean());
            crow.add(GenericRow.of(rnd.nextInt(6), BinaryString.fromString("r" + rnd.nextInt(3))));
            cl.add(rnd.nextInt(10));
            nu.add(
                    GenericRow.of(
                            pick(rnd, pools.nestedIds, 14),
                            BinaryString.fromString("n" + rnd.nextInt(1000)),
                            rnd.nextInt(100)));
            Object[] pk = pick(rnd, pools.pairKeys, 12);
            nu2.add(
                    GenericRow.of(
                            BinaryString.fromString((String) pk[0]),
                            pk[1],
                            BinaryString.fromString("v" + rnd.nextInt(1000))));
            npu.add(
                    GenericRow.of(
                            pick(rnd, pools.nestedIds, 14),
                            rnd.nextInt(3) == 0
                                    ? null
                                    : BinaryString.fromString("a" + rnd.nextInt(1000)),
                            rnd.nextInt(3) == 0 ? null : rnd.nextInt(1000)));
        }
        GenericRow row =
                GenericRow.of(
                        k,
                        array(ci),
                        array(cs),
                        array(cb),
                        array(cd),
                        array(cf),
                        array(cdec),
                        array(cdec38),
                        array(cts),
                        array(cts6),
                        array(cdate),
                        array(csmall),
                        array(ctiny),
                        array(cbool),
                        array(crow),
                        array(cl),
                        array(nu),
                        array(nu2),
                        array(npu));
        row.setRowKind(kind);
        return row;
    }

    private static void aggregation(Catalog catalog, String format) throws Exception {
        String name = "j200_agg_" + format;
        Random rnd = new Random(44);
        AggPools pools = new AggPools(rnd);
        Table t = create(catalog, name, aggSchema(format));
        // Snapshot 1: keys 1..4 (key 4 has this record only: read as written, duplicates kept).
        List<GenericRow> rows = new ArrayList<>();
        for (int k = 1; k <= 4; k++) {
            rows.add(aggRow(rnd, pools, k, 6 + rnd.nextInt(10), RowKind.INSERT));
        }
        write(t, rows);
        // Snapshots 2..4: more records of keys 1..3, one a retraction.
        for (int c = 0; c < 3; c++) {
            rows = new ArrayList<>();
            for (int k = 1; k <= 3; k++) {
                RowKind kind = c == 2 && k == 2 ? RowKind.DELETE : RowKind.INSERT;
                rows.add(aggRow(rnd, pools, k, 3 + rnd.nextInt(12), kind));
            }
            write(t, rows);
        }
        // Snapshot 5: full compaction.
        compact(t, true);
        // Snapshot 6: records after the compaction (merge-on-read of the compacted value).
        rows = new ArrayList<>();
        for (int k = 1; k <= 3; k++) {
            rows.add(aggRow(rnd, pools, k, 3 + rnd.nextInt(6), RowKind.INSERT));
        }
        rows.add(aggRow(rnd, pools, 5, 8, RowKind.INSERT));
        write(t, rows);
    }
}
