//! `OUT_DIR/talking-to-a-broker.md`: the README section about this crate, whose samples are
//! compiled as this crate's doc tests (the root package compiles the rest).

fn main() {
    let readme = "../../README.md";
    println!("cargo:rerun-if-changed={readme}");
    let text = std::fs::read_to_string(readme).expect("the workspace README is readable");
    let mut section = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("## ") {
            inside = line == "## Talking to a broker";
        }
        if inside {
            section.push_str(line);
            section.push('\n');
        }
    }
    assert!(!section.is_empty(), "README.md has no \"## Talking to a broker\" section");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("talking-to-a-broker.md"), section).expect("OUT_DIR writable");
}
