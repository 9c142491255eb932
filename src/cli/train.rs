//! `pipeline train`: fits a method's model on the pages of dataset manifests and writes its
//! file. `--learner` is one of the methods of `methods::METHODS` that learn; the flags of each
//! family are read by that family's learner and ignored by the others.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;

use article_pipeline::dataset;
use article_pipeline::eval::chooser as chooser_fit;
use article_pipeline::extract::ExtractOptions;
use article_pipeline::features::FeatureSet;
use article_pipeline::gold::LabelOptions;
use article_pipeline::methods::blocks::features::BlockFeatureConfig;
use article_pipeline::methods::blocks::learn::BlockTrainOptions;
use article_pipeline::methods::mbl::knn::{MblOptions, Weighting};
use article_pipeline::methods::nb::model::{NbModel, NbParams};
use article_pipeline::methods::pso::blocks::BlockOptions;
use article_pipeline::methods::pso::train::{PsoTrainOptions, SwarmParams};
use article_pipeline::methods::svm::features::YaoFeatureConfig;
use article_pipeline::methods::svm::train::{FeatureSet as SvmFeatureSet, SvmTrainOptions};
use article_pipeline::methods::{self, TrainOptions};

use super::Outcome;

#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Dataset manifest(s) with gold text.
    #[arg(long, required = true)]
    manifest: Vec<PathBuf>,
    /// Only pages of this split.
    #[arg(long, default_value = "train")]
    split: String,
    /// Where to write the model.
    #[arg(long)]
    out: PathBuf,
    /// Learner: Naive Bayes token scorer, a block labeller (crf, memm, maxent), or PSO
    /// thresholds on text blocks (Ziegler & Skubacz 2007), an SVM block classifier (Yao & Zuo),
    /// or the memory-based learner (knn = IB1, igtree; the TiMBL thesis).
    #[arg(long, default_value = "nb", value_parser = clap::builder::PossibleValuesParser::new(methods::learners()))]
    learner: String,
    /// Block learners: Gaussian prior sigma.
    #[arg(long, default_value_t = 1.0)]
    sigma: f64,
    /// Block learners: share of a block's words aligned to gold for it to be Content.
    #[arg(long, default_value_t = 0.3)]
    label_threshold: f64,
    /// Block learners: L-BFGS iterations at most.
    #[arg(long, default_value_t = 150)]
    max_iter: usize,
    /// Block learners: add the previous block's features (the paper's history predicates).
    #[arg(long)]
    history: bool,
    /// CRF only: transition scores also depend on the current block's features (the paper's
    /// edge features; recorded in the model header).
    #[arg(long)]
    edge_features: bool,
    /// Block learners: log2 of the hashed feature dimensions.
    #[arg(long, default_value_t = 19, value_parser = clap::value_parser!(u8).range(8..=24))]
    dims_log2: u8,
    /// Block learners: turn feature types off, comma-separated (words, named_entities,
    /// title_case, anchor_percentage, title_matching, ancestor_tags, descendant_tags,
    /// sibling_tags, word_count, after_image, ancestor_classes), or `inverse_stop_words`.
    #[arg(long, default_value = "")]
    block_features_off: String,
    /// Feature types, comma-separated: trigram, mrut, unigram, bigram, mrut2, classes. The
    /// defaults of --features, --bias, --tag-bias and --class-clamp are the shipped model's
    /// recipe (models/README.md): `pipeline train --manifest wcxb` rebuilds it.
    #[arg(long, default_value = "trigram,mrut2,classes")]
    features: String,
    /// Drop features seen fewer times than this.
    #[arg(long, default_value_t = 2)]
    min_count: u32,
    /// Laplace smoothing.
    #[arg(long, default_value_t = 1.0)]
    alpha: f64,
    /// Added to every token score p - 0.5 (the paper's bias).
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    bias: f64,
    /// Added to the score of every start and end tag on top of --bias (a text-density prior).
    #[arg(long, default_value_t = -0.4, allow_hyphen_values = true)]
    tag_bias: f64,
    /// Clamp each id/class word's log-odds to ±this (their token counts overstate the
    /// evidence); `inf` for no clamp.
    #[arg(long, default_value = "0.4")]
    class_clamp: Option<f64>,
    /// Skip pages where fewer than this share of gold words align to the page.
    #[arg(long, default_value_t = 0.8)]
    min_coverage: f64,
    /// Skip pages whose gold span is more than this share of tags.
    #[arg(long, default_value_t = 0.8)]
    max_tag_ratio: f64,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// nb: also fit the span chooser for this model on the same pages, choose its margin by
    /// cross-validation, and store both in the model file: extraction with this model uses them
    /// unless `--chooser-margin` says otherwise (the built-in chooser was fitted for the
    /// built-in model's choices). Each of `--chooser-folds` folds' candidates come from a model
    /// of this recipe fitted on the other folds, so training takes longer (dragnet train, 965
    /// pages: 0.8 s → 32.5 s; models/README.md, "A chooser per model").
    #[arg(long)]
    chooser: bool,
    /// Folds of `--chooser`'s cross-fitting.
    #[arg(long, default_value_t = 5)]
    chooser_folds: usize,
    #[command(flatten)]
    pso: PsoArgs,
    #[command(flatten)]
    svm: SvmArgs,
    #[command(flatten)]
    mbl: MblArgs,
}

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

/// Options of the SVM learner (ignored by the other learners).
#[derive(Debug, Args)]
pub struct SvmArgs {
    /// SVM: penalty C (default LIBSVM's 1).
    #[arg(long, default_value_t = SvmTrainOptions::default().c)]
    svm_c: f64,
    /// SVM: RBF width γ (default LIBSVM's 1/#features = 1/18).
    #[arg(long)]
    svm_gamma: Option<f64>,
    /// SVM: train on at most this many blocks, a seeded uniform sample (kernel SVMs are O(n²)).
    #[arg(long, default_value_t = SvmTrainOptions::default().max_blocks)]
    svm_max_blocks: usize,
    /// SVM: seed of the block sample.
    #[arg(long, default_value_t = SvmTrainOptions::default().seed)]
    svm_seed: u64,
    /// SVM: SMO stopping tolerance.
    #[arg(long, default_value_t = SvmTrainOptions::default().tolerance)]
    svm_tolerance: f64,
    /// SVM: M, the number of relative positions ⌊n/N·M⌋.
    #[arg(long, default_value_t = YaoFeatureConfig::default().positions)]
    svm_positions: u32,
    /// SVM: the paper's feature combination (§IV.C).
    #[arg(long, default_value = "all", value_parser = ["text", "text-position", "all"])]
    svm_feature_set: String,
}

/// Options of the memory-based learner (ignored by the other learners).
#[derive(Debug, Args)]
pub struct MblArgs {
    /// knn: nearest distances that vote (the thesis: 1 within known sites, 7 for unseen ones).
    #[arg(long, default_value_t = MblOptions::default().k)]
    k: usize,
    /// knn/igtree: feature weighting: none, ig (information gain), gr (gain ratio), chi2, sv
    /// (shared variance).
    #[arg(long, default_value = "gr", value_parser = ["none", "ig", "gr", "chi2", "sv"])]
    weighting: String,
    /// knn/igtree: share of a unit's words aligned to the gold text for it to be body.
    #[arg(long, default_value_t = MblOptions::default().label_threshold)]
    unit_threshold: f64,
}

impl TrainArgs {
    /// The library's training options from the flags.
    fn options(&self) -> anyhow::Result<TrainOptions> {
        let mut block_features =
            BlockFeatureConfig { history: self.history, dims_log2: self.dims_log2, ..Default::default() };
        for name in self.block_features_off.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            anyhow::ensure!(
                block_features.turn_off(name),
                "--block-features-off: unknown feature type `{name}` (known: {})",
                BlockFeatureConfig::TYPES.join(", ")
            );
        }
        let (p, s, m) = (&self.pso, &self.svm, &self.mbl);
        Ok(TrainOptions {
            threads: self.threads,
            label: LabelOptions {
                min_coverage: self.min_coverage,
                max_tag_ratio: self.max_tag_ratio,
                ..LabelOptions::default()
            },
            nb: NbParams {
                features: FeatureSet::parse(&self.features).map_err(anyhow::Error::msg).context("--features")?,
                alpha: self.alpha,
                min_count: self.min_count,
                bias: self.bias,
                tag_bias: self.tag_bias,
                // `inf`: no clamp.
                class_clamp: self.class_clamp.filter(|c| c.is_finite()),
            },
            blocks: BlockTrainOptions {
                learner: self.learner.clone(),
                features: block_features,
                sigma: self.sigma,
                label_threshold: self.label_threshold,
                max_iter: self.max_iter,
                edge_features: self.edge_features,
            },
            svm: SvmTrainOptions {
                features: YaoFeatureConfig { positions: s.svm_positions, ..YaoFeatureConfig::default() },
                c: s.svm_c,
                gamma: s.svm_gamma.unwrap_or(SvmTrainOptions::default().gamma),
                max_blocks: s.svm_max_blocks,
                seed: s.svm_seed,
                tolerance: s.svm_tolerance,
                feature_set: SvmFeatureSet::parse(&s.svm_feature_set).unwrap_or_default(),
                ..SvmTrainOptions::default()
            },
            mbl: MblOptions {
                weighting: Weighting::parse(&m.weighting).context("--weighting")?,
                k: m.k,
                label_threshold: m.unit_threshold,
                ..MblOptions::default()
            },
            pso: PsoTrainOptions {
                swarm: SwarmParams {
                    population: p.pso_population,
                    generations: p.pso_generations,
                    inertia: p.pso_inertia,
                    cognitive: p.pso_cognitive,
                    social: p.pso_social,
                    max_velocity: p.pso_max_velocity,
                    seed: p.pso_seed,
                },
                blocks: BlockOptions { split_at_div: p.pso_split_at_div },
                max_pages: p.pso_max_pages,
                threads: self.threads,
            },
        })
    }
}

pub fn exec(args: TrainArgs) -> anyhow::Result<Outcome> {
    let options = args.options()?;
    anyhow::ensure!(
        !args.chooser || args.learner == "nb",
        "--chooser fits the span chooser of a Naive Bayes model: use --learner nb"
    );
    anyhow::ensure!(!args.chooser || args.chooser_folds >= 2, "--chooser-folds must be at least 2");
    let entries = dataset::read_manifests(&args.manifest, Some(&args.split))?;
    anyhow::ensure!(!entries.is_empty(), "no `{}` pages in {:?}", args.split, args.manifest);
    // A progress line on terminals: "training: done/total pages", every 20 pages.
    let tty = std::io::stderr().is_terminal();
    let total = entries.len();
    let progress = move |done: usize| {
        if tty && (done.is_multiple_of(20) || done == total) {
            eprint!("\rtraining: {done}/{total} pages");
        }
    };
    let t = Instant::now();
    let mut trained = methods::train(&args.learner, &entries, &options, &progress)?;
    let mut err = std::io::stderr().lock();
    if tty {
        writeln!(err)?;
    }
    if args.chooser {
        let mut model = NbModel::from_bytes(&trained.bytes).context("reading the model just trained")?;
        let (sources, _) = dataset::sources_of(entries.iter());
        let (chooser, margin) = chooser_fit::fit_for_model(
            &model.header,
            &ExtractOptions::default(),
            &entries,
            args.chooser_folds,
            args.threads,
            &sources.join(" + "),
        )?;
        trained.report.push(format!("chooser: {}", chooser.trained_on));
        trained.report.push(margin);
        model.header.chooser = Some(chooser);
        trained.bytes = model.to_bytes();
    }
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(&args.out, &trained.bytes).with_context(|| format!("cannot write `{}`", args.out.display()))?;
    for line in &trained.report {
        writeln!(err, "{line}")?;
    }
    writeln!(
        err,
        "model {} bytes -> {} in {:.1} s",
        trained.bytes.len(),
        args.out.display(),
        t.elapsed().as_secs_f64()
    )?;
    Ok(Outcome::Ok)
}
