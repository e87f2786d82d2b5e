package check;

import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.options.Options;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.JsonSerdeUtil;

import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.io.File;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Java Paimon 1.4.2 writing to and compacting a table, for the tests that check that Java
 * continues what we wrote:
 *
 * <pre>
 * write TABLE_DIR ROWS.jsonl     one batch write of the rows (canonical JSON objects by field
 *                                name; "_ROW_KIND": "+I"/"-U"/"+U"/"-D" optional), one commit
 * compact TABLE_DIR [--full]     TableWrite.compact of every (partition, bucket) of the latest
 *                                snapshot, one commit
 * </pre>
 *
 * Field types: BOOLEAN, TINYINT..BIGINT, FLOAT, DOUBLE, DECIMAL (a string), CHAR/VARCHAR/STRING,
 * DATE (YYYY-MM-DD); others are refused.
 */
public final class Write {

    private Write() {}

    public static void main(String[] argv) {
        try {
            if (argv.length >= 2 && "write".equals(argv[0])) {
                write(open(argv[1]), argv.length > 2 ? argv[2] : "-");
            } else if (argv.length >= 2 && "compact".equals(argv[0])) {
                compact(open(argv[1]), argv.length > 2 && "--full".equals(argv[2]));
            } else {
                System.err.println("usage: write TABLE_DIR ROWS.jsonl | compact TABLE_DIR [--full]");
                System.exit(2);
            }
        } catch (Throwable t) {
            System.err.println("java-write: " + Main.describe(t));
            System.exit(1);
        }
        System.exit(0);
    }

    private static FileStoreTable open(String dir) {
        Map<String, String> open = new LinkedHashMap<>();
        open.put("path", new File(dir).getAbsolutePath());
        return FileStoreTableFactory.create(LocalFileIO.create(), Options.fromMap(open));
    }

    static void write(FileStoreTable table, String input) throws Exception {
        RowType type = table.rowType();
        List<String> lines = Files.readAllLines(new File(input).toPath(), StandardCharsets.UTF_8);
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(ioManager());
            for (String line : lines) {
                if (line.trim().isEmpty()) {
                    continue;
                }
                JsonNode node = JsonSerdeUtil.OBJECT_MAPPER_INSTANCE.readTree(line);
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
            List<CommitMessage> messages = write.prepareCommit();
            commit.commit(messages);
        }
    }

    static void compact(FileStoreTable table, boolean full) throws Exception {
        Set<String> seen = new LinkedHashSet<>();
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit()) {
            write.withIOManager(ioManager());
            for (ManifestEntry e : table.store().newScan().plan().files()) {
                BinaryRow partition = e.partition();
                String id = partition.hashCode() + "/" + e.bucket() + "/" + partition;
                if (seen.add(id)) {
                    write.compact(partition, e.bucket(), full);
                }
            }
            commit.commit(write.prepareCommit());
        }
    }

    /** Lookup tables (first-row, lookup changelog) spill lookup files to a temp directory. */
    private static IOManager ioManager() {
        return IOManager.create(System.getProperty("java.io.tmpdir"));
    }

    static Object value(JsonNode v, DataType type, String name) {
        if (v == null || v.isNull()) {
            return null;
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
            default:
                throw new IllegalArgumentException(
                        "field '" + name + "': type " + type + " is not supported by java-write");
        }
    }
}
