package check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * HashOrders: prints the iteration order of {@code java.util.HashMap} after random sequences of
 * {@code put}, {@code computeIfAbsent} and {@code remove}, as JSON, for the unit tests of
 * paimon-kernel's reproduction of that order ({@code core/src/merge/java_hash.rs}, fixture
 * {@code core/src/merge/java_hash/orders.json}).
 *
 * <pre>
 * HashOrders &gt; core/src/merge/java_hash/orders.json
 * </pre>
 *
 * Keys are {@code Integer}s (a {@code Comparable} class: tree bins order equal hashes by value)
 * or {@link Obj}s (not {@code Comparable}, hash code {@link #objHash}, distinct per id, so no
 * tie is broken by identity hash). Key pools collide on purpose (multiples of 4096 share a bin
 * up to 4096 bins) so that lists become tree bins, trees split on resizing and shrink back into
 * lists on removals. Seeded: a run prints the same file.
 */
public final class HashOrders {

    private HashOrders() {}

    /** A key that is not Comparable. */
    static final class Obj {
        final int id;

        Obj(int id) {
            this.id = id;
        }

        @Override
        public int hashCode() {
            return objHash(id);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Obj && ((Obj) o).id == id;
        }
    }

    /** The hash code of {@code Obj(id)} (the Rust test computes the same). */
    static int objHash(int id) {
        return id % 3 == 0 ? id * 4096 : id * 7919;
    }

    private static int key(Random rnd, int pool) {
        switch (rnd.nextInt(pool)) {
            case 0:
                return (rnd.nextInt(40) + 1) * 4096;
            case 1:
                return rnd.nextInt(40) * 64 + rnd.nextInt(2);
            case 2:
                return rnd.nextInt(2001) - 1000;
            default:
                return (rnd.nextInt(64) + 1) << 16;
        }
    }

    public static void main(String[] argv) {
        Random rnd = new Random(41);
        StringBuilder out = new StringBuilder("[\n");
        int[] lengths = {5, 13, 14, 25, 49, 70, 100, 160};
        String[] mixes = {"p", "c", "pr", "cr", "pcr"};
        boolean first = true;
        for (String mix : mixes) {
            for (int len : lengths) {
                for (boolean obj : new boolean[] {false, true}) {
                    if (obj && len < 25) {
                        continue;
                    }
                    int pool = 1 + rnd.nextInt(4);
                    Map<Object, Integer> map = new HashMap<>();
                    List<String> ops = new ArrayList<>();
                    for (int i = 0; i < len; i++) {
                        int k = obj ? rnd.nextInt(300) : key(rnd, pool);
                        Object key = obj ? new Obj(k) : Integer.valueOf(k);
                        char op = mix.charAt(rnd.nextInt(mix.length()));
                        if (op == 'r' && rnd.nextInt(3) == 0) {
                            op = mix.charAt(0); // more insertions than removals
                        }
                        ops.add(op + Integer.toString(k));
                        if (op == 'p') {
                            map.put(key, k);
                        } else if (op == 'c') {
                            map.computeIfAbsent(key, x -> 0);
                        } else {
                            map.remove(key);
                        }
                    }
                    List<String> order = new ArrayList<>();
                    for (Object key : map.keySet()) {
                        order.add(Integer.toString(obj ? ((Obj) key).id : (Integer) key));
                    }
                    if (!first) {
                        out.append(",\n");
                    }
                    first = false;
                    out.append("{\"key\":\"")
                            .append(obj ? "obj" : "int")
                            .append("\",\"ops\":\"")
                            .append(String.join(" ", ops))
                            .append("\",\"order\":\"")
                            .append(String.join(" ", order))
                            .append("\"}");
                }
            }
        }
        out.append("\n]\n");
        System.out.print(out);
    }
}
