//! Inclusive version ranges, as schemas declare them (`"0+"`, `"3-7"`, `"none"`).

use std::fmt;

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

    /// Whether `version` is inside the range.
    pub const fn contains(&self, version: i16) -> bool {
        self.min <= version && version <= self.max
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
