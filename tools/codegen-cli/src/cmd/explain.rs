//! `kwire-codegen explain`: what bytes are, in seed 001's form.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use kwire_inspect::explain::{self, html, recording, Explained, Input, Schemas, Side, Style};

use crate::output::{fail, print, println};

/// How the explanation is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The object tree, one line per node.
    Text,
    /// The converters' JSON of header and body, plus the tree with offsets and sizes.
    Json,
    /// A self-contained page: the byte grid, the tree and the schema.
    Html,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("side").args(["request", "response"])))]
#[command(group(clap::ArgGroup::new("input").args(["hex", "file", "sample"])))]
pub struct ExplainArgs {
    /// Folder of schema files (*.json), or a Kafka jar (kafka-clients-X.jar, or JAR!/FOLDER for
    /// a folder inside one), read in place; repeat for several.
    #[arg(long = "schemas", value_name = "DIR", default_value = "schemas")]
    schemas: Vec<PathBuf>,
    /// The bytes are a request (one of --request and --response is needed, except for a
    /// recording, whose frames say which they are).
    #[arg(long)]
    request: bool,
    /// The bytes are a response.
    #[arg(long)]
    response: bool,
    /// The API, by name (`Fetch`) or key (`1`); a request frame's header names it.
    #[arg(long, value_name = "NAME|KEY")]
    api: Option<String>,
    /// The version; a request frame's header names it.
    #[arg(long, value_name = "N")]
    version: Option<i16>,
    /// The bytes as hex (spaces and newlines allowed).
    #[arg(long, value_name = "HEX")]
    hex: Option<String>,
    /// A file of raw bytes, or a recording written by `kwire tap --record`. Without --hex,
    /// --file or --sample the bytes are read from stdin.
    #[arg(long, value_name = "F")]
    file: Option<PathBuf>,
    /// The bytes start with the int32 size and the header. Several frames in a row are each
    /// explained.
    #[arg(long)]
    frame: bool,
    /// Instead of bytes, the smallest legal instance as seed 001 defines it: numbers zero,
    /// strings and bytes empty, every array one element, records one empty RecordBatch v2.
    #[arg(long)]
    sample: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

impl ExplainArgs {
    fn side(&self) -> Side {
        if self.request {
            Side::Request
        } else {
            Side::Response
        }
    }

    fn bytes(&self, schemas: &Schemas) -> Result<Vec<u8>, String> {
        if self.sample {
            if !self.request && !self.response {
                return Err("--request or --response is needed".into());
            }
            let api = self.api.as_deref().ok_or("--sample needs --api")?;
            let msg = schemas.find(self.side(), api).ok_or_else(|| format!("no schema for API {api}"))?;
            let version = self.version.unwrap_or(msg.valid_versions.max);
            if !msg.valid_versions.contains(version) {
                return Err(format!("{} has versions {}, not {version}", msg.name, msg.valid_versions));
            }
            return Ok(explain::sample_bytes(msg, version, self.side(), self.frame));
        }
        if let Some(hex) = &self.hex {
            let digits: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
            return decode_hex(&digits);
        }
        let mut raw = Vec::new();
        match &self.file {
            Some(path) => raw = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?,
            None => {
                std::io::stdin().read_to_end(&mut raw).map_err(|e| format!("stdin: {e}"))?;
            }
        }
        Ok(raw)
    }

    pub fn run(&self) -> ExitCode {
        let schemas = match Schemas::load(&self.schemas) {
            Ok(s) => s,
            Err(e) => return fail(e, 2),
        };
        match self.explain_all(&schemas) {
            Ok(Frames { all, starts }) => {
                let malformed = all.iter().any(Explained::is_malformed);
                self.print(&schemas, &all, &starts);
                if malformed {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(e) => fail(e, 2),
        }
    }

    fn explain_all(&self, schemas: &Schemas) -> Result<Frames, String> {
        let bytes = self.bytes(schemas)?;
        let style = Style { sample: self.sample };
        if let Some(entries) = recording::read(&bytes).map_err(|e| e.to_string())? {
            let all = recording::explain(schemas, &entries, style).map_err(|e| e.to_string())?;
            return Ok(Frames { all, starts: Vec::new() });
        }
        if !self.request && !self.response {
            return Err("--request or --response is needed".into());
        }
        let (mut all, mut starts) = (Vec::new(), Vec::new());
        let mut at = 0;
        loop {
            let input = Input {
                side: self.side(),
                api: self.api.as_deref(),
                version: self.version,
                frame: self.frame,
                bytes: &bytes[at..],
                style,
            };
            let explained = explain::explain(schemas, &input).map_err(|e| e.to_string())?;
            starts.push(at);
            at += explained.consumed;
            let stop = !self.frame || explained.error.is_some() || explained.consumed == 0 || at >= bytes.len();
            all.push(explained);
            if stop {
                break;
            }
        }
        Ok(Frames { all, starts })
    }

    /// `starts`: where each frame begins in raw input (empty for a recording, whose entries
    /// name themselves).
    fn print(&self, schemas: &Schemas, all: &[Explained], starts: &[usize]) {
        match self.format {
            Format::Text => {
                for (i, e) in all.iter().enumerate() {
                    if i > 0 {
                        print("\n");
                    }
                    if let (Some(start), true) = (starts.get(i), starts.len() > 1) {
                        // Offsets in each tree count from its frame's first byte.
                        println(format!(
                            "frame {} of {}, at byte {start} (0x{start:04x}) of the input:",
                            i + 1,
                            all.len()
                        ));
                    }
                    print(&e.text());
                    if let Some(fail) = &e.error {
                        eprintln!("error: {fail}");
                    }
                }
            }
            Format::Json => {
                let values: Vec<_> = all
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        let mut value = e.to_json();
                        if let (Some(start), true) = (starts.get(i), starts.len() > 1) {
                            value["frame"] = (i + 1).into();
                            value["start"] = (*start).into();
                        }
                        value
                    })
                    .collect();
                let out = if values.len() == 1 { values[0].clone() } else { serde_json::Value::Array(values) };
                println(serde_json::to_string_pretty(&out).unwrap_or_default());
            }
            Format::Html => print(&html::page_for(schemas, all)),
        }
    }
}

/// What was explained, and where each frame starts in raw input.
struct Frames {
    all: Vec<Explained>,
    starts: Vec<usize>,
}

fn decode_hex(digits: &str) -> Result<Vec<u8>, String> {
    let digits = digits.strip_prefix("0x").unwrap_or(digits);
    if !digits.len().is_multiple_of(2) {
        return Err(format!("--hex has an odd number of digits ({})", digits.len()));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| format!("--hex: {:?} is not hex", &digits[i..i + 2]))
        })
        .collect()
}
