//! `StrBytes`: a UTF-8 string that shares the buffer it was decoded from.

use bytes::Bytes;
use std::{borrow::Borrow, fmt, ops::Deref, str};

/// An immutable UTF-8 string backed by `Bytes`, so decoding does not copy.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct StrBytes(Bytes);

/// Hashes as the `str` it holds, as `Borrow<str>` requires: a `HashMap<StrBytes, _>` is then
/// searched with a `&str`.
impl std::hash::Hash for StrBytes {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl StrBytes {
    /// A string from a static literal, without allocating.
    pub const fn from_static_str(s: &'static str) -> Self {
        StrBytes(Bytes::from_static(s.as_bytes()))
    }

    /// Checks `bytes` for UTF-8 and wraps them without copying.
    pub fn from_utf8(bytes: Bytes) -> Result<Self, str::Utf8Error> {
        str::from_utf8(&bytes)?;
        Ok(StrBytes(bytes))
    }

    /// The string.
    #[allow(unsafe_code)]
    pub fn as_str(&self) -> &str {
        // SAFETY: every constructor admits only valid UTF-8 (`from_utf8` checks it; `String`,
        // `&str` and static literals are UTF-8 already), and the bytes are immutable. Checking
        // again on every access would make each string read and each encode O(length).
        unsafe { str::from_utf8_unchecked(&self.0) }
    }

    /// The underlying bytes.
    pub fn as_bytes(&self) -> &Bytes {
        &self.0
    }

    /// Unwraps the underlying bytes.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl Deref for StrBytes {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for StrBytes {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for StrBytes {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for StrBytes {
    fn from(s: String) -> Self {
        StrBytes(Bytes::from(s))
    }
}

impl From<&str> for StrBytes {
    fn from(s: &str) -> Self {
        StrBytes(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl PartialEq<str> for StrBytes {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for StrBytes {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for StrBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for StrBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
