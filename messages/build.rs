//! Generates the index over Apache Kafka's messages into `OUT_DIR`: every module re-exported from
//! the part crate that holds it, `ApiKey`, the body enums, negotiation and frames
//! (`kwire_codegen::bundle` says where the schemas come from and how the parts split them).

fn main() {
    if let Err(e) = kwire_codegen::bundle::build_bundled_messages() {
        panic!("{e}");
    }
}
