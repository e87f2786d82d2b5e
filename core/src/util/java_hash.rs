//! The iteration order of Java's `java.util.HashMap` / `HashSet`, reproduced.
//!
//! Java Paimon's `collect` (with `distinct`), `nested_update` and `nested_partial_update`
//! aggregators gather elements into a fresh `HashSet` / `HashMap` and return them in its
//! iteration order, which is part of the ARRAY a user reads (the merge's aggregate functions);
//! Java's commit groups files by partition, and partition and bucket, in a `HashMap` and
//! assigns row ids and writes manifest entries in its order (`commit/changes.rs`). That order
//! is a function of the keys' `hashCode`s, `equals`, `compareTo` (for tree bins) and the
//! sequence of `put` / `computeIfAbsent` / `remove` calls, under the rules of OpenJDK's
//! `HashMap` (unchanged from JDK 8 to JDK 21):
//!
//! * a table of `2^k` bins, created with 16 bins on the first insertion (threshold 12, load
//!   factor 0.75) and doubled whenever the size exceeds the threshold: after a `put` adds a key,
//!   or at the start of a `computeIfAbsent` call (so a map filled only by `computeIfAbsent` can
//!   hold 13 keys in 16 bins);
//! * a key's bin is `(n - 1) & (h ^ (h >>> 16))` for `h = hashCode()` (`0` for null);
//! * a bin is a singly linked list: `put` appends a new key at its tail, `computeIfAbsent`
//!   prepends it at its head; a doubling splits each list into the bins `j` and `j + n`
//!   keeping the relative order;
//! * a list reaching 9 nodes by `put` (8 by `computeIfAbsent`) becomes a red-black tree bin when
//!   the table has at least 64 bins, else the table doubles instead. A tree bin is ordered by
//!   the spread hash, then by `compareTo` for keys of a `Comparable` class, then by
//!   `System.identityHashCode` (see below); its iteration order is the list of its nodes, where
//!   a new node is linked right after its tree parent and the tree's root is moved to the front
//!   after every change. A doubling splits a tree bin into two lists in order, each turned back
//!   into a plain list at 6 nodes or fewer, else into a new tree; a removal turns a tree too
//!   small back into a list;
//! * iteration visits the bins in index order, each from its first node along the list.
//!
//! **One case cannot be reproduced**: two keys of a class that is not `Comparable` (Java
//! `BinaryRow`, the nested keys of `nested_update` and `nested_partial_update`; `GenericVariant`)
//! with equal `hashCode`s but unequal values, in the same *tree* bin, are ordered by
//! `System.identityHashCode`, the JVM's per-object random number. Such a tie needs eight or more
//! keys in one bin of a table of at least 64 bins and a full 32-bit hash collision between two
//! of them. Here the new key goes left of the tied key (as if its identity hash were the
//! smaller), which is one of the two orders Java can produce.
//!
//! Source: OpenJDK `java.util.HashMap` (`putVal`, `computeIfAbsent`, `removeNode`, `resize`,
//! `treeifyBin`, `TreeNode.treeify/untreeify/putTreeVal/removeTreeNode/split/moveRootToFront`,
//! `balanceInsertion`, `balanceDeletion`, `rotateLeft`, `rotateRight`, `tieBreakOrder`),
//! `java.util.HashSet` (a `HashMap` with `add` = `put`).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::Hash;

/// Bins of a new table.
const INITIAL_CAPACITY: usize = 16;
/// Largest table (Java `MAXIMUM_CAPACITY`); a larger map keeps this many bins.
const MAXIMUM_CAPACITY: usize = 1 << 30;
/// List length (by `put`, counting the new node) at which a bin becomes a tree.
const TREEIFY_THRESHOLD: usize = 8;
/// A split half of at most this many nodes becomes a plain list.
const UNTREEIFY_THRESHOLD: usize = 6;
/// Fewest bins for a tree bin; below it a long list doubles the table instead.
const MIN_TREEIFY_CAPACITY: usize = 64;

/// A key of a Java hash map: its Rust `Eq`/`Hash` must be Java's `equals` (the map uses them
/// to find keys), [`JavaKey::hash_code`] Java's `hashCode()`.
pub(crate) trait JavaKey: Eq + Hash + Clone {
    /// Java `hashCode()`.
    fn hash_code(&self) -> i32;
    /// Java `compareTo` when the key's class implements `Comparable` of itself, `None` when it
    /// does not (tree bins then fall back to `tieBreakOrder`).
    fn compare_to(&self, other: &Self) -> Option<Ordering>;
}

type NodeId = usize;

#[derive(Debug, Clone)]
struct Node<K, V> {
    /// The spread hash `h ^ (h >>> 16)`.
    hash: i32,
    key: Option<K>,
    value: V,
    next: Option<NodeId>,
    /// Tree bins only: the previous node of the bin's list and the red-black links.
    prev: Option<NodeId>,
    parent: Option<NodeId>,
    left: Option<NodeId>,
    right: Option<NodeId>,
    red: bool,
    /// A node of a tree bin (Java `TreeNode`).
    tree: bool,
}

/// A Java `HashMap<K, V>` (keys may be null: `None`) that iterates as Java's does.
#[derive(Debug, Clone)]
pub(crate) struct JavaHashMap<K: JavaKey, V> {
    nodes: Vec<Node<K, V>>,
    table: Vec<Option<NodeId>>,
    /// Where each present key lives (the map's own lookups, not part of Java's structure).
    index: HashMap<Option<K>, NodeId>,
    threshold: usize,
}

impl<K: JavaKey, V> Default for JavaHashMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

/// Java `HashMap.hash`: the key's hash code with its high half folded into the low half.
fn spread(key: Option<&impl JavaKey>) -> i32 {
    match key {
        None => 0,
        Some(k) => {
            let h = k.hash_code();
            h ^ ((h as u32) >> 16) as i32
        }
    }
}

impl<K: JavaKey, V> JavaHashMap<K, V> {
    /// An empty map (Java `new HashMap<>()`: no table until the first insertion).
    pub(crate) fn new() -> Self {
        JavaHashMap {
            nodes: Vec::new(),
            table: Vec::new(),
            index: HashMap::new(),
            threshold: 0,
        }
    }

    /// Number of keys.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// The value of `key`.
    pub(crate) fn get(&self, key: &Option<K>) -> Option<&V> {
        self.index.get(key).map(|&id| &self.nodes[id].value)
    }

    /// Java `put(key, value)`: a new key is appended to its bin; a present key keeps its
    /// place and takes `value`.
    pub(crate) fn put(&mut self, key: Option<K>, value: V) {
        if let Some(&id) = self.index.get(&key) {
            self.nodes[id].value = value;
            return;
        }
        if self.table.is_empty() {
            self.resize();
        }
        let hash = spread(key.as_ref());
        let i = self.bin(hash);
        match self.table[i] {
            None => {
                let x = self.new_node(hash, key, value, None);
                self.table[i] = Some(x);
            }
            Some(first) if self.nodes[first].tree => {
                self.put_tree_val(first, hash, key, value);
            }
            Some(first) => {
                let mut p = first;
                let mut bin_count = 0;
                while let Some(next) = self.nodes[p].next {
                    p = next;
                    bin_count += 1;
                }
                let x = self.new_node(hash, key, value, None);
                self.nodes[p].next = Some(x);
                // Java: `binCount >= TREEIFY_THRESHOLD - 1`, binCount being the position of
                // the old tail: the list now has at least TREEIFY_THRESHOLD + 1 nodes.
                if bin_count >= TREEIFY_THRESHOLD - 1 {
                    self.treeify_bin(hash);
                }
            }
        }
        if self.len() > self.threshold {
            self.resize();
        }
    }

    /// Java `computeIfAbsent(key, k -> make())` for a `make` that never returns null: a new
    /// key is prepended to its bin; returns the key's value.
    pub(crate) fn compute_if_absent(&mut self, key: Option<K>, make: impl FnOnce() -> V) -> &mut V {
        if self.len() > self.threshold || self.table.is_empty() {
            self.resize();
        }
        if let Some(&id) = self.index.get(&key) {
            return &mut self.nodes[id].value;
        }
        let hash = spread(key.as_ref());
        let i = self.bin(hash);
        let value = make();
        let id = match self.table[i] {
            Some(first) if self.nodes[first].tree => self.put_tree_val(first, hash, key, value),
            first => {
                let bin_count = self.list(first).count();
                let x = self.new_node(hash, key, value, first);
                self.table[i] = Some(x);
                if bin_count >= TREEIFY_THRESHOLD - 1 {
                    self.treeify_bin(hash);
                }
                x
            }
        };
        &mut self.nodes[id].value
    }

    /// Java `remove(key)`.
    pub(crate) fn remove(&mut self, key: &Option<K>) -> bool {
        let Some(id) = self.index.remove(key) else {
            return false;
        };
        let i = self.bin(self.nodes[id].hash);
        if self.nodes[id].tree {
            self.remove_tree_node(id);
        } else if self.table[i] == Some(id) {
            self.table[i] = self.nodes[id].next;
        } else {
            let mut p = self.table[i];
            while let Some(q) = p {
                if self.nodes[q].next == Some(id) {
                    self.nodes[q].next = self.nodes[id].next;
                    break;
                }
                p = self.nodes[q].next;
            }
        }
        true
    }

    /// Node ids in Java's iteration order.
    fn order(&self) -> Vec<NodeId> {
        let mut out = Vec::with_capacity(self.len());
        for head in &self.table {
            out.extend(self.list(*head));
        }
        out
    }

    /// Keys and values in Java's iteration order.
    pub(crate) fn into_entries(self) -> Vec<(Option<K>, V)> {
        let order = self.order();
        let mut slots: Vec<Option<Node<K, V>>> = self.nodes.into_iter().map(Some).collect();
        order
            .into_iter()
            .filter_map(|id| slots[id].take())
            .map(|n| (n.key, n.value))
            .collect()
    }

    /// Values in Java's iteration order (`new ArrayList<>(map.values())`).
    pub(crate) fn into_values(self) -> Vec<V> {
        self.into_entries().into_iter().map(|(_, v)| v).collect()
    }

    fn list(&self, head: Option<NodeId>) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(head, |&id| self.nodes[id].next)
    }

    fn bin(&self, hash: i32) -> usize {
        (self.table.len() - 1) & (hash as u32 as usize)
    }

    fn new_node(&mut self, hash: i32, key: Option<K>, value: V, next: Option<NodeId>) -> NodeId {
        let id = self.nodes.len();
        self.index.insert(key.clone(), id);
        self.nodes.push(Node {
            hash,
            key,
            value,
            next,
            prev: None,
            parent: None,
            left: None,
            right: None,
            red: false,
            tree: false,
        });
        id
    }

    /// Java `resize()`: create the table or double it, splitting every bin.
    fn resize(&mut self) {
        let old_cap = self.table.len();
        if old_cap >= MAXIMUM_CAPACITY {
            self.threshold = usize::MAX;
            return;
        }
        let (new_cap, new_threshold) = if old_cap == 0 {
            (INITIAL_CAPACITY, INITIAL_CAPACITY * 3 / 4)
        } else {
            let cap = old_cap * 2;
            let thr = if cap < MAXIMUM_CAPACITY {
                self.threshold * 2
            } else {
                usize::MAX
            };
            (cap, thr)
        };
        let old = std::mem::replace(&mut self.table, vec![None; new_cap]);
        self.threshold = new_threshold;
        for (j, head) in old.into_iter().enumerate() {
            let Some(e) = head else { continue };
            if self.nodes[e].next.is_none() {
                let i = self.bin(self.nodes[e].hash);
                self.table[i] = Some(e);
            } else if self.nodes[e].tree {
                self.split(e, j, old_cap);
            } else {
                let (lo, hi): (Vec<NodeId>, Vec<NodeId>) = self
                    .list(Some(e))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .partition(|&id| self.nodes[id].hash as u32 as usize & old_cap == 0);
                self.table[j] = self.link(&lo);
                self.table[j + old_cap] = self.link(&hi);
            }
        }
    }

    /// Chain `ids` into a list through `next` (and `prev` for tree nodes); its head.
    fn link(&mut self, ids: &[NodeId]) -> Option<NodeId> {
        for (k, &id) in ids.iter().enumerate() {
            self.nodes[id].next = ids.get(k + 1).copied();
            self.nodes[id].prev = if k == 0 { None } else { Some(ids[k - 1]) };
        }
        ids.first().copied()
    }

    /// Java `treeifyBin`: a long list becomes a tree bin, or the table doubles when it has
    /// fewer than [`MIN_TREEIFY_CAPACITY`] bins.
    fn treeify_bin(&mut self, hash: i32) {
        if self.table.len() < MIN_TREEIFY_CAPACITY {
            self.resize();
            return;
        }
        let i = self.bin(hash);
        let ids: Vec<NodeId> = self.list(self.table[i]).collect();
        for &id in &ids {
            self.nodes[id].tree = true;
        }
        let head = self.link(&ids);
        self.table[i] = head;
        if let Some(head) = head {
            self.treeify(head);
        }
    }

    /// Java `TreeNode.treeify`: build the red-black tree of the list starting at `head`, in
    /// list order, then move its root to the front.
    fn treeify(&mut self, head: NodeId) {
        let mut root: Option<NodeId> = None;
        let ids: Vec<NodeId> = self.list(Some(head)).collect();
        for x in ids {
            self.nodes[x].left = None;
            self.nodes[x].right = None;
            let Some(r) = root else {
                self.nodes[x].parent = None;
                self.nodes[x].red = false;
                root = Some(x);
                continue;
            };
            let mut p = r;
            loop {
                let dir = self.direction(x, p);
                let child = if dir <= 0 {
                    self.nodes[p].left
                } else {
                    self.nodes[p].right
                };
                match child {
                    Some(c) => p = c,
                    None => {
                        self.nodes[x].parent = Some(p);
                        if dir <= 0 {
                            self.nodes[p].left = Some(x);
                        } else {
                            self.nodes[p].right = Some(x);
                        }
                        root = Some(self.balance_insertion(r, x));
                        break;
                    }
                }
            }
        }
        if let Some(r) = root {
            self.move_root_to_front(r);
        }
    }

    /// Java `untreeify`: the nodes of the list at `head` as a plain list, in order.
    fn untreeify(&mut self, head: NodeId) -> NodeId {
        let ids: Vec<NodeId> = self.list(Some(head)).collect();
        for &id in &ids {
            let n = &mut self.nodes[id];
            n.tree = false;
            n.prev = None;
            n.parent = None;
            n.left = None;
            n.right = None;
            n.red = false;
        }
        head
    }

    /// The side of tree node `p` on which key `x` (absent from the tree) goes: the spread
    /// hashes, then `compareTo`, then Java's `tieBreakOrder` (see the module docs).
    fn direction(&self, x: NodeId, p: NodeId) -> i32 {
        let (h, ph) = (self.nodes[x].hash, self.nodes[p].hash);
        if ph > h {
            return -1;
        }
        if ph < h {
            return 1;
        }
        match (&self.nodes[x].key, &self.nodes[p].key) {
            (Some(k), Some(pk)) => match k.compare_to(pk) {
                Some(Ordering::Less) => -1,
                Some(Ordering::Greater) => 1,
                // Not comparable (or comparing equal): identity hashes decide in Java.
                _ => -1,
            },
            // tieBreakOrder with a null key: `identityHashCode(null)` is 0, below any object's.
            (None, _) => -1,
            (Some(_), None) => 1,
        }
    }

    fn root_of(&self, mut r: NodeId) -> NodeId {
        while let Some(p) = self.nodes[r].parent {
            r = p;
        }
        r
    }

    /// Java `putTreeVal` for a key known to be absent: the new node becomes a leaf and follows
    /// its tree parent in the bin's list.
    fn put_tree_val(&mut self, first: NodeId, hash: i32, key: Option<K>, value: V) -> NodeId {
        let root = self.root_of(first);
        let x = self.new_node(hash, key, value, None);
        self.nodes[x].tree = true;
        let mut p = root;
        loop {
            let dir = self.direction(x, p);
            let child = if dir <= 0 {
                self.nodes[p].left
            } else {
                self.nodes[p].right
            };
            if let Some(c) = child {
                p = c;
                continue;
            }
            let xpn = self.nodes[p].next;
            if dir <= 0 {
                self.nodes[p].left = Some(x);
            } else {
                self.nodes[p].right = Some(x);
            }
            self.nodes[x].next = xpn;
            self.nodes[p].next = Some(x);
            self.nodes[x].parent = Some(p);
            self.nodes[x].prev = Some(p);
            if let Some(n) = xpn {
                self.nodes[n].prev = Some(x);
            }
            let r = self.balance_insertion(root, x);
            self.move_root_to_front(r);
            return x;
        }
    }

    /// Java `moveRootToFront`.
    fn move_root_to_front(&mut self, root: NodeId) {
        let i = self.bin(self.nodes[root].hash);
        let Some(first) = self.table[i] else {
            return;
        };
        if first == root {
            return;
        }
        self.table[i] = Some(root);
        let rp = self.nodes[root].prev;
        let rn = self.nodes[root].next;
        if let Some(n) = rn {
            self.nodes[n].prev = rp;
        }
        if let Some(p) = rp {
            self.nodes[p].next = rn;
        }
        self.nodes[first].prev = Some(root);
        self.nodes[root].next = Some(first);
        self.nodes[root].prev = None;
    }

    /// Java `TreeNode.split` of the tree bin at `head` (old index `index`, split bit `bit`).
    fn split(&mut self, head: NodeId, index: usize, bit: usize) {
        let (lo, hi): (Vec<NodeId>, Vec<NodeId>) = self
            .list(Some(head))
            .collect::<Vec<_>>()
            .into_iter()
            .partition(|&id| self.nodes[id].hash as u32 as usize & bit == 0);
        let lo_head = self.link(&lo);
        let hi_head = self.link(&hi);
        if let Some(h) = lo_head {
            if lo.len() <= UNTREEIFY_THRESHOLD {
                self.table[index] = Some(self.untreeify(h));
            } else {
                self.table[index] = Some(h);
                if hi_head.is_some() {
                    self.treeify(h);
                }
            }
        }
        if let Some(h) = hi_head {
            if hi.len() <= UNTREEIFY_THRESHOLD {
                self.table[index + bit] = Some(self.untreeify(h));
            } else {
                self.table[index + bit] = Some(h);
                if lo_head.is_some() {
                    self.treeify(h);
                }
            }
        }
    }

    /// Java `removeTreeNode(map, tab, movable = true)` of node `p`.
    fn remove_tree_node(&mut self, p: NodeId) {
        let i = self.bin(self.nodes[p].hash);
        let Some(mut first) = self.table[i] else {
            return;
        };
        // The tree is found from the bin's first node before the unlinking (Java keeps `root`
        // at the old first node, which may be `p` itself).
        let mut root = first;
        let succ = self.nodes[p].next;
        let pred = self.nodes[p].prev;
        match pred {
            None => {
                self.table[i] = succ;
                match succ {
                    Some(s) => first = s,
                    None => return,
                }
            }
            Some(pr) => self.nodes[pr].next = succ,
        }
        if let Some(s) = succ {
            self.nodes[s].prev = pred;
        }
        if self.nodes[root].parent.is_some() {
            root = self.root_of(root);
        }
        let too_small = match (self.nodes[root].right, self.nodes[root].left) {
            (None, _) | (_, None) => true,
            (Some(_), Some(rl)) => self.nodes[rl].left.is_none(),
        };
        if too_small {
            self.table[i] = Some(self.untreeify(first));
            return;
        }
        let (pl, pr) = (self.nodes[p].left, self.nodes[p].right);
        let replacement;
        if let (Some(pl), Some(pr)) = (pl, pr) {
            // Swap p with its successor s in the tree (links, not contents).
            let mut s = pr;
            while let Some(sl) = self.nodes[s].left {
                s = sl;
            }
            let c = self.nodes[s].red;
            self.nodes[s].red = self.nodes[p].red;
            self.nodes[p].red = c;
            let sr = self.nodes[s].right;
            let pp = self.nodes[p].parent;
            if s == pr {
                self.nodes[p].parent = Some(s);
                self.nodes[s].right = Some(p);
            } else {
                let sp = self.nodes[s].parent;
                self.nodes[p].parent = sp;
                if let Some(sp) = sp {
                    if self.nodes[sp].left == Some(s) {
                        self.nodes[sp].left = Some(p);
                    } else {
                        self.nodes[sp].right = Some(p);
                    }
                }
                self.nodes[s].right = Some(pr);
                self.nodes[pr].parent = Some(s);
            }
            self.nodes[p].left = None;
            self.nodes[p].right = sr;
            if let Some(sr) = sr {
                self.nodes[sr].parent = Some(p);
            }
            self.nodes[s].left = Some(pl);
            self.nodes[pl].parent = Some(s);
            self.nodes[s].parent = pp;
            match pp {
                None => root = s,
                Some(pp) => {
                    if self.nodes[pp].left == Some(p) {
                        self.nodes[pp].left = Some(s);
                    } else {
                        self.nodes[pp].right = Some(s);
                    }
                }
            }
            replacement = sr.unwrap_or(p);
        } else {
            replacement = pl.or(pr).unwrap_or(p);
        }
        if replacement != p {
            let pp = self.nodes[p].parent;
            self.nodes[replacement].parent = pp;
            match pp {
                None => {
                    root = replacement;
                    self.nodes[replacement].red = false;
                }
                Some(pp) => {
                    if self.nodes[pp].left == Some(p) {
                        self.nodes[pp].left = Some(replacement);
                    } else {
                        self.nodes[pp].right = Some(replacement);
                    }
                }
            }
            self.nodes[p].left = None;
            self.nodes[p].right = None;
            self.nodes[p].parent = None;
        }
        let r = if self.nodes[p].red {
            root
        } else {
            self.balance_deletion(root, Some(replacement))
        };
        if replacement == p {
            let pp = self.nodes[p].parent.take();
            if let Some(pp) = pp {
                if self.nodes[pp].left == Some(p) {
                    self.nodes[pp].left = None;
                } else if self.nodes[pp].right == Some(p) {
                    self.nodes[pp].right = None;
                }
            }
        }
        self.move_root_to_front(r);
    }

    fn is_red(&self, n: Option<NodeId>) -> bool {
        n.is_some_and(|n| self.nodes[n].red)
    }

    /// Java `rotateLeft`; the new root.
    fn rotate_left(&mut self, mut root: NodeId, p: NodeId) -> NodeId {
        let Some(r) = self.nodes[p].right else {
            return root;
        };
        let rl = self.nodes[r].left;
        self.nodes[p].right = rl;
        if let Some(rl) = rl {
            self.nodes[rl].parent = Some(p);
        }
        let pp = self.nodes[p].parent;
        self.nodes[r].parent = pp;
        match pp {
            None => {
                root = r;
                self.nodes[r].red = false;
            }
            Some(pp) => {
                if self.nodes[pp].left == Some(p) {
                    self.nodes[pp].left = Some(r);
                } else {
                    self.nodes[pp].right = Some(r);
                }
            }
        }
        self.nodes[r].left = Some(p);
        self.nodes[p].parent = Some(r);
        root
    }

    /// Java `rotateRight`; the new root.
    fn rotate_right(&mut self, mut root: NodeId, p: NodeId) -> NodeId {
        let Some(l) = self.nodes[p].left else {
            return root;
        };
        let lr = self.nodes[l].right;
        self.nodes[p].left = lr;
        if let Some(lr) = lr {
            self.nodes[lr].parent = Some(p);
        }
        let pp = self.nodes[p].parent;
        self.nodes[l].parent = pp;
        match pp {
            None => {
                root = l;
                self.nodes[l].red = false;
            }
            Some(pp) => {
                if self.nodes[pp].right == Some(p) {
                    self.nodes[pp].right = Some(l);
                } else {
                    self.nodes[pp].left = Some(l);
                }
            }
        }
        self.nodes[l].right = Some(p);
        self.nodes[p].parent = Some(l);
        root
    }

    /// Java `balanceInsertion`; the new root.
    fn balance_insertion(&mut self, mut root: NodeId, mut x: NodeId) -> NodeId {
        self.nodes[x].red = true;
        loop {
            let Some(mut xp) = self.nodes[x].parent else {
                self.nodes[x].red = false;
                return x;
            };
            if !self.nodes[xp].red {
                return root;
            }
            let Some(mut xpp) = self.nodes[xp].parent else {
                return root;
            };
            let xppl = self.nodes[xpp].left;
            if Some(xp) == xppl {
                let xppr = self.nodes[xpp].right;
                if let Some(u) = xppr.filter(|&u| self.nodes[u].red) {
                    self.nodes[u].red = false;
                    self.nodes[xp].red = false;
                    self.nodes[xpp].red = true;
                    x = xpp;
                } else {
                    if self.nodes[xp].right == Some(x) {
                        x = xp;
                        root = self.rotate_left(root, x);
                        match self.nodes[x].parent {
                            Some(p) => {
                                xp = p;
                                match self.nodes[p].parent {
                                    Some(g) => xpp = g,
                                    None => {
                                        self.nodes[xp].red = false;
                                        continue;
                                    }
                                }
                            }
                            None => continue,
                        }
                    }
                    self.nodes[xp].red = false;
                    self.nodes[xpp].red = true;
                    root = self.rotate_right(root, xpp);
                }
            } else {
                if let Some(u) = xppl.filter(|&u| self.nodes[u].red) {
                    self.nodes[u].red = false;
                    self.nodes[xp].red = false;
                    self.nodes[xpp].red = true;
                    x = xpp;
                } else {
                    if self.nodes[xp].left == Some(x) {
                        x = xp;
                        root = self.rotate_right(root, x);
                        match self.nodes[x].parent {
                            Some(p) => {
                                xp = p;
                                match self.nodes[p].parent {
                                    Some(g) => xpp = g,
                                    None => {
                                        self.nodes[xp].red = false;
                                        continue;
                                    }
                                }
                            }
                            None => continue,
                        }
                    }
                    self.nodes[xp].red = false;
                    self.nodes[xpp].red = true;
                    root = self.rotate_left(root, xpp);
                }
            }
        }
    }

    /// Java `balanceDeletion`; the new root.
    fn balance_deletion(&mut self, mut root: NodeId, mut x: Option<NodeId>) -> NodeId {
        loop {
            let Some(xn) = x else {
                return root;
            };
            if xn == root {
                return root;
            }
            let Some(mut xp) = self.nodes[xn].parent else {
                self.nodes[xn].red = false;
                return xn;
            };
            if self.nodes[xn].red {
                self.nodes[xn].red = false;
                return root;
            }
            if self.nodes[xp].left == Some(xn) {
                let mut xpr = self.nodes[xp].right;
                if let Some(s) = xpr.filter(|&s| self.nodes[s].red) {
                    self.nodes[s].red = false;
                    self.nodes[xp].red = true;
                    root = self.rotate_left(root, xp);
                    match self.nodes[xn].parent {
                        Some(p) => {
                            xp = p;
                            xpr = self.nodes[p].right;
                        }
                        None => {
                            // Java continues with xp = null: x moves to null and the loop ends.
                            return root;
                        }
                    }
                }
                let Some(s) = xpr else {
                    x = Some(xp);
                    continue;
                };
                let (sl, sr) = (self.nodes[s].left, self.nodes[s].right);
                if !self.is_red(sr) && !self.is_red(sl) {
                    self.nodes[s].red = true;
                    x = Some(xp);
                    continue;
                }
                let mut s = Some(s);
                if !self.is_red(sr) {
                    if let Some(sl) = sl {
                        self.nodes[sl].red = false;
                    }
                    if let Some(sv) = s {
                        self.nodes[sv].red = true;
                        root = self.rotate_right(root, sv);
                    }
                    match self.nodes[xn].parent {
                        Some(p) => {
                            xp = p;
                            s = self.nodes[p].right;
                        }
                        None => return root,
                    }
                }
                if let Some(sv) = s {
                    self.nodes[sv].red = self.nodes[xp].red;
                    if let Some(sr) = self.nodes[sv].right {
                        self.nodes[sr].red = false;
                    }
                }
                self.nodes[xp].red = false;
                root = self.rotate_left(root, xp);
                x = Some(root);
            } else {
                let mut xpl = self.nodes[xp].left;
                if let Some(s) = xpl.filter(|&s| self.nodes[s].red) {
                    self.nodes[s].red = false;
                    self.nodes[xp].red = true;
                    root = self.rotate_right(root, xp);
                    match self.nodes[xn].parent {
                        Some(p) => {
                            xp = p;
                            xpl = self.nodes[p].left;
                        }
                        None => return root,
                    }
                }
                let Some(s) = xpl else {
                    x = Some(xp);
                    continue;
                };
                let (sl, sr) = (self.nodes[s].left, self.nodes[s].right);
                if !self.is_red(sl) && !self.is_red(sr) {
                    self.nodes[s].red = true;
                    x = Some(xp);
                    continue;
                }
                let mut s = Some(s);
                if !self.is_red(sl) {
                    if let Some(sr) = sr {
                        self.nodes[sr].red = false;
                    }
                    if let Some(sv) = s {
                        self.nodes[sv].red = true;
                        root = self.rotate_left(root, sv);
                    }
                    match self.nodes[xn].parent {
                        Some(p) => {
                            xp = p;
                            s = self.nodes[p].left;
                        }
                        None => return root,
                    }
                }
                if let Some(sv) = s {
                    self.nodes[sv].red = self.nodes[xp].red;
                    if let Some(sl) = self.nodes[sv].left {
                        self.nodes[sl].red = false;
                    }
                }
                self.nodes[xp].red = false;
                root = self.rotate_right(root, xp);
                x = Some(root);
            }
        }
    }
}

impl<K: JavaKey, V> JavaHashMap<K, V> {
    /// Java `HashSet.add(key)` (`HashMap.put(key, PRESENT)`) on a map used as a set: `put`
    /// when the key is absent; a present key keeps its place
    /// and its first value (Java's set keeps the first element object).
    pub(crate) fn add(&mut self, key: Option<K>, value: V) {
        if !self.index.contains_key(&key) {
            self.put(key, value);
        }
    }
}

#[cfg(test)]
mod tests;
