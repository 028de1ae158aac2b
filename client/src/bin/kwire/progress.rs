//! Progress and rates on stderr, only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    label: &'static str,
    enabled: bool,
    start: Instant,
    last: Instant,
    shown: bool,
}

impl Progress {
    pub fn new(label: &'static str) -> Progress {
        let now = Instant::now();
        Progress { label, enabled: std::io::stderr().is_terminal(), start: now, last: now, shown: false }
    }

    /// Updates the status line at most twice a second.
    pub fn tick(&mut self, messages: u64, bytes: u64) {
        if !self.enabled || self.last.elapsed() < Duration::from_millis(500) {
            return;
        }
        self.last = Instant::now();
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{}: {messages} messages, {:.1} MB, {:.0} msg/s, {:.1} MB/s   ",
            self.label,
            bytes as f64 / 1e6,
            messages as f64 / secs,
            bytes as f64 / 1e6 / secs
        );
        let _ = err.flush();
        self.shown = true;
    }

    /// Ends the status line with a summary.
    pub fn finish(&mut self, messages: u64, bytes: u64) {
        if !self.enabled {
            return;
        }
        if self.shown {
            eprint!("\r");
        }
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        eprintln!(
            "{}: {messages} messages, {:.1} MB in {secs:.2} s ({:.0} msg/s, {:.1} MB/s)   ",
            self.label,
            bytes as f64 / 1e6,
            messages as f64 / secs,
            bytes as f64 / 1e6 / secs
        );
    }
}
