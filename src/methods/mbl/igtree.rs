//! IGTree (Daelemans, van den Bosch & Weijters 1997; the thesis' §3.2.2 and §6.6.4): the
//! instance base compressed into a decision tree that tests the features in decreasing weight
//! order. Every node stores the majority class of the instances below it; a subtree whose
//! instances all share its parent's majority class is pruned, since it would answer the same.
//! Classification follows the query's values down as far as they match and answers the
//! majority class of the last node reached: at most 41 binary searches per instance.
//!
//! Built from the sorted [`InstanceBase`] (its features already in weight order), so a node is
//! a contiguous range of instances and its children are the runs of equal values in the next
//! column. Nodes are stored breadth-first, children of a node contiguous and sorted by value.

use std::collections::VecDeque;

use super::knn::{InstanceBase, majority, read_varint, write_varint};
use crate::methods::mbl::units::{Features, N_FEATURES, N_PAIRS};
use crate::model_file::{ModelFileError, Reader};

/// One tree node: the value of its feature that leads here, its majority class, its children.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    pub value: u8,
    pub class: u8,
    pub first_child: u32,
    pub children: u32,
}

/// An IGTree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgTree {
    /// Breadth-first; `nodes[0]` is the root.
    pub nodes: Vec<Node>,
}

/// Class counts of a range of instances, and whether a single class holds them all.
fn range_votes(base: &InstanceBase, lo: usize, hi: usize) -> ([u64; N_PAIRS], bool) {
    let mut v = [0u64; N_PAIRS];
    for i in lo..hi {
        for &(c, n) in base.classes_of(i) {
            v[c as usize & (N_PAIRS - 1)] += u64::from(n);
        }
    }
    let pure = v.iter().filter(|&&n| n > 0).count() <= 1;
    (v, pure)
}

impl IgTree {
    /// Builds the tree from an instance base; ties of the majority go as in IB1's vote.
    pub fn build(base: &InstanceBase, totals: &[u64]) -> IgTree {
        let mut t = IgTree::default();
        if base.is_empty() {
            t.nodes.push(Node { value: 0, class: majority(&[0; N_PAIRS], totals), first_child: 0, children: 0 });
            return t;
        }
        let (v, pure) = range_votes(base, 0, base.len());
        t.nodes.push(Node { value: 0, class: majority(&v, totals), first_child: 0, children: 0 });
        // (node, lo, hi, depth, pure)
        let mut queue = VecDeque::from([(0usize, 0usize, base.len(), 0usize, pure)]);
        while let Some((node, lo, hi, d, pure)) = queue.pop_front() {
            if pure || d == N_FEATURES {
                continue;
            }
            let parent_class = t.nodes[node].class;
            let first = t.nodes.len();
            let mut i = lo;
            while i < hi {
                let val = base.feats[i * N_FEATURES + d];
                let j = base.upper_bound(i, hi, d, val);
                let (v, pure) = range_votes(base, i, j);
                let class = majority(&v, totals);
                // A pure child with the parent's class adds nothing: the parent answers it.
                if !(pure && class == parent_class) {
                    t.nodes.push(Node { value: val, class, first_child: 0, children: 0 });
                    queue.push_back((t.nodes.len() - 1, i, j, d + 1, pure));
                }
                i = j;
            }
            t.nodes[node].first_child = first as u32;
            t.nodes[node].children = (t.nodes.len() - first) as u32;
        }
        t
    }

    /// The class of a query whose features are in the tree's (weight) order.
    pub fn classify(&self, q: &Features) -> u8 {
        let Some(mut n) = self.nodes.first() else {
            return (N_PAIRS - 1) as u8;
        };
        for &v in q.iter() {
            let (a, b) = (n.first_child as usize, n.first_child as usize + n.children as usize);
            let Some(kids) = self.nodes.get(a..b) else {
                break;
            };
            match kids.binary_search_by_key(&v, |k| k.value) {
                Ok(i) => n = &kids[i],
                Err(_) => break,
            }
        }
        n.class
    }

    /// Node count (`u64`), then per node value and class bytes and the child count (varint);
    /// first children follow from breadth-first order.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.nodes.len() as u64).to_le_bytes());
        for n in &self.nodes {
            out.push(n.value);
            out.push(n.class);
            write_varint(out, n.children);
        }
    }

    /// Reads [`write`](Self::write)'s layout, checking that children stay inside the tree,
    /// come after their parent and are sorted by value.
    pub fn read(r: &mut Reader<'_>) -> Result<IgTree, ModelFileError> {
        let bad = |m: &str| ModelFileError::Payload(m.to_string());
        let n = r.u64()?;
        if n == 0 || n > (r.remaining() / 3) as u64 {
            return Err(bad("node count does not match the payload"));
        }
        let n = n as usize;
        let mut nodes = Vec::with_capacity(n);
        let mut next = 1usize;
        for i in 0..n {
            let value = r.take(1)?[0];
            let class = r.take(1)?[0];
            let children = read_varint(r)? as usize;
            if class as usize >= N_PAIRS {
                return Err(bad("class out of range"));
            }
            let first = next;
            // Breadth-first order: children come after their parent, so the tree has no cycle.
            if children > 0 && first <= i {
                return Err(bad("child before its parent"));
            }
            next = next.checked_add(children).filter(|&e| e <= n).ok_or_else(|| bad("children outside the tree"))?;
            nodes.push(Node {
                value,
                class,
                first_child: if children == 0 { 0 } else { first as u32 },
                children: children as u32,
            });
        }
        if next != n {
            return Err(bad("nodes not reachable from the root"));
        }
        for p in &nodes {
            let kids = &nodes[p.first_child as usize..(p.first_child + p.children) as usize];
            if kids.windows(2).any(|w| w[0].value >= w[1].value) {
                return Err(bad("children not sorted by value"));
            }
        }
        Ok(IgTree { nodes })
    }
}

#[cfg(test)]
mod tests {
    use super::super::knn::tests::inst;
    use super::super::knn::{Algorithm, MblModel, MblOptions, MblTrainingSummary, Neighbours};

    #[test]
    fn igtree_on_a_toy_set() {
        // Feature 0 decides except for value 1, where feature 1 splits 3 / 4.
        let set = vec![inst(1, 1, 3, 3), inst(1, 2, 4, 2), inst(2, 1, 5, 4), inst(2, 2, 5, 1), inst(3, 1, 5, 1)];
        let m = MblModel::from_instances(
            &set,
            MblOptions { algorithm: Algorithm::Igtree, ..MblOptions::default() },
            MblTrainingSummary::default(),
        );
        let t = m.tree.as_ref().unwrap();
        // Root majority: 5 (6 votes). Children of feature 0: value 1 (3 / 4 mixed, majority 3),
        // value 2 (pure 5 = root's class: pruned), value 3 (pure 5: pruned). Under value 1,
        // feature 1 splits into pure 3 (pruned: equals its parent's class) and pure 4.
        let shape: Vec<(u8, u8, u32)> = t.nodes.iter().map(|n| (n.value, n.class, n.children)).collect();
        assert_eq!(shape, [(0, 5, 1), (1, 3, 1), (2, 4, 0)]);
        let mut s = Neighbours::default();
        let q = |a, b| inst(a, b, 0, 0).0;
        assert_eq!(m.classify(&q(1, 1), &mut s), 3);
        assert_eq!(m.classify(&q(1, 2), &mut s), 4);
        assert_eq!(m.classify(&q(1, 9), &mut s), 3, "unseen value: the last node's majority");
        assert_eq!(m.classify(&q(2, 2), &mut s), 5);
        assert_eq!(m.classify(&q(7, 7), &mut s), 5);
        let back = MblModel::from_bytes(&m.to_bytes()).unwrap();
        assert_eq!(back.tree.as_ref(), Some(t));
        assert_eq!(back.header.stored, 3);
    }
}
