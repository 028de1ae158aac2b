//! A `kwire tap` process for the tap's tests: started on a free port in front of an upstream,
//! its stdout and stderr collected line by line as it prints them.
#![allow(dead_code)] // each test binary uses its own part

use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kwire_test_support::free_port;

/// A running tap, its stdout and stderr lines collected as they come.
pub struct Tap {
    child: Child,
    pub port: u16,
    out: Arc<Mutex<Vec<String>>>,
    err: Arc<Mutex<Vec<String>>>,
}

impl Tap {
    pub fn start(upstream: &str, extra: &[&str]) -> Tap {
        let port = free_port().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(["tap", "--listen", &format!("127.0.0.1:{port}"), "--upstream", upstream])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (out, err) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(Vec::new())));
        for (stream, sink) in [
            (Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>, out.clone()),
            (Box::new(child.stderr.take().unwrap()), err.clone()),
        ] {
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    sink.lock().unwrap().push(line);
                }
            });
        }
        let tap = Tap { child, port, out, err };
        tap.wait_for("the tap to listen", |_, err| err.iter().any(|l| l.contains("listening on")));
        tap
    }

    pub fn connect(&self) -> TcpStream {
        TcpStream::connect(("127.0.0.1", self.port)).unwrap()
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn out(&self) -> Vec<String> {
        self.out.lock().unwrap().clone()
    }

    pub fn err(&self) -> Vec<String> {
        self.err.lock().unwrap().clone()
    }

    /// Waits (up to a minute) until `done` holds for stdout and stderr.
    pub fn wait_for(&self, what: &str, done: impl Fn(&[String], &[String]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (out, err) = (self.out.lock().unwrap().clone(), self.err.lock().unwrap().clone());
            if done(&out, &err) {
                return;
            }
            let tail = &out[out.len().saturating_sub(20)..];
            assert!(Instant::now() < deadline, "waiting for {what}: out (last 20) {tail:#?}\nerr {err:#?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The line connection `conn` ended with (its counts), once it has.
    pub fn ended(&self, conn: u32) -> String {
        let prefix = format!(" conn {conn} ");
        let ending = |l: &&String| l.contains(&prefix) && l.contains(" waiting at once");
        self.wait_for("the connection to end", |_, err| err.iter().any(|l| ending(&l)));
        self.err.lock().unwrap().iter().find(ending).unwrap().clone()
    }

    /// The tap's resident memory, from /proc.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
