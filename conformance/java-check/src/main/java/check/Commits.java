package check;

import org.apache.paimon.data.GenericRow;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.options.Options;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;

import java.io.File;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Java Paimon 2.0.0 committing many small batches to one table, to race other committers:
 *
 * <pre>
 * commits TABLE_DIR W N    N batch commits, each of the one row (w = W, i = 0..N-1) of a table
 *                          with INT columns w and i; one line per commit on stdout:
 *                          "ok I" or "failed I MESSAGE"
 * </pre>
 *
 * Each commit is a new batch write builder (a new commit user), as N separate batch jobs of
 * one JVM.
 */
public final class Commits {

    private Commits() {}

    public static void main(String[] argv) {
        if (argv.length != 3) {
            System.err.println("usage: commits TABLE_DIR W N");
            System.exit(2);
        }
        Map<String, String> open = new LinkedHashMap<>();
        open.put("path", new File(argv[0]).getAbsolutePath());
        FileStoreTable table =
                FileStoreTableFactory.create(LocalFileIO.create(), Options.fromMap(open));
        int w = Integer.parseInt(argv[1]);
        int n = Integer.parseInt(argv[2]);
        int failed = 0;
        for (int i = 0; i < n; i++) {
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            try (BatchTableWrite write = builder.newWrite();
                    BatchTableCommit commit = builder.newCommit()) {
                write.write(GenericRow.of(w, i));
                commit.commit(write.prepareCommit());
                System.out.println("ok " + i);
            } catch (Throwable t) {
                failed++;
                System.out.println("failed " + i + " " + Main.describe(t).replace('\n', ' '));
            }
            System.out.flush();
        }
        System.exit(failed == 0 ? 0 : 1);
    }
}
