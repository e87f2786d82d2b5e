package wbench;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.paimon.append.AppendCompactCoordinator;
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.append.dataevolution.DataEvolutionCompactCoordinator;
import org.apache.paimon.append.dataevolution.DataEvolutionCompactTask;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BlobData;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.format.FileFormat;
import org.apache.paimon.format.FormatReaderContext;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.operation.BaseAppendFileStoreWrite;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaManager;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowType;

/**
 * Write / compaction peer of the bench (Java Paimon 1.4.2). Every mode runs its job --repeat N
 * times in one JVM and prints one line per iteration (iteration 0 is the cold JIT run), with its
 * wall milliseconds and {@code cpu_ms}: the CPU time of the whole JVM during the iteration.
 *
 * <pre>
 * write append|pk|blob TABLE INPUT.parquet [--repeat N] [--option k=v]...
 *     creates TABLE (TABLE.i for iteration i > 0), writes the input, commits one snapshot;
 *     blob: W4's managed-BLOB primary-key table (id BIGINT NOT NULL, name STRING, data BLOB;
 *     bucket 1), the input's BYTES column `data` written as BLOB values
 * readonly append|pk INPUT.parquet [--repeat N]     only reads the input (its share of write)
 * compact pk|append|de PRISTINE WORK [--repeat N]   copies PRISTINE to WORK (not timed; "-": WORK
 *     is already a fresh copy), then
 *     pk: full compaction of bucket 0; append: AppendCompactCoordinator tasks;
 *     de: DataEvolutionCompactCoordinator tasks; one COMPACT commit
 * </pre>
 */
public class Main {

    static RowType rowType(boolean pk) {
        return RowType.builder()
                .field("id", pk ? DataTypes.BIGINT().notNull() : DataTypes.BIGINT())
                .field("name", DataTypes.STRING())
                .field("city", DataTypes.STRING())
                .field("amount", DataTypes.DOUBLE())
                .field("qty", DataTypes.INT())
                .field("ts", DataTypes.TIMESTAMP(6))
                .field("flag", DataTypes.BOOLEAN())
                .field("note", DataTypes.STRING())
                .build();
    }

    /** W4's table type ({@code blob}) or its input's type ({@code input}: data as BYTES). */
    static RowType blobRowType(boolean input) {
        return RowType.builder()
                .field("id", DataTypes.BIGINT().notNull())
                .field("name", DataTypes.STRING())
                .field("data", input ? DataTypes.BYTES() : DataTypes.BLOB())
                .build();
    }

    /** A row of W4's input as a row of its table: the bytes of {@code data} as a BLOB. */
    static InternalRow blobRow(InternalRow in) {
        return GenericRow.of(
                in.getLong(0),
                in.isNullAt(1) ? null : in.getString(1).copy(),
                in.isNullAt(2) ? null : new BlobData(in.getBinary(2)));
    }

    static long ms(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    /** CPU milliseconds used so far by the whole JVM (every thread: JIT compiler and GC too). */
    static long cpuMs() {
        return ((com.sun.management.OperatingSystemMXBean)
                                java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                        .getProcessCpuTime()
                / 1_000_000;
    }

    interface RowSink {
        void accept(InternalRow row) throws Exception;
    }

    /** Reads INPUT.parquet with Paimon's own Parquet reader; returns the rows read. */
    static long readInput(String input, RowType type, RowSink sink) throws Exception {
        LocalFileIO io = LocalFileIO.create();
        Path p = new Path(new File(input).getAbsolutePath());
        FileFormat fmt = FileFormat.fromIdentifier("parquet", new Options());
        long rows = 0;
        try (RecordReader<InternalRow> r =
                fmt.createReaderFactory(type, type, null)
                        .createReader(new FormatReaderContext(io, p, io.getFileSize(p)))) {
            RecordReader.RecordIterator<InternalRow> it;
            while ((it = r.readBatch()) != null) {
                InternalRow row;
                while ((row = it.next()) != null) {
                    sink.accept(row);
                    rows++;
                }
                it.releaseBatch();
            }
        }
        return rows;
    }

    static void rmrf(String dir) throws Exception {
        new ProcessBuilder("rm", "-rf", dir).inheritIO().start().waitFor();
    }

    static void copy(String from, String to) throws Exception {
        rmrf(to);
        int rc = new ProcessBuilder("cp", "-r", from, to).inheritIO().start().waitFor();
        if (rc != 0) {
            throw new RuntimeException("cp -r " + from + " " + to + " failed");
        }
    }

    static FileStoreTable open(String dir) {
        return FileStoreTableFactory.create(
                LocalFileIO.create(), new Path(new File(dir).getAbsolutePath()));
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int repeat = 1;
        Map<String, String> opts = new LinkedHashMap<>();
        List<String> pos = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--repeat")) {
                repeat = Integer.parseInt(args[++i]);
            } else if (args[i].equals("--option")) {
                String[] kv = args[++i].split("=", 2);
                opts.put(kv[0], kv[1]);
            } else {
                pos.add(args[i]);
            }
        }
        for (int it = 0; it < repeat; it++) {
            switch (mode) {
                case "write":
                    write(it, pos.get(0), it == 0 ? pos.get(1) : pos.get(1) + "." + it,
                            pos.get(2), opts);
                    break;
                case "readonly":
                    {
                        long t0 = System.nanoTime();
                        long n = readInput(pos.get(1), rowType(pos.get(0).equals("pk")), r -> {});
                        System.out.printf("iter=%d mode=readonly rows=%d total_ms=%d%n", it, n, ms(t0));
                        break;
                    }
                case "compact":
                    compact(it, pos.get(0), pos.get(1), pos.get(2));
                    break;
                default:
                    throw new IllegalArgumentException("unknown mode " + mode);
            }
        }
    }

    static void write(int it, String kind, String dir, String input, Map<String, String> opts)
            throws Exception {
        boolean pk = kind.equals("pk");
        boolean blob = kind.equals("blob");
        if (!pk && !blob && !kind.equals("append")) {
            throw new IllegalArgumentException("unknown write kind " + kind);
        }
        rmrf(dir);
        long c0 = cpuMs();
        long t0 = System.nanoTime();
        Schema.Builder b = Schema.newBuilder();
        for (org.apache.paimon.types.DataField f :
                (blob ? blobRowType(false) : rowType(pk)).getFields()) {
            b.column(f.name(), f.type());
        }
        if (pk || blob) {
            b.primaryKey("id");
            b.option("bucket", pk ? "4" : "1");
        }
        for (Map.Entry<String, String> e : opts.entrySet()) {
            b.option(e.getKey(), e.getValue());
        }
        new SchemaManager(LocalFileIO.create(), new Path(new File(dir).getAbsolutePath()))
                .createTable(b.build());
        FileStoreTable table = open(dir);
        long tCreate = ms(t0);
        long t1 = System.nanoTime();
        BatchWriteBuilder wb = table.newBatchWriteBuilder();
        long rows;
        List<CommitMessage> msgs;
        try (BatchTableWrite w =
                wb.newWrite().withIOManager(IOManager.create(System.getProperty("java.io.tmpdir")))) {
            rows =
                    blob
                            ? readInput(input, blobRowType(true), r -> w.write(blobRow(r)))
                            : readInput(input, rowType(pk), w::write);
            msgs = w.prepareCommit();
        }
        long tWrite = ms(t1);
        long t2 = System.nanoTime();
        try (BatchTableCommit c = wb.newCommit()) {
            c.commit(msgs);
        }
        long tCommit = ms(t2);
        System.out.printf(
                "iter=%d mode=write kind=%s rows=%d create_ms=%d write_ms=%d commit_ms=%d total_ms=%d cpu_ms=%d table=%s%n",
                it, kind, rows, tCreate, tWrite, tCommit, ms(t0), cpuMs() - c0, dir);
    }

    static void compact(int it, String kind, String pristine, String work) throws Exception {
        if (!pristine.equals("-")) {
            copy(pristine, work);
        }
        long c0 = cpuMs();
        long t0 = System.nanoTime();
        FileStoreTable table = open(work);
        String user = UUID.randomUUID().toString();
        List<CommitMessage> msgs = new ArrayList<>();
        int tasks = 0;
        switch (kind) {
            case "pk":
                {
                    BatchWriteBuilder wb = table.newBatchWriteBuilder();
                    try (BatchTableWrite w =
                            wb.newWrite()
                                    .withIOManager(
                                            IOManager.create(System.getProperty("java.io.tmpdir")))) {
                        w.compact(BinaryRow.EMPTY_ROW, 0, true);
                        msgs.addAll(w.prepareCommit());
                    }
                    tasks = 1;
                    break;
                }
            case "append":
                {
                    List<AppendCompactTask> ts = new AppendCompactCoordinator(table, false).run();
                    BaseAppendFileStoreWrite write =
                            (BaseAppendFileStoreWrite) table.store().newWrite(user);
                    for (AppendCompactTask t : ts) {
                        msgs.add(t.doCompact(table, write));
                    }
                    write.close();
                    tasks = ts.size();
                    break;
                }
            case "de":
                {
                    List<DataEvolutionCompactTask> ts =
                            new DataEvolutionCompactCoordinator(
                                            table, false, false, table.latestSnapshot().get())
                                    .plan();
                    for (DataEvolutionCompactTask t : ts) {
                        msgs.add(t.doCompact(table, user));
                    }
                    tasks = ts.size();
                    break;
                }
            default:
                throw new IllegalArgumentException("unknown compaction kind " + kind);
        }
        long tCompact = ms(t0);
        long t1 = System.nanoTime();
        try (BatchTableCommit c = table.newCommit(user)) {
            c.commit(msgs);
        }
        System.out.printf(
                "iter=%d mode=compact kind=%s tasks=%d compact_ms=%d commit_ms=%d total_ms=%d cpu_ms=%d table=%s%n",
                it, kind, tasks, tCompact, ms(t1), ms(t0), cpuMs() - c0, work);
    }
}
