//! A schema as validation leaves it: every string of the JSON (versions, types, defaults,
//! kinds, tags) parsed once into typed values. Lowering ([`crate::lower`]) only arranges these
//! into the IR; it parses nothing and cannot fail.

use crate::ir::{Field, Message, Retired, Versions};

/// What a schema file that passed every per-file rule holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked {
    Live(CheckedMessage),
    /// `validVersions: "none"`: nothing to lower, its key reserved.
    Retired(Retired),
}

/// One live schema file that passed every per-file rule.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedMessage {
    /// The message's own properties; its `fields` and `structs` are left for lowering to fill.
    pub message: Message,
    pub fields: Vec<CheckedField>,
    /// `commonStructs`, in declaration order.
    pub common_structs: Vec<CheckedStruct>,
}

/// An entry of `commonStructs`.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedStruct {
    pub name: String,
    /// The versions it is declared to exist in.
    pub versions: Versions,
    pub fields: Vec<CheckedField>,
}

/// A field, resolved, with the fields of the inline struct it defines (empty otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedField {
    pub field: Field,
    pub nested: Vec<CheckedField>,
}
