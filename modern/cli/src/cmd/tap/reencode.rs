//! `kwire tap --reencode`: every frame that decodes is encoded again from the decoded value and
//! the re-encoding is what goes on. A frame whose re-encoding differs from what the peer sent
//! is reported, with where and why: the first differing byte, the field there (from the
//! schemas, when `--schemas` or `KAFKA_SCHEMAS_DIR` names them), and whether the decoded values
//! agree (then the input was not in canonical form, such as a tagged field written at its
//! default, or bytes after the body) or not (a codec bug).

use kwire::messages::{ApiKey, RequestFrame, ResponseFrame};
use kwire::{Bytes, BytesMut};
use kwire_inspect::explain::{self, Input, Node, Schemas, Side, Style};

/// How a re-encoding compares with the original frame.
pub enum Reencoded {
    /// Byte for byte the same.
    Same,
    /// Different bytes; they are forwarded, and `why` says how.
    Differs { bytes: Vec<u8>, why: String },
    /// The decoded value would not encode (a codec bug): the original is forwarded.
    Failed(String),
}

/// A request frame (size prefix included) re-encoded from `decoded`.
pub fn request(frame: &Bytes, decoded: &RequestFrame, trailing: usize, schemas: Option<&Schemas>) -> Reencoded {
    let mut out = BytesMut::new();
    if let Err(e) = decoded.encode(&mut out) {
        return Reencoded::Failed(e.to_string());
    }
    let out = out.freeze();
    let same_value = || RequestFrame::decode_with_trailing(out.slice(4..)).is_ok_and(|(f, _)| f == *decoded);
    compare(frame, &out, trailing, same_value, |offset| {
        locate(schemas, Side::Request, decoded.api_key(), decoded.version(), frame, offset)
    })
}

/// A response frame re-encoded from `decoded` at `version` (the version it was read at).
pub fn response(
    frame: &Bytes,
    decoded: &ResponseFrame,
    version: i16,
    trailing: usize,
    schemas: Option<&Schemas>,
) -> Reencoded {
    let mut out = BytesMut::new();
    if let Err(e) = decoded.encode(&mut out, version) {
        return Reencoded::Failed(e.to_string());
    }
    let api = decoded.api_key();
    let out = out.freeze();
    let same_value =
        || ResponseFrame::decode_with_trailing(out.slice(4..), api, version).is_ok_and(|(f, _)| f == *decoded);
    compare(frame, &out, trailing, same_value, |offset| locate(schemas, Side::Response, api, version, frame, offset))
}

/// Compares the bytes; only when they differ is the re-encoding decoded again (`same_value`)
/// and the field looked up, so frames that agree cost one encode and one comparison.
fn compare(
    original: &[u8],
    reencoded: &[u8],
    trailing: usize,
    same_value: impl FnOnce() -> bool,
    field_at: impl Fn(usize) -> Option<String>,
) -> Reencoded {
    if reencoded == original {
        return Reencoded::Same;
    }
    let at = original.iter().zip(reencoded).position(|(a, b)| a != b).unwrap_or(original.len().min(reencoded.len()));
    // The size prefix always differs when the lengths do: point at the first difference after it.
    let body_at = original[4.min(original.len())..]
        .iter()
        .zip(&reencoded[4.min(reencoded.len())..])
        .position(|(a, b)| a != b)
        .map_or(at, |p| p + 4);
    let mut why =
        format!("{} bytes sent, {} re-encoded; first difference at offset {body_at}", original.len(), reencoded.len());
    if let Some(field) = field_at(body_at) {
        why.push_str(&format!(" ({field})"));
    }
    if trailing > 0 {
        why.push_str(&format!("; {trailing} bytes after the body dropped"));
    }
    why.push_str(if same_value() {
        "; the decoded values are equal: the input was not in canonical form"
    } else {
        "; the decoded values differ: a codec bug"
    });
    Reencoded::Differs { bytes: reencoded.to_vec(), why }
}

/// The path of the deepest field of the original frame covering `offset`, from `explain`.
fn locate(
    schemas: Option<&Schemas>,
    side: Side,
    api: ApiKey,
    version: i16,
    frame: &[u8],
    offset: usize,
) -> Option<String> {
    let schemas = schemas?;
    let key = api.key().to_string();
    let input =
        Input { side, api: Some(&key), version: Some(version), frame: true, bytes: frame, style: Style::default() };
    let explained = explain::explain(schemas, &input).ok()?;
    let mut path = Vec::new();
    let mut node: &Node = &explained.root;
    while let Some(child) =
        node.children.iter().find(|c| !c.decompressed && c.offset <= offset && offset < c.offset + c.size.max(1))
    {
        path.push(child.label.clone());
        node = child;
    }
    (!path.is_empty()).then(|| format!("{} {}", path.join(" > "), node.ty))
}
