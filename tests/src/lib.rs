//! Shared support for the workspace-level tests: Kafka's generator test schemas, internal
//! families and earlier releases, generated at build time from Kafka's jars, a table of every schema with a monomorphised round-trip check,
//! and an independent, IR-driven encoder of sample instances ([`sample`]).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use kwire_codegen::source::SchemaFile;
use kwire_runtime::Message;

pub use kwire_inspect::sample;

/// The workspace README's code samples, compiled and run as this crate's doc tests
/// (`cargo test -p kwire-tests --doc`).
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Generated code for each schema set of `tests/build.rs` but Kafka's messages (the root package's).
pub mod corpus {
    include!(concat!(env!("OUT_DIR"), "/corpus.rs"));
}

/// Functions over one generated type, reached through the schema table.
#[derive(Clone, Copy)]
pub struct Ops {
    /// Decode (must consume everything), re-encode (must give the same bytes), check
    /// `encoded_size`, decode again (must give the same value). Returns the value's Debug text.
    pub roundtrip: fn(&[u8], i16) -> Result<String, String>,
    /// Decode only, reporting the error text.
    pub decode: fn(&[u8], i16) -> Result<(), String>,
    /// Decode only, from bytes the value may share (nothing copied), reporting the error
    /// itself; the value is dropped before it returns.
    pub decode_shared: fn(Bytes, i16) -> Result<(), kwire_runtime::DecodeError>,
    /// Decode, then Kafka-style JSON both ways: message → JSON → message gives the same
    /// message, JSON → message → JSON the same JSON, and the message re-encodes to the bytes.
    /// Returns the JSON text.
    pub json_roundtrip: fn(&[u8], i16) -> Result<String, String>,
    /// Decode, then `to_json`: the value's JSON and how many bytes the decode used.
    pub decoded_json: fn(&[u8], i16) -> Result<DecodedJson, String>,
}

/// A decoded value's JSON and how many bytes the decode used.
pub type DecodedJson = (serde_json::Value, usize);

/// One schema of the corpus and the generated type for it.
pub struct Entry {
    /// `message`, `test`, a family of Kafka's internal schemas (`group_coordinator`), an
    /// earlier release (`release_3_7_2`), `project` or `retired_4x`.
    pub set: &'static str,
    /// Folder or `JAR!/FOLDER` the schema was read from.
    pub dir: &'static str,
    pub file: &'static str,
    pub name: &'static str,
    pub ops: Ops,
}

impl Entry {
    /// Loads this schema's IR (what the sample encoder walks).
    pub fn load(&self) -> kwire_codegen::ir::Message {
        let files = schema_files(self.dir);
        let file = files.iter().find(|f| f.name == self.file).expect("the table's schema is in its source");
        kwire_codegen::load_str(self.file, &file.text).unwrap_or_else(|e| panic!("{e}"))
    }
}

/// The schema files of a folder or `JAR!/FOLDER`, each source read once per test process: a
/// table walk loads hundreds of entries of the same jar.
fn schema_files(source: &'static str) -> Arc<Vec<SchemaFile>> {
    static READ: Mutex<BTreeMap<&'static str, Arc<Vec<SchemaFile>>>> = Mutex::new(BTreeMap::new());
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    let files = read.entry(source).or_insert_with(|| {
        Arc::new(kwire_codegen::source::read_schemas(Path::new(source)).unwrap_or_else(|e| panic!("{e}")))
    });
    Arc::clone(files)
}

/// The `Ops` for a generated type.
pub const fn ops<T: Message + Debug + kwire_runtime::json::Json>() -> Ops {
    Ops {
        roundtrip: roundtrip::<T>,
        decode: decode::<T>,
        decode_shared: decode_shared::<T>,
        json_roundtrip: json_roundtrip::<T>,
        decoded_json: decoded_json::<T>,
    }
}

fn decoded_json<T: Message + kwire_runtime::json::Json>(bytes: &[u8], version: i16) -> Result<DecodedJson, String> {
    let mut input = Bytes::copy_from_slice(bytes);
    let value = T::decode(&mut input, version).map_err(|e| format!("decode: {e}"))?;
    let json = value.to_json(version).map_err(|e| format!("to_json: {e}"))?;
    Ok((json, bytes.len() - input.len()))
}

fn json_roundtrip<T: Message + Debug + kwire_runtime::json::Json>(
    bytes: &[u8],
    version: i16,
) -> Result<String, String> {
    let value = T::decode(&mut Bytes::copy_from_slice(bytes), version).map_err(|e| format!("decode: {e}"))?;
    let json = value.to_json(version).map_err(|e| format!("to_json: {e}"))?;
    // Through text, as logs and `explain --json` carry it.
    let text = serde_json::to_string(&json).map_err(|e| format!("serialise: {e}"))?;
    let parsed: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("parse: {e}"))?;
    let back = T::from_json(&parsed, version).map_err(|e| format!("from_json: {e}\n  json: {text}"))?;
    if back != value {
        return Err(format!("message -> JSON -> message differs\n  json: {text}\n  was:  {value:?}\n  now:  {back:?}"));
    }
    let again = back.to_json(version).map_err(|e| format!("second to_json: {e}"))?;
    if again != parsed {
        return Err(format!("JSON -> message -> JSON differs\n  was: {text}\n  now: {again}"));
    }
    let mut out = BytesMut::new();
    back.encode(&mut out, version).map_err(|e| format!("encode after JSON: {e}"))?;
    if out[..] != bytes[..] {
        return Err(format!("bytes after JSON differ: {} vs {}", hex::encode(&out), hex::encode(bytes)));
    }
    Ok(text)
}

mod table {
    include!(concat!(env!("OUT_DIR"), "/table.rs"));
}

/// Every schema of Kafka's corpus with its generated type.
pub use table::SCHEMAS;

fn roundtrip<T: Message + Debug>(bytes: &[u8], version: i16) -> Result<String, String> {
    let mut input = Bytes::copy_from_slice(bytes);
    let value = T::decode(&mut input, version).map_err(|e| format!("decode: {e}"))?;
    if !input.is_empty() {
        return Err(format!("decode left {} of {} bytes unread", input.len(), bytes.len()));
    }
    let size = value.encoded_size(version).map_err(|e| format!("encoded_size: {e}"))?;
    let mut out = BytesMut::new();
    value.encode(&mut out, version).map_err(|e| format!("encode: {e}"))?;
    if out[..] != bytes[..] {
        return Err(format!(
            "re-encoding differs\n  input:  {}\n  output: {}\n  value: {value:?}",
            hex::encode(bytes),
            hex::encode(&out)
        ));
    }
    if size != out.len() {
        return Err(format!("encoded_size {size} but encode wrote {}", out.len()));
    }
    let (mut scratch, mut chunks) = (BytesMut::new(), Vec::new());
    value.encode_vectored(&mut scratch, &mut chunks, version).map_err(|e| format!("encode_vectored: {e}"))?;
    if chunks.concat() != out[..] {
        return Err(format!("vectored encoding differs: {}", hex::encode(chunks.concat())));
    }
    let again = T::decode(&mut out.freeze(), version).map_err(|e| format!("second decode: {e}"))?;
    if again != value {
        return Err(format!("second decode differs: {again:?} vs {value:?}"));
    }
    Ok(format!("{value:?}"))
}

fn decode<T: Message + Debug>(bytes: &[u8], version: i16) -> Result<(), String> {
    T::decode(&mut Bytes::copy_from_slice(bytes), version).map(|_| ()).map_err(|e| e.to_string())
}

fn decode_shared<T: Message>(mut bytes: Bytes, version: i16) -> Result<(), kwire_runtime::DecodeError> {
    T::decode(&mut bytes, version).map(drop)
}

/// The workspace root (parent of `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is inside the workspace").to_path_buf()
}
