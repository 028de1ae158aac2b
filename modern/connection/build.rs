//! `OUT_DIR/talking-to-a-broker.md`: the README section about this crate, whose samples are
//! compiled as this crate's doc tests (the root package compiles the rest).

include!("../readme_section.rs");

fn main() {
    readme_section("## Talking to a broker", "talking-to-a-broker.md");
}
