//! ARC files (plain or gzip): the input after an ARC first line, every record or error, never
//! a panic or a hang.
#![no_main]
use libfuzzer_sys::fuzz_target;
use article_pipeline::sources::warc::{WarcLimits, WarcReader};

fuzz_target!(|data: &[u8]| {
    let mut bytes = b"filedesc://fuzz.arc 0.0.0.0 19960101000000 text/plain 0\n".to_vec();
    bytes.extend_from_slice(data);
    let limits = WarcLimits { max_header_bytes: 4096, max_block_bytes: 1 << 16 };
    let reader = std::io::Cursor::new(bytes);
    if let Ok(r) = WarcReader::from_reader(std::path::Path::new("fuzz"), Box::new(reader), limits, |_| true) {
        for _ in r.take(10_000) {}
    }
});
