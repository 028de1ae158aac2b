//! `OUT_DIR/testing-against-an-in-process-kafka.md`: the README section about this crate, whose
//! samples are compiled and run as this crate's doc tests (the root package compiles the rest).

include!("../readme_section.rs");

fn main() {
    readme_section("## Testing against an in-process Kafka", "testing-against-an-in-process-kafka.md");
}
