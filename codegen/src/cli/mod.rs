//! The CLI's commands beyond `generate` and `check`, one file each.

pub mod diff;
pub mod explain;
pub mod site;
