//! The object tree of an explained message: one node per field, length prefix, tag count and
//! structural part, each with its byte range, as seed 001 lays it out.

use serde::Serialize;

/// What part of the message a node's bytes belong to; colours the byte grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    Frame,
    Header,
    Body,
    RecordBatch,
    Record,
    TaggedFields,
}

impl Region {
    /// Every region, in the order of the page's legend.
    pub const ALL: [Region; 6] =
        [Region::Frame, Region::Header, Region::Body, Region::RecordBatch, Region::Record, Region::TaggedFields];

    /// The CSS class and legend key.
    pub fn class(self) -> &'static str {
        match self {
            Region::Frame => "frame",
            Region::Header => "header",
            Region::Body => "body",
            Region::RecordBatch => "batch",
            Region::Record => "record",
            Region::TaggedFields => "tags",
        }
    }
}

/// One line of the tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// Field name, `Name[i]` for an array element, or a structural name (`length`, `size`).
    pub label: String,
    /// The schema type (`int32`, `[]Listener`, `uvarint`), or a kind (`message v4`, `struct`).
    #[serde(rename = "type")]
    pub ty: String,
    /// The value as shown, with how it was encoded (`"" (compact, len+1=1)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Byte offset: from the start of the input, or, when `decompressed`, of the decompressed
    /// records it lies in.
    pub offset: usize,
    pub size: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
    pub region: Region,
    /// Inside a compressed record batch's decompressed data.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub decompressed: bool,
    /// This node reports bytes that could not be read (a dissector's malformed mark).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub malformed: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Node>,
}

impl Node {
    pub fn new(label: impl Into<String>, ty: impl Into<String>, offset: usize, region: Region) -> Self {
        Node {
            label: label.into(),
            ty: ty.into(),
            value: None,
            offset,
            size: 0,
            about: None,
            region,
            decompressed: false,
            malformed: false,
            children: Vec::new(),
        }
    }

    /// Whether this node or any below it is malformed.
    pub fn has_malformed(&self) -> bool {
        self.malformed || self.children.iter().any(Node::has_malformed)
    }

    /// The node's line without the tree prefix: `name type = value [0xOFFSET, NB] about`.
    pub fn line(&self) -> String {
        if self.malformed {
            let at = if self.decompressed { "d+" } else { "" };
            return format!("!! malformed [{at}0x{:04x}] {}", self.offset, self.about.as_deref().unwrap_or(""));
        }
        let mut s = self.label.clone();
        if !self.ty.is_empty() {
            s.push(' ');
            s.push_str(&self.ty);
        }
        if let Some(v) = &self.value {
            s.push_str(" = ");
            s.push_str(v);
        }
        let at = if self.decompressed { "d+" } else { "" };
        s.push_str(&format!(" [{at}0x{:04x}, {}B]", self.offset, self.size));
        if let Some(about) = &self.about {
            s.push(' ');
            s.push_str(&cut_about(about));
        }
        s
    }
}

/// Longest `about` text shown whole; longer ones are cut to [`ABOUT_KEPT`] characters and `...`,
/// as seed 001 cuts them.
pub const ABOUT_MAX: usize = 78;
pub const ABOUT_KEPT: usize = 75;

/// An `about` text as the tree shows it.
pub fn cut_about(about: &str) -> String {
    if about.chars().count() <= ABOUT_MAX {
        about.to_string()
    } else {
        let kept: String = about.chars().take(ABOUT_KEPT).collect();
        format!("{kept}...")
    }
}

/// The tree as text, one line per node: the root at the margin, children under `+-- `, with
/// `|   ` continuing a parent that has more children below.
pub fn render_text(root: &Node) -> String {
    lines(root).into_iter().map(|(line, _)| line + "\n").collect()
}

/// The tree's lines as `render_text` prints them, each with its node, parents before children.
pub fn lines(root: &Node) -> Vec<(String, &Node)> {
    let mut out = vec![(root.line(), root)];
    push_children(root, "", &mut out);
    out
}

fn push_children<'n>(node: &'n Node, prefix: &str, out: &mut Vec<(String, &'n Node)>) {
    let n = node.children.len();
    for (i, child) in node.children.iter().enumerate() {
        out.push((format!("{prefix}+-- {}", child.line()), child));
        let more = if i + 1 < n { "|   " } else { "    " };
        push_children(child, &format!("{prefix}{more}"), out);
    }
}
