//! A cursor over bytes that builds the object tree as it reads: nodes are opened where a part
//! starts and closed where it ends, so a read that fails leaves the tree up to the failure.

use super::node::{Node, Region};

/// Kafka's decoders (4.4) refuse more tagged fields than this in one struct; so does the
/// explanation.
pub(super) const MAX_TAGGED_FIELDS: u32 = 10_000;
/// Kafka's decoders refuse arrays of more elements than this; so does the explanation.
pub(super) const MAX_ARRAY_ELEMENTS: usize = 1_000_000;

/// Why reading stopped: what, where (input offset) and in which field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail {
    pub offset: usize,
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{} (at byte 0x{:04x})", self.message, self.offset)
        } else {
            write!(f, "{}: {} (at byte 0x{:04x})", self.path, self.message, self.offset)
        }
    }
}

impl std::error::Error for Fail {}

pub(super) struct Tree<'d> {
    data: &'d [u8],
    pub(super) pos: usize,
    /// Reads stop here (the end of a tagged value or a records field, else of the data).
    pub(super) end: usize,
    /// Added to positions for the offsets shown.
    base: usize,
    decompressed: bool,
    pub(super) region: Region,
    /// Open nodes; the first is the root.
    stack: Vec<Node>,
    /// Field names from the root in, for errors.
    pub(super) path: Vec<String>,
}

impl<'d> Tree<'d> {
    pub(super) fn new(data: &'d [u8], base: usize, decompressed: bool, region: Region) -> Self {
        Tree { data, pos: 0, end: data.len(), base, decompressed, region, stack: Vec::new(), path: Vec::new() }
    }

    /// Whether the bytes are decompressed record data.
    pub(super) fn decompressed(&self) -> bool {
        self.decompressed
    }

    pub(super) fn offset(&self) -> usize {
        self.base + self.pos
    }

    pub(super) fn remaining(&self) -> usize {
        self.end - self.pos
    }

    pub(super) fn fail(&self, message: impl Into<String>) -> Fail {
        self.fail_at(self.pos, message)
    }

    /// A failure of what started at position `start` (a length prefix already read, say).
    pub(super) fn fail_at(&self, start: usize, message: impl Into<String>) -> Fail {
        Fail { offset: self.base + start, path: self.path.join("."), message: message.into() }
    }

    /// Starts a node here.
    pub(super) fn open(&mut self, label: impl Into<String>, ty: impl Into<String>, about: Option<String>) {
        let mut node = Node::new(label, ty, self.offset(), self.region);
        node.about = about;
        node.decompressed = self.decompressed;
        self.stack.push(node);
    }

    /// Ends the innermost open node here, with its value; it joins its parent (or, for the
    /// root, is returned).
    pub(super) fn close(&mut self, value: Option<String>) -> Option<Node> {
        let mut node = self.stack.pop()?;
        node.size = self.offset() - node.offset;
        node.value = value;
        self.attach(node)
    }

    fn attach(&mut self, node: Node) -> Option<Node> {
        match self.stack.last_mut() {
            Some(parent) => {
                parent.children.push(node);
                None
            }
            None => Some(node),
        }
    }

    /// Adds finished nodes to the innermost open node.
    pub(super) fn adopt(&mut self, nodes: Vec<Node>) {
        if let Some(parent) = self.stack.last_mut() {
            parent.children.extend(nodes);
        }
    }

    /// A node for the bytes from `start` (a position) to here.
    pub(super) fn leaf(
        &mut self,
        start: usize,
        label: impl Into<String>,
        ty: &str,
        value: String,
        about: Option<String>,
    ) {
        let mut node = Node::new(label, ty, self.base + start, self.region);
        node.size = self.pos - start;
        node.value = Some(value);
        node.about = about;
        node.decompressed = self.decompressed;
        self.attach(node);
    }

    /// How many nodes are open (to unwind to after a failure).
    pub(super) fn depth(&self) -> usize {
        self.stack.len()
    }

    /// Adds a malformed mark for `fail` to the innermost open node (the last child so far).
    pub(super) fn mark(&mut self, fail: &Fail) -> Option<Node> {
        let mut mark = Node::new("malformed", "", fail.offset, self.region);
        mark.about = Some(fail.to_string());
        mark.malformed = true;
        mark.decompressed = self.decompressed;
        self.attach(mark)
    }

    /// Marks `fail` in the innermost open node, then closes open nodes down to `depth`.
    pub(super) fn unwind(&mut self, fail: &Fail, depth: usize) -> Option<Node> {
        let mut last = self.mark(fail);
        while self.stack.len() > depth {
            last = self.close(None);
        }
        last
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'d [u8], Fail> {
        if self.remaining() < n {
            return Err(self.fail(format!("needs {n} bytes, {} left", self.remaining())));
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    /// The bytes between two positions (clamped to the data).
    pub(super) fn bytes_between(&self, start: usize, end: usize) -> &'d [u8] {
        let end = end.min(self.data.len());
        &self.data[start.min(end)..end]
    }

    pub(super) fn array<const N: usize>(&mut self) -> Result<[u8; N], Fail> {
        let bytes = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub(super) fn i8(&mut self) -> Result<i8, Fail> {
        Ok(i8::from_be_bytes(self.array()?))
    }
    pub(super) fn i16(&mut self) -> Result<i16, Fail> {
        Ok(i16::from_be_bytes(self.array()?))
    }
    pub(super) fn i32(&mut self) -> Result<i32, Fail> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub(super) fn i64(&mut self) -> Result<i64, Fail> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    pub(super) fn uvarint(&mut self) -> Result<u32, Fail> {
        let window = &self.data[self.pos..self.end];
        let (value, used) = kwire_runtime::wire::decode_uvarint(window).map_err(|e| self.fail(e.to_string()))?;
        self.pos += used;
        Ok(value)
    }

    pub(super) fn uvarlong(&mut self) -> Result<u64, Fail> {
        let window = &self.data[self.pos..self.end];
        let (value, used) = kwire_runtime::wire::decode_uvarlong(window).map_err(|e| self.fail(e.to_string()))?;
        self.pos += used;
        Ok(value)
    }

    pub(super) fn varint(&mut self) -> Result<i32, Fail> {
        self.uvarint().map(kwire_runtime::wire::zigzag_i32)
    }

    pub(super) fn varlong(&mut self) -> Result<i64, Fail> {
        self.uvarlong().map(kwire_runtime::wire::zigzag_i64)
    }

    /// A tagged section's field count, refused past Kafka's limit and past what the bytes left
    /// could hold (a tag and a size, a byte each at the least).
    pub(super) fn tag_count(&mut self) -> Result<u32, Fail> {
        let start = self.pos;
        let count = self.uvarint()?;
        if count > MAX_TAGGED_FIELDS {
            return Err(
                self.fail_at(start, format!("{count} tagged fields, more than the {MAX_TAGGED_FIELDS} allowed"))
            );
        }
        if count as usize > self.remaining() / 2 {
            return Err(
                self.fail_at(start, format!("{count} tagged fields cannot fit in the {} bytes left", self.remaining()))
            );
        }
        Ok(count)
    }

    /// A leaf read by `read`, from here to where it stops.
    pub(super) fn leaf_with<T>(
        &mut self,
        label: &str,
        ty: &str,
        about: Option<String>,
        read: impl FnOnce(&mut Self) -> Result<T, Fail>,
        show: impl FnOnce(&T) -> String,
    ) -> Result<T, Fail> {
        let start = self.pos;
        let value = read(self)?;
        let text = show(&value);
        self.leaf(start, label, ty, text, about);
        Ok(value)
    }
}

/// Bytes as hex, the first `max` of them, with how many more there are.
pub fn hex_preview(bytes: &[u8], max: usize) -> String {
    let mut s = String::from("0x");
    for b in bytes.iter().take(max) {
        s.push_str(&format!("{b:02x}"));
    }
    if bytes.len() > max {
        s.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    s
}

/// Bytes that are printable UTF-8 as a quoted string, else as hex.
pub fn bytes_preview(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.is_empty() && text.chars().all(|c| !c.is_control()) => quoted(text),
        _ if bytes.is_empty() => "empty".to_string(),
        _ => hex_preview(bytes, 32),
    }
}

/// A string as the tree shows it: quoted and escaped, cut after 64 characters.
pub fn quoted(text: &str) -> String {
    if text.chars().count() > 64 {
        let kept: String = text.chars().take(61).collect();
        format!("{:?}...", kept)
    } else {
        format!("{text:?}")
    }
}
