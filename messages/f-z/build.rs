//! Generates this part's share of Apache Kafka's messages into `OUT_DIR` (`kwire_codegen::bundle`
//! says where the schemas come from and which part holds which).

fn main() {
    if let Err(e) = kwire_codegen::bundle::build_bundled_messages() {
        panic!("{e}");
    }
}
