// Included by the build scripts of the modern crates whose README section is compiled as their
// doc tests (the root package compiles the rest of the README, without these sections).

/// Writes the README's `heading` section (from its `## ` line to the next) to `OUT_DIR/file`.
fn readme_section(heading: &str, file: &str) {
    let readme = "../../README.md";
    println!("cargo:rerun-if-changed={readme}");
    let text = std::fs::read_to_string(readme).expect("the workspace README is readable");
    let mut section = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("## ") {
            inside = line == heading;
        }
        if inside {
            section.push_str(line);
            section.push('\n');
        }
    }
    assert!(!section.is_empty(), "README.md has no {heading:?} section");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join(file), section).expect("OUT_DIR writable");
}
