//! `pipeline --warc FILES… --out DIR` and `pipeline --feeds FILE --out DIR` (or `--config
//! FILE`): the crawl pipeline. Flags override the configuration file; the whole configuration
//! is checked before anything runs.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use article_pipeline::dedup::Fingerprinter;
use article_pipeline::extract::ExtractOptions;
use article_pipeline::extract::Extractor;
use article_pipeline::methods;
use article_pipeline::pipeline::config::FeedsConfig;
use article_pipeline::pipeline::handoff::Inboxes;
use article_pipeline::pipeline::metrics;
use article_pipeline::pipeline::s3_output::{self, S3Output};
use article_pipeline::pipeline::shard::{RootLayout, Shard, ShardManifest};
use article_pipeline::pipeline::{
    EngineOptions, OutputMirror, PipelineConfig, Progress, RunContext, Stats, feeds_run, warc_run,
};
use article_pipeline::site_memory::SiteMemoryOptions;
use article_pipeline::storage::{self, S3Url};

use super::Outcome;

#[derive(Debug, Args, Default)]
pub struct RunArgs {
    /// A pipeline configuration file (see pipelines/*.toml); flags override its values.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// WARC files (.warc, .warc.gz) or folders of them to process offline; also
    /// http(s):// URLs, s3://bucket/key objects and s3://bucket/prefix/ prefixes.
    #[arg(long, num_args = 1.., conflicts_with = "feeds")]
    pub warc: Vec<PathBuf>,
    /// A file listing WARC inputs, one per line (plain or .gz, e.g. Common Crawl's
    /// warc.paths.gz); relative lines are taken under --base-url.
    #[arg(long, value_name = "FILE", conflicts_with = "feeds")]
    pub warc_list: Vec<PathBuf>,
    /// Prefix of the relative lines of --warc-list (a URL, an s3:// prefix or a folder)
    /// [default: https://data.commoncrawl.org/].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Endpoint of an S3-compatible store for s3:// inputs and outputs (default:
    /// AWS_ENDPOINT_URL, else AWS); credentials come from the AWS environment variables.
    #[arg(long, value_name = "URL")]
    pub s3_endpoint: Option<String>,
    /// Local folder where an s3:// output is staged before each part is uploaded.
    #[arg(long, value_name = "DIR")]
    pub staging: Option<PathBuf>,
    /// A file of feed URLs (RSS, Atom, JSON Feed), one per line, to poll.
    #[arg(long)]
    pub feeds: Option<PathBuf>,
    /// Output folder for part-*.jsonl.zst and stats.json.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Extraction threads (0 = one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Continue the run recorded in the output folder after a crash or kill.
    #[arg(long)]
    pub resume: bool,
    /// Drop near duplicates instead of marking them with near_duplicate_of.
    #[arg(long)]
    pub drop_near_duplicates: bool,
    /// Token scorer (see "choosing a scorer" in README.md).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(methods::NAMES))]
    pub scorer: Option<String>,
    /// Model file for the scorer (default: the built-in model).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Close an output part after this many compressed bytes.
    #[arg(long)]
    pub part_bytes: Option<u64>,
    /// Format of the output parts: jsonl (zstd JSON Lines, the default) or parquet.
    #[arg(long, value_enum)]
    pub format: Option<article_pipeline::sink::Format>,
    /// Feeds: poll every feed once, fetch the new articles, and stop.
    #[arg(long)]
    pub once: bool,
    /// Feeds: seconds between polls.
    #[arg(long)]
    pub interval: Option<u64>,
    /// Feeds: archive every fetched response as WARC files in this folder.
    #[arg(long)]
    pub warc_out: Option<PathBuf>,
    /// Feeds: allow feed URLs to reach loopback, private, link-local and multicast addresses.
    #[arg(long)]
    pub allow_private_addresses: bool,
    /// Feeds: User-Agent of requests.
    #[arg(long)]
    pub user_agent: Option<String>,
    /// Feeds: milliseconds between two requests to one host.
    #[arg(long)]
    pub delay_ms: Option<u64>,
    /// Feeds: shortest seconds between two polls of one feed (adaptive schedule).
    #[arg(long)]
    pub min_interval: Option<u64>,
    /// Feeds: longest seconds between two polls of one feed (adaptive schedule).
    #[arg(long)]
    pub max_interval: Option<u64>,
    /// Feeds: requests in flight over all hosts [default: 64].
    #[arg(long)]
    pub max_connections: Option<usize>,
    /// Feeds: requests in flight to one host [default: 1].
    #[arg(long)]
    pub per_host_connections: Option<usize>,
    /// Feeds: forget (prune) articles no feed has listed for this many days [default: 365].
    #[arg(long)]
    pub forget_after: Option<u64>,
    /// Process the K-th of N slices of the sorted inputs (`K/N`, K 0-based; `auto/N` takes K
    /// from SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX), writing
    /// under OUT/shard-0000K/ and resuming what an earlier run of the shard left.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Never show a progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Serve Prometheus metrics at http://ADDR/metrics while the run lasts (`[run]
    /// metrics_addr`), e.g. 127.0.0.1:9898; loopback only unless --metrics-allow-remote.
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<String>,
    /// Let --metrics-addr be other than a loopback address.
    #[arg(long)]
    pub metrics_allow_remote: bool,
    /// The extraction options, as for `extract`; those given here override the config file's.
    #[command(flatten)]
    pub options: ExtractOptions,
    /// Site memory (`[site_memory]`): those given here override the config file's.
    #[command(flatten)]
    pub site_memory: SiteMemoryOptions,
}

impl RunArgs {
    /// The feeds-only flags given on the command line.
    fn feed_flags_given(&self) -> Vec<&'static str> {
        [
            ("--once", self.once),
            ("--interval", self.interval.is_some()),
            ("--warc-out", self.warc_out.is_some()),
            ("--allow-private-addresses", self.allow_private_addresses),
            ("--user-agent", self.user_agent.is_some()),
            ("--delay-ms", self.delay_ms.is_some()),
            ("--min-interval", self.min_interval.is_some()),
            ("--max-interval", self.max_interval.is_some()),
            ("--max-connections", self.max_connections.is_some()),
            ("--per-host-connections", self.per_host_connections.is_some()),
            ("--forget-after", self.forget_after.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }

    pub fn wants_run(&self) -> bool {
        self.config.is_some() || !self.warc.is_empty() || !self.warc_list.is_empty() || self.feeds.is_some()
    }

    /// The configuration file (if any) with the flags applied on top; `matches` tells which
    /// extraction flags were given on the command line.
    fn config(&self, matches: &clap::ArgMatches) -> anyhow::Result<PipelineConfig> {
        let mut c = match &self.config {
            Some(p) => PipelineConfig::load(p)?,
            None => PipelineConfig::default(),
        };
        if !self.warc.is_empty() || !self.warc_list.is_empty() {
            let mut w = c.warc.take().unwrap_or_default();
            w.paths = self.warc.clone();
            w.lists = self.warc_list.clone();
            c.warc = Some(w);
            c.feeds = None;
        }
        if let (Some(b), Some(w)) = (&self.base_url, &mut c.warc) {
            w.base_url = b.clone();
        }
        if let Some(e) = &self.s3_endpoint {
            c.run.s3_endpoint = Some(e.clone());
        }
        if let Some(s) = &self.staging {
            c.run.staging = Some(s.clone());
        }
        if let Some(list) = &self.feeds {
            let mut f = c.feeds.take().unwrap_or_default();
            f.list = list.clone();
            c.feeds = Some(f);
            c.warc = None;
        }
        if let Some(f) = &mut c.feeds {
            apply_feed_flags(self, f);
        } else {
            let given = self.feed_flags_given();
            if !given.is_empty() {
                anyhow::bail!("{} only apply to feeds runs (--feeds), not to WARC input", given.join(", "));
            }
        }
        if let Some(o) = &self.out {
            c.sink.out = o.clone();
        }
        if let Some(t) = self.threads {
            c.run.threads = t;
        }
        c.run.resume |= self.resume;
        if let Some(a) = &self.metrics_addr {
            c.run.metrics_addr = Some(a.clone());
        }
        c.run.metrics_allow_remote |= self.metrics_allow_remote;
        if let Some(s) = &self.shard {
            c.run.shard = Some(s.clone());
        }
        c.sink.drop_near_duplicates |= self.drop_near_duplicates;
        if let Some(s) = &self.scorer {
            c.extractor.scorer = s.clone();
        }
        if let Some(m) = &self.model {
            c.extractor.model = Some(m.clone());
        }
        if let Some(b) = self.part_bytes {
            c.sink.part_bytes = b;
        }
        if let Some(f) = self.format {
            c.sink.format = f;
        }
        // Extraction flags given on the command line replace the file's values, field by field
        // (the flags are `ExtractOptions`' own fields, so no option is named here).
        let given: Vec<String> = matches
            .ids()
            .map(|id| id.as_str().to_string())
            .filter(|id| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
            .collect();
        c.extractor.options = merge_given(&c.extractor.options, &self.options, &given, "")?;
        c.site_memory = merge_given(&c.site_memory, &self.site_memory, &given, "site_memory_")?;
        let problems = c.validate();
        if !problems.is_empty() {
            anyhow::bail!("invalid configuration, {} problem(s):\n  {}", problems.len(), problems.join("\n  "));
        }
        Ok(c)
    }
}

/// `file`'s values with those of `flags` that were given on the command line (clap id
/// `prefix` + field name) put over them, field by field, so no option is named here. Through
/// TOML values, which hold inf and NaN for validation to refuse.
fn merge_given<T>(file: &T, flags: &T, given: &[String], prefix: &str) -> anyhow::Result<T>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let flags = toml::Table::try_from(flags)?;
    let mut merged = toml::Table::try_from(file)?;
    for (key, value) in flags.iter().filter(|(k, _)| given.contains(&format!("{prefix}{k}"))) {
        merged.insert(key.clone(), value.clone());
    }
    Ok(T::deserialize(toml::Value::Table(merged))?)
}

fn apply_feed_flags(a: &RunArgs, f: &mut FeedsConfig) {
    f.once |= a.once;
    if let Some(i) = a.interval {
        f.interval_secs = i;
    }
    if let Some(w) = &a.warc_out {
        f.warc_out = Some(w.clone());
    }
    f.allow_private_addresses |= a.allow_private_addresses;
    if let Some(u) = &a.user_agent {
        f.user_agent = u.clone();
    }
    if let Some(d) = a.delay_ms {
        f.delay_ms = d;
    }
    if let Some(v) = a.min_interval {
        f.min_interval_secs = v;
    }
    if let Some(v) = a.max_interval {
        f.max_interval_secs = v;
    }
    if let Some(v) = a.max_connections {
        f.max_connections = v;
    }
    if let Some(v) = a.per_host_connections {
        f.per_host_connections = v;
    }
    if let Some(v) = a.forget_after {
        f.forget_after_days = v;
    }
}

/// A progress bar on a terminal.
struct Bar(ProgressBar);

impl Progress for Bar {
    fn input(&self, html_bytes: u64, _failed: bool) {
        self.0.inc(html_bytes);
    }

    fn message(&self, msg: &str) {
        self.0.set_message(msg.chars().take(80).collect::<String>());
    }
}

pub fn exec(args: RunArgs, matches: &clap::ArgMatches) -> anyhow::Result<Outcome> {
    let config = args.config(matches)?;
    let scorer = methods::build(
        &config.extractor.scorer,
        config.extractor.model.as_deref(),
        config.extractor.bias,
        config.extractor.tag_bias,
    )?;
    let options = config.extractor.options.clone();
    let extractor = Extractor::new(scorer.as_ref(), options);
    let fingerprinter = Fingerprinter::new(config.dedup);
    let threads = if config.run.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.run.threads
    };
    let engine = EngineOptions { threads, drop_near_duplicates: config.sink.drop_near_duplicates, queue_per_thread: 4 };
    let show = !args.no_progress && std::io::stderr().is_terminal();
    let shard = match &config.run.shard {
        Some(spec) => Some(Shard::parse(spec, |v| std::env::var(v).ok())?),
        None => None,
    };
    storage::set_endpoint(config.run.s3_endpoint.clone());
    // An s3:// output is written to a local staging folder and uploaded part by part.
    let remote_root = config.sink.out.to_str().filter(|o| storage::is_s3(o)).map(S3Url::parse).transpose()?;
    let root = match &remote_root {
        Some(r) => config.run.staging.clone().unwrap_or_else(|| s3_output::default_staging(r)),
        None => config.sink.out.clone(),
    };
    // Sharded or not, and with which N, is fixed for an output root; the bucket's layout is
    // read for an s3:// output, whose staging folder may be new (a pod without a disk).
    let layout = match &remote_root {
        Some(r) => s3_output::root_layout(r)?,
        None => RootLayout::of_dir(&root),
    };
    layout.check(shard)?;
    let out = shard.map(|s| s.dir(&root)).unwrap_or_else(|| root.clone());
    // Before the staging folder is cleared or anything written, held past the last upload.
    let _lock = article_pipeline::pipeline::lock_output(&out)?;
    let mirror = match &remote_root {
        Some(r) => {
            let remote = shard.map(|s| r.join(&format!("shard-{:05}/", s.k))).unwrap_or_else(|| r.as_prefix());
            Some(S3Output::open(remote, out.clone())?)
        }
        None => None,
    };
    // A new shard folder names its N before the second check: two runs with different N
    // started together on an empty root both passed the check above, and would each find the
    // other's folder without a `shard.json` (no N to compare) if it were written only later.
    // Each writes, then reads: at least one sees the other's N and is refused.
    let named_n = match shard {
        Some(s) if ShardManifest::read(&out).is_none() => {
            ShardManifest { shard: s, inputs: Vec::new() }.write(&out)?;
            if let Some(m) = &mirror {
                m.publish(&out.join(article_pipeline::pipeline::shard::MANIFEST_FILE))?;
            }
            true
        }
        _ => false,
    };
    // Again with the lock held: a run with --shard and one without, started together on an
    // empty root, both passed the check above but lock different objects (the root's, a shard
    // folder's); each now sees the other's lock.
    let second = match &remote_root {
        Some(r) => s3_output::root_layout(r).and_then(|layout| layout.check(shard)),
        // Locally too: the root's lock held by a run without --shard counts as one.
        None => RootLayout::of_dir(&root).check(shard),
    };
    if let Err(refused) = second {
        // The N this run wrote must not stay to refuse the run that is right.
        if named_n {
            let local = out.join(article_pipeline::pipeline::shard::MANIFEST_FILE);
            if let Err(e) = std::fs::remove_file(&local) {
                tracing::error!("{}: cannot remove the shard.json of this refused run: {e}", local.display());
            }
            if let (Some(r), Some(s)) = (&remote_root, shard) {
                let remote = r.join(&format!("shard-{:05}/shard.json", s.k));
                if let Err(e) = storage::delete(&remote) {
                    tracing::error!("{remote}: cannot remove the shard.json of this refused run: {e}; remove it");
                }
            }
        }
        return Err(refused.into());
    }
    // Served while the run lasts: the server stops when `metrics` is dropped.
    let metrics = match &config.run.metrics_addr {
        Some(a) => {
            let addr = metrics::check_addr(a, config.run.metrics_allow_remote).map_err(anyhow::Error::msg)?;
            let m = std::sync::Arc::new(metrics::Metrics::default());
            let server = metrics::MetricsServer::start(addr, m.clone())
                .map_err(|e| anyhow::anyhow!("cannot serve metrics on {addr}: {e}"))?;
            tracing::info!("metrics at http://{}/metrics", server.addr());
            Some((m, server))
        }
        None => None,
    };
    let ctx = RunContext {
        out: out.clone(),
        // A shard always resumes: rerunning its command finishes what a crash left.
        resume: config.run.resume || shard.is_some(),
        sink: config.sink.options(),
        engine,
        extractor: &extractor,
        fingerprinter: &fingerprinter,
        mirror: mirror.as_ref().map(|m| m as &dyn OutputMirror),
        site_memory: config.site_memory.clone(),
        metrics: metrics.as_ref().map(|(m, _)| m.clone()),
    };
    let bar = progress_bar(show);
    let stats = match (&config.warc, &config.feeds) {
        (Some(w), _) => {
            // Killed by a signal as before, but not leaving the bucket's lock to go stale.
            if let Some(m) = &mirror {
                m.release_lock_on_signal();
            }
            let mut inputs = warc_run::keyed_inputs(warc_run::expand_inputs(w)?);
            if let Some(s) = shard {
                inputs = s.select(&inputs, |(_, key)| key.clone());
                let names = inputs.iter().map(|(_, key)| key.clone()).collect();
                ShardManifest { shard: s, inputs: names }.write(&out)?;
                if let Some(m) = &mirror {
                    m.publish(&out.join(article_pipeline::pipeline::shard::MANIFEST_FILE))?;
                }
            }
            warc_run::run(&warc_run::WarcRun { inputs, ctx }, &bar)
        }
        (None, Some(f)) => {
            if let Some(s) = shard {
                ShardManifest { shard: s, inputs: vec![f.list.display().to_string()] }.write(&out)?;
                // In the bucket too: the next run's layout check reads N from it.
                if let Some(m) = &mirror {
                    m.publish(&out.join(article_pipeline::pipeline::shard::MANIFEST_FILE))?;
                }
            }
            // Pages a link leads to on another shard's host go to that shard, in the root.
            let inboxes = shard.map(|_| match &remote_root {
                Some(r) => Inboxes::Remote(r.as_prefix()),
                None => Inboxes::Local(root.clone()),
            });
            feeds_run::run(&feeds_run::FeedsRun { feeds: f.clone(), ctx, shard, inboxes }, &bar)
        }
        (None, None) => unreachable!("validate() requires warc or feeds"),
    };
    bar.0.finish_and_clear();
    let stats = stats?;
    if let Some(m) = &mirror {
        m.finish()?;
    }
    summary(&stats, &remote_root.map_or_else(|| out.display().to_string(), |r| r.as_prefix().to_string()));
    Ok(if stats.failed_this_run > 0 { Outcome::SomeFailed } else { Outcome::Ok })
}

fn progress_bar(show: bool) -> Bar {
    if !show {
        return Bar(ProgressBar::hidden());
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed} {binary_bytes} of HTML ({binary_bytes_per_sec}) {wide_msg}")
            .expect("valid template"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    Bar(bar)
}

fn summary(s: &Stats, out: &str) {
    let by = |m: &std::collections::BTreeMap<String, u64>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
        }
    };
    eprintln!(
        "{} inputs: {} records written ({} marked near-duplicate, {} dropped), skipped: {}, failed: {}\n\
         {:.1} MB of HTML in {:.2} s ({:.1} MB/s), {} part(s) in {}",
        s.records_in,
        s.written,
        s.near_duplicates,
        s.dropped_near_duplicates,
        by(&s.skipped),
        by(&s.failed),
        s.html_bytes as f64 / 1e6,
        s.elapsed_secs,
        s.mb_per_s,
        s.parts,
        out
    );
    if !s.hosts.is_empty() {
        // Feeds runs: the hosts, the ones with failures first (at most ten listed).
        let mut failing: Vec<(&String, &article_pipeline::pipeline::HostStats)> =
            s.hosts.iter().filter(|(_, h)| h.failed > 0).collect();
        failing.sort_by_key(|(_, h)| std::cmp::Reverse(h.failed));
        let fetched: u64 = s.hosts.values().map(|h| h.fetched).sum();
        eprintln!("{} host(s), {fetched} articles fetched; {} host(s) with failures", s.hosts.len(), failing.len());
        for (host, h) in failing.iter().take(10) {
            let reasons: Vec<String> = h.reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
            eprintln!("  {host}: fetched {}, failed {} ({})", h.fetched, h.failed, reasons.join(", "));
        }
    }
}
