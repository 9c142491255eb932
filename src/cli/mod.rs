//! Command-line parsing and printing for `pipeline`. Each subcommand is one file with its
//! clap arguments and an `exec` that builds the library's options and calls one library
//! function; no extraction logic lives here.

mod bench;
mod bootstrap;
mod dedup;
mod eval;
mod extract;
mod pack;
mod run;
mod status;
mod train;
mod train_mbl;
mod train_pso;
mod train_svm;
mod tune;

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};

use article_pipeline::extract::ExtractOptions;
use article_pipeline::scoring::{self, Scorer};

/// Article text from web pages, by maximum subsequence segmentation.
#[derive(Debug, Parser)]
#[command(name = "pipeline", version, about, propagate_version = true, args_conflicts_with_subcommands = true)]
#[command(
    after_help = "Crawl pipeline: pipeline --warc FILES... --out DIR | pipeline --feeds feeds.txt --out DIR [--once]"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: run::RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Extract the article text of pages (files, `-` for stdin, or a dataset manifest).
    Extract(extract::ExtractArgs),
    /// Extract every page of dataset manifests and score it against the gold text.
    Eval(eval::EvalArgs),
    /// Train a Naive Bayes model (or, with --learner, a CRF/MEMM/MaxEnt block model, PSO block thresholds, or an SVM block classifier) from dataset manifests.
    Train(train::TrainArgs),
    /// Adapt a model to the sites of unlabelled pages (semi-supervised bootstrap, §6.2.4).
    Bootstrap(bootstrap::BootstrapArgs),
    /// Choose extraction settings by leave-one-dataset-out over labelled manifests.
    Tune(tune::TuneArgs),
    /// Time scorers on the same pages in one run, alternating (MB/s of HTML per thread).
    Bench(bench::BenchArgs),
    /// Find near duplicates across the parts of many runs or shards (bounded memory).
    Dedup(dedup::DedupArgs),
    /// Pack HTML files into a .warc.gz (one response record per page).
    PackWarc(pack::PackArgs),
    /// Show what the run in an output folder has done (feeds: schedule and health of every
    /// feed, articles by status, per-host counts; WARC: inputs done).
    Status(status::StatusArgs),
}

/// How pages are extracted: shared by every subcommand that extracts.
#[derive(Debug, Args, Clone)]
pub struct ExtractorArgs {
    /// Token scorer.
    #[arg(long, default_value = "nb", value_parser = clap::builder::PossibleValuesParser::new(scoring::NAMES))]
    pub scorer: String,
    /// Model file for the scorer (default: the built-in model).
    #[arg(long)]
    pub model: Option<std::path::PathBuf>,
    /// Replace the model's bias (added to every Naive Bayes token score p - 0.5).
    #[arg(long, allow_hyphen_values = true)]
    pub bias: Option<f64>,
    /// Replace the model's extra bias of start and end tags (added on top of --bias).
    #[arg(long, allow_hyphen_values = true)]
    pub tag_bias: Option<f64>,
    /// Cut the extracted span at its first <hr> (the paper's HR constraint).
    #[arg(long)]
    pub hr: bool,
    /// Apply the paper's cleaning rules (drop iframe/table contents and divs holding links or embeds).
    #[arg(long)]
    pub clean: bool,
    /// Keep elements inside the span whose id/class names comments, share bars, related
    /// stories… (dropped by default).
    #[arg(long)]
    pub keep_boilerplate: bool,
    /// Keep hidden schema.org microdata elements inside the span (dropped by default: hidden
    /// copies of the headline, byline and dates).
    #[arg(long)]
    pub keep_hidden_microdata: bool,
    /// Keep post footers, author boxes and <aside> elements inside the span (dropped by
    /// default).
    #[arg(long)]
    pub keep_more_furniture: bool,
    /// Keep link lists inside the span (dropped by default).
    #[arg(long)]
    pub keep_link_blocks: bool,
    /// End the span at a "Comments" / "Related stories" / "Share this" heading preceded by at
    /// least this many words (0 = never).
    #[arg(long, default_value_t = ExtractOptions::default().section_end_words)]
    pub section_end_words: usize,
    /// Drop runs of at least this many one-link blocks inside the span (teaser lists, "more
    /// news" rails; 0 = never).
    #[arg(long, default_value_t = ExtractOptions::default().link_run_blocks)]
    pub link_run_blocks: usize,
    /// Also keep every other run of positive score worth at least this fraction of the best
    /// span (listings, forum posts, an article split by an embed; 0 = one span).
    #[arg(long, default_value_t = ExtractOptions::default().extra_span_ratio)]
    pub extra_span_ratio: f64,
    /// And worth at least this much (sum of token scores).
    #[arg(long, default_value_t = ExtractOptions::default().extra_span_min)]
    pub extra_span_min: f64,
    /// On a page of many items (two other runs pass the extra-span floor), also keep every
    /// run worth this fraction of the best span (listings, collections; 0 = never).
    #[arg(long, default_value_t = ExtractOptions::default().multi_item_ratio)]
    pub multi_item_ratio: f64,
    /// Do not extract a page again with its <noscript> content read when it gives almost no
    /// text (Discourse forums serve their posts there).
    #[arg(long)]
    pub no_noscript_fallback: bool,
    /// Prefer the best run starting just after the page's <h1> when it is worth at least this
    /// fraction of the best run elsewhere (0 = never).
    #[arg(long, default_value_t = ExtractOptions::default().title_anchor_ratio)]
    pub title_anchor_ratio: f64,
    /// When the best run starts inside a comment section or other furniture, take the best run
    /// outside it worth at least this fraction (0 = never).
    #[arg(long, default_value_t = ExtractOptions::default().furniture_escape_ratio)]
    pub furniture_escape_ratio: f64,
    /// Do not read the page's metadata (dates, language, authors …); for measuring its cost.
    #[arg(long)]
    pub no_metadata: bool,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

impl ExtractorArgs {
    pub fn build(&self) -> anyhow::Result<(Box<dyn Scorer>, ExtractOptions)> {
        let scorer = scoring::build(&self.scorer, self.model.as_deref(), self.bias, self.tag_bias)?;
        let options = ExtractOptions {
            hr_constraint: self.hr,
            clean: self.clean,
            drop_boilerplate: !self.keep_boilerplate,
            drop_link_blocks: !self.keep_link_blocks,
            drop_hidden_microdata: !self.keep_hidden_microdata,
            drop_more_furniture: !self.keep_more_furniture,
            section_end_words: self.section_end_words,
            link_run_blocks: self.link_run_blocks,
            extra_span_ratio: self.extra_span_ratio,
            extra_span_min: self.extra_span_min,
            multi_item_ratio: self.multi_item_ratio,
            noscript_fallback: !self.no_noscript_fallback,
            title_anchor_ratio: self.title_anchor_ratio,
            furniture_escape_ratio: self.furniture_escape_ratio,
            metadata: !self.no_metadata,
            ..ExtractOptions::default()
        };
        let problems = options.problems();
        if !problems.is_empty() {
            anyhow::bail!("invalid extraction options:\n  {}", problems.join("\n  "));
        }
        Ok((scorer, options))
    }
}

/// Outcome of a command that ran: did some inputs fail?
pub enum Outcome {
    Ok,
    SomeFailed,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let result = match cli.command {
        Some(Command::Extract(a)) => extract::exec(a),
        Some(Command::Eval(a)) => eval::exec(a),
        Some(Command::Bench(a)) => bench::exec(a),
        Some(Command::Train(a)) => train::exec(a),
        Some(Command::PackWarc(a)) => pack::exec(a),
        Some(Command::Bootstrap(a)) => bootstrap::exec(a),
        Some(Command::Status(a)) => status::exec(a),
        Some(Command::Tune(a)) => tune::exec(a),
        Some(Command::Dedup(a)) => dedup::exec(a),
        None if cli.run.wants_run() => run::exec(cli.run),
        None => {
            let _ = Cli::command().print_help();
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::SomeFailed) => ExitCode::from(1),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // Library errors already name their cause; print each cause only once.
            let mut msg = e.to_string();
            for cause in e.chain().skip(1) {
                let c = cause.to_string();
                if !msg.contains(&c) {
                    msg = format!("{msg}: {c}");
                }
            }
            let _ = writeln!(std::io::stderr(), "error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Logs to stderr, filtered by RUST_LOG (default: warnings, which include every failed input).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}
