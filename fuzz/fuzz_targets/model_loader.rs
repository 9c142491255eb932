//! Model files from disk (Naive Bayes, block, PSO, SVM and memory-based models): any bytes
//! must give a model or an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = article_pipeline::scoring::naive_bayes::NbModel::from_bytes(data);
    let _ = article_pipeline::learners::BlockModel::from_bytes(data);
    let _ = article_pipeline::scoring::pso::PsoModel::from_bytes(data);
    let _ = article_pipeline::scoring::svm::SvmModel::from_bytes(data);
    let _ = article_pipeline::learners::mbl::MblModel::from_bytes(data);
});
