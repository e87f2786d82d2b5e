package check;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.Snapshot;
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.append.dataevolution.DataEvolutionCompactTask;
import org.apache.paimon.types.RowType;
import org.apache.paimon.KeyValueFileStore;
import org.apache.paimon.compact.CompactUnit;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.mergetree.LevelSortedRun;
import org.apache.paimon.mergetree.Levels;
import org.apache.paimon.mergetree.compact.CompactStrategy;
import org.apache.paimon.mergetree.compact.EarlyFullCompaction;
import org.apache.paimon.mergetree.compact.ForceUpLevel0Compaction;
import org.apache.paimon.mergetree.compact.OffPeakHours;
import org.apache.paimon.mergetree.compact.UniversalCompaction;
import org.apache.paimon.options.Options;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * plan TABLE_DIR [--full]: the compaction Java Paimon 2.0.0 plans for every bucket of a
 * primary-key table's latest snapshot, one JSON line per bucket with a unit: {"bucket": B,
 * "output_level": L, "files": [sorted names]}, in bucket then first-file order. One trigger of
 * the strategy MergeTreeCompactManagerFactory builds (universal, ForceUpLevel0Compaction for
 * lookup tables and compaction.force-up-level-0), or CompactStrategy.pickFullCompaction with
 * --full (no deletion-vector maintainer, no record-level expiry), filtered as
 * MergeTreeCompactManager#triggerCompaction filters a normal pick.
 *
 * <p>plan TABLE_DIR --append | --data-evolution: the tasks of the append or data-evolution
 * compaction coordinator instead (see {@link #tasks}).
 */
public final class Plan {

    private Plan() {}

    public static void main(String[] argv) throws Exception {
        System.exit(run(argv));
    }

    /** Prints the plan of one command line to stdout; the exit code (2: bad command line). */
    static int run(String[] argv) {
        if (argv.length < 1) {
            System.err.println("usage: plan TABLE_DIR [--full | --append | --data-evolution]");
            return 2;
        }
        String mode = argv.length > 1 ? argv[1] : "";
        Map<String, String> open = new LinkedHashMap<>();
        open.put("path", new File(argv[0]).getAbsolutePath());
        FileStoreTable table =
                FileStoreTableFactory.create(LocalFileIO.create(), Options.fromMap(open));
        if ("--append".equals(mode) || "--data-evolution".equals(mode)) {
            tasks(table.copy(Collections.singletonMap("write-only", "false")), mode);
            return 0;
        }
        boolean full = "--full".equals(mode);
        CoreOptions options = table.coreOptions();
        KeyValueFileStore store = (KeyValueFileStore) table.store();
        Comparator<InternalRow> keys = store.newKeyComparator();
        Map<String, List<DataFileMeta>> buckets = new TreeMap<>();
        Map<String, Integer> bucketOf = new TreeMap<>();
        for (ManifestEntry e : store.newScan().plan().files()) {
            String id = hex(e.partition()) + "/" + e.bucket();
            buckets.computeIfAbsent(id, k -> new ArrayList<>()).add(e.file());
            bucketOf.put(id, e.bucket());
        }
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, List<DataFileMeta>> b : buckets.entrySet()) {
            Levels levels = new Levels(keys, b.getValue(), options.numLevels());
            List<LevelSortedRun> runs = levels.levelSortedRuns();
            Optional<CompactUnit> unit;
            if (full) {
                unit =
                        CompactStrategy.pickFullCompaction(
                                levels.numberOfLevels(),
                                runs,
                                null,
                                null,
                                options.forceRewriteAllFiles());
            } else {
                unit =
                        strategy(options, b.getValue())
                                .pick(levels.numberOfLevels(), runs)
                                .filter(u -> !u.files().isEmpty())
                                .filter(
                                        u ->
                                                u.files().size() > 1
                                                        || u.files().get(0).level()
                                                                != u.outputLevel());
            }
            if (!unit.isPresent()) {
                continue;
            }
            List<String> names = new ArrayList<>();
            for (DataFileMeta f : unit.get().files()) {
                names.add(f.fileName());
            }
            Collections.sort(names);
            StringBuilder sb = new StringBuilder();
            sb.append("{\"bucket\":").append(bucketOf.get(b.getKey()));
            sb.append(",\"output_level\":").append(unit.get().outputLevel());
            sb.append(",\"files\":[");
            for (int i = 0; i < names.size(); i++) {
                sb.append(i == 0 ? "\"" : ",\"").append(names.get(i)).append('"');
            }
            sb.append("]}");
            lines.add(sb.toString());
        }
        Collections.sort(lines);
        for (String l : lines) {
            System.out.println(l);
        }
        return 0;
    }

    /**
     * The tasks of the append (AppendCompactCoordinator, one batch run) or data-evolution
     * (DataEvolutionCompactCoordinator on the latest snapshot, blob files with
     * blob-compaction.enabled) coordinator, one JSON line each in the coordinator's order:
     * {"partition": {canonical partition values}, "bucket": 0, "output_level": null, "files":
     * [names in the task's order]}.
     */
    private static void tasks(FileStoreTable table, String mode) {
        List<BinaryRow> partitions = new ArrayList<>();
        List<List<DataFileMeta>> files = new ArrayList<>();
        if ("--append".equals(mode)) {
            for (AppendCompactTask t : Write.appendTasks(table)) {
                partitions.add(t.partition());
                files.add(t.compactBefore());
            }
        } else {
            Snapshot snapshot = table.snapshotManager().latestSnapshot();
            if (snapshot != null) {
                for (DataEvolutionCompactTask t : Write.dataEvolutionTasks(table, snapshot)) {
                    partitions.add(t.partition());
                    files.add(t.compactBefore());
                }
            }
        }
        RowType partitionType = table.schema().logicalPartitionType();
        Canonical canonical = new Canonical();
        for (int i = 0; i < files.size(); i++) {
            StringBuilder sb = new StringBuilder("{\"partition\":");
            canonical.row(sb, partitions.get(i), partitionType);
            sb.append(",\"bucket\":0,\"output_level\":null,\"files\":[");
            List<DataFileMeta> task = files.get(i);
            for (int j = 0; j < task.size(); j++) {
                sb.append(j == 0 ? "\"" : ",\"").append(task.get(j).fileName()).append('"');
            }
            System.out.println(sb.append("]}"));
        }
    }

    /**
     * The normal-compaction strategy of MergeTreeCompactManagerFactory#createCompactStrategy
     * (2.0.0): the early full compaction starts from the newest creation time of the bucket's
     * max-level files.
     */
    private static CompactStrategy strategy(CoreOptions options, List<DataFileMeta> files) {
        int maxLevel = options.numLevels() - 1;
        long newest = -1;
        for (DataFileMeta f : files) {
            if (f.level() == maxLevel) {
                newest = Math.max(newest, f.creationTimeEpochMillis());
            }
        }
        UniversalCompaction universal =
                new UniversalCompaction(
                        options.maxSizeAmplificationPercent(),
                        options.sortedRunSizeRatio(),
                        options.numSortedRunCompactionTrigger(),
                        EarlyFullCompaction.create(options, newest < 0 ? null : newest),
                        OffPeakHours.create(options));
        if (options.needLookup()) {
            Integer interval = null;
            if (options.lookupCompact() == CoreOptions.LookupCompactMode.GENTLE) {
                interval = options.lookupCompactMaxInterval();
            }
            return new ForceUpLevel0Compaction(universal, interval);
        }
        if (options.compactionForceUpLevel0()) {
            return new ForceUpLevel0Compaction(universal, null);
        }
        return universal;
    }

    private static String hex(BinaryRow row) {
        StringBuilder sb = new StringBuilder();
        for (byte b : row.toBytes()) {
            sb.append(String.format("%02x", b));
        }
        return sb.toString();
    }
}
