package check;

import java.io.BufferedWriter;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.SpecialFields;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.TableRead;
import org.apache.paimon.table.system.SystemTableLoader;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.RowType;

/**
 * java-check: prints the rows Java Paimon 2.0.0 reads from a table, one canonical JSON object a
 * line (the encoding of {@code paimon-kernel scan --format jsonl}, see {@link Canonical}). The
 * tests of paimon-kernel run it as {@code DIR/read TABLE [FLAGS]} (DIR: see install.sh);
 * README.md lists the flags.
 */
public final class Main {

    private static final String USAGE =
            String.join(
                    "\n",
                    "usage: read TABLE_DIR [FLAGS] [KEY=VALUE ...]",
                    "  --columns a,b,...       read only these columns, in this order (row-tracking",
                    "                          tables also _ROW_ID and _SEQUENCE_NUMBER)",
                    "  --snapshot N            scan.snapshot-id=N",
                    "  --tag T                 scan.tag-name=T",
                    "  --branch B              branch=B",
                    "  --timestamp-millis T    scan.timestamp-millis=T",
                    "  --option KEY=VALUE      any dynamic table option (repeatable); a bare",
                    "                          KEY=VALUE argument is the same",
                    "  --row-kind              prefix each row with its row kind and a tab",
                    "                          (+I, -U, +U, -D)",
                    "  --system NAME           read the system table NAME (files, snapshots, ...)",
                    "  --trace                 print the whole stack trace of a failure",
                    "Rows go to stdout in split order; logs and errors to stderr (exit 1).");

    private Main() {}

    /** The parsed command line. */
    static final class Args {
        String table;
        List<String> columns;
        final Map<String, String> options = new LinkedHashMap<>();
        boolean rowKind;
        String system;
        boolean trace;
    }

    public static void main(String[] argv) {
        Args args;
        try {
            args = parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("read: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (args == null) {
            System.out.println(USAGE);
            return;
        }
        Writer out =
                new BufferedWriter(
                        new OutputStreamWriter(
                                new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8),
                        1 << 16);
        try {
            read(args, out);
            out.flush();
        } catch (Throwable t) {
            try {
                out.flush();
            } catch (IOException ignored) {
                // stdout is gone; the failure below is what matters
            }
            if (args.trace) {
                t.printStackTrace();
            } else {
                System.err.println("read: " + describe(t));
            }
            System.exit(1);
        }
        System.exit(0);
    }

    /** Parses the command line; {@code null} for --help. */
    static Args parse(String[] argv) {
        Args a = new Args();
        for (int i = 0; i < argv.length; i++) {
            String arg = argv[i];
            switch (arg) {
                case "-h":
                case "--help":
                    return null;
                case "--columns":
                    a.columns = new ArrayList<>();
                    for (String c : value(argv, ++i, arg).split(",")) {
                        if (!c.trim().isEmpty()) {
                            a.columns.add(c.trim());
                        }
                    }
                    break;
                case "--snapshot":
                    a.options.put("scan.snapshot-id", value(argv, ++i, arg));
                    break;
                case "--tag":
                    a.options.put("scan.tag-name", value(argv, ++i, arg));
                    break;
                case "--branch":
                    a.options.put("branch", value(argv, ++i, arg));
                    break;
                case "--timestamp-millis":
                    a.options.put("scan.timestamp-millis", value(argv, ++i, arg));
                    break;
                case "--option":
                    option(a, value(argv, ++i, arg));
                    break;
                case "--row-kind":
                    a.rowKind = true;
                    break;
                case "--system":
                    a.system = value(argv, ++i, arg);
                    break;
                case "--trace":
                    a.trace = true;
                    break;
                default:
                    if (arg.startsWith("--")) {
                        throw new IllegalArgumentException("unknown flag " + arg);
                    } else if (a.table == null) {
                        a.table = arg;
                    } else if (arg.contains("=")) {
                        option(a, arg);
                    } else {
                        throw new IllegalArgumentException("unexpected argument " + arg);
                    }
            }
        }
        if (a.table == null) {
            throw new IllegalArgumentException("missing TABLE_DIR");
        }
        return a;
    }

    private static String value(String[] argv, int i, String flag) {
        if (i >= argv.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return argv[i];
    }

    private static void option(Args a, String kv) {
        int eq = kv.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("option " + kv + " is not KEY=VALUE");
        }
        a.options.put(kv.substring(0, eq), kv.substring(eq + 1));
    }

    /** Opens the table with the dynamic options and prints the rows of every split. */
    static void read(Args a, Writer out) throws IOException {
        Opened t = open(a);
        print(t.builder.newScan().plan().splits(), t, a, out);
    }

    /** A table opened for a read: its read builder and the row type read. */
    static final class Opened {
        final ReadBuilder builder;
        final RowType readType;

        Opened(ReadBuilder builder, RowType readType) {
            this.builder = builder;
            this.readType = readType;
        }
    }

    /** Opens the table of {@code a} with its dynamic options, branch, system table, columns. */
    static Opened open(Args a) {
        // The branch picks the schema the table is opened with; the other options are applied
        // by copy(), as a catalog's dynamic options are (a fallback-branch table maps a
        // scan.snapshot-id to the other branch's snapshot of that time only there).
        Map<String, String> dynamic = new LinkedHashMap<>(a.options);
        Map<String, String> open = new LinkedHashMap<>();
        open.put("path", new File(a.table).getAbsolutePath());
        String branch = dynamic.remove("branch");
        if (branch != null) {
            open.put("branch", branch);
        }
        FileStoreTable fileStoreTable =
                FileStoreTableFactory.create(LocalFileIO.create(), Options.fromMap(open));
        if (!dynamic.isEmpty()) {
            fileStoreTable = fileStoreTable.copy(dynamic);
        }
        Table table = fileStoreTable;
        if (a.system != null) {
            table = SystemTableLoader.load(a.system, fileStoreTable);
            if (table == null) {
                throw new IllegalArgumentException("no system table " + a.system);
            }
        }
        RowType readType = readType(table, fileStoreTable, a);
        ReadBuilder builder = table.newReadBuilder();
        if (a.columns != null) {
            builder.withReadType(readType);
        }
        return new Opened(builder, readType);
    }

    /** Prints the rows of {@code splits}, read with {@code t}'s reader, in split order. */
    static void print(List<? extends Split> splits, Opened t, Args a, Writer out)
            throws IOException {
        TableRead tableRead = t.builder.newRead();
        Canonical canonical = new Canonical();
        StringBuilder line = new StringBuilder(256);
        for (Split split : splits) {
            try (RecordReader<InternalRow> reader = tableRead.createReader(split)) {
                RecordReader.RecordIterator<InternalRow> batch;
                while ((batch = reader.readBatch()) != null) {
                    try {
                        InternalRow row;
                        while ((row = batch.next()) != null) {
                            line.setLength(0);
                            if (a.rowKind) {
                                line.append(row.getRowKind().shortString()).append('\t');
                            }
                            canonical.row(line, row, t.readType);
                            line.append('\n');
                            out.append(line);
                        }
                    } finally {
                        batch.releaseBatch();
                    }
                }
            }
        }
    }

    /**
     * The row type read: the table's, or the fields of --columns in their order. On a
     * row-tracking table _ROW_ID and _SEQUENCE_NUMBER may be named too.
     */
    static RowType readType(Table table, FileStoreTable base, Args a) {
        RowType all = table.rowType();
        if (a.columns == null) {
            return all;
        }
        RowType tracking =
                a.system == null && base.coreOptions().rowTrackingEnabled()
                        ? SpecialFields.rowTypeWithRowTracking(all)
                        : all;
        List<DataField> fields = new ArrayList<>();
        for (String name : a.columns) {
            if (!tracking.containsField(name)) {
                throw new IllegalArgumentException(
                        "no column '" + name + "' (columns: " + tracking.getFieldNames() + ")");
            }
            fields.add(tracking.getField(name));
        }
        return new RowType(fields);
    }

    /** The exception and its causes, one line. */
    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (sb.length() > 0) {
                sb.append("; caused by: ");
            }
            sb.append(c.getClass().getName());
            if (c.getMessage() != null) {
                sb.append(": ").append(c.getMessage());
            }
        }
        return sb.toString();
    }
}
