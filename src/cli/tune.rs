//! `pipeline tune`: chooses extraction settings by leave-one-dataset-out over labelled
//! manifests and prints every fold, the mean of the left-out folds and the setting chosen on
//! all of them ([`article_pipeline::eval::tune`]).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use article_pipeline::dataset;
use article_pipeline::eval::tune::{self, Setting};
use article_pipeline::extract::ExtractOptions;
use article_pipeline::methods;

use super::Outcome;

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Dataset manifests; each `dataset` is one fold.
    #[arg(long, required = true)]
    manifest: Vec<PathBuf>,
    /// Only pages of this split.
    #[arg(long, default_value = "dev")]
    split: String,
    /// Token scorer.
    #[arg(long, default_value = "nb", value_parser = clap::builder::PossibleValuesParser::new(methods::NAMES))]
    scorer: String,
    /// Model file (default: the built-in model).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Bias values to try (comma-separated; `model` = the model's own).
    #[arg(long, default_value = "model,0,0.05,0.15", value_delimiter = ',', allow_hyphen_values = true)]
    bias: Vec<String>,
    /// Tag bias values to try.
    #[arg(long, default_value = "model,-0.2,-0.6", value_delimiter = ',', allow_hyphen_values = true)]
    tag_bias: Vec<String>,
    /// Section-end word counts to try (0 = off).
    #[arg(long, default_value = "30,0", value_delimiter = ',')]
    section_end_words: Vec<usize>,
    /// Link-run lengths to try (0 = off).
    #[arg(long, default_value = "2", value_delimiter = ',')]
    link_run_blocks: Vec<usize>,
    /// Extra-span ratios to try (0 = one span).
    #[arg(long, default_value = "0.5,0", value_delimiter = ',')]
    extra_span_ratio: Vec<f64>,
    /// Extra-span minimum values to try (with every ratio above 0).
    #[arg(long, default_value = "15", value_delimiter = ',')]
    extra_span_min: Vec<f64>,
    /// Multi-item ratios to try (with every extra-span ratio above 0; 0 = off).
    #[arg(long, default_value = "0.2,0", value_delimiter = ',')]
    multi_item_ratio: Vec<f64>,
    /// Title-anchor ratios to try (0 = off).
    #[arg(long, default_value = "0.3,0", value_delimiter = ',')]
    title_anchor_ratio: Vec<f64>,
    /// Second-furniture-list settings to try (on, off).
    #[arg(long, default_value = "on,off", value_delimiter = ',')]
    drop_more_furniture: Vec<String>,
    /// Hidden-microdata filter settings to try (on, off).
    #[arg(long, default_value = "on,off", value_delimiter = ',')]
    drop_hidden_microdata: Vec<String>,
    /// Modal-dialog settings to try (on, off).
    #[arg(long, default_value = "on", value_delimiter = ',')]
    drop_modals: Vec<String>,
    /// Furniture-escape ratios to try (0 = off).
    #[arg(long, default_value = "0.1,0", value_delimiter = ',')]
    furniture_escape_ratio: Vec<f64>,
    /// List-widening item counts to try (0 = off).
    #[arg(long, default_value = "6,0", value_delimiter = ',')]
    list_min_items: Vec<usize>,
    /// Learned-chooser margins to try (0 = off); none given: the model's own (the built-in
    /// model's chooser at its margin).
    #[arg(long, value_delimiter = ',')]
    chooser_margin: Vec<f64>,
    /// Also try without the <noscript> fallback.
    #[arg(long)]
    try_noscript_off: bool,
    /// Also try the span filters off (boilerplate by id/class, link lists).
    #[arg(long)]
    try_filters_off: bool,
    /// Worker threads (0 = one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn values(list: &[String], what: &str) -> anyhow::Result<Vec<Option<f64>>> {
    list.iter()
        .map(|v| match v.trim() {
            "model" => Ok(None),
            x => match x.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Some(v)),
                _ => Err(anyhow::anyhow!("--{what}: `{x}` is not a finite number")),
            },
        })
        .collect()
}

/// Every setting of `settings` once per value of a new dimension.
fn expand<T>(settings: &mut Vec<Setting>, values: &[T], set: impl Fn(&mut Setting, &T)) {
    *settings = settings
        .iter()
        .flat_map(|s| {
            values.iter().map(|v| {
                let mut s = s.clone();
                set(&mut s, v);
                s
            })
        })
        .collect();
}

fn onoff(list: &[String], what: &str) -> anyhow::Result<Vec<bool>> {
    list.iter()
        .map(|v| match v.trim() {
            "on" => Ok(true),
            "off" => Ok(false),
            x => anyhow::bail!("--{what}: `{x}` is neither on nor off"),
        })
        .collect()
}

pub fn exec(args: TuneArgs) -> anyhow::Result<Outcome> {
    let default = ExtractOptions::default();
    let filters: &[(bool, bool)] =
        if args.try_filters_off { &[(true, true), (false, true), (true, false)] } else { &[(true, true)] };
    // The current defaults come first: ties keep them.
    let mut spans: Vec<(f64, f64, f64)> = Vec::new();
    for &r in &args.extra_span_ratio {
        if r == 0.0 {
            spans.push((0.0, 0.0, 0.0));
        } else {
            for &min in &args.extra_span_min {
                spans.extend(args.multi_item_ratio.iter().map(|&m| (r, min, m)));
            }
        }
    }
    // The grid: every combination of the listed values, one dimension at a time.
    let base = Setting { bias: None, tag_bias: None, options: default.clone() };
    let noscript: &[bool] = if args.try_noscript_off { &[true, false] } else { &[true] };
    let mut settings = vec![base];
    expand(&mut settings, &args.section_end_words, |s, &v| s.options.section_end_words = v);
    expand(&mut settings, &args.link_run_blocks, |s, &v| s.options.link_run_blocks = v);
    expand(&mut settings, &spans, |s, &(r, min, m)| {
        (s.options.extra_span_ratio, s.options.extra_span_min, s.options.multi_item_ratio) = (r, min, m)
    });
    expand(&mut settings, filters, |s, &(b, l)| (s.options.drop_boilerplate, s.options.drop_link_blocks) = (b, l));
    expand(&mut settings, &onoff(&args.drop_hidden_microdata, "drop-hidden-microdata")?, |s, &v| {
        s.options.drop_hidden_microdata = v
    });
    expand(&mut settings, &onoff(&args.drop_modals, "drop-modals")?, |s, &v| s.options.drop_modals = v);
    expand(&mut settings, &onoff(&args.drop_more_furniture, "drop-more-furniture")?, |s, &v| {
        s.options.drop_more_furniture = v
    });
    expand(&mut settings, &args.title_anchor_ratio, |s, &v| s.options.title_anchor_ratio = v);
    expand(&mut settings, &args.furniture_escape_ratio, |s, &v| s.options.furniture_escape_ratio = v);
    expand(&mut settings, &args.list_min_items, |s, &v| s.options.list_min_items = v);
    if !args.chooser_margin.is_empty() {
        expand(&mut settings, &args.chooser_margin, |s, &v| s.options.chooser_margin = Some(v));
    }
    expand(&mut settings, noscript, |s, &v| s.options.noscript_fallback = v);
    expand(&mut settings, &values(&args.bias, "bias")?, |s, &v| s.bias = v);
    expand(&mut settings, &values(&args.tag_bias, "tag-bias")?, |s, &v| s.tag_bias = v);
    if let Some(p) = settings.iter().flat_map(|s| s.options.problems()).next() {
        anyhow::bail!("a grid value is out of range: {p}");
    }
    // The grid is checked whole before any page is read.
    let entries = dataset::read_manifests(&args.manifest, Some(&args.split))?;
    anyhow::ensure!(!entries.is_empty(), "no pages of split `{}` in {:?}", args.split, args.manifest);
    settings.sort_by_key(|s| !(s.bias.is_none() && s.tag_bias.is_none() && s.options == default));
    let n = settings.len();
    let build = |s: &Setting| {
        let scorer = methods::build(&args.scorer, args.model.as_deref(), s.bias, s.tag_bias)?;
        Ok(scorer)
    };
    let report = tune::tune(&entries, settings, args.threads, &build, |i, s, f1| {
        eprintln!("[{}/{n}] {}: pooled F1 {f1:.3}", i + 1, s.flags());
    })?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write!(out, "{}", tune::format_report(&report))?;
    }
    Ok(Outcome::Ok)
}
