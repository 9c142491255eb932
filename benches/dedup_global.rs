//! The global near-duplicate pass on generated signatures: N records (default 10 million,
//! `DEDUP_RECORDS` to change) of 14 band keys and an exact hash, one in 20 a near copy of an
//! earlier record (shares 3 of its bands), through the spill / merge / union-find core of
//! `pipeline dedup` with a 512 MB pair budget (`DEDUP_BUDGET_MB`). Prints wall time, runs
//! spilled, clusters and the process's peak RSS.
//!
//! `cargo bench --bench dedup_global`

use std::time::Instant;

use article_pipeline::dedup::global::PairSpill;
use article_pipeline::eval::bench::peak_rss_mb;

fn main() {
    let n: u32 = std::env::var("DEDUP_RECORDS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let budget_mb: usize = std::env::var("DEDUP_BUDGET_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(512);
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let mut spill = PairSpill::new(dir.path(), budget_mb << 20).unwrap();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut keys = [0u64; 15];
    let mut copies = 0u64;
    for i in 0..n {
        for k in &mut keys {
            *k = rnd();
        }
        if i > 0 && i % 20 == 0 {
            // A near copy of record j: the same first three bands (band keys mix the band index).
            let j = (rnd() % u64::from(i)) as u32;
            let mut y = u64::from(j).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            for k in keys.iter_mut().take(3) {
                y ^= y >> 31;
                y = y.wrapping_mul(0xbf58_476d_1ce4_e5b9);
                *k = y;
            }
            copies += 1;
        } else if i % 20 != 0 {
            // Keys of records that are not copies stay unique; originals j keep their own
            // first three bands derived like a copy's, so copies join them.
            let mut y = u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            for k in keys.iter_mut().take(3) {
                y ^= y >> 31;
                y = y.wrapping_mul(0xbf58_476d_1ce4_e5b9);
                *k = y;
            }
        }
        spill.add(keys.iter().copied()).unwrap();
    }
    let t_add = t0.elapsed();
    let runs = spill.runs();
    let pairs = spill.pairs;
    let mut clusters = spill.cluster().unwrap();
    let removed = (0..n).filter(|&i| clusters.find(i) != i).count();
    let wall = t0.elapsed();
    println!(
        "dedup core: {n} records, {pairs} pairs, budget {budget_mb} MB: {runs} run(s) spilled; add {:.1} s, total {:.1} s ({:.2} M records/s); {copies} near copies generated, {removed} removed; peak RSS {:.0} MB",
        t_add.as_secs_f64(),
        wall.as_secs_f64(),
        f64::from(n) / wall.as_secs_f64() / 1e6,
        peak_rss_mb().unwrap_or(0.0)
    );
}
