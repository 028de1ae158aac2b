//! Lookup by `mapKey` in decoded arrays.
//!
//! Kafka's Java classes hold arrays whose element has `mapKey` fields in a linked hash
//! collection. Here they stay a `Vec` (order and duplicates as on the wire, and decoding
//! builds no index, so it costs nothing more), and [`KeyedSlice`] finds elements by key with
//! a linear scan, which for the sizes Kafka sends beats building a map first.

/// An array element whose schema marks key fields (`mapKey`); generated for each such struct.
pub trait Keyed {
    /// The key as borrowed from an element: `&str` for a string field (`Option<&str>` when
    /// nullable), the value for numbers, uuids and typed ids, a tuple for several key fields.
    type Key<'a>: PartialEq
    where
        Self: 'a;

    /// This element's key.
    fn key(&self) -> Self::Key<'_>;
}

/// Lookup by key over a slice (and so over a `Vec`) of [`Keyed`] elements.
pub trait KeyedSlice<T: Keyed> {
    /// The first element with `key`.
    fn by_key<'a>(&'a self, key: T::Key<'a>) -> Option<&'a T>;
    /// Every element with `key`, in order (a response may repeat a key).
    fn all_by_key<'a>(&'a self, key: T::Key<'a>) -> impl Iterator<Item = &'a T>;
    /// Whether some element has `key`.
    fn contains_key<'a>(&'a self, key: T::Key<'a>) -> bool {
        self.by_key(key).is_some()
    }
}

impl<T: Keyed> KeyedSlice<T> for [T] {
    fn by_key<'a>(&'a self, key: T::Key<'a>) -> Option<&'a T> {
        self.iter().find(|el| el.key() == key)
    }

    fn all_by_key<'a>(&'a self, key: T::Key<'a>) -> impl Iterator<Item = &'a T> {
        self.iter().filter(move |el| el.key() == key)
    }
}
