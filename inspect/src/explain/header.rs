//! The frame and the request and response headers, in seed 001's words. Their layout is fixed
//! by Kafka (KIP-482 added the flexible versions), so explaining a frame needs no header
//! schema in the folder; which version a frame uses is `Message::header_version`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::node::Region;
use super::tree::{hex_preview, quoted, Fail, Tree};

/// `Frame` with its `size` child; returns the size.
pub(super) fn frame(tree: &mut Tree<'_>) -> Result<i32, Fail> {
    tree.region = Region::Frame;
    tree.open("Frame", "", Some("length-delimited framing".into()));
    let about = Some("number of bytes that follow, patched after encoding".to_string());
    let size = tree.leaf_with("size", "int32", about, Tree::i32, i32::to_string)?;
    tree.close(None);
    Ok(size)
}

/// The request header at `version`; `api_name` annotates the key.
pub(super) fn request_header(tree: &mut Tree<'_>, version: i16, api_name: &str) -> Result<Value, Fail> {
    tree.region = Region::Header;
    tree.open("RequestHeader", format!("v{version}"), Some("common request header".into()));
    tree.path.push("RequestHeader".into());
    let mut json = Map::new();
    let about = |s: &str| Some(s.to_string());
    let key =
        tree.leaf_with("request_api_key", "int16", about("numeric id of the API being invoked"), Tree::i16, |k| {
            format!("{k} ({api_name})")
        })?;
    json.insert("requestApiKey".into(), key.into());
    let v =
        tree.leaf_with("request_api_version", "int16", about("version of the API being invoked"), Tree::i16, |v| {
            v.to_string()
        })?;
    json.insert("requestApiVersion".into(), v.into());
    let about_corr = about("echoed back by the broker in the response");
    let c = tree.leaf_with("correlation_id", "int32", about_corr, Tree::i32, i32::to_string)?;
    json.insert("correlationId".into(), c.into());
    if version >= 1 {
        let start = tree.pos;
        let len = tree.i16()?;
        let value = if len == -1 {
            tree.leaf(start, "client_id", "nullable_string", "null (int16 len=-1)".into(), None);
            Value::Null
        } else if len < -1 {
            return Err(tree.fail(format!("client_id length {len}")));
        } else {
            let raw = tree.take(len as usize)?;
            let text = std::str::from_utf8(raw).map_err(|e| tree.fail(format!("client_id is not UTF-8: {e}")))?;
            let about = about("always a non-flexible int16-prefixed string");
            tree.leaf(start, "client_id", "nullable_string", format!("{} (int16 len={len})", quoted(text)), about);
            Value::from(text)
        };
        json.insert("clientId".into(), value);
    }
    if version >= 2 {
        header_tags(tree)?;
    }
    tree.path.pop();
    tree.close(None);
    Ok(Value::Object(json))
}

/// The response header at `version`.
pub(super) fn response_header(tree: &mut Tree<'_>, version: i16) -> Result<Value, Fail> {
    tree.region = Region::Header;
    tree.open("ResponseHeader", format!("v{version}"), Some("common response header".into()));
    tree.path.push("ResponseHeader".into());
    let about = Some("matches the correlation_id of the request".to_string());
    let c = tree.leaf_with("correlation_id", "int32", about, Tree::i32, i32::to_string)?;
    if version >= 1 {
        header_tags(tree)?;
    }
    tree.path.pop();
    tree.close(None);
    let mut json = Map::new();
    json.insert("correlationId".into(), c.into());
    Ok(Value::Object(json))
}

/// A header's tagged fields: Kafka defines none, so each one present is shown raw.
fn header_tags(tree: &mut Tree<'_>) -> Result<(), Fail> {
    tree.region = Region::TaggedFields;
    tree.open("tagged_fields", "uvarint", Some("number of tagged fields in the header".into()));
    let count = tree.tag_count()?;
    let mut seen = HashSet::new();
    for _ in 0..count {
        let tag = tree.leaf_with("tag", "uvarint", None, Tree::uvarint, u32::to_string)?;
        if !seen.insert(tag) {
            return Err(tree.fail(format!("tag {tag} appears twice")));
        }
        let size = tree.leaf_with("size", "uvarint", None, Tree::uvarint, u32::to_string)?;
        if size as usize > tree.remaining() {
            return Err(tree.fail(format!("tagged field {tag} declares {size} bytes, {} left", tree.remaining())));
        }
        let start = tree.pos;
        let data = tree.take(size as usize)?;
        let about = Some("no header field has this tag; raw bytes".to_string());
        tree.leaf(start, format!("unknown tag {tag}"), "bytes", hex_preview(data, 32), about);
    }
    tree.close(Some(count.to_string()));
    tree.region = Region::Header;
    Ok(())
}
