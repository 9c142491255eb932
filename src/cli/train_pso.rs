//! `pipeline train --learner pso`: the PSO-threshold learner's options and its run
//! (Ziegler & Skubacz 2007); `train.rs` dispatches here so the Naive Bayes path is untouched.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use clap::Args;

use article_pipeline::dataset;
use article_pipeline::methods::pso::blocks::{BlockOptions, FEATURE_NAMES, LOWER_BOUND};
use article_pipeline::methods::pso::train::{self as pso, PsoTrainOptions, SwarmParams};

use super::Outcome;

/// Options of the PSO learner (ignored by `--learner nb`).
#[derive(Debug, Args)]
pub struct PsoArgs {
    /// PSO: particles.
    #[arg(long, default_value_t = SwarmParams::default().population)]
    pso_population: usize,
    /// PSO: generations.
    #[arg(long, default_value_t = SwarmParams::default().generations)]
    pso_generations: usize,
    /// PSO: inertia weight ω.
    #[arg(long, default_value_t = SwarmParams::default().inertia)]
    pso_inertia: f64,
    /// PSO: cognitive weight τ (pull towards a particle's own best).
    #[arg(long, default_value_t = SwarmParams::default().cognitive)]
    pso_cognitive: f64,
    /// PSO: social weight φ (pull towards the swarm's best).
    #[arg(long, default_value_t = SwarmParams::default().social)]
    pso_social: f64,
    /// PSO: largest velocity per coordinate (unit-cube lengths).
    #[arg(long, default_value_t = SwarmParams::default().max_velocity)]
    pso_max_velocity: f64,
    /// PSO: random seed.
    #[arg(long, default_value_t = SwarmParams::default().seed)]
    pso_seed: u64,
    /// PSO: use at most this many pages, every k-th in manifest order (0 = all).
    #[arg(long, default_value_t = 0)]
    pso_max_pages: usize,
    /// PSO: cut blocks at <div> too (the paper removes <div> with a space).
    #[arg(long)]
    pso_split_at_div: bool,
}

pub fn exec(
    manifests: &[std::path::PathBuf],
    split: &str,
    out: &Path,
    threads: usize,
    a: &PsoArgs,
) -> anyhow::Result<Outcome> {
    anyhow::ensure!(a.pso_population > 0, "--pso-population must be positive");
    anyhow::ensure!(
        [a.pso_inertia, a.pso_cognitive, a.pso_social, a.pso_max_velocity].iter().all(|v| v.is_finite()),
        "PSO weights must be finite"
    );
    let entries = dataset::read_manifests(manifests, Some(split))?;
    anyhow::ensure!(!entries.is_empty(), "no `{split}` pages in {manifests:?}");
    let opts = PsoTrainOptions {
        swarm: SwarmParams {
            population: a.pso_population,
            generations: a.pso_generations,
            inertia: a.pso_inertia,
            cognitive: a.pso_cognitive,
            social: a.pso_social,
            max_velocity: a.pso_max_velocity,
            seed: a.pso_seed,
        },
        blocks: BlockOptions { split_at_div: a.pso_split_at_div },
        max_pages: a.pso_max_pages,
        threads,
    };
    let total = if a.pso_max_pages == 0 { entries.len() } else { entries.len().min(a.pso_max_pages) };
    let tty = std::io::stderr().is_terminal();
    let progress = move |done: usize| {
        if tty && done.is_multiple_of(20) {
            eprint!("\rpreparing: {done}/~{total} pages");
        }
    };
    let t = Instant::now();
    let (model, report) = pso::train_pso(&entries, &opts, &progress)?;
    if tty {
        eprintln!();
    }
    let bytes = model.to_bytes();
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(out, &bytes).with_context(|| format!("cannot write `{}`", out.display()))?;
    let mut err = std::io::stderr().lock();
    writeln!(err, "pages: {} chosen, {} used, {} skipped", report.pages, report.used, report.skipped)?;
    for (g, h) in report.history.iter().enumerate() {
        if g % 10 == 0 || g + 1 == report.history.len() {
            writeln!(err, "generation {g:>3}: best {:.4}, mean {:.4}", h.best, h.mean)?;
        }
    }
    let th: Vec<String> = FEATURE_NAMES
        .iter()
        .zip(&LOWER_BOUND)
        .zip(&model.thresholds.0)
        .map(|((n, &lower), t)| format!("{n} {} {t:.4}", if lower { ">=" } else { "<=" }))
        .collect();
    writeln!(err, "thresholds: {}", th.join(", "))?;
    writeln!(
        err,
        "fitness (mean similarity): {:.4} (every block accepted: {:.4}); model {} bytes -> {} in {:.1} s",
        model.header.training.fitness,
        report.accept_all_fitness,
        bytes.len(),
        out.display(),
        t.elapsed().as_secs_f64()
    )?;
    Ok(Outcome::Ok)
}
