//! Tagged fields that a decoder did not recognise, kept so they can be written back.

use std::collections::BTreeMap;

use bytes::Bytes;

/// Unknown tagged fields by tag, in tag order, each holding its raw value bytes.
pub type UnknownTags = BTreeMap<u32, Bytes>;
