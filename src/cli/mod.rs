//! Command-line parsing and printing for `pipeline`. Each subcommand is one file with its
//! clap arguments and an `exec` that builds the library's options and calls one library
//! function; no extraction logic lives here.

mod bench;
mod bootstrap;
mod chooser;
mod dedup;
mod eval;
mod extract;
mod pack;
mod run;
mod status;
mod train;
mod tune;

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use article_pipeline::extract::ExtractOptions;
use article_pipeline::methods;
use article_pipeline::scoring::Scorer;

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
    /// Fit the learned span chooser on training pages and choose its margin on dev pages.
    Chooser(chooser::ChooserArgs),
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
    #[arg(long, default_value = "nb", value_parser = clap::builder::PossibleValuesParser::new(methods::NAMES))]
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
    /// The extraction options (declared once, in `ExtractOptions`).
    #[command(flatten)]
    pub options: ExtractOptions,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

impl ExtractorArgs {
    pub fn build(&self) -> anyhow::Result<(Box<dyn Scorer>, ExtractOptions)> {
        let scorer = methods::build(&self.scorer, self.model.as_deref(), self.bias, self.tag_bias)?;
        let options = self.options.clone();
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
    // The matches are kept: the crawl pipeline tells the extraction flags given on the command
    // line (which override the config file) from their defaults.
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
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
        Some(Command::Chooser(a)) => chooser::exec(a),
        Some(Command::Dedup(a)) => dedup::exec(a),
        None if cli.run.wants_run() => run::exec(cli.run, &matches),
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
