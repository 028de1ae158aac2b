//! One module per subcommand: its arguments and its run function.

pub mod consume;
pub mod offsets;
pub mod perf;
pub mod produce;
pub mod topics;
pub mod zk;
