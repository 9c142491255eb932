//! Hostile pages: each gives an extraction (possibly empty) or a clear error, never a panic
//! or a hang. The large ones run in a child process (this test binary, asked for that one test)
//! under a wall-clock limit and an address-space limit, and the parent asserts on both: the
//! child's peak resident memory (VmHWM) and its run time, each against a bound a few times what
//! a linear pass needs, so that quadratic time or memory growth fails the test instead of
//! slowing CI down.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use article_pipeline::extract::{ExtractError, ExtractOptions, Extractor};
use article_pipeline::methods;

const CHILD: &str = "BAD_INPUT_CHILD";

/// In the parent: runs test `name` in a child and asserts that it passed within `max_secs`
/// seconds and that its peak RSS grew, from the baseline measured before the case built its
/// input, by at most `per_byte` times the input's size plus 64 MB (the model and tables built
/// on first use); returns true (the caller returns). In the child: returns false, and the caller
/// takes [`vm_hwm_kb`] first, builds its input, runs the case and ends with
/// [`report_peak_rss`].
fn in_child(name: &str, max_secs: u64, per_byte: u64) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    let exe = std::env::current_exe().unwrap();
    // libtest names a test by its path below the crate root (`bad_input::empty_page`).
    let test = match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    };
    // An address-space cap as a hard stop (so a runaway case cannot take the machine), well
    // above the asserted growth, which is the real check.
    let cap_kb: u64 = 8 << 20;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {cap_kb} && exec \"$0\" --exact {test} --nocapture --test-threads 1"))
        .arg(&exe)
        .env(CHILD, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(max_secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name}: still running after {max_secs} s (time is not linear in the input?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(status.success(), "{name} failed in the child:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // libtest prints the test's name on the same line, before the case's own output.
    let field = |key: &str| -> u64 {
        stdout
            .split(&format!("{key}="))
            .nth(1)
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: the child did not report {key}:\n{stdout}"))
    };
    let (base_kb, peak_kb, input) = (field("base_rss_kb"), field("peak_rss_kb"), field("input_bytes"));
    let growth = peak_kb.saturating_sub(base_kb) * 1024;
    let bound = per_byte * input + (64 << 20);
    assert!(
        growth <= bound,
        "{name}: peak RSS grew by {} MB for {} MB of input, bound {} MB",
        growth >> 20,
        input >> 20,
        bound >> 20
    );
    eprintln!(
        "{name}: {:.2} s, peak RSS {} MB (+{} MB over the baseline for {:.1} MB of input)",
        elapsed.as_secs_f64(),
        peak_kb / 1024,
        growth >> 20,
        input as f64 / 1e6
    );
    true
}

/// The process's peak resident set size so far (VmHWM), in kB.
fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
}

/// In the child: prints the baseline, the peak resident set size and the input's size for
/// the parent.
fn report_peak_rss(base_kb: u64, input_bytes: usize) {
    println!("base_rss_kb={base_kb} peak_rss_kb={} input_bytes={input_bytes}", vm_hwm_kb());
}

fn extract_all(page: &[u8]) -> Vec<Result<String, String>> {
    ["simple", "nb"]
        .iter()
        .map(|s| {
            let scorer = methods::build(s, None, None, None).unwrap();
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
    if in_child("binary_garbage_is_refused_or_extracted_without_panic", 60, 20) {
        return;
    }
    let base = vm_hwm_kb();
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
    report_peak_rss(base, junk.len() + noisy.len());
}

#[test]
fn many_megabytes_of_text_without_tags() {
    if in_child("many_megabytes_of_text_without_tags", 120, 20) {
        return;
    }
    let base = vm_hwm_kb();
    let page = "lorem ipsum dolor sit amet, ".repeat(300_000); // 8.4 MB
    let r = extract_all(page.as_bytes());
    // The simple scorer takes the whole run of words; NB may keep less, but must finish.
    assert!(r[0].as_ref().unwrap().len() > 8_000_000);
    assert!(r[1].is_ok());
    report_peak_rss(base, page.len());
}

#[test]
fn oversized_pages_are_a_clear_error() {
    let scorer = methods::build("simple", None, None, None).unwrap();
    let ex = Extractor::new(scorer.as_ref(), ExtractOptions { max_page_bytes: 1000, ..Default::default() });
    assert!(matches!(ex.extract(&[b'a'; 5000], None), Err(ExtractError::TooLarge { limit: 1000 })));
}

#[test]
fn two_hundred_thousand_nested_divs() {
    if in_child("two_hundred_thousand_nested_divs", 60, 20) {
        return;
    }
    let base = vm_hwm_kb();
    let mut page = "<div>".repeat(200_000);
    page.push_str("<p>deep text here</p>");
    page.push_str(&"</span>".repeat(200_000));
    page.push_str(&"</div>".repeat(200_000));
    for r in extract_all(page.as_bytes()) {
        // The lexer keeps no stack of open elements (only the features' MRUT stack grows, by a
        // few bytes an element): the page extracts, in time linear in its size.
        let text = r.unwrap();
        assert!(text.contains("deep text here"), "{text:?}");
    }
    report_peak_rss(base, page.len());
}

#[test]
fn unterminated_tags_comments_and_scripts() {
    // (page, text that must come out, text that must not): what precedes the unterminated
    // construct is kept; what is inside a comment, script or style is not.
    for (page, kept, dropped) in [
        (&b"<p>before <!-- comment never ends <p>after"[..], "before", Some("after")),
        (b"<p>before <script>var a = 1; never ends", "before", Some("var a")),
        (b"<p>before <div class=\"never ends", "before", Some("never ends")),
        (b"<p>before <style>p{", "before", Some("p{")),
        // A title never closed is read as text to the end (as lenient parsers do).
        (b"<title>never closed title with words", "never closed title with words", None),
        (b"<p>unterminated entity &amp", "unterminated entity &", Some("&amp")),
    ] {
        for r in extract_all(page) {
            let text = r.unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(page)));
            assert_eq!(text.trim(), kept, "{:?}", String::from_utf8_lossy(page));
            if let Some(d) = dropped {
                assert!(!text.contains(d), "{:?}: {text:?}", String::from_utf8_lossy(page));
            }
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
