//! The English Snowball ("Porter2") stemmer on ASCII bytes: the stemmer of the features
//! (Pasternack & Roth 2009, §5.2 stem words with Porter's algorithm), written out step by step
//! from the Snowball program that rust-stemmers 1.2 compiles, so that every ASCII word gets
//! the stem rust-stemmers gives it (proptest `ascii_words_stem_as_rust_stemmers_does` and a
//! test over every exception and suffix).
//!
//! Why not call rust-stemmers: it is generic over Unicode, rebuilds the word as a new `String`
//! for every rule that fires and searches its suffix tables by binary search over `&str`; a
//! new word costs it about 3,600 instructions, the largest cost of a cold NB pass after the
//! tokenizer (most words of a page are new to the stem memo on the first pages of a run). Here
//! the word is one byte buffer that the rules shorten and append to in place. Words with a
//! non-ASCII character still go to rust-stemmers ([`crate::html::normalize`]).
//!
//! Snowball's `among` takes the longest listed suffix and never falls back to a shorter one
//! when the rule's condition (R1, R2, a preceding letter) fails; the tables below are ordered
//! longest first and the steps stop at the first suffix that matches, for that reason.

/// Vowels of the Snowball program (`v`): `y` counts, `Y` (a consonant `y`) does not.
#[inline]
fn is_v(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y')
}

/// `v_WXY`: the vowels, `w`, `x` and `Y` (a short syllable cannot end in these).
#[inline]
fn is_v_wxy(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y' | b'w' | b'x' | b'Y')
}

/// `valid_LI`: letters before which a final `li` is deleted.
#[inline]
fn is_valid_li(b: u8) -> bool {
    matches!(b, b'c' | b'd' | b'e' | b'g' | b'h' | b'k' | b'm' | b'n' | b'r' | b't')
}

/// Whole words with a fixed stem (`exception1`), checked before anything else.
const EXCEPTION1: [(&[u8], &[u8]); 18] = [
    (b"andes", b"andes"),
    (b"atlas", b"atlas"),
    (b"bias", b"bias"),
    (b"cosmos", b"cosmos"),
    (b"dying", b"die"),
    (b"early", b"earli"),
    (b"gently", b"gentl"),
    (b"howe", b"howe"),
    (b"idly", b"idl"),
    (b"lying", b"lie"),
    (b"news", b"news"),
    (b"only", b"onli"),
    (b"singly", b"singl"),
    (b"skies", b"sky"),
    (b"skis", b"ski"),
    (b"sky", b"sky"),
    (b"tying", b"tie"),
    (b"ugly", b"ugli"),
];

/// Words left as they are after step 1a (`exception2`).
const EXCEPTION2: [&[u8]; 8] =
    [b"succeed", b"proceed", b"exceed", b"canning", b"inning", b"earring", b"herring", b"outing"];

/// What a step does with the suffix it found.
#[derive(Clone, Copy)]
enum Rule {
    /// Replace it (in R1 for step 2 and 3, R2 for step 4).
    To(&'static [u8]),
    /// Replace `ogi` by `og` after an `l`.
    Ogi,
    /// Delete `li` after a valid-LI letter.
    Li,
    /// Delete it only in R2 (step 3's `ative`).
    DeleteInR2,
    /// Delete `ion` after `s` or `t` (step 4).
    Ion,
}

/// Step 2's suffixes, longest first (`among` A_5).
const STEP2: Table<24> = Table::new([
    (b"ational", Rule::To(b"ate")),
    (b"ization", Rule::To(b"ize")),
    (b"iveness", Rule::To(b"ive")),
    (b"fulness", Rule::To(b"ful")),
    (b"ousness", Rule::To(b"ous")),
    (b"tional", Rule::To(b"tion")),
    (b"biliti", Rule::To(b"ble")),
    (b"lessli", Rule::To(b"less")),
    (b"fulli", Rule::To(b"ful")),
    (b"ousli", Rule::To(b"ous")),
    (b"entli", Rule::To(b"ent")),
    (b"aliti", Rule::To(b"al")),
    (b"iviti", Rule::To(b"ive")),
    (b"alism", Rule::To(b"al")),
    (b"ation", Rule::To(b"ate")),
    (b"anci", Rule::To(b"ance")),
    (b"enci", Rule::To(b"ence")),
    (b"abli", Rule::To(b"able")),
    (b"alli", Rule::To(b"al")),
    (b"izer", Rule::To(b"ize")),
    (b"ator", Rule::To(b"ate")),
    (b"ogi", Rule::Ogi),
    (b"bli", Rule::To(b"ble")),
    (b"li", Rule::Li),
]);

/// Step 3's suffixes, longest first (`among` A_6).
const STEP3: Table<9> = Table::new([
    (b"ational", Rule::To(b"ate")),
    (b"tional", Rule::To(b"tion")),
    (b"icate", Rule::To(b"ic")),
    (b"ative", Rule::DeleteInR2),
    (b"alize", Rule::To(b"al")),
    (b"iciti", Rule::To(b"ic")),
    (b"ical", Rule::To(b"ic")),
    (b"ness", Rule::To(b"")),
    (b"ful", Rule::To(b"")),
]);

/// Step 4's suffixes, longest first (`among` A_7), all deleted in R2.
const STEP4: Table<18> = Table::new([
    (b"ement", Rule::To(b"")),
    (b"ance", Rule::To(b"")),
    (b"ence", Rule::To(b"")),
    (b"able", Rule::To(b"")),
    (b"ible", Rule::To(b"")),
    (b"ment", Rule::To(b"")),
    (b"ate", Rule::To(b"")),
    (b"ive", Rule::To(b"")),
    (b"ize", Rule::To(b"")),
    (b"iti", Rule::To(b"")),
    (b"ism", Rule::To(b"")),
    (b"ion", Rule::Ion),
    (b"ous", Rule::To(b"")),
    (b"ant", Rule::To(b"")),
    (b"ent", Rule::To(b"")),
    (b"ic", Rule::To(b"")),
    (b"al", Rule::To(b"")),
    (b"er", Rule::To(b"")),
]);

/// A step's suffix table with the last two letters of each suffix packed in a `u16`, for
/// [`Table::longest`].
struct Table<const N: usize> {
    suffixes: [(&'static [u8], Rule); N],
    tails: [u16; N],
}

impl<const N: usize> Table<N> {
    /// Every suffix must have two letters or more.
    const fn new(suffixes: [(&'static [u8], Rule); N]) -> Self {
        let mut tails = [0u16; N];
        let mut i = 0;
        while i < N {
            let s = suffixes[i].0;
            tails[i] = tail(s[s.len() - 2], s[s.len() - 1]);
            i += 1;
        }
        Table { suffixes, tails }
    }

    /// The longest suffix of `w` in the table, with the index where it starts. The last two
    /// letters are compared first, as one `u16`: most words end in none of the table's pairs,
    /// and a full `ends_with` per entry cost more than the rest of the stemmer.
    #[inline]
    fn longest(&self, w: &[u8]) -> Option<(usize, Rule)> {
        let &[.., a, b] = w else { return None };
        let t = tail(a, b);
        let mut i = 0;
        while i < N {
            if self.tails[i] == t {
                let (s, rule) = self.suffixes[i];
                if w.ends_with(s) {
                    return Some((w.len() - s.len(), rule));
                }
            }
            i += 1;
        }
        None
    }
}

const fn tail(a: u8, b: u8) -> u16 {
    ((a as u16) << 8) | b as u16
}

/// Replaces `w[at..]` by `by`.
#[inline]
fn replace_from(w: &mut Vec<u8>, at: usize, by: &[u8]) {
    w.truncate(at);
    w.extend_from_slice(by);
}

/// After the first vowel at or after `from`, the position after the next non-vowel
/// (Snowball's `gopast v gopast non-v`).
#[inline]
fn past_vowel_consonant(w: &[u8], from: usize) -> Option<usize> {
    let v = from + w.get(from..)?.iter().position(|&b| is_v(b))?;
    let c = v + 1 + w[v + 1..].iter().position(|&b| !is_v(b))?;
    Some(c + 1)
}

/// `shortv` looking back from `end`: a short syllable ends there.
#[inline]
fn ends_short_syllable(w: &[u8], end: usize) -> bool {
    (end >= 3 && !is_v_wxy(w[end - 1]) && is_v(w[end - 2]) && !is_v(w[end - 3]))
        || (end == 2 && !is_v(w[1]) && is_v(w[0]))
}

/// Stems the ASCII word `word` into `out` (cleared first), exactly as rust-stemmers'
/// English algorithm does.
pub fn stem_ascii(word: &[u8], out: &mut Vec<u8>) {
    debug_assert!(word.is_ascii());
    out.clear();
    if let Some(&(_, s)) = EXCEPTION1.iter().find(|(w, _)| *w == word) {
        out.extend_from_slice(s);
        return;
    }
    out.extend_from_slice(word);
    if word.len() < 3 {
        return;
    }
    let w = out;

    // prelude: a leading apostrophe goes; a `y` that begins the word or follows a vowel is a
    // consonant (`Y`) from here to the postlude.
    if w[0] == b'\'' {
        w.remove(0);
    }
    let mut y_found = false;
    if w.first() == Some(&b'y') {
        w[0] = b'Y';
        y_found = true;
    }
    for i in 1..w.len() {
        if w[i] == b'y' && is_v(w[i - 1]) {
            w[i] = b'Y';
            y_found = true;
        }
    }

    // mark_regions: R1 after the first non-vowel following a vowel (after the prefixes
    // `gener`, `commun`, `arsen` instead), R2 the same again inside R1.
    let n = w.len();
    let prefix = [&b"gener"[..], b"commun", b"arsen"].into_iter().find(|p| w.starts_with(p)).map(|p| p.len());
    let p1 = prefix.or_else(|| past_vowel_consonant(w, 0)).unwrap_or(n);
    let p2 = if p1 < n { past_vowel_consonant(w, p1).unwrap_or(n) } else { n };

    // Step 1a: possessives, then plurals.
    for s in [&b"'s'"[..], b"'s", b"'"] {
        if w.ends_with(s) {
            w.truncate(w.len() - s.len());
            break;
        }
    }
    let n = w.len();
    if w.ends_with(b"sses") {
        w.truncate(n - 2);
    } else if w.ends_with(b"ied") || w.ends_with(b"ies") {
        let at = n - 3;
        replace_from(w, at, if at >= 2 { b"i" } else { b"ie" });
    } else if w.ends_with(b"ss") || w.ends_with(b"us") {
    } else if w.ends_with(b"s") && n >= 2 && w[..n - 2].iter().any(|&b| is_v(b)) {
        w.truncate(n - 1);
    }

    if !EXCEPTION2.contains(&w.as_slice()) {
        step_1b(w, p1);
        // Step 1c: a final y after a non-vowel that is not the first letter becomes i.
        let n = w.len();
        if n >= 3 && matches!(w[n - 1], b'y' | b'Y') && !is_v(w[n - 2]) {
            w[n - 1] = b'i';
        }
        step(w, &STEP2, p1, p2);
        step(w, &STEP3, p1, p2);
        step(w, &STEP4, p2, p2);
        step_5(w, p1, p2);
    }

    // postlude
    if y_found {
        for b in w.iter_mut().filter(|b| **b == b'Y') {
            *b = b'y';
        }
    }
}

/// Step 1b: `eed`, `eedly` to `ee` in R1; `ed`, `edly`, `ing`, `ingly` deleted after a vowel,
/// then the stem tidied (`at` → `ate`, a double consonant undoubled, a short word given `e`).
fn step_1b(w: &mut Vec<u8>, p1: usize) {
    let n = w.len();
    let found =
        [(&b"eedly"[..], true), (b"ingly", false), (b"edly", false), (b"eed", true), (b"ing", false), (b"ed", false)]
            .into_iter()
            .find(|(s, _)| w.ends_with(s));
    let Some((s, eed)) = found else { return };
    let at = n - s.len();
    if eed {
        if p1 <= at {
            replace_from(w, at, b"ee");
        }
        return;
    }
    if !w[..at].iter().any(|&b| is_v(b)) {
        return;
    }
    w.truncate(at);
    let m = w.len();
    if w.ends_with(b"at") || w.ends_with(b"bl") || w.ends_with(b"iz") {
        w.push(b'e');
    } else if m >= 2
        && w[m - 1] == w[m - 2]
        && matches!(w[m - 1], b'b' | b'd' | b'f' | b'g' | b'm' | b'n' | b'p' | b'r' | b't')
    {
        w.pop();
    } else if m == p1 && ends_short_syllable(w, m) {
        w.push(b'e');
    }
}

/// Steps 2, 3 and 4: the longest suffix of `table`, replaced if it starts in the region that
/// begins at `region` (R1 for steps 2 and 3, R2 for step 4) and its rule's letter test holds.
fn step<const N: usize>(w: &mut Vec<u8>, table: &Table<N>, region: usize, p2: usize) {
    let Some((at, rule)) = table.longest(w) else { return };
    if region > at {
        return;
    }
    match rule {
        Rule::To(by) => replace_from(w, at, by),
        Rule::Ogi => {
            if at >= 1 && w[at - 1] == b'l' {
                w.truncate(at + 2);
            }
        }
        Rule::Li => {
            if at >= 1 && is_valid_li(w[at - 1]) {
                w.truncate(at);
            }
        }
        Rule::DeleteInR2 => {
            if p2 <= at {
                w.truncate(at);
            }
        }
        Rule::Ion => {
            if at >= 1 && matches!(w[at - 1], b's' | b't') {
                w.truncate(at);
            }
        }
    }
}

/// Step 5: a final `e` deleted in R2, or in R1 unless a short syllable precedes it; a final
/// `l` deleted in R2 after another `l`.
fn step_5(w: &mut Vec<u8>, p1: usize, p2: usize) {
    let Some(&last) = w.last() else { return };
    let at = w.len() - 1;
    match last {
        b'e' if p2 <= at || (p1 <= at && !ends_short_syllable(w, at)) => {
            w.pop();
        }
        b'l' if p2 <= at && at >= 1 && w[at - 1] == b'l' => {
            w.pop();
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rust_stemmers::{Algorithm, Stemmer};

    fn ours(word: &str) -> String {
        let mut out = Vec::new();
        stem_ascii(word.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Pieces that make the stemmer's rules fire: every suffix of every step, the exceptions,
    /// the R1 prefixes, apostrophes and `y` in each position.
    const PIECES: &[&str] = &[
        "a", "e", "i", "o", "u", "y", "Y", "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "w",
        "x", "z", "'", "'s", "'s'", "sses", "ied", "ies", "ss", "us", "eed", "eedly", "ed", "edly", "ing", "ingly",
        "at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt", "anci", "enci", "ogi", "li", "bli",
        "abli", "alli", "fulli", "lessli", "ousli", "entli", "aliti", "biliti", "iviti", "tional", "ational", "alism",
        "ation", "ization", "izer", "ator", "iveness", "fulness", "ousness", "icate", "ative", "alize", "iciti",
        "ical", "ful", "ness", "ic", "ance", "ence", "able", "ible", "ate", "ive", "ize", "iti", "al", "ism", "ion",
        "sion", "tion", "er", "ous", "ant", "ent", "ment", "ement", "ll", "gener", "commun", "arsen", "succeed",
        "proceed", "exceed", "canning", "inning", "earring", "herring", "outing", "sky", "skies", "news", "only", "1",
        "-", ".",
    ];

    #[test]
    fn every_piece_and_pair_of_pieces_stems_as_rust_stemmers_does() {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut words: Vec<String> = EXCEPTION1.iter().map(|(w, _)| String::from_utf8(w.to_vec()).unwrap()).collect();
        words.extend(EXCEPTION2.iter().map(|w| String::from_utf8(w.to_vec()).unwrap()));
        for a in PIECES {
            words.push(a.to_string());
            for b in PIECES {
                words.push(format!("{a}{b}"));
                for c in ["", "s", "ed", "ing", "ly", "e", "y", "'s"] {
                    words.push(format!("{a}{b}{c}"));
                }
            }
        }
        for w in [
            "generously",
            "communities",
            "arsenal",
            "hopping",
            "hoped",
            "caresses",
            "ponies",
            "ties",
            "cries",
            "gas",
            "gaps",
            "kiwis",
            "luxuriated",
            "agreed",
            "feed",
            "bleed",
            "fluently",
            "sensational",
            "controlling",
            "abilities",
            "yelling",
            "sayings",
            "enjoyed",
            "toy",
            "'tis",
            "''",
            "y's",
            "yy",
            "ayy",
            "argued",
        ] {
            words.push(w.to_string());
        }
        for w in &words {
            assert_eq!(ours(w), stemmer.stem(w), "{w:?}");
        }
    }

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => proptest::sample::select(PIECES).prop_map(str::to_string),
            1 => "[a-z'Y0-9-]{1,3}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn ascii_words_stem_as_rust_stemmers_does(parts in proptest::collection::vec(piece(), 1..5)) {
            let word: String = parts.concat();
            let stemmer = Stemmer::create(Algorithm::English);
            prop_assert_eq!(ours(&word), stemmer.stem(&word).into_owned(), "{:?}", word);
        }

        #[test]
        fn any_ascii_stems_as_rust_stemmers_does(word in "[ -~]{0,16}") {
            let stemmer = Stemmer::create(Algorithm::English);
            prop_assert_eq!(ours(&word), stemmer.stem(&word).into_owned(), "{:?}", word);
        }
    }
}
