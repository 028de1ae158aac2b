//! Generates the index over Apache Kafka's messages into `OUT_DIR` (every module re-exported
//! from the part crate that holds it, `ApiKey`, the body enums, negotiation and frames; see
//! `messages/parts.rs`), and the README's code samples for this package's doc tests.

/// The README sections whose samples the crates depending on this package compile:
/// `kafka-wire-connection` and `kafka-wire-fake` (see `modern/readme_section.rs`).
const OTHER_CRATES_SECTIONS: [&str; 2] = ["## Talking to a broker", "## Testing against an in-process Kafka"];

#[path = "messages/parts.rs"]
mod parts;

fn main() {
    readme_without_other_crates_sections();
    let root = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    parts::generate(&root, |config| config.over_parts(parts::all()));
}

/// `OUT_DIR/README.md`: the README without the sections other crates compile.
fn readme_without_other_crates_sections() {
    println!("cargo:rerun-if-changed=README.md");
    let readme = std::fs::read_to_string("README.md").expect("README.md readable");
    let mut out = String::new();
    let mut skipping = false;
    for line in readme.lines() {
        if line.starts_with("## ") {
            skipping = OTHER_CRATES_SECTIONS.contains(&line);
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    let dir = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(dir.join("README.md"), out).expect("OUT_DIR writable");
}
