//! The explain interpreter (driven by the IR at run time) beside the generated code on
//! arbitrary request frames (the bytes after the size prefix): it never panics; what the
//! generated decoder reads, the interpreter reads to the same body JSON, and what the
//! generated decoder refuses, the interpreter refuses too.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use bytes::Bytes;
use kwire::messages::RequestFrame;
use kwire_inspect::explain::{explain, Input, Schemas, Side, Style};
use libfuzzer_sys::fuzz_target;

fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("fuzz/ is in the workspace");
        let dir = kwire_codegen::locate_kafka_schemas(root).expect("Kafka's schemas");
        Schemas::load(&[dir]).expect("the corpus loads")
    })
}

fuzz_target!(|data: &[u8]| {
    let generated = RequestFrame::decode(Bytes::copy_from_slice(data));
    let mut framed = (data.len() as i32).to_be_bytes().to_vec();
    framed.extend_from_slice(data);
    let input = Input { side: Side::Request, api: None, version: None, frame: true, bytes: &framed, style: Style::default() };
    let explained = explain(schemas(), &input);
    match (generated, explained) {
        (Ok(frame), Ok(e)) => {
            assert!(e.error.is_none(), "the generated code read a frame the interpreter refused: {:?}", e.error);
            let json = frame.body.to_json(frame.version()).expect("a decoded body has JSON");
            assert_eq!(e.message.as_ref(), Some(&json), "the two decoders read different values");
            assert_eq!(e.consumed, framed.len());
        }
        (Ok(_), Err(e)) => panic!("the interpreter refused a frame the generated code read: {e}"),
        (Err(g), Ok(e)) => assert!(e.error.is_some(), "the interpreter read a frame the generated code refused ({g})"),
        (Err(_), Err(_)) => {}
    }
});
