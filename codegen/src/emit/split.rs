//! One message set split over crates, so that rustc compiles the parts side by side: its front
//! end (type checking, borrow checking, metadata) runs on one core per crate, and a whole set of
//! Kafka's messages spends seconds there before code generation can use a second core.
//!
//! Each part crate holds the modules of the schemas whose names begin with its letters, with
//! their codecs and the runtime's traits implemented on them (a trait of another crate can only
//! be implemented where the type is). The crate over the parts re-exports every module and holds
//! what spans them all: `ApiKey`, the body enums, negotiation and frames.

use std::ops::RangeInclusive;

/// A crate holding the schemas whose names begin with one of `letters` (compared lowercased).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessagePart {
    /// The part crate's path as the crate over the parts names it, e.g. `::kwire_messages_a_e`.
    pub crate_path: String,
    /// The first letters of its schemas' names, e.g. `'a'..='e'`.
    pub letters: RangeInclusive<char>,
}

impl MessagePart {
    /// The part at `crate_path` holding schemas whose names begin with one of `letters`.
    pub fn new(crate_path: impl Into<String>, letters: RangeInclusive<char>) -> Self {
        MessagePart { crate_path: crate_path.into(), letters }
    }

    /// Whether the schema named `name` (e.g. `FetchRequest`) belongs in this part: a request, its
    /// response and their shared prefix always land together.
    pub fn holds(&self, name: &str) -> bool {
        name.chars().next().is_some_and(|c| self.letters.contains(&c.to_ascii_lowercase()))
    }
}

/// Which share of a message set an index file covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexScope {
    /// Every schema's module, and everything over them: the usual, one crate.
    Whole,
    /// One part's modules and the runtime's traits on its types (see [`MessagePart`]).
    Part(MessagePart),
    /// The crate over the parts: every module re-exported from its part, and everything that
    /// spans them.
    OverParts(Vec<MessagePart>),
}

impl IndexScope {
    /// Whether this index declares the modules itself, and so implements the runtime's traits on
    /// their types (the crate over the parts re-exports them).
    pub(crate) fn declares_modules(&self) -> bool {
        !matches!(self, IndexScope::OverParts(_))
    }

    /// Whether this index holds what spans every API (`ApiKey`, the body enums, frames).
    pub(crate) fn spans_apis(&self) -> bool {
        !matches!(self, IndexScope::Part(_))
    }
}
