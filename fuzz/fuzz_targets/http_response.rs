//! HTTP payloads of WARC response records: head, chunked and content codings.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = article_pipeline::sources::http::parse_response(data, 1 << 20);
});
