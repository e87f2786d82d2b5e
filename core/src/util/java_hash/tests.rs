use super::*;

/// An `Integer` key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Int(i32);

impl JavaKey for Int {
    fn hash_code(&self) -> i32 {
        self.0
    }
    fn compare_to(&self, other: &Self) -> Option<Ordering> {
        Some(self.0.cmp(&other.0))
    }
}

fn keys<K: JavaKey>(m: JavaHashMap<K, ()>) -> Vec<Option<K>> {
    m.into_entries().into_iter().map(|(k, _)| k).collect()
}

#[test]
fn small_maps_iterate_by_bin_then_insertion() {
    let mut m = JavaHashMap::new();
    for k in [17, 1, 33, 2, 16, 0] {
        m.put(Some(Int(k)), ());
    }
    // 16 bins: bin 0 holds 16, 0 (in insertion order), bin 1 holds 17, 1, 33.
    assert_eq!(
        keys(m),
        [16, 0, 17, 1, 33, 2].map(|k| Some(Int(k))).to_vec()
    );
}

/// A key of a class that is not `Comparable`, hash code as `HashOrders.objHash`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Obj(i32);

impl JavaKey for Obj {
    fn hash_code(&self) -> i32 {
        if self.0 % 3 == 0 {
            self.0.wrapping_mul(4096)
        } else {
            self.0.wrapping_mul(7919)
        }
    }
    fn compare_to(&self, _other: &Self) -> Option<Ordering> {
        None
    }
}

/// Replay `ops` ("p5 c-3 r5": put, computeIfAbsent, remove) on a map of keys `make(k)`;
/// the keys in iteration order.
fn replay<K: JavaKey>(ops: &str, make: impl Fn(i32) -> K, id: impl Fn(&K) -> i32) -> String {
    let mut m: JavaHashMap<K, ()> = JavaHashMap::new();
    for op in ops.split(' ') {
        let k: i32 = op[1..].parse().unwrap();
        let key = Some(make(k));
        match &op[..1] {
            "p" => m.put(key, ()),
            "c" => {
                m.compute_if_absent(key, || ());
            }
            "r" => {
                m.remove(&key);
            }
            other => panic!("op {other}"),
        }
    }
    let order: Vec<String> = m
        .into_entries()
        .into_iter()
        .map(|(k, _)| id(k.as_ref().unwrap()).to_string())
        .collect();
    order.join(" ")
}

/// Java 17's `HashMap` iteration order after random `put` / `computeIfAbsent` / `remove`
/// sequences over colliding keys (tree bins, splits, untreeify, tree removals), printed by
/// `conformance/java-check/src/main/java/check/HashOrders.java` into `orders.json`.
#[test]
fn iteration_order_equals_java_hash_map_after_random_operations() {
    let cases: serde_json::Value = serde_json::from_str(include_str!("orders.json")).unwrap();
    let cases = cases.as_array().unwrap();
    assert!(cases.len() > 50);
    let mut longest = 0;
    for (i, c) in cases.iter().enumerate() {
        let ops = c["ops"].as_str().unwrap();
        let want = c["order"].as_str().unwrap();
        let got = match c["key"].as_str().unwrap() {
            "int" => replay(ops, Int, |k| k.0),
            _ => replay(ops, Obj, |k| k.0),
        };
        assert_eq!(got, want, "case {i}: {ops}");
        longest = longest.max(want.split(' ').count());
    }
    assert!(longest > 64, "some map grows past 64 bins");
}

/// `computeIfAbsent` prepends to its bin and resizes only on the next call: 13 keys stay in
/// 16 bins, where `put` would have doubled the table.
#[test]
fn compute_if_absent_prepends_and_resizes_late() {
    let mut m: JavaHashMap<Int, ()> = JavaHashMap::new();
    for k in [1, 17, 33] {
        m.compute_if_absent(Some(Int(k)), || ());
    }
    assert_eq!(keys(m), [33, 17, 1].map(|k| Some(Int(k))).to_vec());

    let mut m: JavaHashMap<Int, ()> = JavaHashMap::new();
    for k in 0..13 {
        m.compute_if_absent(Some(Int(k * 16 + 1)), || ());
    }
    // One bin of 16 (13 nodes: treeifyBin doubled the table at the 8th, 9th... insertion).
    assert_eq!(m.len(), 13);
}

/// Null keys hash to 0 and sort before any key in a tree bin.
#[test]
fn null_key_is_bin_zero() {
    let mut m: JavaHashMap<Int, ()> = JavaHashMap::new();
    m.put(Some(Int(1)), ());
    m.put(None, ());
    m.put(Some(Int(16)), ());
    assert_eq!(keys(m), vec![None, Some(Int(16)), Some(Int(1))]);
}
