//! Generates this part's share of Kafka's messages into `OUT_DIR` (the parts and the root
//! package read the same schemas; see `parts.rs`).

mod parts;

fn main() {
    let manifest =
        std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let package = std::env::var("CARGO_PKG_NAME").expect("cargo sets CARGO_PKG_NAME");
    let part = parts::named(&package);
    parts::generate(&manifest.join("../.."), |config| config.part(part));
}
