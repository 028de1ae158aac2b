//! Crash recovery of the active segment (spec §3.5): scan from the start and find where the
//! last good entry ends. An entry is good when its 4-byte length is present, the length is at
//! least the header size, the whole entry is in the file, the magic and codec are known and the
//! CRC matches.

use std::fs::File;
use std::os::unix::fs::FileExt;

use kwire_runtime::reader::SliceReader;

use crate::MessageRef;

/// Read-ahead window; entries larger than this are read on their own.
const CHUNK: usize = 1 << 20;

/// Byte length of the valid prefix of `file` (whose length is `file_len`).
pub(crate) fn valid_prefix(file: &File, file_len: u64) -> std::io::Result<u64> {
    let mut buf: Vec<u8> = Vec::new();
    let mut buf_start = 0u64;
    let mut pos = 0u64;

    // Makes buf hold file[pos..pos + n]; n is always within the file.
    let fill = |buf: &mut Vec<u8>, buf_start: &mut u64, pos: u64, n: u64| -> std::io::Result<()> {
        let end = buf_start.saturating_add(buf.len() as u64);
        if pos >= *buf_start && pos + n <= end {
            return Ok(());
        }
        let want = n.max(CHUNK as u64).min(file_len - pos) as usize;
        buf.clear();
        buf.resize(want, 0);
        file.read_exact_at(buf, pos)?;
        *buf_start = pos;
        Ok(())
    };

    loop {
        if file_len - pos < 4 {
            break;
        }
        fill(&mut buf, &mut buf_start, pos, 4)?;
        let at = (pos - buf_start) as usize;
        let Ok(length) = SliceReader::new(&buf, at).get_i32() else { break };
        let Ok(len) = u64::try_from(length) else { break };
        if len < 5 || len > file_len - pos - 4 {
            break;
        }
        fill(&mut buf, &mut buf_start, pos, 4 + len)?;
        let at = (pos - buf_start) as usize;
        let body = &buf[at + 4..at + 4 + len as usize];
        match MessageRef::parse(body, pos) {
            Ok(m) if m.verify_crc(pos).is_ok() => pos += 4 + len,
            _ => break,
        }
    }
    Ok(pos)
}
