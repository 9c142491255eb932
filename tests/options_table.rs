//! README's "Extraction options" table lists every extraction knob: each field of
//! `ExtractOptions` that has a flag appears with its config key and its flag, so adding a knob
//! without documenting it fails here.

use article_pipeline::extract::ExtractOptions;
use clap::Args;

#[test]
fn the_readme_table_lists_every_extraction_option() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table = readme.split("### Extraction options").nth(1).expect("README has an Extraction options section");
    let rows: Vec<&str> =
        table.lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|')).collect();
    let serde_json::Value::Object(keys) = serde_json::to_value(ExtractOptions::default()).unwrap() else { panic!() };
    let command = ExtractOptions::augment_args(clap::Command::new("options"));
    let mut listed = 0;
    for arg in command.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        let key = arg.get_id().as_str();
        assert!(keys.contains_key(key), "flag --{long}: `{key}` is not a config key");
        let row = format!("| `{key}` | `--{long}` |");
        assert!(rows.iter().any(|r| r.starts_with(&row)), "README's extraction options table has no row {row}");
        listed += 1;
    }
    assert_eq!(rows.len() - 2, listed, "rows in the table that are not options: {rows:#?}");
}
