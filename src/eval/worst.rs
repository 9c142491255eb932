//! The failure report of `pipeline eval --worst N`: the pages with the lowest shingle F1, each
//! with the shape of its failure, the start of what was extracted and the start of the gold,
//! so whoever tunes on their own labelled pages sees what goes wrong (a teaser rail chosen, the
//! comment thread, nothing at all) rather than one pooled number.

use serde::Serialize;

use super::PageResult;
use super::metrics::{aggregate, gold_plain_text};
use crate::dataset::ManifestEntry;

/// Characters of the extracted and the gold text shown per page.
pub const SHOWN_CHARS: usize = 100;

/// One of the worst pages.
#[derive(Debug, Clone, Serialize)]
pub struct WorstPage {
    pub id: String,
    pub dataset: String,
    /// The page's kind, when its manifest (or wcxb's provenance file) names one: `listing`,
    /// `product`, `forum`, … (failures cluster by kind).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_type: Option<String>,
    pub f1: f64,
    pub precision: f64,
    pub recall: f64,
    /// `nothing extracted`, `no overlap`, `mostly not article` (precision < 0.5),
    /// `article cut short` (recall < 0.5), or `partly wrong`.
    pub shape: &'static str,
    /// The start of the extracted text.
    pub chosen: String,
    /// The start of the gold text.
    pub gold: String,
}

/// The `n` pages of lowest shingle F1 (pages that failed to extract are left out: they are
/// listed as failures), lowest first; ties by id.
pub fn worst(pages: &[PageResult], entries: &[ManifestEntry], n: usize) -> Vec<WorstPage> {
    let mut scored: Vec<WorstPage> = pages
        .iter()
        .zip(entries)
        .filter(|(p, _)| p.error.is_none())
        .map(|(p, e)| {
            let a = aggregate(std::iter::once(&p.metrics));
            let (precision, recall) = (a.shingle_p.unwrap_or(0.0), a.shingle_r.unwrap_or(0.0));
            let f1 = a.shingle_f1.unwrap_or(0.0);
            let shape = if p.metrics.empty {
                "nothing extracted"
            } else if p.metrics.tp == 0.0 {
                "no overlap"
            } else if precision < 0.5 {
                "mostly not article"
            } else if recall < 0.5 {
                "article cut short"
            } else {
                "partly wrong"
            };
            let gold = gold_plain_text(e.gold.text.as_deref().unwrap_or(""));
            WorstPage {
                id: p.id.clone(),
                dataset: p.dataset.clone(),
                page_type: p.page_type.clone(),
                f1,
                precision,
                recall,
                shape,
                chosen: head(&p.text),
                gold: head(&gold),
            }
        })
        .collect();
    scored.sort_by(|a, b| a.f1.total_cmp(&b.f1).then_with(|| a.id.cmp(&b.id)));
    scored.truncate(n);
    scored
}

/// The first [`SHOWN_CHARS`] characters, whitespace collapsed.
fn head(text: &str) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match words.char_indices().nth(SHOWN_CHARS) {
        Some((i, _)) => format!("{}…", &words[..i]),
        None => words,
    }
}

/// The report as text: one block per page.
pub fn format_worst(pages: &[WorstPage]) -> String {
    let mut s = format!("\nworst {} pages by shingle F1:\n", pages.len());
    for p in pages {
        let kind = p.page_type.as_deref().map(|t| format!(", {t}")).unwrap_or_default();
        s.push_str(&format!(
            "{:.3}  P {:.3} R {:.3}  {}  {} ({}{kind})\n  chosen: {}\n  gold:   {}\n",
            p.f1, p.precision, p.recall, p.shape, p.id, p.dataset, p.chosen, p.gold
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_cut_on_characters() {
        assert_eq!(head("a  b\n c"), "a b c");
        let long = "é".repeat(150);
        assert_eq!(head(&long).chars().count(), SHOWN_CHARS + 1);
    }
}
