//! `pipeline dedup OUT… --out DEDUP`: the global near-duplicate pass over the parts of one
//! or more runs (sharded roots included) in bounded memory
//! ([`article_pipeline::pipeline::dedup_run`]).

use std::path::PathBuf;

use clap::Args;

use article_pipeline::pipeline::dedup_run::{self, DedupRun};
use article_pipeline::sink::SinkOptions;

use super::Outcome;

#[derive(Debug, Args)]
pub struct DedupArgs {
    /// Output folders of runs (a root of `--shard` runs gives its shards in order).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Where removed.jsonl, stats.json (and with --write-parts the kept records) go.
    #[arg(long)]
    out: PathBuf,
    /// Also write the kept records as part-*.jsonl.zst.
    #[arg(long)]
    write_parts: bool,
    /// MB of (band key, record) pairs held in memory before a sorted run is spilled to disk.
    #[arg(long, default_value_t = 512)]
    memory_mb: usize,
}

pub fn exec(args: DedupArgs) -> anyhow::Result<Outcome> {
    for i in &args.inputs {
        anyhow::ensure!(i.is_dir(), "`{}` is not an output folder", i.display());
    }
    let job = DedupRun {
        inputs: args.inputs,
        out: args.out.clone(),
        memory_budget: args.memory_mb.max(1) << 20,
        write_parts: args.write_parts,
        sink: SinkOptions::default(),
    };
    let s = dedup_run::run(&job)?;
    eprintln!(
        "{} records in {} part(s): {} near duplicates removed in {} clusters ({} key pairs, {} spilled run(s), {:.2} s) -> {}",
        s.records,
        s.parts,
        s.removed,
        s.clusters,
        s.pairs,
        s.spilled_runs,
        s.seconds,
        args.out.join("removed.jsonl").display()
    );
    Ok(Outcome::Ok)
}
