//! `pipeline dedup OUT… --out DEDUP`: the global near-duplicate pass over the parts of one
//! or more runs (sharded roots included) in bounded memory
//! ([`article_pipeline::pipeline::dedup_run`]).

use std::path::PathBuf;

use clap::Args;

use article_pipeline::pipeline::dedup_run::{self, DedupRun};
use article_pipeline::pipeline::remote_lock::{self, RemoteLock};
use article_pipeline::pipeline::s3_output;
use article_pipeline::sink::{Format, SinkOptions};
use article_pipeline::storage::{self, S3Url};

use super::Outcome;

#[derive(Debug, Args)]
pub struct DedupArgs {
    /// Output folders of runs (a root of `--shard` runs gives its shards in order), or their
    /// s3://bucket/prefix/ (downloaded to a staging folder first).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Where removed.jsonl, stats.json (and with --write-parts the kept records) go: a folder
    /// or an s3://bucket/prefix/.
    #[arg(long)]
    out: PathBuf,
    /// Endpoint of an S3-compatible store (default: AWS_ENDPOINT_URL, else AWS).
    #[arg(long, value_name = "URL")]
    s3_endpoint: Option<String>,
    /// Also write the kept records as parts (part-*.jsonl.zst, or part-*.parquet with
    /// `--format parquet`). The inputs may be of either format.
    #[arg(long)]
    write_parts: bool,
    /// Format of the parts --write-parts writes.
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    format: Format,
    /// MB of (band key, record) pairs held in memory before a sorted run is spilled to disk
    /// (1 to 1048576; memory is taken as pairs arrive, not reserved at start).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    memory_mb: u64,
}

pub fn exec(args: DedupArgs) -> anyhow::Result<Outcome> {
    storage::set_endpoint(args.s3_endpoint.clone());
    let s3 = |p: &PathBuf| p.to_str().filter(|s| storage::is_s3(s)).map(S3Url::parse).transpose();
    let remote_out = s3(&args.out)?;
    // An output inside an input (or the reverse) would read its own records back.
    if let Some(out) = &remote_out {
        for i in &args.inputs {
            if let Some(url) = s3(i)? {
                let (o, i) = (out.as_prefix(), url.as_prefix());
                if o.bucket == i.bucket && (o.key.starts_with(&i.key) || i.key.starts_with(&o.key)) {
                    return Err(article_pipeline::pipeline::PipelineError::State {
                        path: PathBuf::from(out.to_string()),
                        message: format!(
                            "the dedup output overlaps the input `{url}`: it would read its own records; choose \
                             another --out"
                        ),
                    }
                    .into());
                }
            }
        }
    }
    // One writer at a time on an s3:// output, as for runs; taken before the inputs are
    // downloaded and held until the last upload.
    let _lock = remote_out.as_ref().map(RemoteLock::take).transpose()?;
    let mut inputs = Vec::new();
    let mut names = Vec::new();
    // Staged per process and input: two prefixes may map to one staging name, and another
    // dedup of the same input must not clear this one's copy between its two passes.
    let mut staged = Vec::new();
    for (k, i) in args.inputs.iter().enumerate() {
        match s3(i)? {
            Some(url) => {
                // Not while a run still writes it: only the parts committed so far would be read.
                remote_lock::refuse_if_written(&url)?;
                // Every part of every shard is read (twice with --write-parts): a local copy.
                let local = s3_output::default_staging(&url).join(format!("dedup-input-{}-{k}", std::process::id()));
                staged.push(local.clone());
                let _ = std::fs::remove_dir_all(&local);
                let n = s3_output::pull_tree(&url, &local, true)?;
                // And again: a run that started during the download may have added parts.
                remote_lock::refuse_if_written(&url)?;
                eprintln!("{url}: {n} file(s) downloaded to {}", local.display());
                inputs.push(local);
                names.push(url.as_prefix().to_string());
            }
            None => {
                anyhow::ensure!(i.is_dir(), "`{}` is not an output folder", i.display());
                inputs.push(i.clone());
                names.push(article_pipeline::pipeline::canonical_path(i).display().to_string());
            }
        }
    }
    let out = match &remote_out {
        Some(url) => {
            let local = s3_output::default_staging(url).join(format!("dedup-output-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&local);
            local
        }
        None => args.out.clone(),
    };
    let job = DedupRun {
        inputs,
        names,
        out: out.clone(),
        memory_budget: usize::try_from(args.memory_mb << 20).unwrap_or(usize::MAX),
        write_parts: args.write_parts,
        sink: SinkOptions { format: args.format, ..SinkOptions::default() },
    };
    if let Some(url) = &remote_out {
        dedup_run::prepare_remote_out(&job, url)?;
    }
    let s = dedup_run::run(&job);
    for d in &staged {
        let _ = std::fs::remove_dir_all(d);
    }
    let s = s?;
    if let Some(url) = &remote_out {
        s3_output::push_tree(&out, url)?;
        let _ = std::fs::remove_dir_all(&out);
    }
    eprintln!(
        "{} records in {} part(s): {} near duplicates removed in {} clusters ({} key pairs, {} spilled run(s), {:.2} s) -> {}",
        s.records,
        s.parts,
        s.removed,
        s.clusters,
        s.pairs,
        s.spilled_runs,
        s.seconds,
        remote_out
            .map_or_else(|| out.join("removed.jsonl").display().to_string(), |u| u.join("removed.jsonl").to_string())
    );
    if s.failed > 0 {
        eprintln!("{} damaged part(s) or line(s) left out (named above)", s.failed);
        return Ok(Outcome::SomeFailed);
    }
    Ok(Outcome::Ok)
}
