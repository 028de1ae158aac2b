//! Kafka's framing: the runtime's one reader of it ([`kwire_runtime::framing`]), which the
//! connection reads responses with, here where its users found it.

pub use kwire_runtime::framing::*;
