//! Model files from disk (Naive Bayes, block, PSO, SVM and memory-based models): any bytes
//! must give a model or an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = article_pipeline::methods::nb::model::NbModel::from_bytes(data);
    let _ = article_pipeline::methods::blocks::learn::BlockModel::from_bytes(data);
    let _ = article_pipeline::methods::pso::thresholds::PsoModel::from_bytes(data);
    let _ = article_pipeline::methods::svm::scorer::SvmModel::from_bytes(data);
    let _ = article_pipeline::methods::mbl::knn::MblModel::from_bytes(data);
});
