//! Inclusive version ranges, as schemas declare them (`"0+"`, `"3-7"`, `"none"`).

use std::fmt;

use crate::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};

/// An inclusive range of versions; `max == i16::MAX` stands for an open-ended `"N+"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionRange {
    pub min: i16,
    pub max: i16,
}

impl VersionRange {
    /// The range `min..=max`.
    pub const fn new(min: i16, max: i16) -> Self {
        VersionRange { min, max }
    }

    /// Kafka's `"min+"`: every version from `min` on.
    pub const fn at_least(min: i16) -> Self {
        VersionRange { min, max: i16::MAX }
    }

    /// Whether `version` is inside the range.
    pub const fn contains(&self, version: i16) -> bool {
        self.min <= version && version <= self.max
    }

    /// The versions in both ranges, if any: what two peers can speak.
    pub const fn intersect(&self, other: &VersionRange) -> Option<VersionRange> {
        let min = if self.min > other.min { self.min } else { other.min };
        let max = if self.max < other.max { self.max } else { other.max };
        if min <= max {
            Some(VersionRange { min, max })
        } else {
            None
        }
    }

    /// The highest version in both ranges, if any: the one a client uses with a broker.
    pub const fn highest_common(&self, other: &VersionRange) -> Option<i16> {
        match self.intersect(other) {
            Some(both) => Some(both.max),
            None => None,
        }
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.max == i16::MAX {
            write!(f, "{}+", self.min)
        } else if self.min == self.max {
            write!(f, "{}", self.min)
        } else {
            write!(f, "{}-{}", self.min, self.max)
        }
    }
}

/// Fails when `version` is outside `valid` (decoding side).
#[inline]
pub fn check_decode_version(version: i16, valid: VersionRange) -> Result<(), DecodeError> {
    if valid.contains(version) {
        Ok(())
    } else {
        Err(DecodeError::new(DecodeErrorKind::UnsupportedVersion { version, min: valid.min, max: valid.max }))
    }
}

/// Fails when `version` is outside `valid` (encoding side).
#[inline]
pub fn check_encode_version(version: i16, valid: VersionRange) -> Result<(), EncodeError> {
    if valid.contains(version) {
        Ok(())
    } else {
        Err(EncodeError::new(EncodeErrorKind::UnsupportedVersion { version, min: valid.min, max: valid.max }))
    }
}
