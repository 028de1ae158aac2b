//! One module per subcommand: its arguments and its run function.

pub mod consume;
pub mod groups;
pub mod metadata;
pub mod perf;
pub mod produce;
pub mod tap;

/// What a subcommand returns; the error prints as one `kwire: …` line.
pub type CmdResult<T = ()> = Result<T, Box<dyn std::error::Error>>;
