//! Lines on stdout, which may be a pipe that closes early (`kwire07 zk dump | head`): a reader
//! that went away ends the command quietly with status 0, as a closed pipe means nobody wants
//! the rest. A leaf module: `outln!` is what subcommands use instead of `println!`.

use std::fmt::Arguments;
use std::io::{ErrorKind, Write};

/// `println!` that ends the command quietly on a closed stdout.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}

/// Writes one line to stdout (see the module docs).
pub fn line(args: Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{args}") {
        quit_on(&e);
        eprintln!("kwire07: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

/// Ends the process quietly if `e` is a closed pipe.
pub fn quit_on(e: &std::io::Error) {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
}
