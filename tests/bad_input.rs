//! Hostile pages: each finishes in linear time with bounded memory and gives an extraction
//! (possibly empty) or a clear error, never a panic or a hang.

use article_pipeline::extract::{ExtractError, ExtractOptions, Extractor};
use article_pipeline::scoring;

fn extract_all(page: &[u8]) -> Vec<Result<String, String>> {
    ["simple", "nb"]
        .iter()
        .map(|s| {
            let scorer = scoring::build(s, None, None).unwrap();
            let ex = Extractor::new(
                scorer.as_ref(),
                ExtractOptions { clean: true, hr_constraint: true, ..Default::default() },
            );
            ex.extract(page, None).map(|x| x.text).map_err(|e| e.to_string())
        })
        .collect()
}

#[test]
fn empty_page() {
    for r in extract_all(b"") {
        assert_eq!(r.unwrap(), "");
    }
}

#[test]
fn binary_garbage_is_refused_or_extracted_without_panic() {
    let mut x = 99u64;
    let junk: Vec<u8> = (0..200_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            (x >> 56) as u8
        })
        .collect();
    for r in extract_all(&junk) {
        assert!(r.is_err_and(|e| e.contains("not html")));
    }
    // Text bytes with a few stray high bytes: extracted, not refused.
    let mut noisy = b"<p>hello world ".repeat(100);
    noisy.extend_from_slice(b"\xff\xfe\x80 more words</p>");
    for r in extract_all(&noisy) {
        assert!(r.unwrap().contains("hello world"));
    }
}

#[test]
fn many_megabytes_of_text_without_tags() {
    let page = "lorem ipsum dolor sit amet, ".repeat(300_000); // 8.4 MB
    let r = extract_all(page.as_bytes());
    // The simple scorer takes the whole run of words; NB may keep less, but must finish.
    assert!(r[0].as_ref().unwrap().len() > 8_000_000);
    assert!(r[1].is_ok());
}

#[test]
fn oversized_pages_are_a_clear_error() {
    let scorer = scoring::build("simple", None, None).unwrap();
    let ex = Extractor::new(scorer.as_ref(), ExtractOptions { max_page_bytes: 1000, ..Default::default() });
    assert!(matches!(ex.extract(&[b'a'; 5000], None), Err(ExtractError::TooLarge { limit: 1000 })));
}

#[test]
fn two_hundred_thousand_nested_divs() {
    let mut page = "<div>".repeat(200_000);
    page.push_str("<p>deep text here</p>");
    page.push_str(&"</span>".repeat(200_000));
    page.push_str(&"</div>".repeat(200_000));
    for r in extract_all(page.as_bytes()) {
        let _ = r; // finishing is the test
    }
}

#[test]
fn unterminated_tags_comments_and_scripts() {
    for page in [
        &b"<p>before <!-- comment never ends <p>after"[..],
        b"<p>before <script>var a = 1; never ends",
        b"<p>before <div class=\"never ends",
        b"<p>before <style>p{",
        b"<title>never closed title with words",
        b"<p>unterminated entity &amp",
    ] {
        for r in extract_all(page) {
            assert!(r.is_ok(), "{:?}", String::from_utf8_lossy(page));
        }
    }
}

#[test]
fn invalid_utf8_in_a_utf8_page() {
    let page = b"<meta charset=utf-8><p>caf\xc3 ok \xff\xfe words and more words here</p>";
    for r in extract_all(page) {
        let t = r.unwrap();
        assert!(t.contains("words and more"), "{t}");
    }
}
