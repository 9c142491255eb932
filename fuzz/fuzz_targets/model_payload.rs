//! Model files with a valid container and checksum around fuzzed header and payload, so the
//! fuzzer gets past the checksum into header and weight-table parsing.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0xFF).unwrap_or(data.len());
    let header = String::from_utf8_lossy(&data[..split]);
    let payload = data.get(split + 1..).unwrap_or(&[]);
    let bytes = article_pipeline::scoring::model_file::encode(&header, payload);
    let _ = article_pipeline::methods::nb::model::NbModel::from_bytes(&bytes);
    let _ = article_pipeline::methods::blocks::learn::BlockModel::from_bytes(&bytes);
    let _ = article_pipeline::methods::pso::thresholds::PsoModel::from_bytes(&bytes);
    let _ = article_pipeline::methods::svm::scorer::SvmModel::from_bytes(&bytes);
    if let Ok(m) = article_pipeline::methods::mbl::knn::MblModel::from_bytes(&bytes) {
        // A model that loads must classify without panicking.
        let _ = m.classify(&[0u8; 41], &mut Default::default());
    }
});
