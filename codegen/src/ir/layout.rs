//! The wire layout: for a struct at a version, what each field is on the wire. This is the
//! one place Kafka's layout rules are written; the emitter (over version ranges), `explain`,
//! the sample encoder and `diff` (at one version) all read them from here.
//!
//! The rules: a field is sent where its versions hold it, as a tagged field where its
//! `taggedVersions` also hold it and in the regular (untagged) part before that; strings,
//! bytes, records and arrays use compact lengths where the field's own `flexibleVersions`
//! says so, else where the message is flexible; a tagged section follows every struct at the
//! message's flexible versions.

use super::{in_versions, Field, FieldType, Message, Versions};

impl Field {
    /// The versions in which the field is sent as a tagged field (within its versions).
    pub fn tagged_range(&self) -> Option<Versions> {
        self.tagged_versions.and_then(|t| t.intersect(&self.versions))
    }

    /// The versions in which the field is sent in the regular, untagged part: its versions
    /// before it became tagged (a field is never untagged again after being tagged).
    pub fn regular_range(&self) -> Option<Versions> {
        match self.tagged_range() {
            None => Some(self.versions),
            Some(t) if t.min > self.versions.min => Some(Versions::new(self.versions.min, t.min - 1)),
            Some(_) => None,
        }
    }

    /// The versions in which the field's lengths are compact (uvarint, length + 1): the
    /// field's own `flexibleVersions` override, else the message's flexible versions.
    pub fn compact_versions(&self, message_flexible: Option<Versions>) -> Option<Versions> {
        match self.flexible_versions {
            Some(over) => over,
            None => message_flexible,
        }
    }
}

impl FieldType {
    /// The encoded size of every value of this type, if it is fixed: the one size table.
    pub fn fixed_size(&self) -> Option<usize> {
        match self {
            FieldType::Bool | FieldType::Int8 => Some(1),
            FieldType::Int16 | FieldType::Uint16 => Some(2),
            FieldType::Int32 | FieldType::Uint32 => Some(4),
            FieldType::Int64 | FieldType::Float64 => Some(8),
            FieldType::Uuid => Some(16),
            _ => None,
        }
    }
}

/// How deep [`Layout::min_size`] follows struct fields: schemas nest a handful of levels, and a
/// struct that holds itself (which no Rust type could) must not recurse forever here.
const MAX_NESTING: usize = 64;

/// Where a field is at one version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Not on the wire at this version (it must hold its default to be encoded).
    Absent,
    /// In the regular part, in schema order.
    Regular,
    /// In the tagged section, under this tag.
    Tagged(u32),
}

/// One field of a struct at one version.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    pub field: &'a Field,
    /// The field's index in its struct (schema order).
    pub index: usize,
    pub presence: Presence,
    /// Lengths (strings, bytes, records, arrays) are compact.
    pub compact: bool,
    pub nullable: bool,
}

/// A struct's fields at one version.
#[derive(Debug, Clone)]
pub struct Layout<'a> {
    pub version: i16,
    /// A tagged section follows the regular fields.
    pub flexible: bool,
    /// Every field of the struct, in schema order.
    pub slots: Vec<Slot<'a>>,
}

impl<'a> Layout<'a> {
    /// The layout of `fields` (the message's own or one of its structs') at `version`.
    pub fn of(msg: &Message, fields: &'a [Field], version: i16) -> Layout<'a> {
        let slots = fields
            .iter()
            .enumerate()
            .map(|(index, field)| {
                let presence = if in_versions(field.tagged_range(), version) {
                    Presence::Tagged(field.tag.unwrap_or(0))
                } else if in_versions(field.regular_range(), version) {
                    Presence::Regular
                } else {
                    Presence::Absent
                };
                Slot {
                    field,
                    index,
                    presence,
                    compact: in_versions(field.compact_versions(msg.flexible_versions), version),
                    nullable: in_versions(field.nullable_versions, version),
                }
            })
            .collect();
        Layout { version, flexible: in_versions(msg.flexible_versions, version), slots }
    }

    /// The fields sent in the regular part, in wire (schema) order.
    pub fn regular(&self) -> impl Iterator<Item = &Slot<'a>> {
        self.slots.iter().filter(|s| s.presence == Presence::Regular)
    }

    /// The fewest bytes the struct takes on the wire at this version: every regular field at
    /// its smallest, and the tagged section's count where the version is flexible. An array
    /// of these structs that claims more elements than the input could hold is refused.
    pub fn min_size(&self, msg: &Message) -> usize {
        self.min_size_within(msg, 0)
    }

    fn min_size_within(&self, msg: &Message, depth: usize) -> usize {
        let fields: usize = self
            .regular()
            .map(|slot| match slot.field.ty {
                // A null struct is its marker alone.
                FieldType::Struct(_) if slot.nullable => 1,
                ref ty => min_value_size_within(msg, ty, slot.compact, self.version, depth),
            })
            .sum();
        fields + usize::from(self.flexible)
    }
}

/// The fewest bytes a (non-null) value of `ty` takes at `version`, with compact lengths or
/// not: a fixed width; an empty value's length prefix (compact: one byte; classic: `int16` for
/// strings, `int32` for bytes, records and arrays); a struct at its own smallest. What an
/// array's claimed count is checked against, per element.
pub fn min_value_size(msg: &Message, ty: &FieldType, compact: bool, version: i16) -> usize {
    min_value_size_within(msg, ty, compact, version, 0)
}

fn min_value_size_within(msg: &Message, ty: &FieldType, compact: bool, version: i16, depth: usize) -> usize {
    match ty {
        FieldType::String if compact => 1,
        FieldType::String => 2,
        FieldType::Bytes | FieldType::Records | FieldType::Array(_) if compact => 1,
        FieldType::Bytes | FieldType::Records | FieldType::Array(_) => 4,
        FieldType::Struct(name) => match msg.structs.iter().find(|s| &s.name == name) {
            Some(s) if depth < MAX_NESTING => Layout::of(msg, &s.fields, version).min_size_within(msg, depth + 1),
            _ => 1,
        },
        ty => ty.fixed_size().unwrap_or(1),
    }
}
