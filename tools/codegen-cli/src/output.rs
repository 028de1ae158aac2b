//! How every subcommand speaks: results on stdout, which may be a pipe that closes early
//! (`| head`), and failures as one `error: …` line on stderr.

use std::fmt::Display;
use std::io::{ErrorKind, Write};
use std::process::ExitCode;

/// Writes `text` to stdout. A reader that went away (`| head`) ends the command quietly with
/// status 0, as a closed pipe means nobody wants the rest.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(2);
    }
}

/// `text` and a newline on stdout.
pub fn println(text: impl Display) {
    print(&format!("{text}\n"));
}

/// Reports a failure the one way every subcommand does, and gives the exit status.
pub fn fail(what: impl Display, status: u8) -> ExitCode {
    eprintln!("error: {what}");
    ExitCode::from(status)
}
