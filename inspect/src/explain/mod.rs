//! What bytes are: a second, IR-driven decoder (no generated code) that shows a message as
//! seed 001 does: the object tree with every field's name, type, value, offset, size and
//! meaning (text, JSON or a self-contained HTML page).
//!
//! It reads any schema folder at run time, so it works for a user's own schemas too.

mod header;
pub mod html;
pub mod interpret;
pub mod node;
pub mod recording;
mod records;
mod tree;

#[cfg(test)]
mod bounds_tests;

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};

pub use interpret::{explain_body, type_name, Style};
pub use node::{render_text, Node, Region};
pub use tree::{hex_preview, Fail};

use kwire_codegen::diagnostics::SchemaErrors;
use kwire_codegen::ir::{Message, MessageKind};
use kwire_codegen::source::read_schemas;
use tree::Tree;

/// Request or response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Request,
    Response,
}

impl Side {
    fn kind(self) -> MessageKind {
        match self {
            Side::Request => MessageKind::Request,
            Side::Response => MessageKind::Response,
        }
    }
}

/// The schemas of one or more folders or jars, for looking messages up by API.
#[derive(Debug, Clone, Default)]
pub struct Schemas {
    messages: Vec<Message>,
    /// Each schema file's text by file name, as pages show it.
    texts: HashMap<String, String>,
}

impl Schemas {
    /// Loads every schema of the folders or jars (legacy allowances accepted, as `generate`
    /// does).
    pub fn load<P: AsRef<Path>>(dirs: &[P]) -> Result<Self, SchemaErrors> {
        let sources: Vec<_> = dirs.iter().map(|d| read_schemas(d.as_ref())).collect();
        let loaded = kwire_codegen::lower::load_files(&sources, false)?;
        let texts = sources.into_iter().flatten().flatten().map(|f| (f.name, f.text)).collect();
        Ok(Schemas { messages: loaded.messages, texts })
    }

    /// Schemas already lowered (their text is then unknown to [`Schemas::schema_text`]).
    pub fn from_messages(messages: Vec<Message>) -> Self {
        Schemas { messages, texts: HashMap::new() }
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The request or response of an API named like `Fetch`, `FetchRequest`, or by key (`1`).
    pub fn find(&self, side: Side, api: &str) -> Option<&Message> {
        if let Ok(key) = api.parse::<i16>() {
            return self.by_key(side, key);
        }
        let suffix = if side == Side::Request { "Request" } else { "Response" };
        let wanted = api.strip_suffix(suffix).unwrap_or(api);
        self.messages.iter().find(|m| m.kind == side.kind() && api_name(m).eq_ignore_ascii_case(wanted))
    }

    pub fn by_key(&self, side: Side, key: i16) -> Option<&Message> {
        self.messages.iter().find(|m| m.kind == side.kind() && m.api_key == Some(key))
    }

    /// The schema file's text with its comments blanked out, as pages show it.
    pub fn schema_text(&self, msg: &Message) -> Option<String> {
        let text = self.texts.get(&msg.file)?;
        let stripped = kwire_codegen::parse::strip_comments(text).ok()?;
        let lines: Vec<&str> = stripped.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
        Some(lines.join("\n"))
    }
}

/// An API's name: the schema name without `Request`/`Response`.
pub fn api_name(msg: &Message) -> &str {
    kwire_codegen::ir::api_name(&msg.name)
}

/// What to explain.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    pub side: Side,
    /// The API (name or key); optional for a request frame, whose header names it.
    pub api: Option<&'a str>,
    /// The version; optional for a request frame.
    pub version: Option<i16>,
    /// The bytes start with the int32 size and the header.
    pub frame: bool,
    pub bytes: &'a [u8],
    pub style: Style,
}

/// One message explained.
#[derive(Debug, Clone)]
pub struct Explained {
    pub api: String,
    pub api_key: Option<i16>,
    pub side: Side,
    pub version: i16,
    pub header_version: Option<i16>,
    /// The whole tree (frame, header, body), as far as the bytes could be read.
    pub root: Node,
    /// The header's JSON (frames only).
    pub header: Option<Value>,
    /// The body's JSON, as generated `to_json` writes it; `None` when the bytes did not parse.
    pub message: Option<Value>,
    /// Why reading stopped early.
    pub error: Option<Fail>,
    /// Bytes of the input this message used.
    pub consumed: usize,
    /// The bytes explained (those `consumed`).
    pub bytes: Vec<u8>,
    /// The schema it was read with.
    pub schema: String,
}

impl Explained {
    /// The tree as seed 001 prints it.
    pub fn text(&self) -> String {
        render_text(&self.root)
    }

    /// Anything malformed: the message, or record data inside it.
    pub fn is_malformed(&self) -> bool {
        self.error.is_some() || self.root.has_malformed()
    }

    /// `--format json`: the converters' JSON of header and body, and the tree with offsets.
    pub fn to_json(&self) -> Value {
        json!({
            "api": self.api,
            "apiKey": self.api_key,
            "side": if self.side == Side::Request { "request" } else { "response" },
            "version": self.version,
            "headerVersion": self.header_version,
            "size": self.consumed,
            "header": self.header,
            "message": self.message,
            "error": self.error.as_ref().map(ToString::to_string),
            "tree": self.root,
        })
    }
}

/// Why an input could not be explained at all (before any byte was read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// Explains one message from the start of `input.bytes`.
pub fn explain(schemas: &Schemas, input: &Input<'_>) -> Result<Explained, InputError> {
    let bytes = input.bytes;
    let side_name = if input.side == Side::Request { "request" } else { "response" };
    // A request frame names its API and version: size (4), key (2), version (2).
    let (api_key, version) = match (input.frame, input.side, bytes.get(4..8)) {
        (true, Side::Request, Some(h)) => {
            (Some(i16::from_be_bytes([h[0], h[1]])), Some(i16::from_be_bytes([h[2], h[3]])))
        }
        _ => (None, None),
    };
    let msg = match (input.api, api_key) {
        (Some(api), _) => {
            schemas.find(input.side, api).ok_or_else(|| InputError(format!("no {side_name} schema for API {api}")))?
        }
        (None, Some(key)) => schemas
            .by_key(input.side, key)
            .ok_or_else(|| InputError(format!("the frame's API key {key} has no {side_name} schema here")))?,
        (None, None) => return Err(InputError("--api is needed (only a request frame names its API)".into())),
    };
    if let (Some(key), Some(own)) = (api_key, msg.api_key) {
        if key != own {
            return Err(InputError(format!("the frame's API key is {key}, not {}'s {own}", api_name(msg))));
        }
    }
    let version = match (input.version, version) {
        (Some(v), Some(h)) if v != h => {
            return Err(InputError(format!("the frame's header says version {h}, not {v}")));
        }
        (Some(v), _) | (None, Some(v)) => v,
        (None, None) => return Err(InputError("--version is needed (only a request frame names it)".into())),
    };
    let header_version = if input.frame { msg.header_version(version) } else { None };
    let mut tree = Tree::new(bytes, 0, false, Region::Body);
    tree.open(msg.name.as_str(), format!("message v{version}"), None);
    let mut header = None;
    // A frame that declares more bytes than there are is marked, and read as far as it goes.
    let mut short: Option<Fail> = None;
    let framed: Result<usize, Fail> = (|| {
        if !input.frame {
            return Ok(bytes.len());
        }
        let size = header::frame(&mut tree)?;
        if size < 0 {
            return Err(tree.fail(format!("the frame declares {size} bytes")));
        }
        let mut end = 4 + size as usize;
        if end > bytes.len() {
            let fail = Fail {
                offset: 0,
                path: "Frame.size".into(),
                message: format!("the frame declares {size} bytes, {} follow", bytes.len() - 4),
            };
            tree.mark(&fail);
            short = Some(fail);
            end = bytes.len();
        }
        tree.end = end;
        header = Some(match input.side {
            Side::Request => header::request_header(&mut tree, header_version.unwrap_or(1), api_name(msg))?,
            Side::Response => header::response_header(&mut tree, header_version.unwrap_or(0))?,
        });
        Ok(end)
    })();
    let mut body_failed = false;
    let (message, error) = match framed {
        Err(fail) => (None, Some(fail)),
        Ok(end) => {
            let at = tree.pos;
            let body = explain_body(msg, version, &bytes[at..end], at, input.style);
            tree.adopt(vec![body.node]);
            tree.pos = at + body.consumed;
            match body.json {
                Err(fail) => {
                    body_failed = true;
                    (None, Some(fail))
                }
                Ok(json) if input.frame && tree.pos != end => {
                    let fail = tree.fail(format!("{} bytes after the body, inside the frame", end - tree.pos));
                    (Some(json), Some(fail))
                }
                Ok(json) => (Some(json), None),
            }
        }
    };
    let root = match &error {
        // A failure inside the body is already marked in the body's node.
        Some(fail) if !body_failed => tree.unwind(fail, 0),
        _ => tree.close(None),
    };
    let error = short.or(error);
    let mut root = root.unwrap_or_else(|| Node::new(msg.name.as_str(), "message", 0, Region::Body));
    if error.is_some() {
        // Through the failure: the bytes read, not the bytes declared.
        root.size = root.size.max(tree.pos);
    }
    let consumed = tree.pos;
    Ok(Explained {
        api: api_name(msg).to_string(),
        api_key: msg.api_key,
        side: input.side,
        version,
        header_version,
        root,
        header,
        message,
        error,
        consumed,
        bytes: bytes[..consumed.min(bytes.len())].to_vec(),
        schema: msg.file.clone(),
    })
}

/// The smallest legal instance of `msg` at `version` as seed 001 defines it, with its frame
/// and header when `frame` (api key and version filled in, correlation id 0, client id "").
/// `side` must be `msg`'s kind.
pub fn sample_bytes(msg: &Message, version: i16, side: Side, frame: bool) -> Vec<u8> {
    let body = crate::sample::encode(msg, version, crate::sample::Mode::Minimal);
    if !frame {
        return body;
    }
    let key = msg.api_key.unwrap_or(-1);
    let hv = msg.header_version(version).unwrap_or(0);
    let mut header = Vec::new();
    match side {
        Side::Request => {
            header.extend_from_slice(&key.to_be_bytes());
            header.extend_from_slice(&version.to_be_bytes());
            header.extend_from_slice(&0i32.to_be_bytes());
            if hv >= 1 {
                header.extend_from_slice(&0i16.to_be_bytes()); // client id ""
            }
            if hv >= 2 {
                header.push(0); // no tagged fields
            }
        }
        Side::Response => {
            header.extend_from_slice(&0i32.to_be_bytes());
            if hv >= 1 {
                header.push(0);
            }
        }
    }
    let size = (header.len() + body.len()) as i32;
    let mut out = size.to_be_bytes().to_vec();
    out.extend_from_slice(&header);
    out.extend_from_slice(&body);
    out
}
