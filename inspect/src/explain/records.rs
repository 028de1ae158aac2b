//! Record data inside a `records` field: RecordBatch v2 (header, attributes decoded, each
//! record) and legacy magic 0/1 message sets, compressed ones decompressed within the records
//! crate's bound and shown below the compressed bytes.

use kwire_records::compression::{decompress, Compression, DEFAULT_MAX_DECOMPRESSED_SIZE};
use kwire_records::{Records, RecordsErrorKind, RecordsExt as _};

use super::node::{Node, Region};
use super::tree::{bytes_preview, Fail, Tree};

/// Where the magic byte sits in every format.
const MAGIC_AT: usize = 16;
/// Offset and length (v2: base offset and batch length) before the rest of an entry.
const LOG_OVERHEAD: usize = 12;

/// Bytes all compressed record data of one message may decompress to, together: each batch
/// has the records crate's limit, and a message of many small bombs has this one.
pub const DECOMPRESSION_BUDGET: usize = DEFAULT_MAX_DECOMPRESSED_SIZE;

/// The nodes for the batches in `data` (at input offset `base`) and how many batches there are.
/// A batch that cannot be read is marked malformed and ends the walk; a truncated last batch
/// (which Kafka's fetch responses may end with) is shown as such. Decompressing takes from
/// `budget`; compressed data inside decompressed data (`decompressed`) is refused, as Kafka
/// refuses nested compression, so the walk never recurses deeper than one level.
pub fn explain_records(data: &[u8], base: usize, decompressed: bool, budget: &mut usize) -> (Vec<Node>, usize) {
    let mut tree = Tree::new(data, base, decompressed, Region::RecordBatch);
    tree.open("records", "", None);
    let mut batches = 0;
    while tree.remaining() > 0 {
        let depth = tree.depth();
        let rest = &data[tree.pos..];
        let length = rest.get(8..12).map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let whole = length.and_then(|l| usize::try_from(l).ok()).map(|l| l + LOG_OVERHEAD);
        if rest.len() <= MAGIC_AT || whole.is_none_or(|w| w > rest.len()) {
            let start = tree.pos;
            let n = rest.len();
            let _ = tree.take(n);
            let about = "a truncated last batch (Kafka's fetch responses may end with one)".to_string();
            tree.leaf(start, "partial batch", "bytes", format!("{n} bytes"), Some(about));
            break;
        }
        let result = match rest[MAGIC_AT] {
            2 => batch_v2(&mut tree, batches, budget),
            0 | 1 => legacy_entry(&mut tree, batches, rest[MAGIC_AT], budget),
            other => Err(tree.fail(format!("unknown magic {other}"))),
        };
        if let Err(fail) = result {
            tree.unwind(&fail, depth);
            break;
        }
        batches += 1;
    }
    let root = tree.close(None).map(|n| n.children).unwrap_or_default();
    (root, batches)
}

fn int_leaf<'d, T: ToString>(
    tree: &mut Tree<'d>,
    label: &str,
    ty: &str,
    about: &str,
    read: impl FnOnce(&mut Tree<'d>) -> Result<T, Fail>,
) -> Result<T, Fail> {
    let about = (!about.is_empty()).then(|| about.to_string());
    tree.leaf_with(label, ty, about, read, ToString::to_string)
}

/// The CRC check of the batch starting at `bytes`, as the records crate does it.
fn crc_note(bytes: &[u8]) -> &'static str {
    let records = Records::from_bytes(bytes.to_vec().into());
    match records.batches().next() {
        Some(Ok(batch)) if batch.verify_crc().is_ok() => "(valid)",
        _ => "(does not match the data)",
    }
}

fn codec_name(id: u8) -> String {
    Compression::from_id(id).map_or_else(|| format!("unknown codec {id}"), |c| c.name().to_string())
}

fn batch_v2(tree: &mut Tree<'_>, index: usize, budget: &mut usize) -> Result<(), Fail> {
    let start = tree.pos;
    tree.open(format!("RecordBatch[{index}]"), "RecordBatch v2", None);
    tree.path.push(format!("RecordBatch[{index}]"));
    int_leaf(tree, "baseOffset", "int64", "offset of the first record", Tree::i64)?;
    let length = int_leaf(tree, "batchLength", "int32", "bytes that follow", Tree::i32)?;
    let end = tree.pos + length as usize;
    let saved_end = tree.end;
    tree.end = end;
    int_leaf(tree, "partitionLeaderEpoch", "int32", "", Tree::i32)?;
    int_leaf(tree, "magic", "int8", "record format version", Tree::i8)?;
    let whole = tree.bytes_between(start, end);
    let crc = crc_note(whole);
    tree.leaf_with(
        "crc",
        "uint32",
        Some("CRC-32C of the bytes from attributes on".into()),
        |t| t.array::<4>(),
        |b| format!("0x{:08x} {crc}", u32::from_be_bytes(*b)),
    )?;
    let attributes = tree.leaf_with("attributes", "int16", None, Tree::i16, |a| attributes_v2(*a))?;
    int_leaf(tree, "lastOffsetDelta", "int32", "", Tree::i32)?;
    int_leaf(tree, "baseTimestamp", "int64", "", Tree::i64)?;
    int_leaf(tree, "maxTimestamp", "int64", "", Tree::i64)?;
    int_leaf(tree, "producerId", "int64", "", Tree::i64)?;
    int_leaf(tree, "producerEpoch", "int16", "", Tree::i16)?;
    int_leaf(tree, "baseSequence", "int32", "", Tree::i32)?;
    let count = int_leaf(tree, "recordCount", "int32", "records in the batch", Tree::i32)?;
    let codec = (attributes & 7) as u8;
    if codec == 0 {
        records_v2(tree, count)?;
    } else {
        let at = tree.pos;
        let compressed = tree.take(tree.remaining())?;
        let plain = decompress_within(tree, codec, 2, compressed, budget)?;
        let about =
            format!("{} compressed, {} bytes decompressed (offsets below are in them)", codec_name(codec), plain.len());
        let mut node = Node::new("compressed records", "bytes", tree.offset() - compressed.len(), Region::RecordBatch);
        node.size = tree.pos - at;
        node.value = Some(format!("{} bytes", compressed.len()));
        node.about = Some(about);
        let mut inner = Tree::new(&plain, 0, true, Region::Record);
        inner.open("decompressed", "", None);
        let depth = inner.depth();
        if let Err(fail) = records_v2(&mut inner, count) {
            inner.unwind(&fail, depth);
        }
        node.children = inner.close(None).map(|n| n.children).unwrap_or_default();
        tree.adopt(vec![node]);
    }
    if tree.pos != end {
        return Err(tree.fail(format!("{} bytes after the last record", end - tree.pos)));
    }
    tree.end = saved_end;
    tree.path.pop();
    tree.close(Some(match count {
        1 => "1 record".into(),
        n => format!("{n} records"),
    }));
    Ok(())
}

/// Decompresses within what is left of `budget`, and takes what it produced from it.
fn decompress_within(tree: &Tree<'_>, codec: u8, magic: i8, data: &[u8], budget: &mut usize) -> Result<Vec<u8>, Fail> {
    if tree.decompressed() {
        return Err(tree.fail("nested compression inside a compressed message set"));
    }
    let codec = Compression::from_id(codec).ok_or_else(|| tree.fail(format!("unknown compression codec {codec}")))?;
    let plain = decompress(codec, magic, data, *budget).map_err(|e| match e {
        RecordsErrorKind::DecompressedTooLarge { limit, .. } => tree.fail(format!(
            "{} data decompresses to more than the {limit} bytes left of the explanation's budget",
            codec.name()
        )),
        e => tree.fail(format!("{} data does not decompress: {e}", codec.name())),
    })?;
    *budget -= plain.len();
    Ok(plain)
}

fn attributes_v2(a: i16) -> String {
    let mut parts = vec![codec_name((a & 7) as u8)];
    parts.push(if a & 8 != 0 { "LogAppendTime" } else { "CreateTime" }.to_string());
    if a & 16 != 0 {
        parts.push("transactional".into());
    }
    if a & 32 != 0 {
        parts.push("control".into());
    }
    if a & 64 != 0 {
        parts.push("delete horizon".into());
    }
    format!("{a} ({})", parts.join(", "))
}

fn records_v2(tree: &mut Tree<'_>, count: i32) -> Result<(), Fail> {
    let region = std::mem::replace(&mut tree.region, Region::Record);
    for i in 0..count.max(0) {
        if tree.remaining() == 0 {
            return Err(tree.fail(format!("the batch declares {count} records but holds {i}")));
        }
        record_v2(tree, i)?;
    }
    tree.region = region;
    Ok(())
}

fn record_v2(tree: &mut Tree<'_>, index: i32) -> Result<(), Fail> {
    tree.open(format!("Record[{index}]"), "Record", None);
    let length = int_leaf(tree, "length", "varint", "bytes that follow", Tree::varint)?;
    if length < 0 || length as usize > tree.remaining() {
        return Err(tree.fail(format!("record length {length} does not fit the {} bytes left", tree.remaining())));
    }
    let end = tree.pos + length as usize;
    let saved_end = tree.end;
    tree.end = end;
    int_leaf(tree, "attributes", "int8", "unused", Tree::i8)?;
    int_leaf(tree, "timestampDelta", "varlong", "", Tree::varlong)?;
    int_leaf(tree, "offsetDelta", "varint", "", Tree::varint)?;
    varint_bytes(tree, "key")?;
    varint_bytes(tree, "value")?;
    let headers = int_leaf(tree, "headerCount", "varint", "", Tree::varint)?;
    for h in 0..headers.max(0) {
        tree.open(format!("Header[{h}]"), "Header", None);
        varint_bytes(tree, "headerKey")?;
        varint_bytes(tree, "headerValue")?;
        tree.close(Some("header".into()));
    }
    if tree.pos != end {
        return Err(tree.fail(format!("{} bytes left in the record", end - tree.pos)));
    }
    tree.end = saved_end;
    tree.close(Some(format!("{length} bytes")));
    Ok(())
}

/// A varint length and that many bytes (-1: null).
fn varint_bytes(tree: &mut Tree<'_>, label: &str) -> Result<(), Fail> {
    let start = tree.pos;
    let len = tree.varint()?;
    if len < 0 {
        tree.leaf(start, label, "bytes", format!("null (varint len={len})"), None);
        return Ok(());
    }
    let bytes = tree.take(len as usize)?;
    let shown = format!("{} (varint len={len})", bytes_preview(bytes));
    tree.leaf(start, label, "bytes", shown, None);
    Ok(())
}

/// A magic 0/1 message (a compressed one wraps a message set in its value).
fn legacy_entry(tree: &mut Tree<'_>, index: usize, magic: u8, budget: &mut usize) -> Result<(), Fail> {
    let start = tree.pos;
    tree.open(format!("Message[{index}]"), format!("Message v{magic}"), None);
    int_leaf(tree, "offset", "int64", "", Tree::i64)?;
    let size = int_leaf(tree, "messageSize", "int32", "bytes that follow", Tree::i32)?;
    let end = tree.pos + size as usize;
    let saved_end = tree.end;
    tree.end = end;
    let crc = crc_note(tree.bytes_between(start, end));
    tree.leaf_with(
        "crc",
        "uint32",
        Some("CRC-32 of the bytes from magic on".into()),
        |t| t.array::<4>(),
        |b| format!("0x{:08x} {crc}", u32::from_be_bytes(*b)),
    )?;
    int_leaf(tree, "magic", "int8", "message format version", Tree::i8)?;
    let attributes = tree.leaf_with("attributes", "int8", None, Tree::i8, |a| {
        let time = if magic == 1 && a & 8 != 0 { ", LogAppendTime" } else { "" };
        format!("{a} ({}{time})", codec_name((*a & 7) as u8))
    })?;
    if magic == 1 {
        int_leaf(tree, "timestamp", "int64", "", Tree::i64)?;
    }
    legacy_bytes(tree, "key")?;
    let codec = (attributes & 7) as u8;
    if codec == 0 {
        legacy_bytes(tree, "value")?;
    } else {
        let at = tree.pos;
        let len = tree.i32()?;
        let compressed = tree.take(len.max(0) as usize)?;
        let plain = decompress_within(tree, codec, magic as i8, compressed, budget)?;
        let mut node = Node::new("value", "bytes", tree.offset() - (tree.pos - at), tree.region);
        node.size = tree.pos - at;
        node.value = Some(format!("{} bytes (int32 len={len})", compressed.len()));
        node.about = Some(format!(
            "{} compressed message set, {} bytes decompressed (offsets below are in them)",
            codec_name(codec),
            plain.len()
        ));
        node.children = explain_records(&plain, 0, true, budget).0;
        tree.adopt(vec![node]);
    }
    if tree.pos != end {
        return Err(tree.fail(format!("{} bytes left in the message", end - tree.pos)));
    }
    tree.end = saved_end;
    tree.close(Some("message".into()));
    Ok(())
}

fn legacy_bytes(tree: &mut Tree<'_>, label: &str) -> Result<(), Fail> {
    let start = tree.pos;
    let len = tree.i32()?;
    if len < 0 {
        tree.leaf(start, label, "bytes", format!("null (int32 len={len})"), None);
        return Ok(());
    }
    let bytes = tree.take(len as usize)?;
    let shown = format!("{} (int32 len={len})", bytes_preview(bytes));
    tree.leaf(start, label, "bytes", shown, None);
    Ok(())
}
