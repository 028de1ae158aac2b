//! The `kwire07-broker` binary as a child process: free port, temp log dir, wait until it
//! listens, `kill -9`, SIGTERM, restart on the same port and log dir.
//!
//! Finding the binary: [`kwire07_broker_bin`] uses `$KWIRE07_BROKER_BIN` if set (to run the same
//! tests against another build), else `<target dir>/<profile>/kwire07-broker` next to the running
//! test executable (`target/debug/deps/..` → `target/debug/kwire07-broker`). Cargo builds a
//! package's binaries only for that package's own tests, so build it first:
//! `cargo build -p kwire07-broker` (same `CARGO_TARGET_DIR` and profile as the tests).

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::TempDir;

const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The `kwire07-broker` executable (see the module docs).
pub fn kwire07_broker_bin() -> PathBuf {
    sibling_binary("kwire07-broker", "KWIRE07_BROKER_BIN", "kwire07-broker")
}

/// `$env_var` if set, else the binary `name` that cargo built next to the running test
/// executable (`target/<profile>/`), failing with the command that builds it.
pub(crate) fn sibling_binary(name: &str, env_var: &str, package: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env_var) {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("current test executable");
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let bin = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.exists(), "{} not found: run `cargo build -p {package}` first (or set {env_var})", bin.display());
    bin
}

/// Starts `kwire07-broker` ([`kwire07_broker_bin`]) and waits until it accepts connections.
pub fn broker(opts: BrokerOptions) -> BrokerProcess {
    BrokerProcess::start(kwire07_broker_bin(), opts).expect("kwire07-broker starts")
}

/// How to start a broker.
#[derive(Debug, Clone, Default)]
pub struct BrokerOptions {
    /// `--broker-id`.
    pub broker_id: Option<u32>,
    /// `--num-partitions`.
    pub num_partitions: Option<u32>,
    /// `--zookeeper`.
    pub zookeeper: Option<String>,
    /// A fixed port; a free one when `None`.
    pub port: Option<u16>,
    /// An existing log dir; a fresh temp dir when `None`.
    pub log_dir: Option<PathBuf>,
    /// `--set KEY=VALUE` pairs.
    pub set: Vec<(String, String)>,
    /// Extra arguments, verbatim.
    pub args: Vec<String>,
    /// `ulimit -n` for the process (soft and hard), like a service manager's limit.
    pub nofile: Option<u64>,
}

impl BrokerOptions {
    pub fn set(mut self, key: &str, value: impl ToString) -> Self {
        self.set.push((key.to_owned(), value.to_string()));
        self
    }
}

/// A running `kwire07-broker`. Killed with SIGKILL on drop.
#[derive(Debug)]
pub struct BrokerProcess {
    bin: PathBuf,
    args: Vec<String>,
    nofile: Option<u64>,
    port: u16,
    log_dir: PathBuf,
    child: Option<Child>,
    /// Holds the temp dirs (log dir, stderr files) alive.
    scratch: TempDir,
    starts: u32,
}

impl BrokerProcess {
    /// Starts `bin` and waits until it accepts connections.
    pub fn start(bin: impl Into<PathBuf>, opts: BrokerOptions) -> std::io::Result<BrokerProcess> {
        let scratch = TempDir::with_prefix("kwire07-broker")?;
        let log_dir = opts.log_dir.clone().unwrap_or_else(|| scratch.path().join("logs"));
        // Port 0: the broker binds a free port itself and logs it, so that two tests starting
        // brokers at the same moment can never be handed the same one.
        let port = opts.port.unwrap_or(0);
        let mut args = vec![
            "--log-dir".to_owned(),
            log_dir.display().to_string(),
            "--port".to_owned(),
            port.to_string(),
            "--bind".to_owned(),
            "127.0.0.1".to_owned(),
        ];
        if let Some(id) = opts.broker_id {
            args.extend(["--broker-id".to_owned(), id.to_string()]);
        }
        if let Some(n) = opts.num_partitions {
            args.extend(["--num-partitions".to_owned(), n.to_string()]);
        }
        if let Some(zk) = &opts.zookeeper {
            args.extend(["--zookeeper".to_owned(), zk.clone()]);
        }
        for (k, v) in &opts.set {
            args.extend(["--set".to_owned(), format!("{k}={v}")]);
        }
        args.extend(opts.args.iter().cloned());
        let mut b = BrokerProcess {
            bin: bin.into(),
            args,
            nofile: opts.nofile,
            port,
            log_dir,
            child: None,
            scratch,
            starts: 0,
        };
        b.spawn_and_wait()?;
        Ok(b)
    }

    /// Starts the process without waiting; returns its exit status if it exits within
    /// `within` (for tests of refused start-ups), else leaves it running.
    pub fn spawn_expecting_exit(&mut self, within: Duration) -> std::io::Result<Option<ExitStatus>> {
        self.spawn()?;
        self.exit_within(within)
    }

    fn stderr_path(&self, n: u32) -> PathBuf {
        self.scratch.path().join(format!("stderr-{n}.log"))
    }

    fn spawn(&mut self) -> std::io::Result<()> {
        assert!(self.child.is_none(), "broker already running");
        self.starts += 1;
        let err = std::fs::File::create(self.stderr_path(self.starts))?;
        let mut command = match self.nofile {
            None => Command::new(&self.bin),
            Some(n) => {
                // The shell sets the limit and becomes the broker (same pid).
                let mut c = Command::new("sh");
                c.args(["-c", &format!("ulimit -n {n} && exec \"$0\" \"$@\"")]).arg(&self.bin);
                c
            }
        };
        let child = command
            .args(&self.args)
            // The start-up line (where it listens) is needed whatever else is logged.
            .env(
                "RUST_LOG",
                format!(
                    "{},kwire07_broker::server=info",
                    std::env::var("KWIRE07_TEST_LOG").unwrap_or_else(|_| "info".to_owned())
                ),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()?;
        self.child = Some(child);
        Ok(())
    }

    /// Starts the process and waits for its "listening on ADDR" line: proof that this process
    /// (not another test's broker on a reused port) holds the port. A broker started on port 0
    /// keeps the port it got for its restarts.
    fn spawn_and_wait(&mut self) -> std::io::Result<()> {
        self.spawn()?;
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(port) = listening_port(&self.stderr()) {
                if self.port == 0 {
                    self.port = port;
                    if let Some(i) = self.args.iter().position(|a| a == "--port") {
                        self.args[i + 1] = port.to_string();
                    }
                }
                if port == self.port && TcpStream::connect_timeout(&self.addr(), Duration::from_millis(500)).is_ok() {
                    return Ok(());
                }
            }
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                self.child = None;
                return Err(std::io::Error::other(format!("kwire07-broker exited with {status}: {}", self.stderr())));
            }
            if Instant::now() > deadline {
                return Err(std::io::Error::other(format!("kwire07-broker not listening: {}", self.stderr())));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// `127.0.0.1:<port>`.
    pub fn address(&self) -> String {
        self.addr().to_string()
    }

    pub fn log_dir(&self) -> &Path {
        &self.log_dir
    }

    /// `VmHWM` and `VmRSS` of the running process, in KiB (Linux `/proc`).
    pub fn memory_kib(&self) -> Option<(u64, u64)> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        let field =
            |name: &str| status.lines().find(|l| l.starts_with(name))?.split_whitespace().nth(1)?.parse::<u64>().ok();
        Some((field("VmHWM:")?, field("VmRSS:")?))
    }

    /// User plus system CPU time of the running process so far (Linux `/proc`).
    pub fn cpu_time(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()?)).ok()?;
        // Fields after the command name in parentheses; utime and stime are fields 14 and 15.
        let rest = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        Some(Duration::from_millis(ticks * 10))
    }

    /// How many file descriptors the running process has open (Linux `/proc`).
    pub fn open_fds(&self) -> Option<usize> {
        Some(std::fs::read_dir(format!("/proc/{}/fd", self.pid()?)).ok()?.count())
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The exit status if the process ends within `within` (it is then no longer running);
    /// `None` if it is still running after that.
    pub fn exit_within(&mut self, within: Duration) -> std::io::Result<Option<ExitStatus>> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().transpose()).transpose()? {
                self.child = None;
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| c.try_wait().ok().flatten().is_none())
    }

    /// stderr (the tracing log) of the latest start.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.stderr_path(self.starts)).unwrap_or_default()
    }

    /// Waits until the latest start's stderr contains `needle` (e.g. "registered in ZooKeeper",
    /// logged once the broker's ZooKeeper nodes exist). False on timeout or exit.
    pub fn wait_for_stderr(&mut self, needle: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.stderr().contains(needle) {
                return true;
            }
            if Instant::now() > deadline || !self.is_running() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends a signal by name (`TERM`, `STOP`, `CONT`, …) with `kill(1)`.
    pub fn signal(&self, name: &str) -> std::io::Result<()> {
        let pid = self.pid().ok_or_else(|| std::io::Error::other("broker not running"))?;
        let status = Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status()?;
        if !status.success() {
            return Err(std::io::Error::other(format!("kill -{name} {pid} failed: {status}")));
        }
        Ok(())
    }

    /// `kill -9` and reap.
    pub fn kill9(&mut self) -> std::io::Result<()> {
        if let Some(mut c) = self.child.take() {
            c.kill()?;
            c.wait()?;
        }
        Ok(())
    }

    /// SIGTERM and wait (up to 30 s) for the exit status.
    pub fn terminate(&mut self) -> std::io::Result<ExitStatus> {
        self.signal("TERM")?;
        let mut child = self.child.take().ok_or_else(|| std::io::Error::other("broker not running"))?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(std::io::Error::other("broker did not exit within 30 s of SIGTERM"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts it again with the same arguments, port and log dir.
    pub fn restart(&mut self) -> std::io::Result<()> {
        self.kill9()?;
        self.spawn_and_wait()
    }
}

impl Drop for BrokerProcess {
    fn drop(&mut self) {
        let _ = self.kill9();
    }
}

/// The port of the broker's start-up line `… listening on 127.0.0.1:PORT, log dir …`.
fn listening_port(stderr: &str) -> Option<u16> {
    let rest = stderr.split("listening on ").nth(1)?;
    let addr: SocketAddr = rest.split(',').next()?.trim().parse().ok()?;
    Some(addr.port())
}
