//! Tagged fields that a decoder did not recognise, kept so they can be written back.

use std::collections::btree_map::{self, BTreeMap};
use std::fmt;

use bytes::Bytes;

/// Unknown tagged fields by tag, in tag order, each holding its raw value bytes.
///
/// Nearly every struct on the wire has none, and every generated struct carries one of these,
/// so the empty case is a single null pointer: building and dropping it costs nothing, and it
/// keeps the structs small. A map is allocated only when a tag is kept.
#[derive(Clone, Default)]
#[allow(clippy::box_collection)] // the box is the point: 8 bytes in every struct instead of 24
pub struct UnknownTags(Option<Box<BTreeMap<u32, Bytes>>>);

/// The map iterated when there are no tags, so that [`UnknownTags::iter`] has one type.
static NO_TAGS: BTreeMap<u32, Bytes> = BTreeMap::new();

impl UnknownTags {
    /// No unknown tags.
    pub const fn new() -> Self {
        UnknownTags(None)
    }

    /// Whether no tag is kept.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|map| map.is_empty())
    }

    /// How many tags are kept.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |map| map.len())
    }

    /// The value kept for `tag`.
    pub fn get(&self, tag: &u32) -> Option<&Bytes> {
        self.0.as_ref()?.get(tag)
    }

    /// Whether `tag` is kept.
    pub fn contains_key(&self, tag: &u32) -> bool {
        self.get(tag).is_some()
    }

    /// Keeps `value` for `tag`, returning the value it replaces.
    pub fn insert(&mut self, tag: u32, value: Bytes) -> Option<Bytes> {
        self.0.get_or_insert_with(Box::default).insert(tag, value)
    }

    /// Removes and returns the value kept for `tag`.
    pub fn remove(&mut self, tag: &u32) -> Option<Bytes> {
        self.0.as_mut()?.remove(tag)
    }

    /// Removes every tag.
    pub fn clear(&mut self) {
        self.0 = None;
    }

    /// The tags in ascending order with their values.
    #[inline]
    pub fn iter(&self) -> btree_map::Iter<'_, u32, Bytes> {
        self.0.as_deref().unwrap_or(&NO_TAGS).iter()
    }

    /// The map entry for `tag`, allocating the map if there is none yet.
    pub fn entry(&mut self, tag: u32) -> btree_map::Entry<'_, u32, Bytes> {
        self.0.get_or_insert_with(Box::default).entry(tag)
    }
}

impl fmt::Debug for UnknownTags {
    /// Prints as a map, `{}` when empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Equal when they hold the same tags and values, however they got there.
impl PartialEq for UnknownTags {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for UnknownTags {}

impl std::hash::Hash for UnknownTags {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for entry in self {
            entry.hash(state);
        }
    }
}

impl<'a> IntoIterator for &'a UnknownTags {
    type Item = (&'a u32, &'a Bytes);
    type IntoIter = btree_map::Iter<'a, u32, Bytes>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for UnknownTags {
    type Item = (u32, Bytes);
    type IntoIter = btree_map::IntoIter<u32, Bytes>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.map(|map| *map).unwrap_or_default().into_iter()
    }
}

impl FromIterator<(u32, Bytes)> for UnknownTags {
    fn from_iter<I: IntoIterator<Item = (u32, Bytes)>>(iter: I) -> Self {
        let map: BTreeMap<u32, Bytes> = iter.into_iter().collect();
        if map.is_empty() {
            UnknownTags(None)
        } else {
            UnknownTags(Some(Box::new(map)))
        }
    }
}

impl Extend<(u32, Bytes)> for UnknownTags {
    fn extend<I: IntoIterator<Item = (u32, Bytes)>>(&mut self, iter: I) {
        for (tag, value) in iter {
            self.insert(tag, value);
        }
    }
}

impl From<BTreeMap<u32, Bytes>> for UnknownTags {
    fn from(map: BTreeMap<u32, Bytes>) -> Self {
        map.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_until_a_tag_is_kept_and_equal_regardless_of_history() {
        let mut tags = UnknownTags::new();
        assert!(tags.is_empty());
        assert_eq!(format!("{tags:?}"), "{}");
        assert_eq!(tags.insert(7, Bytes::from_static(b"b")), None);
        assert_eq!(tags.insert(2, Bytes::from_static(b"a")), None);
        assert_eq!(tags.len(), 2);
        assert_eq!(tags.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [2, 7]);
        assert_eq!(format!("{tags:?}"), "{2: b\"a\", 7: b\"b\"}");
        assert_eq!(tags.remove(&2).as_deref(), Some(&b"a"[..]));
        assert_eq!(tags.remove(&7).as_deref(), Some(&b"b"[..]));
        assert!(tags.is_empty());
        // An emptied map and a never-used one are the same value.
        assert_eq!(tags, UnknownTags::new());
    }
}
