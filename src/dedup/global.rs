//! The global near-duplicate stage over many runs' parts (`pipeline dedup`), after datatrove's
//! MinHash stages as FineWeb ran them: every record's LSH band keys (and its exact-text hash)
//! become (key, record number) pairs; pairs are sorted in memory-bounded runs spilled to
//! disk, the runs merged, and records sharing a key joined by union-find; each cluster keeps
//! its first record (in shard / part / line order) and the others are listed as removed.
//!
//! Memory: the pair buffer (`budget_bytes`, 16 bytes a pair; 15 pairs a record with the
//! default 14 bands) plus one 32-bit parent per record for the union-find: 10 million records
//! take 40 MB of parents whatever the budget. Disk: 16 bytes a pair, in `spill_dir`, removed
//! when done.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Union-find over record numbers; the root of a set is its smallest member, so a cluster's
/// root is its first record.
#[derive(Debug, Clone)]
pub struct Clusters {
    parent: Vec<u32>,
}

impl Clusters {
    pub fn new(n: usize) -> Self {
        Clusters { parent: (0..n as u32).collect() }
    }

    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The first record of `x`'s cluster.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            // Path halving.
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = self.parent[x as usize];
        }
        x
    }

    pub fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[hi as usize] = lo;
        }
    }
}

/// Collects (key, record) pairs in sorted runs on disk, then merges them into clusters.
pub struct PairSpill {
    dir: PathBuf,
    buf: Vec<(u64, u32)>,
    cap: usize,
    runs: Vec<PathBuf>,
    records: u32,
    pub pairs: u64,
}

impl PairSpill {
    /// Pairs go to sorted runs in `dir` (created) once `budget_bytes` of them are buffered.
    pub fn new(dir: &Path, budget_bytes: usize) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let cap = (budget_bytes / 16).max(1024);
        Ok(PairSpill {
            dir: dir.to_path_buf(),
            // Grown as pairs come (see `push`), never past `cap`: a large budget costs
            // nothing until the pairs are there.
            buf: Vec::new(),
            cap,
            runs: Vec::new(),
            records: 0,
            pairs: 0,
        })
    }

    /// Buffers one pair. The buffer doubles up to `cap` exactly (plain `Vec` growth would
    /// overshoot to twice the budget), and a failed allocation is an error, not an abort.
    fn push(&mut self, pair: (u64, u32)) -> io::Result<()> {
        if self.buf.len() == self.buf.capacity() {
            let want = (self.buf.capacity() * 2).max(4096).min(self.cap);
            self.buf.try_reserve_exact(want - self.buf.len()).map_err(|e| {
                io::Error::new(io::ErrorKind::OutOfMemory, format!("cannot hold {want} key pairs in memory: {e}"))
            })?;
        }
        self.buf.push(pair);
        Ok(())
    }

    /// Adds the next record (numbered in call order) with its keys; returns its number.
    pub fn add(&mut self, keys: impl IntoIterator<Item = u64>) -> io::Result<u32> {
        let r = self.records;
        self.records = self.records.checked_add(1).ok_or_else(|| io::Error::other("more than 2^32 records"))?;
        for k in keys {
            self.push((k, r))?;
            self.pairs += 1;
            if self.buf.len() >= self.cap {
                self.spill()?;
            }
        }
        Ok(r)
    }

    pub fn records(&self) -> u32 {
        self.records
    }

    /// Runs spilled so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.buf.sort_unstable();
        let path = self.dir.join(format!("run-{:05}.bin", self.runs.len()));
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&path)?);
        for (k, r) in &self.buf {
            w.write_all(&k.to_le_bytes())?;
            w.write_all(&r.to_le_bytes())?;
        }
        w.flush()?;
        self.runs.push(path);
        self.buf.clear();
        Ok(())
    }

    /// Merges the runs: records sharing a key end up in one cluster. Removes the run files.
    pub fn cluster(mut self) -> io::Result<Clusters> {
        let mut clusters = Clusters::new(self.records as usize);
        if self.runs.is_empty() {
            // Everything fits in memory: no disk at all.
            self.buf.sort_unstable();
            union_sorted(self.buf.iter().copied(), &mut clusters);
            return Ok(clusters);
        }
        self.spill()?;
        let mut readers: Vec<RunReader> = self
            .runs
            .iter()
            .map(|p| File::open(p).map(|f| RunReader(BufReader::with_capacity(1 << 20, f))))
            .collect::<Result<_, _>>()?;
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(pair) = r.next_pair()? {
                heap.push(Reverse((pair, i)));
            }
        }
        let merged = std::iter::from_fn(|| {
            let Reverse((pair, i)) = heap.pop()?;
            match readers[i].next_pair() {
                Ok(Some(next)) => heap.push(Reverse((next, i))),
                Ok(None) => {}
                Err(e) => tracing::error!("dedup run {}: {e}", i),
            }
            Some(pair)
        });
        union_sorted(merged, &mut clusters);
        for p in &self.runs {
            let _ = std::fs::remove_file(p);
        }
        Ok(clusters)
    }
}

/// Joins consecutive pairs with the same key (the input sorted by key).
fn union_sorted(pairs: impl Iterator<Item = (u64, u32)>, clusters: &mut Clusters) {
    let mut current: Option<(u64, u32)> = None;
    for (k, r) in pairs {
        match current {
            Some((ck, first)) if ck == k => clusters.union(first, r),
            _ => current = Some((k, r)),
        }
    }
}

struct RunReader(BufReader<File>);

impl RunReader {
    fn next_pair(&mut self) -> io::Result<Option<(u64, u32)>> {
        let mut b = [0u8; 12];
        match self.0.read_exact(&mut b) {
            Ok(()) => Ok(Some((
                u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
                u32::from_le_bytes(b[8..].try_into().expect("4 bytes")),
            ))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Clusters by brute force: records sharing any key, joined transitively.
    fn all_pairs(records: &[Vec<u64>]) -> Vec<u32> {
        let mut c = Clusters::new(records.len());
        for i in 0..records.len() {
            for j in i + 1..records.len() {
                if records[i].iter().any(|k| records[j].contains(k)) {
                    c.union(i as u32, j as u32);
                }
            }
        }
        (0..records.len() as u32).map(|i| c.find(i)).collect()
    }

    proptest! {
        /// Spilled or not, the merge gives the clusters of the all-pairs computation, and each
        /// cluster's root is its first record.
        #[test]
        fn spilled_merge_matches_all_pairs(
            records in proptest::collection::vec(proptest::collection::vec(0u64..40, 1..4), 0..60),
            budget in prop_oneof![Just(16 * 1024usize), Just(1usize << 30)],
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut spill = PairSpill::new(dir.path(), budget).unwrap();
            // A tiny buffer (1024 pairs) with many keys per record forces several runs.
            for r in &records {
                let keys: Vec<u64> = r.iter().flat_map(|k| std::iter::repeat_n(*k, 20)).collect();
                spill.add(keys).unwrap();
            }
            let mut c = spill.cluster().unwrap();
            let got: Vec<u32> = (0..records.len() as u32).map(|i| c.find(i)).collect();
            let want = all_pairs(&records);
            prop_assert_eq!(&got, &want);
            for (i, root) in got.iter().enumerate() {
                prop_assert!(*root as usize <= i);
            }
            prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "run files left behind");
        }
    }
}
