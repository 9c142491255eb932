//! WARC files (plain or gzip): every record or error, never a panic or a hang.
#![no_main]
use libfuzzer_sys::fuzz_target;
use article_pipeline::sources::warc::{WarcLimits, WarcReader};

fuzz_target!(|data: &[u8]| {
    let reader = std::io::Cursor::new(data.to_vec());
    let limits = WarcLimits { max_header_bytes: 4096, max_block_bytes: 1 << 16 };
    if let Ok(r) = WarcReader::from_reader(std::path::Path::new("fuzz"), Box::new(reader), limits, |_| true) {
        for _ in r.take(10_000) {}
    }
});
