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
            "\r{}: {messages} messages, {:.1} MB, {:.0} msg/s, {:.1} MB/s, {secs:.1} s   ",
            self.label,
            bytes as f64 / 1e6,
            messages as f64 / secs,
            bytes as f64 / 1e6 / secs
        );
        let _ = err.flush();
        self.shown = true;
    }

    /// Replaces the status line with `what` (a phase without counts, e.g. a ceiling run).
    pub fn phase(&mut self, what: &str) {
        if !self.enabled {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K{}: {what}", self.label);
        let _ = err.flush();
        self.shown = true;
    }

    /// Clears the status line.
    pub fn clear(&mut self) {
        if self.enabled && self.shown {
            eprint!("\r\x1b[K");
            self.shown = false;
        }
    }

    /// Ends the status line with a summary (on a terminal only).
    pub fn finish(&mut self, messages: u64, bytes: u64) {
        if self.enabled {
            self.summary(messages, bytes, "");
        }
    }

    /// Ends the status line with a summary marked as interrupted, on stderr whether or not it
    /// is a terminal: a command stopped by SIGINT says what it did.
    pub fn interrupted(&mut self, messages: u64, bytes: u64) {
        self.summary(messages, bytes, " (interrupted)");
    }

    fn summary(&mut self, messages: u64, bytes: u64, note: &str) {
        if self.shown {
            eprint!("\r\x1b[K");
        }
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        eprintln!(
            "{}: {messages} messages, {:.1} MB in {secs:.2} s ({:.0} msg/s, {:.1} MB/s){note}",
            self.label,
            bytes as f64 / 1e6,
            messages as f64 / secs,
            bytes as f64 / 1e6 / secs
        );
    }
}

/// Set once SIGINT arrives; long-running commands check it between steps and stop with a
/// summary of what they did.
pub fn interrupt_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let set = flag.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            set.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    flag
}
