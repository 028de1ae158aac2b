//! Typed ids for the fields whose schema names an `entityType`: a topic name is a
//! [`TopicName`], not any string, and a broker id a [`BrokerId`], not any `i32`.
//!
//! Each is `#[repr(transparent)]` over the wire value, so generated code reads and writes it
//! exactly as the plain value (no cost on the wire path). The string ones hash and compare as
//! `str` and implement `Borrow<str>`, so a `HashMap<TopicName, _>` is searched with a `&str`.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use crate::fixed_array::Fixed;
use crate::str_bytes::StrBytes;

macro_rules! string_entity {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name(pub StrBytes);

        impl $name {
            /// A name from a static literal, without allocating.
            pub const fn from_static_str(s: &'static str) -> Self {
                $name(StrBytes::from_static_str(s))
            }
            /// The name as text.
            pub fn as_str(&self) -> &str {
                self.0.as_str()
            }
            /// The underlying string.
            pub fn into_inner(self) -> StrBytes {
                self.0
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                self.0.as_str()
            }
        }
        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.0.as_str()
            }
        }
        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                self.0.as_str()
            }
        }
        impl From<StrBytes> for $name {
            fn from(s: StrBytes) -> Self {
                $name(s)
            }
        }
        impl From<$name> for StrBytes {
            fn from(s: $name) -> Self {
                s.0
            }
        }
        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(StrBytes::from(s))
            }
        }
        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(StrBytes::from(s))
            }
        }
        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0.as_str() == other
            }
        }
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0.as_str() == *other
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self.0.as_str(), f)
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.0.as_str())
            }
        }
    )*};
}

macro_rules! int_entity {
    ($($(#[$doc:meta])* $name:ident($int:ty);)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name(pub $int);

        impl $name {
            /// The plain value.
            pub const fn get(self) -> $int {
                self.0
            }
        }

        impl Deref for $name {
            type Target = $int;
            fn deref(&self) -> &$int {
                &self.0
            }
        }
        impl From<$int> for $name {
            fn from(v: $int) -> Self {
                $name(v)
            }
        }
        impl From<$name> for $int {
            fn from(v: $name) -> Self {
                v.0
            }
        }
        impl PartialEq<$int> for $name {
            fn eq(&self, other: &$int) -> bool {
                self.0 == *other
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
        impl Fixed for $name {
            const SIZE: usize = <$int as Fixed>::SIZE;
            #[inline(always)]
            fn write_be(self, out: &mut [u8]) {
                self.0.write_be(out)
            }
            #[inline(always)]
            fn read_be(raw: &[u8]) -> Self {
                $name(<$int>::read_be(raw))
            }
        }
    )*};
}

string_entity! {
    /// A topic's name (`entityType: topicName`).
    TopicName;
    /// A consumer group's id (`entityType: groupId`).
    GroupId;
    /// A transactional producer's id (`entityType: transactionalId`).
    TransactionalId;
}

int_entity! {
    /// A broker's id (`entityType: brokerId`); Kafka uses -1 for "none".
    BrokerId(i32);
    /// A producer's id (`entityType: producerId`); Kafka uses -1 for "none".
    ProducerId(i64);
}
