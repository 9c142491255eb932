//! Sharding a run over many machines: `--shard K/N` takes the K-th (0-based) of N disjoint,
//! deterministic slices of the sorted input list (whole WARC files, or feed URLs), and writes
//! under `OUT/shard-0000K/` (its own parts, resume state and stats), so N workers of a Slurm
//! job array, a Kubernetes Indexed Job or an AWS Batch array job share one output root
//! without clashing. `--shard auto/N` takes K from the variable the engine sets
//! (`SLURM_ARRAY_TASK_ID`, `JOB_COMPLETION_INDEX`, `AWS_BATCH_JOB_ARRAY_INDEX`).
//!
//! A sharded run always resumes: rerunning the same command after a crash or a preempted
//! node skips the inputs its state records as finished and continues the unfinished one
//! (the WARC run's `state.json` is the per-input completion record). `shard.json` names the
//! shard's inputs, so `pipeline status OUT` can tell done, in progress and pending per shard.
//!
//! **Assignment is by name, not by position.** An input belongs to shard
//! `xxh3_64(name) mod N`: a WARC input by its [`super::warc_run::input_key`] (canonical path
//! or normalised URL), a feeds article by its host. Adding or removing inputs therefore moves
//! none of the others, so a rerun with a longer list reads only the new inputs. Every feeds
//! shard polls every listed feed and keeps the articles of its hosts: an article listed by
//! several feeds is fetched by one shard only, and one host's politeness stays in one process.
//! A link that redirects to another shard's host is handed to that shard
//! ([`super::handoff`]), so the page is written once, by the shard of the host it is on.
//! N is fixed for an output root, and so is whether it is sharded at all:
//! [`RootLayout::check`] refuses another N, a sharded run over an unsharded one and the
//! reverse, since every input would move to a folder whose state has not seen it and be read
//! again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The engines' array-index variables, in the order they are looked up.
pub const INDEX_VARIABLES: [&str; 3] = ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"];

/// One slice of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("--shard `{0}`: expected K/N or auto/N with 0 <= K < N (K 0-based)")]
    Syntax(String),
    #[error("--shard auto/{n}: none of {} is set", INDEX_VARIABLES.join(", "))]
    NoIndex { n: usize },
    #[error("--shard auto/{n}: {var}=`{value}` is not an index below {n}")]
    BadIndex { n: usize, var: &'static str, value: String },
}

impl Shard {
    /// Parses `K/N` or `auto/N`; `env` looks a variable up (the process environment in use).
    pub fn parse(spec: &str, env: impl Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(spec.to_string());
        let (k, n) = spec.split_once('/').ok_or_else(syntax)?;
        let n: usize = n.trim().parse().map_err(|_| syntax())?;
        if n == 0 {
            return Err(syntax());
        }
        let k = if k.trim() == "auto" {
            let (var, value) =
                INDEX_VARIABLES.iter().find_map(|v| env(v).map(|x| (*v, x))).ok_or(ShardError::NoIndex { n })?;
            match value.trim().parse::<usize>() {
                Ok(k) if k < n => k,
                _ => return Err(ShardError::BadIndex { n, var, value }),
            }
        } else {
            k.trim().parse().map_err(|_| syntax())?
        };
        if k >= n {
            return Err(syntax());
        }
        Ok(Shard { k, n })
    }

    /// Does the input called `name` belong to this shard? A pure function of the name and N,
    /// the same on every machine and whatever else is in the list.
    pub fn owns(&self, name: &str) -> bool {
        self.owner(name).k == self.k
    }

    /// The shard of N that the input called `name` belongs to.
    pub fn owner(&self, name: &str) -> Shard {
        Shard { k: (xxhash_rust::xxh3::xxh3_64(name.as_bytes()) % self.n as u64) as usize, n: self.n }
    }

    /// This shard's inputs, named by `name`, sorted by name with repeats removed.
    pub fn select<T: Clone>(&self, inputs: &[T], name: impl Fn(&T) -> String) -> Vec<T> {
        let mut mine: Vec<(String, T)> =
            inputs.iter().map(|x| (name(x), x.clone())).filter(|(n, _)| self.owns(n)).collect();
        mine.sort_by(|a, b| a.0.cmp(&b.0));
        mine.dedup_by(|a, b| a.0 == b.0);
        mine.into_iter().map(|(_, x)| x).collect()
    }

    /// The shard's folder under the output root.
    pub fn dir(&self, out: &Path) -> PathBuf {
        out.join(self.name())
    }

    /// The name of the shard's folder (`shard-0000K`), on disk and in a bucket.
    pub fn name(&self) -> String {
        format!("shard-{:05}", self.k)
    }
}

/// The `shard-*` folders of an output root, sorted (the order records are read in).
pub fn shard_dirs(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("shard-")))
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// `OUT/shard-K/shard.json`: which shard this is and its inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardManifest {
    pub shard: Shard,
    pub inputs: Vec<String>,
}

pub const MANIFEST_FILE: &str = "shard.json";

impl ShardManifest {
    pub fn write(&self, dir: &Path) -> Result<(), super::PipelineError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| super::PipelineError::State { path: dir.to_path_buf(), message: e.to_string() })?;
        let bytes = serde_json::to_vec_pretty(self).expect("shard manifest serialises");
        crate::sink::write_atomic(&dir.join(MANIFEST_FILE), &bytes).map_err(super::PipelineError::from)
    }

    pub fn read(dir: &Path) -> Option<ShardManifest> {
        serde_json::from_slice(&std::fs::read(dir.join(MANIFEST_FILE)).ok()?).ok()
    }
}

/// What an output root holds of earlier runs: a run written directly in it (without
/// `--shard`; the first of its resume state and parts found) and the shard folders written
/// under it, with the N their `shard.json` names (None when it cannot be read).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RootLayout {
    pub unsharded: Option<PathBuf>,
    pub shards: Vec<(PathBuf, Option<usize>)>,
}

impl RootLayout {
    /// The layout of a local output root; an absent or unreadable root holds nothing.
    pub fn of_dir(root: &Path) -> RootLayout {
        let mut layout = RootLayout::default();
        let Ok(entries) = std::fs::read_dir(root) else { return layout };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            if path.is_dir() && name.starts_with("shard-") {
                layout.shards.push((path.join(MANIFEST_FILE), ShardManifest::read(&path).map(|m| m.shard.n)));
            } else if layout.unsharded.is_none() && super::is_run_output(name) {
                layout.unsharded = Some(path);
            } else if layout.unsharded.is_none() && name == super::LOCK_FILE && super::is_held(&path) {
                // A run without --shard that has written nothing yet (an ended run's lock file,
                // not held, says nothing).
                layout.unsharded = Some(path);
            }
        }
        layout
    }

    /// Refuses a run that would write records the root already holds. Inputs go to shard
    /// `hash mod N`, each shard's state in its own folder: a run with another N, a sharded run
    /// over a root an unsharded run wrote, or an unsharded run over shard folders would find
    /// no state that has seen its inputs, read them again and write their records twice.
    pub fn check(&self, shard: Option<Shard>) -> Result<(), super::PipelineError> {
        let refuse =
            |path: &Path, message: String| Err(super::PipelineError::State { path: path.to_path_buf(), message });
        match shard {
            Some(shard) => {
                if let Some(path) = &self.unsharded {
                    return refuse(
                        path,
                        format!(
                            "this output root holds a run written without --shard: --shard {}/{} would read its \
                             inputs again and write their records twice; choose another output",
                            shard.k, shard.n
                        ),
                    );
                }
                if let Some((path, Some(n))) = self.shards.iter().find(|(_, n)| n.is_some_and(|n| n != shard.n)) {
                    return refuse(
                        path,
                        format!(
                            "this output root was written as {n} shards, not {}: inputs would move between shards \
                             and be written twice; keep --shard K/{n} or choose another output",
                            shard.n
                        ),
                    );
                }
            }
            None => {
                if let Some((path, n)) = self.shards.first() {
                    let keep = n.map_or_else(|| "--shard K/N".to_string(), |n| format!("--shard K/{n}"));
                    return refuse(
                        path,
                        format!(
                            "this output root holds a sharded run: a run without --shard would read its inputs \
                             again and write their records twice; rerun with {keep}, or choose another output"
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn specs_and_engine_variables() {
        assert_eq!(Shard::parse("3/8", no_env), Ok(Shard { k: 3, n: 8 }));
        for bad in ["8/8", "1", "a/2", "1/0", "-1/4"] {
            assert!(matches!(Shard::parse(bad, no_env), Err(ShardError::Syntax(_))), "{bad}");
        }
        assert_eq!(Shard::parse("auto/4", no_env), Err(ShardError::NoIndex { n: 4 }));
        let slurm = |v: &str| (v == "SLURM_ARRAY_TASK_ID").then(|| "2".to_string());
        assert_eq!(Shard::parse("auto/4", slurm), Ok(Shard { k: 2, n: 4 }));
        let k8s = |v: &str| (v == "JOB_COMPLETION_INDEX").then(|| "7".to_string());
        assert!(matches!(Shard::parse("auto/4", k8s), Err(ShardError::BadIndex { .. })));
        let batch = |v: &str| (v == "AWS_BATCH_JOB_ARRAY_INDEX").then(|| "0".to_string());
        assert_eq!(Shard::parse("auto/1", batch), Ok(Shard { k: 0, n: 1 }));
        assert_eq!(Shard { k: 7, n: 9 }.dir(Path::new("out")), Path::new("out/shard-00007"));
    }

    proptest! {
        /// The N slices are disjoint, cover the inputs, do not depend on the input order, and
        /// adding inputs moves none of the old ones.
        #[test]
        fn slices_partition_the_inputs_stably(
            mut inputs in proptest::collection::vec(0u32..1000, 0..60),
            more in proptest::collection::vec(1000u32..2000, 0..10),
            n in 1usize..7,
        ) {
            let name = |x: &u32| format!("in/{x}.warc.gz");
            let all: std::collections::BTreeSet<u32> = inputs.iter().copied().collect();
            let slices: Vec<Vec<u32>> = (0..n).map(|k| Shard { k, n }.select(&inputs, name)).collect();
            inputs.reverse();
            let again: Vec<Vec<u32>> = (0..n).map(|k| Shard { k, n }.select(&inputs, name)).collect();
            prop_assert_eq!(&slices, &again);
            let mut union: Vec<u32> = slices.concat();
            union.sort();
            prop_assert_eq!(union, all.into_iter().collect::<Vec<_>>());
            inputs.extend(&more);
            for (k, old) in slices.iter().enumerate() {
                let grown = Shard { k, n }.select(&inputs, name);
                prop_assert!(old.iter().all(|x| grown.contains(x)), "an old input left shard {}", k);
                prop_assert!(grown.iter().all(|x| old.contains(x) || more.contains(x)));
            }
        }
    }

    #[test]
    fn another_n_for_a_root_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let s = Shard { k: 1, n: 3 };
        ShardManifest { shard: s, inputs: vec![] }.write(&s.dir(root.path())).unwrap();
        let layout = RootLayout::of_dir(root.path());
        assert!(layout.check(Some(Shard { k: 0, n: 3 })).is_ok());
        let err = layout.check(Some(Shard { k: 0, n: 2 })).unwrap_err().to_string();
        assert!(err.contains("3 shards, not 2"), "{err}");
    }

    /// Sharded over unsharded and the reverse write every record again: both refused, with the
    /// file that shows the other run named; an empty or absent root takes either.
    #[test]
    fn a_root_keeps_whether_it_is_sharded() {
        let empty = tempfile::tempdir().unwrap();
        for shard in [None, Some(Shard { k: 0, n: 2 })] {
            assert!(RootLayout::of_dir(empty.path()).check(shard).is_ok());
            assert!(RootLayout::of_dir(&empty.path().join("absent")).check(shard).is_ok());
        }
        for file in ["state.json", "state.sqlite", "part-00000.jsonl.zst", "part-00003.parquet"] {
            let root = tempfile::tempdir().unwrap();
            std::fs::write(root.path().join("stats.json"), "{}").unwrap();
            std::fs::write(root.path().join(file), "x").unwrap();
            let layout = RootLayout::of_dir(root.path());
            assert_eq!(layout.unsharded.as_deref(), Some(root.path().join(file).as_path()));
            assert!(layout.check(None).is_ok(), "{file}: the same unsharded run may resume");
            let err = layout.check(Some(Shard { k: 1, n: 2 })).unwrap_err().to_string();
            assert!(err.contains(file) && err.contains("without --shard"), "{err}");
        }
        let root = tempfile::tempdir().unwrap();
        let s = Shard { k: 0, n: 4 };
        ShardManifest { shard: s, inputs: vec![] }.write(&s.dir(root.path())).unwrap();
        let err = RootLayout::of_dir(root.path()).check(None).unwrap_err().to_string();
        assert!(err.contains("shard-00000") && err.contains("--shard K/4"), "{err}");
        // A shard folder whose manifest is not there yet is a sharded run all the same.
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("shard-00002")).unwrap();
        let err = RootLayout::of_dir(root.path()).check(None).unwrap_err().to_string();
        assert!(err.contains("--shard K/N"), "{err}");
    }
}
