//! Pages: any bytes through the tokenizer, the default model and the text layout.
#![no_main]
use libfuzzer_sys::fuzz_target;
use article_pipeline::extract::{ExtractOptions, Extractor};

fuzz_target!(|data: &[u8]| {
    thread_local! {
        static SCORER: Box<dyn article_pipeline::scoring::Scorer> =
            article_pipeline::methods::build("nb", None, None, None).expect("built-in model");
    }
    SCORER.with(|s| {
        let x = Extractor::new(s.as_ref(), ExtractOptions { hr_constraint: true, clean: true, ..ExtractOptions::default() });
        let _ = x.extract(data, None);
    });
});
