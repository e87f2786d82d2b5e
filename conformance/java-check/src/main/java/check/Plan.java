package check;

import org.apache.paimon.CoreOptions;
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
 * plan TABLE_DIR [--full]: the compaction Java Paimon 1.4.2 plans for every bucket of a
 * primary-key table's latest snapshot, one JSON line per bucket with a unit: {"bucket": B,
 * "output_level": L, "files": [sorted names]}, in bucket then first-file order. One trigger of
 * the strategy MergeTreeCompactManagerFactory builds (universal, ForceUpLevel0Compaction for
 * lookup tables and compaction.force-up-level-0), or CompactStrategy.pickFullCompaction with
 * --full (no deletion-vector maintainer, no record-level expiry), filtered as
 * MergeTreeCompactManager#triggerCompaction filters a normal pick.
 */
public final class Plan {

    private Plan() {}

    public static void main(String[] argv) throws Exception {
        if (argv.length < 1) {
            System.err.println("usage: plan TABLE_DIR [--full]");
            System.exit(2);
        }
        boolean full = argv.length > 1 && "--full".equals(argv[1]);
        Map<String, String> open = new LinkedHashMap<>();
        open.put("path", new File(argv[0]).getAbsolutePath());
        FileStoreTable table =
                FileStoreTableFactory.create(LocalFileIO.create(), Options.fromMap(open));
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
                        strategy(options)
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
    }

    /** The normal-compaction strategy of MergeTreeCompactManagerFactory (1.4.2). */
    private static CompactStrategy strategy(CoreOptions options) {
        UniversalCompaction universal =
                new UniversalCompaction(
                        options.maxSizeAmplificationPercent(),
                        options.sortedRunSizeRatio(),
                        options.numSortedRunCompactionTrigger(),
                        EarlyFullCompaction.create(options),
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
