//! Schema text through the generator's stages: comment stripping, JSON, the typed model,
//! validation and lowering never panic, whatever the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = kwire_codegen::load_str("Fuzzed.json", text);
});
