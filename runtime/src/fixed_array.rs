//! `FixedArray`: an array of fixed-width values (`[]int32`, `[]int64`, `[]uuid`, ...) kept in
//! its wire form, so decoding shares the input buffer instead of allocating a vector.

use std::fmt;
use std::marker::PhantomData;

use bytes::Bytes;
use uuid::Uuid;

/// A value with a fixed big-endian wire encoding.
pub trait Fixed: Copy {
    /// Encoded size in bytes.
    const SIZE: usize;
    /// Writes the value to the front of `out` (which holds at least `SIZE` bytes).
    fn write_be(self, out: &mut [u8]);
    /// Reads the value from the front of `raw` (which holds at least `SIZE` bytes).
    fn read_be(raw: &[u8]) -> Self;
}

macro_rules! fixed {
    ($($ty:ty = $n:literal;)*) => {$(
        impl Fixed for $ty {
            const SIZE: usize = $n;
            #[inline(always)]
            fn write_be(self, out: &mut [u8]) {
                if let Some(out) = out.first_chunk_mut::<$n>() {
                    *out = self.to_be_bytes();
                }
            }
            #[inline(always)]
            fn read_be(raw: &[u8]) -> Self {
                raw.first_chunk::<$n>().map_or(0 as $ty, |raw| <$ty>::from_be_bytes(*raw))
            }
        }
    )*};
}

fixed! {
    i8 = 1;
    i16 = 2;
    u16 = 2;
    i32 = 4;
    u32 = 4;
    i64 = 8;
    f64 = 8;
}

impl Fixed for bool {
    const SIZE: usize = 1;
    #[inline(always)]
    fn write_be(self, out: &mut [u8]) {
        if let Some(out) = out.first_mut() {
            *out = u8::from(self);
        }
    }
    /// Any non-zero byte is `true`, as Kafka reads it.
    #[inline(always)]
    fn read_be(raw: &[u8]) -> Self {
        raw.first().is_some_and(|b| *b != 0)
    }
}

impl Fixed for Uuid {
    const SIZE: usize = 16;
    #[inline(always)]
    fn write_be(self, out: &mut [u8]) {
        if let Some(out) = out.first_chunk_mut::<16>() {
            *out = *self.as_bytes();
        }
    }
    #[inline(always)]
    fn read_be(raw: &[u8]) -> Self {
        raw.first_chunk::<16>().map_or(Uuid::nil(), |raw| Uuid::from_bytes(*raw))
    }
}

/// An immutable array of fixed-width values stored as their big-endian encoding.
///
/// Decoding one is a slice of the input (a reference count, no allocation, no per-element
/// work) and encoding it is one copy, where a `Vec` costs an allocation and a loop each way.
/// Kafka's metadata carries tens of thousands of small `[]int32` replica lists, so this is
/// what decoding a large MetadataResponse spends its time on. Read it with [`iter`](Self::iter),
/// [`get`](Self::get) or [`to_vec`](Self::to_vec); build it from a `Vec`, an array, a slice or
/// an iterator.
///
/// ```
/// use kwire_runtime::FixedArray;
/// let replicas: FixedArray<i32> = vec![1, 2, 3].into();
/// assert_eq!(replicas.len(), 3);
/// assert_eq!(replicas.iter().max(), Some(3));
/// assert_eq!(replicas, [1, 2, 3]);
/// ```
pub struct FixedArray<T> {
    raw: Bytes,
    _values: PhantomData<fn() -> T>,
}

impl<T: Fixed> FixedArray<T> {
    /// An empty array.
    pub const fn new() -> Self {
        FixedArray { raw: Bytes::new(), _values: PhantomData }
    }

    /// Wraps encoded values. `raw.len()` must be a multiple of `T::SIZE`, which the decoder
    /// guarantees; a trailing partial value would be ignored.
    pub fn from_raw(raw: Bytes) -> Self {
        FixedArray { raw, _values: PhantomData }
    }

    /// The values in their wire encoding.
    pub fn raw(&self) -> &Bytes {
        &self.raw
    }

    /// Number of values.
    #[inline]
    pub fn len(&self) -> usize {
        self.raw.len() / T::SIZE
    }

    /// Whether there are no values.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.raw.len() < T::SIZE
    }

    /// The value at `index`.
    pub fn get(&self, index: usize) -> Option<T> {
        let start = index.checked_mul(T::SIZE)?;
        self.raw.get(start..start.checked_add(T::SIZE)?).map(T::read_be)
    }

    /// The first value.
    pub fn first(&self) -> Option<T> {
        self.get(0)
    }

    /// The values in order.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { chunks: self.raw.chunks_exact(T::SIZE), _values: PhantomData }
    }

    /// Whether `value` is one of the values.
    pub fn contains(&self, value: &T) -> bool
    where
        T: PartialEq,
    {
        self.iter().any(|v| v == *value)
    }

    /// The values in a vector.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }
}

impl<T: Fixed> Default for FixedArray<T> {
    fn default() -> Self {
        FixedArray::new()
    }
}

impl<T> Clone for FixedArray<T> {
    fn clone(&self) -> Self {
        FixedArray { raw: self.raw.clone(), _values: PhantomData }
    }
}

/// Equal when the encodings are equal, which for every [`Fixed`] type but `f64` (NaN, ±0)
/// and `bool` (non-zero bytes read back from the wire) is value equality.
impl<T> PartialEq for FixedArray<T> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<T> Eq for FixedArray<T> {}

impl<T> std::hash::Hash for FixedArray<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.raw.hash(state);
    }
}

impl<T: Fixed + PartialEq> PartialEq<[T]> for FixedArray<T> {
    fn eq(&self, other: &[T]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == *b)
    }
}

impl<T: Fixed + PartialEq, const N: usize> PartialEq<[T; N]> for FixedArray<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        *self == other[..]
    }
}

impl<T: Fixed + PartialEq> PartialEq<Vec<T>> for FixedArray<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        *self == other[..]
    }
}

impl<T: Fixed + fmt::Debug> fmt::Debug for FixedArray<T> {
    /// Prints as a list of values, like a `Vec`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Fixed> FromIterator<T> for FixedArray<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut raw = Vec::with_capacity(iter.size_hint().0.saturating_mul(T::SIZE));
        let mut value_bytes = [0u8; 16]; // the widest `Fixed` type (UUID)
        for value in iter {
            value.write_be(&mut value_bytes);
            raw.extend_from_slice(&value_bytes[..T::SIZE]);
        }
        FixedArray::from_raw(raw.into())
    }
}

impl<T: Fixed> From<&[T]> for FixedArray<T> {
    fn from(values: &[T]) -> Self {
        values.iter().copied().collect()
    }
}

impl<T: Fixed> From<Vec<T>> for FixedArray<T> {
    fn from(values: Vec<T>) -> Self {
        values.into_iter().collect()
    }
}

impl<T: Fixed, const N: usize> From<[T; N]> for FixedArray<T> {
    fn from(values: [T; N]) -> Self {
        values.into_iter().collect()
    }
}

impl<T: Fixed> From<FixedArray<T>> for Vec<T> {
    fn from(values: FixedArray<T>) -> Self {
        values.to_vec()
    }
}

impl<'a, T: Fixed> IntoIterator for &'a FixedArray<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// Iterator over the values of a [`FixedArray`].
pub struct Iter<'a, T> {
    chunks: std::slice::ChunksExact<'a, u8>,
    _values: PhantomData<fn() -> T>,
}

impl<T: Fixed> Iterator for Iter<'_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        self.chunks.next().map(T::read_be)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<T: Fixed> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<T> {
        self.chunks.next_back().map(T::read_be)
    }
}

impl<T: Fixed> ExactSizeIterator for Iter<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_big_endian_values_and_reads_them_back() {
        let a: FixedArray<i32> = vec![1, -2, 0x0102_0304].into();
        assert_eq!(&a.raw()[..], &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4]);
        assert_eq!(a.len(), 3);
        assert_eq!(a.get(1), Some(-2));
        assert_eq!(a.get(3), None);
        assert_eq!(a.get(usize::MAX), None);
        assert_eq!(a.iter().rev().collect::<Vec<_>>(), [0x0102_0304, -2, 1]);
        assert_eq!(format!("{a:?}"), "[1, -2, 16909060]");
        assert_eq!(a, vec![1, -2, 0x0102_0304]);
        assert!(a.contains(&-2));
        assert_eq!(Vec::from(a.clone()), a.to_vec());
        let u: FixedArray<Uuid> = [Uuid::from_u128(7), Uuid::nil()].into();
        assert_eq!(u.to_vec(), [Uuid::from_u128(7), Uuid::nil()]);
        let unknown_length: FixedArray<i64> = (0..100).filter(|v| v % 3 == 0).collect();
        assert_eq!(unknown_length.len(), 34);
        assert_eq!(unknown_length.iter().sum::<i64>(), (0..100i64).filter(|v| v % 3 == 0).sum::<i64>());
        assert!(FixedArray::<i16>::new().is_empty());
    }
}
