//! Decode and encode errors: a kind plus the path of structs and fields being processed.

use std::fmt;

/// What went wrong while decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// Fewer bytes remained than a read needed.
    NotEnoughBytes { requested: usize, available: usize },
    /// A length prefix was negative (and not the null marker where null is allowed).
    InvalidLength(i64),
    /// A length prefix claims more data than the remaining bytes could hold.
    LengthExceedsInput { length: u64, available: usize },
    /// A string was not valid UTF-8.
    InvalidUtf8,
    /// A null was read where the field is not nullable at this version.
    UnexpectedNull,
    /// A varint ran past its maximum width.
    VarintTooLong,
    /// The version is outside the message's valid versions.
    UnsupportedVersion { version: i16, min: i16, max: i16 },
    /// A known tag arrived at a version where the field is not tagged.
    TagNotValidForVersion { tag: u32, version: i16 },
    /// The same tag appeared twice in one tagged-field section.
    DuplicateTag(u32),
    /// A tagged field's declared size did not match what its value used.
    TaggedFieldSize { tag: u32, declared: usize, used: usize },
    /// The api key is not one this build knows.
    UnknownApiKey(i16),
    /// The api key is reserved for an API whose support was removed (`validVersions: "none"`):
    /// it has no versions to decode or encode.
    RetiredApi(i16),
    /// Bytes were left over after a frame or nested value was decoded.
    TrailingBytes(usize),
    /// A nullable struct's presence marker was neither -1 nor 1.
    InvalidStructMarker(i8),
    /// An array claims more elements than the remaining bytes could hold, each taking at least
    /// `min_size` bytes at this version.
    CountExceedsInput { count: u64, min_size: usize, available: usize },
    /// An array claims more elements than Kafka accepts in one array (1,000,000).
    TooManyElements { count: u64, max: usize },
    /// A tagged-field section claims more fields than Kafka accepts in one struct (10,000).
    TooManyTaggedFields { count: u64, max: u32 },
    /// What the input claims would take more memory than a message of its size may: the
    /// decoded form of a message is kept to a small multiple of its bytes.
    MemoryLimit { requested: usize, available: usize },
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotEnoughBytes { requested, available } => {
                write!(f, "not enough bytes (requested {requested}, available {available})")
            }
            Self::InvalidLength(n) => write!(f, "invalid length {n}"),
            Self::LengthExceedsInput { length, available } => {
                write!(f, "length {length} exceeds the {available} bytes remaining")
            }
            Self::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            Self::UnexpectedNull => f.write_str("null in a field that is not nullable at this version"),
            Self::VarintTooLong => f.write_str("varint longer than its maximum width"),
            Self::UnsupportedVersion { version, min, max } => {
                write!(f, "version {version} is not supported (valid {min}..={max})")
            }
            Self::TagNotValidForVersion { tag, version } => {
                write!(f, "tag {tag} is not valid for version {version}")
            }
            Self::DuplicateTag(tag) => write!(f, "tag {tag} appears twice"),
            Self::TaggedFieldSize { tag, declared, used } => {
                write!(f, "tagged field {tag} declared {declared} bytes but used {used}")
            }
            Self::UnknownApiKey(key) => write!(f, "unknown api key {key}"),
            Self::RetiredApi(key) => write!(f, "api key {key} belongs to a retired API, which has no versions"),
            Self::TrailingBytes(n) => write!(f, "{n} unexpected trailing bytes"),
            Self::InvalidStructMarker(m) => write!(f, "invalid nullable struct marker {m}"),
            Self::CountExceedsInput { count, min_size, available } => write!(
                f,
                "{count} elements of at least {min_size} bytes each cannot fit in the {available} bytes remaining"
            ),
            Self::TooManyElements { count, max } => {
                write!(f, "array of {count} elements exceeds the limit of {max}")
            }
            Self::TooManyTaggedFields { count, max } => {
                write!(f, "{count} tagged fields exceed the limit of {max} per struct")
            }
            Self::MemoryLimit { requested, available } => write!(
                f,
                "decoding would take {requested} bytes of memory, more than the {available} left for a message of this size"
            ),
        }
    }
}

/// Writes ` Outer.field.inner_field` for a (struct, field) path, outermost first.
fn write_path(f: &mut fmt::Formatter<'_>, mut path: impl Iterator<Item = (&'static str, &'static str)>) -> fmt::Result {
    if let Some((structure, field)) = path.next() {
        write!(f, " {structure}.{field}")?;
        for (_, field) in path {
            write!(f, ".{field}")?;
        }
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct DecodeInner {
    kind: DecodeErrorKind,
    /// (struct, field) pairs, innermost first, pushed as the error unwinds.
    path: Vec<(&'static str, &'static str)>,
    offset: Option<usize>,
}

/// A decode failure: what went wrong, in which struct and field, at which byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    inner: Box<DecodeInner>,
}

impl DecodeError {
    /// An error of `kind` with no path yet.
    #[cold]
    pub fn new(kind: DecodeErrorKind) -> Self {
        DecodeError { inner: Box::new(DecodeInner { kind, path: Vec::new(), offset: None }) }
    }

    /// A shortage of input: `requested` bytes needed, `available` present.
    #[cold]
    pub fn not_enough(requested: usize, available: usize) -> Self {
        Self::new(DecodeErrorKind::NotEnoughBytes { requested, available })
    }

    /// What went wrong.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.inner.kind
    }

    /// The (struct, field) path from the outermost message to the failing field.
    pub fn path(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        self.inner.path.iter().rev().copied()
    }

    /// Byte offset from the start of the decoded input where decoding stopped, when known.
    pub fn offset(&self) -> Option<usize> {
        self.inner.offset
    }

    /// Records that the error happened inside `structure.field`.
    #[cold]
    pub fn within(mut self, structure: &'static str, field: &'static str) -> Self {
        self.inner.path.push((structure, field));
        self
    }

    /// Records the byte offset at which decoding stopped (the first one set wins).
    #[cold]
    pub fn at_offset(mut self, offset: usize) -> Self {
        self.inner.offset.get_or_insert(offset);
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("failed to decode")?;
        write_path(f, self.path())?;
        write!(f, ": {}", self.inner.kind)?;
        if let Some(offset) = self.inner.offset {
            write!(f, " at byte {offset}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DecodeError {}

/// What went wrong while encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeErrorKind {
    /// The version is outside the message's valid versions.
    UnsupportedVersion { version: i16, min: i16, max: i16 },
    /// A field that this version lacks holds a non-default value and is not ignorable.
    FieldNotInVersion { version: i16 },
    /// A `None` in a field that is not nullable at this version.
    NullNotAllowed { version: i16 },
    /// A string, bytes or array is longer than its length prefix can express.
    TooLong { length: usize, max: usize },
    /// Unknown tagged fields cannot be written at a version that is not flexible.
    TaggedFieldsNotFlexible { version: i16 },
    /// A request frame whose header names another API than its body carries.
    ApiKeyMismatch { header: i16, body: i16 },
}

impl fmt::Display for EncodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedVersion { version, min, max } => {
                write!(f, "version {version} is not supported (valid {min}..={max})")
            }
            Self::FieldNotInVersion { version } => write!(
                f,
                "field is set to a non-default value but does not exist at version {version} and is not ignorable"
            ),
            Self::NullNotAllowed { version } => write!(f, "null is not allowed at version {version}"),
            Self::TooLong { length, max } => write!(f, "length {length} exceeds the maximum {max}"),
            Self::TaggedFieldsNotFlexible { version } => {
                write!(f, "tagged fields cannot be written at non-flexible version {version}")
            }
            Self::ApiKeyMismatch { header, body } => {
                write!(f, "the header names api key {header} but the body is of api key {body}")
            }
        }
    }
}

/// An encode failure: what went wrong and in which struct and field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    kind: EncodeErrorKind,
    path: Vec<(&'static str, &'static str)>,
}

impl EncodeError {
    /// An error of `kind` with no path yet.
    #[cold]
    pub fn new(kind: EncodeErrorKind) -> Self {
        EncodeError { kind, path: Vec::new() }
    }

    /// What went wrong.
    pub fn kind(&self) -> &EncodeErrorKind {
        &self.kind
    }

    /// The (struct, field) path from the outermost message to the failing field.
    pub fn path(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        self.path.iter().rev().copied()
    }

    /// Records that the error happened inside `structure.field`.
    #[cold]
    pub fn within(mut self, structure: &'static str, field: &'static str) -> Self {
        self.path.push((structure, field));
        self
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("failed to encode")?;
        write_path(f, self.path())?;
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for EncodeError {}

/// Why a read failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadError {
    /// Fewer bytes remained than the field needs.
    NotEnoughBytes { requested: usize, available: usize },
    /// A varint ran past its maximum width (5 bytes, or 10 for a varlong).
    VarintTooLong,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotEnoughBytes { requested, available } => {
                write!(f, "not enough bytes (requested {requested}, available {available})")
            }
            ReadError::VarintTooLong => f.write_str("varint longer than its maximum width"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<ReadError> for DecodeError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::NotEnoughBytes { requested, available } => DecodeError::not_enough(requested, available),
            ReadError::VarintTooLong => DecodeError::new(DecodeErrorKind::VarintTooLong),
        }
    }
}

/// A length over what its prefix (or Kafka) allows.
pub(crate) fn too_long(length: usize, max: usize) -> EncodeError {
    EncodeError::new(EncodeErrorKind::TooLong { length, max })
}
