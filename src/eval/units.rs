//! Unit-level evaluation of structure-labelling scorers (`knn`, `igtree`), as the memory-based
//! thesis reports it (§6.1): precision, recall and F per class (title, heading, body, garbage)
//! against the gold-derived unit classes of [`crate::methods::mbl::units::label_units`], pooled
//! over all units ("micro-mean") and averaged over sources ("macro-mean"; our sources are the
//! datasets, the thesis' were news sites), then averaged over the classes.
//!
//! Gold classes are derived with the same segmentation and the default unit threshold (½), on
//! every page with a gold text (no coverage filter: a page the gold barely matches still counts).
//! The title row counts only pages whose gold has a title.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dataset::Gold;
use crate::methods::mbl::knn::MblOptions;
use crate::methods::mbl::units::{Class, label_units};
use crate::methods::nb::train::LabelOptions;

/// Confusion counts of one page: `counts[gold][predicted]` over units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PageUnits {
    pub counts: [[u64; 4]; 4],
    /// The gold has a title. Only these pages count in the title row: elsewhere a predicted
    /// title is not known to be wrong (of our datasets only wcxb gives titles).
    pub has_title: bool,
}

/// Compares predicted unit classes (codes, [`crate::scoring::Structure::unit_classes`]) with the
/// gold classes of the page; `None` when the page has no gold text or the units disagree.
pub fn page_units(html: &[u8], gold: &Gold, predicted: &[u8]) -> Option<PageUnits> {
    let label = LabelOptions { min_coverage: 0.0, min_gold_words: 1, ..LabelOptions::default() };
    let threshold = MblOptions::default().label_threshold;
    let l = label_units(html, gold.text.as_deref()?, gold.title.as_deref(), threshold, &label).ok()?;
    if l.classes.len() != predicted.len() {
        return None;
    }
    let mut p =
        PageUnits { has_title: gold.title.as_deref().is_some_and(|t| !t.trim().is_empty()), ..PageUnits::default() };
    for (&g, &c) in l.classes.iter().zip(predicted) {
        p.counts[g as usize][Class::from_code(c) as usize] += 1;
    }
    Some(p)
}

/// Precision, recall and F of one class (None where undefined, as the thesis' "nan").
#[derive(Debug, Clone, Default, Serialize)]
pub struct Prf {
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

fn prf(tp: u64, fp: u64, fn_: u64) -> Prf {
    let p = (tp + fp > 0).then(|| tp as f64 / (tp + fp) as f64);
    let r = (tp + fn_ > 0).then(|| tp as f64 / (tp + fn_) as f64);
    let f = match (p, r) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    Prf { precision: p, recall: r, f1: f }
}

fn mean(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let xs: Vec<f64> = v.flatten().collect();
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// One class's row.
#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    pub class: &'static str,
    pub tp: u64,
    pub fp: u64,
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// Over all units of all pages.
    pub micro: Prf,
    /// Mean over datasets of each dataset's P, R, F.
    pub macro_: Prf,
}

/// The unit-level table.
#[derive(Debug, Clone, Serialize)]
pub struct UnitReport {
    pub pages: usize,
    pub units: u64,
    pub classes: Vec<ClassRow>,
    /// Mean over the four classes of the micro P, R, F.
    pub macro_over_classes: Prf,
    /// Units classed right over all units (micro P = R = F over the four classes).
    pub accuracy: Option<f64>,
}

/// Aggregates pages (dataset name, counts).
pub fn report<'a>(pages: impl Iterator<Item = (&'a str, &'a PageUnits)>) -> UnitReport {
    // Confusion counts of all pages, and of the pages with a gold title (for the title row).
    type Both = ([[u64; 4]; 4], [[u64; 4]; 4]);
    let mut by_ds: BTreeMap<&str, Both> = BTreeMap::new();
    let mut all: Both = Default::default();
    let mut n = 0;
    for (ds, p) in pages {
        n += 1;
        let d = by_ds.entry(ds).or_default();
        for g in 0..4 {
            for c in 0..4 {
                d.0[g][c] += p.counts[g][c];
                all.0[g][c] += p.counts[g][c];
                if p.has_title {
                    d.1[g][c] += p.counts[g][c];
                    all.1[g][c] += p.counts[g][c];
                }
            }
        }
    }
    let counts = |b: &Both, k: usize| {
        let m = if k == Class::Title as usize { &b.1 } else { &b.0 };
        let tp = m[k][k];
        let fp = (0..4).map(|g| m[g][k]).sum::<u64>() - tp;
        let fn_ = m[k].iter().sum::<u64>() - tp;
        (tp, fp, fn_)
    };
    let classes: Vec<ClassRow> = Class::ALL
        .iter()
        .map(|&c| {
            let k = c as usize;
            let (tp, fp, fn_) = counts(&all, k);
            let per: Vec<Prf> = by_ds
                .values()
                .map(|m| {
                    let (a, b, c) = counts(m, k);
                    prf(a, b, c)
                })
                .collect();
            ClassRow {
                class: c.name(),
                tp,
                fp,
                fn_,
                micro: prf(tp, fp, fn_),
                macro_: Prf {
                    precision: mean(per.iter().map(|p| p.precision)),
                    recall: mean(per.iter().map(|p| p.recall)),
                    f1: mean(per.iter().map(|p| p.f1)),
                },
            }
        })
        .collect();
    let units: u64 = all.0.iter().flatten().sum();
    let right: u64 = (0..4).map(|k| all.0[k][k]).sum();
    UnitReport {
        pages: n,
        units,
        macro_over_classes: Prf {
            precision: mean(classes.iter().map(|c| c.micro.precision)),
            recall: mean(classes.iter().map(|c| c.micro.recall)),
            f1: mean(classes.iter().map(|c| c.micro.f1)),
        },
        accuracy: (units > 0).then(|| right as f64 / units as f64),
        classes,
    }
}

/// The table as text.
pub fn format_table(r: &UnitReport) -> String {
    use std::fmt::Write;
    let f = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3}"));
    let mut s = String::new();
    let _ = writeln!(s, "units (text/tail, gold-derived classes): {} pages, {} units", r.pages, r.units);
    let _ = writeln!(
        s,
        "{:<10} {:>8} {:>8} {:>8} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7}",
        "class", "TP", "FP", "FN", "P", "R", "F", "macroP", "macroR", "macroF"
    );
    for c in &r.classes {
        let _ = writeln!(
            s,
            "{:<10} {:>8} {:>8} {:>8} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7}",
            c.class,
            c.tp,
            c.fp,
            c.fn_,
            f(c.micro.precision),
            f(c.micro.recall),
            f(c.micro.f1),
            f(c.macro_.precision),
            f(c.macro_.recall),
            f(c.macro_.f1)
        );
    }
    let m = &r.macro_over_classes;
    let _ = writeln!(
        s,
        "mean of the four classes: P {} R {} F {}; unit accuracy (micro over classes) {}",
        f(m.precision),
        f(m.recall),
        f(m.f1),
        f(r.accuracy)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_class_micro_and_macro_by_hand() {
        // Dataset a: 2 body units right, 1 garbage called body; dataset b: 1 title right,
        // 1 body called garbage.
        let mut a = PageUnits::default();
        a.counts[2][2] = 2;
        a.counts[3][2] = 1;
        let mut b = PageUnits { has_title: true, ..PageUnits::default() };
        b.counts[0][0] = 1;
        b.counts[2][3] = 1;
        let r = report([("a", &a), ("b", &b)].into_iter());
        let body = &r.classes[2];
        assert_eq!((body.tp, body.fp, body.fn_), (2, 1, 1));
        // Micro: P = 2/3, R = 2/3. Macro: a has P 2/3, R 1; b has P undefined, R 0.
        assert!((body.micro.precision.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((body.macro_.precision.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((body.macro_.recall.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(r.classes[0].micro.f1, Some(1.0));
        assert_eq!(r.classes[1].micro.f1, None);
        assert_eq!(r.accuracy, Some(3.0 / 5.0));
        // A title predicted on a page whose gold has none is not counted in the title row.
        let mut c = PageUnits::default();
        c.counts[3][0] = 1;
        let r = report([("b", &b), ("c", &c)].into_iter());
        assert_eq!((r.classes[0].tp, r.classes[0].fp), (1, 0));
        assert_eq!(r.classes[3].fn_, 1);
    }
}
