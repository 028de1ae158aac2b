//! A user program on the kwire crates from the registry.
