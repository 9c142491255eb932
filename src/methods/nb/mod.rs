//! The Naive Bayes token model of Pasternack & Roth (2009), the default method: [`model`] (the
//! model file and the streaming trigram scorer, §3), [`train`] (counts from pages aligned with
//! their gold text, §5.1) and [`bootstrap`] (self-training on unlabelled pages, §6.2.4).

pub mod bootstrap;
pub mod guard;
pub mod model;
pub mod train;

use std::path::Path;

use super::{ScorerError, TrainError, TrainJob, Trained, read_model, skipped_list};
use crate::scoring::Scorer;
use model::NbModel;

/// The default model, trained on the wcxb train split (models/README.md), built into
/// the binary.
pub static DEFAULT_MODEL: &[u8] = include_bytes!("../../../models/default.nbm");

/// The scorer of §3: the built-in model, or a model file. An adapted model that records its
/// pool's layouts is guarded by them ([`guard`]): its base model scores the other pages.
pub(super) fn load(_: &'static str, model: Option<&Path>) -> Result<Box<dyn Scorer>, ScorerError> {
    let (m, stem) = read(model)?;
    guard::scorer_of(m, stem, |base_id| {
        read((base_id != "default").then_some(Path::new(base_id))).map_err(|e| {
            let path = model.map_or_else(|| "<built-in default.nbm>".into(), Path::to_path_buf);
            ScorerError::BaseModel { path, base: base_id.to_string(), source: Box::new(e) }
        })
    })
}

/// The built-in model (named `default`), or a model file (named by its stem).
pub fn read(model: Option<&Path>) -> Result<(NbModel, String), ScorerError> {
    match model {
        // The built-in model's span chooser is built in beside it (`models/chooser.json`).
        None => NbModel::from_bytes(DEFAULT_MODEL)
            .map(|mut m| {
                m.header.chooser.get_or_insert_with(|| crate::scoring::chooser::builtin().clone());
                (m, "default".to_string())
            })
            .map_err(|source| ScorerError::Model { path: "<built-in default.nbm>".into(), source }),
        Some(path) => read_model(path, NbModel::from_bytes),
    }
}

/// Fits the model of §5.1 (`pipeline train --learner nb`).
pub(super) fn train(job: TrainJob<'_>) -> Result<Trained, TrainError> {
    let (entries, o, progress) = (job.entries, job.options, job.progress);
    let p = o.nb;
    let bad = |what: &str| Err(TrainError::Options(what.to_string()));
    if p.alpha.is_nan() || p.alpha <= 0.0 {
        return bad("alpha must be positive");
    }
    if !(0.0..=1.0).contains(&o.label.min_coverage) {
        return bad("min coverage must be within 0..1");
    }
    if !(p.bias.is_finite() && p.tag_bias.is_finite()) {
        return bad("bias and tag bias must be finite");
    }
    if p.class_clamp.is_some_and(|c| c.is_nan() || c < 0.0) {
        return bad("class clamp must be ≥ 0");
    }
    let (model, r) = train::train_nb(entries, p, &o.label, o.threads, progress)?;
    let h = &model.header.training;
    let report = vec![
        format!(
            "pages: {} read, {} used (mean gold coverage {:.3}), skipped: {}",
            r.pages,
            r.used,
            r.mean_coverage,
            skipped_list(&r.skipped)
        ),
        format!(
            "tokens: {} in, {} out; features: {} seen, {} kept (min count {})",
            h.tokens_in, h.tokens_out, h.features_seen, h.features_kept, p.min_count
        ),
    ];
    Ok(Trained { bytes: model.to_bytes(), report })
}

#[cfg(test)]
mod tests {
    use crate::scoring::Scorer;

    #[test]
    fn the_built_in_model_carries_the_built_in_chooser_switched_on() {
        let (m, name) = super::read(None).unwrap();
        assert_eq!(name, "default");
        let c = m.header.chooser.as_ref().expect("the built-in chooser");
        assert_eq!(c, crate::scoring::chooser::builtin());
        assert!(c.margin.is_some_and(|m| m > 0.0), "on by default: {:?}", c.margin);
        let scorer = super::model::NbScorer::new(m, "default");
        assert!(scorer.chooser().is_some());
    }
}
