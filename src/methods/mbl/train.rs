//! Training the memory-based learner (the thesis' chapters 4–6): every training page is
//! labelled ([`crate::methods::mbl::units::label_units`]) and turned into one instance per element
//! holding a unit, in parallel; identical feature vectors are merged with their class counts
//! (TiMBL stores each distinct vector once), then the weights and the instance base or IGTree
//! are built ([`MblModel::from_instances`]). "Training" a lazy learner is just this: the cost is
//! reading and labelling the pages.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::dataset::ManifestEntry;
use crate::dataset::sources_of;
use crate::gold::{LabelOptions, SkipReason};
use crate::methods::mbl::knn::{MblModel, MblOptions, MblTrainingSummary};
use crate::methods::mbl::units::{Class, Features, N_FEATURES, N_PAIRS, label_units};

/// Errors of memory-based training.
#[derive(Debug, thiserror::Error)]
pub enum MblTrainError {
    #[error("no usable training page")]
    NoPages,
    #[error("k must be within 1..={max}, not {0}", max = crate::methods::mbl::knn::MAX_K)]
    BadK(usize),
    #[error(transparent)]
    Threads(#[from] rayon::ThreadPoolBuildError),
}

/// One page's instances and unit class counts.
type PageInstances = (Vec<(Features, u8)>, [u64; 4]);

fn page_instances(e: &ManifestEntry, opts: &MblOptions, label: &LabelOptions) -> Result<PageInstances, SkipReason> {
    let html = std::fs::read(&e.path).map_err(|_| SkipReason::Unreadable)?;
    let l =
        label_units(&html, e.gold.text.as_deref().unwrap_or(""), e.gold.title.as_deref(), opts.label_threshold, label)?;
    let pairs = l.element_pairs();
    let mut out = Vec::new();
    let mut f = [0u8; N_FEATURES];
    for i in l.elements.instances() {
        l.elements.features(i, &mut f);
        out.push((f, pairs[i]));
    }
    let mut classes = [0u64; 4];
    for &c in &l.classes {
        classes[c as usize] += 1;
    }
    Ok((out, classes))
}

/// Merges identical feature vectors, summing their class counts.
pub fn dedup(mut all: Vec<(Features, u8)>) -> Vec<(Features, [u32; N_PAIRS])> {
    all.sort_unstable();
    let mut out: Vec<(Features, [u32; N_PAIRS])> = Vec::new();
    for (x, c) in all {
        match out.last_mut() {
            Some((y, counts)) if *y == x => counts[c as usize & (N_PAIRS - 1)] += 1,
            _ => {
                let mut counts = [0u32; N_PAIRS];
                counts[c as usize & (N_PAIRS - 1)] = 1;
                out.push((x, counts));
            }
        }
    }
    out
}

/// Trains a memory-based model on `entries` with `threads` workers (0 = one per core).
pub fn train_mbl(
    entries: &[ManifestEntry],
    opts: &MblOptions,
    label: &LabelOptions,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<MblModel, MblTrainError> {
    if !(1..=crate::methods::mbl::knn::MAX_K).contains(&opts.k) {
        return Err(MblTrainError::BadK(opts.k));
    }
    let t = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let done = AtomicUsize::new(0);
    let results: Vec<Result<PageInstances, SkipReason>> = pool.install(|| {
        entries
            .par_iter()
            .map(|e| {
                let r = page_instances(e, opts, label);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                r
            })
            .collect()
    });
    let mut all = Vec::new();
    let mut summary = MblTrainingSummary::default();
    let (datasets, split) = sources_of(entries.iter());
    summary.datasets = datasets;
    summary.split = split;
    let mut skipped = BTreeMap::new();
    for r in results {
        match r {
            Ok((inst, classes)) if !inst.is_empty() => {
                summary.pages_used += 1;
                summary.unit_classes.iter_mut().zip(classes).for_each(|(a, b)| *a += b);
                all.extend(inst);
            }
            Ok(_) => *skipped.entry("no_units".to_string()).or_insert(0) += 1,
            Err(reason) => *skipped.entry(reason.as_str().to_string()).or_insert(0) += 1,
        }
    }
    summary.pages_skipped = skipped;
    if all.is_empty() {
        return Err(MblTrainError::NoPages);
    }
    summary.instances = all.len() as u64;
    let instances = dedup(all);
    let mut model = MblModel::from_instances(&instances, *opts, summary);
    model.header.training.seconds = t.elapsed().as_secs_f64();
    Ok(model)
}

/// Names of the unit classes, in code order (for reports).
pub fn class_names() -> [&'static str; 4] {
    Class::ALL.map(Class::name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedup_merges_identical_vectors() {
        let a = [1u8; N_FEATURES];
        let b = [2u8; N_FEATURES];
        let d = dedup(vec![(b, 15), (a, 2), (b, 15), (b, 3)]);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].0, d[0].1[2]), (a, 1));
        assert_eq!((d[1].1[15], d[1].1[3]), (2, 1));
    }
}
