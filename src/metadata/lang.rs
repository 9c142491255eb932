//! The language of the extracted text. `whatlang` (trigram profiles of 69 languages, no model
//! files, pure Rust) rather than `whichlang` (16 languages: no Czech, Polish, Danish …, which
//! news crawls meet) or `lingua` (more accurate on short texts but hundreds of MB of models
//! and an order of magnitude slower). Only the first [`SAMPLE_BYTES`] of the text are read:
//! enough for a stable answer, and it keeps the cost per page flat. Texts under
//! [`MIN_CHARS`] characters, or answers whatlang itself calls unreliable, fall back to the
//! page's declared language (`<html lang>`, `Content-Language`).

/// Bytes of text given to the identifier.
pub const SAMPLE_BYTES: usize = 2000;
/// Shorter texts take the declared language.
pub const MIN_CHARS: usize = 200;

/// ISO 639-1 for whatlang's ISO 639-3 codes (every language whatlang knows has one).
fn iso639_1(code3: &str) -> Option<&'static str> {
    Some(match code3 {
        "epo" => "eo",
        "eng" => "en",
        "rus" => "ru",
        "cmn" => "zh",
        "spa" => "es",
        "por" => "pt",
        "ita" => "it",
        "ben" => "bn",
        "fra" => "fr",
        "deu" => "de",
        "ukr" => "uk",
        "kat" => "ka",
        "ara" => "ar",
        "hin" => "hi",
        "jpn" => "ja",
        "heb" => "he",
        "yid" => "yi",
        "pol" => "pl",
        "amh" => "am",
        "jav" => "jv",
        "kor" => "ko",
        "nob" => "nb",
        "dan" => "da",
        "swe" => "sv",
        "fin" => "fi",
        "tur" => "tr",
        "nld" => "nl",
        "hun" => "hu",
        "ces" => "cs",
        "ell" => "el",
        "bul" => "bg",
        "bel" => "be",
        "mar" => "mr",
        "kan" => "kn",
        "ron" => "ro",
        "slv" => "sl",
        "hrv" => "hr",
        "srp" => "sr",
        "mkd" => "mk",
        "lit" => "lt",
        "lav" => "lv",
        "est" => "et",
        "tam" => "ta",
        "vie" => "vi",
        "urd" => "ur",
        "tha" => "th",
        "guj" => "gu",
        "uzb" => "uz",
        "pan" => "pa",
        "aze" => "az",
        "ind" => "id",
        "tel" => "te",
        "pes" => "fa",
        "mal" => "ml",
        "ori" => "or",
        "mya" => "my",
        "nep" => "ne",
        "sin" => "si",
        "khm" => "km",
        "tuk" => "tk",
        "aka" => "ak",
        "zul" => "zu",
        "sna" => "sn",
        "afr" => "af",
        "lat" => "la",
        "slk" => "sk",
        "cat" => "ca",
        "tgl" => "tl",
        "hye" => "hy",
        _ => return None,
    })
}

/// A declared language tag (`en-GB`, `de_DE`, `EN`) as its primary subtag, lower case.
pub fn primary_subtag(tag: &str) -> Option<String> {
    let p = tag.trim().split([',', ';']).next()?.split(['-', '_']).next()?.trim().to_ascii_lowercase();
    (p.len() >= 2 && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_alphabetic())).then_some(p)
}

/// The language of `text` (ISO 639-1) and whatlang's confidence; `declared` (already a
/// primary subtag) when the text is too short or the answer unreliable.
pub fn identify(text: &str, declared: Option<&str>) -> (Option<String>, Option<f64>) {
    let mut end = text.len().min(SAMPLE_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let sample = &text[..end];
    if sample.chars().count() >= MIN_CHARS
        && let Some(info) = whatlang::detect(sample)
        && (info.is_reliable() || declared.is_none())
        && let Some(code) = iso639_1(info.lang().code())
    {
        return (Some(code.to_string()), Some((info.confidence() * 1000.0).round() / 1000.0));
    }
    (declared.map(str::to_string), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_identified_and_short_ones_take_the_declared_language() {
        let de = "Der Gemeinderat hat am Dienstag beschlossen, den Fahrplan der Fähre zu ändern. \
                  Die neuen Zeiten gelten ab dem kommenden Monat, teilte die Stadtverwaltung mit. \
                  Viele Pendler hatten sich zuvor über lange Wartezeiten am Hafen beschwert.";
        let (lang, conf) = identify(de, Some("en"));
        assert_eq!(lang.as_deref(), Some("de"));
        assert!(conf.is_some_and(|c| c > 0.5));
        assert_eq!(identify("Kurz.", Some("de")), (Some("de".into()), None));
        assert_eq!(identify("Kurz.", None), (None, None));
    }

    #[test]
    fn declared_tags_give_their_primary_subtag() {
        assert_eq!(primary_subtag("en-GB").as_deref(), Some("en"));
        assert_eq!(primary_subtag("DE_de").as_deref(), Some("de"));
        assert_eq!(primary_subtag("fr, en").as_deref(), Some("fr"));
        assert_eq!(primary_subtag("x"), None);
        assert_eq!(primary_subtag("12"), None);
    }
}
