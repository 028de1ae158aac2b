//! One file per subcommand: its arguments and its run function.

pub mod check;
pub mod diff;
pub mod explain;
pub mod generate;
pub mod site;
