//! The file `kwire tap --record` writes and `explain --file` replays: every frame that
//! crossed the tap, with its direction, connection, time and (for responses, whose frames do
//! not say) the API and version of the request it answers.
//!
//! Layout: the magic `KWTAP1\n`, then entries of: direction u8 (0 request, 1 response),
//! connection u32, unix time in microseconds u64, api key i16, api version i16, frame length
//! u32, then the frame as it was on the wire (its int32 size included). Big-endian throughout.

use super::{explain as explain_one, Explained, Input, Schemas, Side, Style};

pub const MAGIC: &[u8] = b"KWTAP1\n";
const ENTRY_HEADER: usize = 1 + 4 + 8 + 2 + 2 + 4;

/// One recorded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub side: Side,
    pub connection: u32,
    pub time_micros: u64,
    pub api_key: i16,
    pub api_version: i16,
    pub frame: Vec<u8>,
}

impl Entry {
    /// The entry's bytes as the file holds them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(ENTRY_HEADER + self.frame.len());
        out.push(u8::from(self.side == Side::Response));
        out.extend_from_slice(&self.connection.to_be_bytes());
        out.extend_from_slice(&self.time_micros.to_be_bytes());
        out.extend_from_slice(&self.api_key.to_be_bytes());
        out.extend_from_slice(&self.api_version.to_be_bytes());
        out.extend_from_slice(&(self.frame.len() as u32).to_be_bytes());
        out.extend_from_slice(&self.frame);
        out
    }
}

/// A recording that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("recording: {0}")]
pub struct RecordingError(String);

/// The entries, if `bytes` is a recording (starts with [`MAGIC`]); `None` if it is not one.
/// A recording cut short (the tap was killed) yields the entries before the cut.
pub fn read(bytes: &[u8]) -> Result<Option<Vec<Entry>>, RecordingError> {
    let Some(mut rest) = bytes.strip_prefix(MAGIC) else { return Ok(None) };
    let mut entries = Vec::new();
    while rest.len() >= ENTRY_HEADER {
        let side = match rest[0] {
            0 => Side::Request,
            1 => Side::Response,
            other => return Err(RecordingError(format!("entry {}: direction {other}", entries.len()))),
        };
        let u32_at = |i: usize| u32::from_be_bytes([rest[i], rest[i + 1], rest[i + 2], rest[i + 3]]);
        let connection = u32_at(1);
        let mut time = [0u8; 8];
        time.copy_from_slice(&rest[5..13]);
        let api_key = i16::from_be_bytes([rest[13], rest[14]]);
        let api_version = i16::from_be_bytes([rest[15], rest[16]]);
        let len = u32_at(17) as usize;
        if rest.len() - ENTRY_HEADER < len {
            break;
        }
        let frame = rest[ENTRY_HEADER..ENTRY_HEADER + len].to_vec();
        entries.push(Entry { side, connection, time_micros: u64::from_be_bytes(time), api_key, api_version, frame });
        rest = &rest[ENTRY_HEADER + len..];
    }
    Ok(Some(entries))
}

/// Every entry explained as the frame it is.
pub fn explain(schemas: &Schemas, entries: &[Entry], style: Style) -> Result<Vec<Explained>, super::InputError> {
    entries
        .iter()
        .map(|e| {
            let key = e.api_key.to_string();
            let input = Input {
                side: e.side,
                api: Some(&key),
                version: Some(e.api_version),
                frame: true,
                bytes: &e.frame,
                style,
            };
            explain_one(schemas, &input)
        })
        .collect()
}
