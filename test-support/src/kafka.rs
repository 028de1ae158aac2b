//! Real Apache Kafka (4.4.0, from Maven: `scripts/kafka-release 4.4.0 --profiles broker`) in
//! KRaft mode on loopback ports: one combined broker and controller, or three, each with a
//! PLAINTEXT and a SASL_PLAINTEXT listener. Storage is formatted with a fresh cluster id and
//! the SCRAM users; PLAIN users come from the listener's JAAS line.
//!
//! Every JVM runs under a small shell that kills it when this process's end of its stdin
//! closes, so a broker shared by a test binary (in a `static`) never outlives the binary. Logs
//! are in each node's folder, printed by [`Kafka::logs`]; the folder is kept when a test
//! panicked while the cluster was being dropped.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, TempDir};

/// The release started.
pub const KAFKA_RELEASE: &str = "4.4.0";
/// The PLAIN user: `alice`, `alice-secret`.
pub const PLAIN_USER: (&str, &str) = ("alice", "alice-secret");
/// The SCRAM-SHA-256 user.
pub const SCRAM_SHA256_USER: (&str, &str) = ("bob", "bob-secret");
/// The SCRAM-SHA-512 user.
pub const SCRAM_SHA512_USER: (&str, &str) = ("carol", "carol-secret");

const START_TIMEOUT: Duration = Duration::from_secs(90);

/// One node: a broker and a controller in one JVM.
#[derive(Debug)]
pub struct Node {
    pub id: i32,
    pub plaintext: u16,
    pub sasl: u16,
    /// SSL and SASL_SSL listeners, with the cluster's certificate.
    pub ssl: u16,
    pub sasl_ssl: u16,
    pub controller: u16,
    dir: PathBuf,
    /// The shell around the JVM; dropping its stdin ends it and the JVM.
    shell: Option<(Child, ChildStdin)>,
    /// The JVM's pid, for kill -9.
    pid: u32,
}

/// A running Kafka cluster.
#[derive(Debug)]
pub struct Kafka {
    pub nodes: Vec<Node>,
    pub cluster_id: String,
    /// The CA that signed every node's certificate (for "localhost" and 127.0.0.1), PEM.
    pub ca_pem: String,
    dir: Option<TempDir>,
    jars: PathBuf,
    /// Broker configs added to (or overriding) test-support's own.
    extra: Vec<(String, String)>,
}

/// Where the broker's jars are: `$KWIRE_KAFKA_JARS`, else `target/kafka/broker-4.4.0`.
pub fn kafka_jars() -> PathBuf {
    std::env::var_os("KWIRE_KAFKA_JARS").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("target/kafka").join(format!("broker-{KAFKA_RELEASE}"))
    })
}

/// Runs Kafka's own Java producer or consumer (`ClientRound` of `conformance/kafka-java`, built
/// by `scripts/kafka-release`) over the broker's jars: `produce BOOTSTRAP TOPIC N` or
/// `consume BOOTSTRAP TOPIC N read_committed|read_uncommitted` (one JSON line per record).
pub fn java_client(args: &[&str]) -> std::io::Result<std::process::Output> {
    java_program_built("ClientRound")?;
    java_program("ClientRound", args).output()
}

/// Whether `scripts/kafka-release` has built `dev.kwire.oracle.<class>`: an error saying to run
/// it when not.
pub fn java_program_built(class: &str) -> std::io::Result<()> {
    let classes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/kafka-java/classes");
    if classes.join(format!("dev/kwire/oracle/{class}.class")).is_file() {
        return Ok(());
    }
    Err(std::io::Error::other(format!("{} has no {class}.class: run scripts/kafka-release", classes.display())))
}

/// A command running `dev.kwire.oracle.<class>` of `conformance/kafka-java` (built by
/// `scripts/kafka-release`) on the Kafka broker's jars, with a small heap and Kafka's logging
/// at WARN on stderr; stdin is null. Spawn it, or take its output.
pub fn java_program(class: &str, args: &[&str]) -> Command {
    let classes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/kafka-java/classes");
    let class_path = format!("{}:{}/*", classes.display(), kafka_jars().display());
    let log4j = std::env::temp_dir().join("kwire-java-client-log4j2.properties");
    // Written once per process; a failure shows as Kafka's default logging, not as an error.
    let _ = std::fs::write(&log4j, "rootLogger.level=WARN\nrootLogger.appenderRef.err.ref=err\nappender.err.type=Console\nappender.err.name=err\nappender.err.target=SYSTEM_ERR\nappender.err.layout.type=PatternLayout\nappender.err.layout.pattern=%p %m%n\n");
    let mut command = Command::new("java");
    command
        .args(["-Xmx256m", "-XX:+UseSerialGC"])
        .arg(format!("-Dlog4j2.configurationFile={}", log4j.display()))
        .args(["-cp", &class_path, &format!("dev.kwire.oracle.{class}")])
        .args(args)
        .stdin(Stdio::null());
    command
}

/// A fresh cluster id: 16 random bytes in Kafka's URL-safe, unpadded base64
/// (`Uuid.toString()`). It may start with `-`, so it is passed as `--cluster-id=…`.
fn cluster_id() -> String {
    use base64::Engine;
    let bytes: [u8; 16] = std::array::from_fn(|_| fastrand::u8(..));
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Folders of clusters whose test process is gone. A cluster shared in a `static` is never
/// dropped, so its folder (named after the process, and kept for its logs) is removed here by
/// the next start instead.
fn remove_stale_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("kwire-kafka-").and_then(|rest| rest.split('-').next()) else { continue };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Kafka {
    /// Starts `nodes` nodes, or returns `None` (saying why) when the jars have not been
    /// fetched; under CI that is a failure.
    pub fn start_or_skip(nodes: usize) -> Option<Kafka> {
        Kafka::start_or_skip_with(nodes, &[])
    }

    /// [`Kafka::start_or_skip`] with broker configs of the test's own (`key`, `value`), written
    /// after test-support's so that they win: shorter group session timeouts, say. `{id}` in a
    /// value is the node's id (`broker.rack=rack-{id}`).
    pub fn start_or_skip_with(nodes: usize, extra: &[(&str, &str)]) -> Option<Kafka> {
        let jars = kafka_jars();
        if !jars.join(format!("kafka_2.13-{KAFKA_RELEASE}.jar")).is_file() {
            let why = format!(
                "Apache Kafka's jars are not in {} (scripts/kafka-release {KAFKA_RELEASE} --profiles broker)",
                jars.display()
            );
            assert!(std::env::var_os("CI").is_none(), "{why}");
            eprintln!("skipped: {why}");
            return None;
        }
        Some(Kafka::start_with(jars, nodes, extra).unwrap_or_else(|e| panic!("starting Kafka: {e}")))
    }

    /// Formats and starts `nodes` nodes and waits until each says it started.
    pub fn start(jars: PathBuf, nodes: usize) -> std::io::Result<Kafka> {
        Kafka::start_with(jars, nodes, &[])
    }

    /// [`Kafka::start`] with broker configs of the caller's own.
    pub fn start_with(jars: PathBuf, nodes: usize, extra: &[(&str, &str)]) -> std::io::Result<Kafka> {
        remove_stale_dirs();
        let dir = TempDir::with_prefix("kwire-kafka")?;
        let cluster_id = cluster_id();
        let mut list = Vec::new();
        for id in 1..=nodes as i32 {
            let node_dir = dir.path().join(format!("node-{id}"));
            std::fs::create_dir_all(&node_dir)?;
            list.push(Node {
                id,
                plaintext: free_port()?,
                sasl: free_port()?,
                ssl: free_port()?,
                sasl_ssl: free_port()?,
                controller: free_port()?,
                dir: node_dir,
                shell: None,
                pid: 0,
            });
        }
        let (ca_pem, key_and_chain) = certificates()?;
        std::fs::write(dir.path().join("server.pem"), key_and_chain)?;
        let extra = extra.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut kafka = Kafka { nodes: list, cluster_id, ca_pem, dir: Some(dir), jars, extra };
        let voters: Vec<String> = kafka.nodes.iter().map(|n| format!("{}@127.0.0.1:{}", n.id, n.controller)).collect();
        let voters = voters.join(",");
        for i in 0..kafka.nodes.len() {
            kafka.write_config(i, &voters)?;
            kafka.format(i)?;
        }
        for i in 0..kafka.nodes.len() {
            kafka.launch(i)?;
        }
        for i in 0..kafka.nodes.len() {
            kafka.wait_started(i)?;
        }
        Ok(kafka)
    }

    fn write_config(&self, i: usize, voters: &str) -> std::io::Result<()> {
        let n = &self.nodes[i];
        let replication = self.nodes.len().min(3);
        let (plain_user, plain_password) = PLAIN_USER;
        let mut c = String::new();
        let _ = writeln!(c, "process.roles=broker,controller\nnode.id={}", n.id);
        let _ = writeln!(c, "controller.quorum.voters={voters}");
        let _ = writeln!(
            c,
            "listeners=PLAINTEXT://127.0.0.1:{},SASL_PLAINTEXT://127.0.0.1:{},SSL://127.0.0.1:{},SASL_SSL://127.0.0.1:{},CONTROLLER://127.0.0.1:{}",
            n.plaintext, n.sasl, n.ssl, n.sasl_ssl, n.controller
        );
        let _ = writeln!(
            c,
            "advertised.listeners=PLAINTEXT://127.0.0.1:{},SASL_PLAINTEXT://127.0.0.1:{},SSL://127.0.0.1:{},SASL_SSL://127.0.0.1:{}",
            n.plaintext, n.sasl, n.ssl, n.sasl_ssl
        );
        c.push_str(
            "controller.listener.names=CONTROLLER\ninter.broker.listener.name=PLAINTEXT\n\
             listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT\n\
             sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512\nssl.keystore.type=PEM\n",
        );
        let _ = writeln!(
            c,
            "ssl.keystore.location={}",
            self.dir.as_ref().expect("running").path().join("server.pem").display()
        );
        for listener in ["sasl_plaintext", "sasl_ssl"] {
            let _ = writeln!(
                c,
                "listener.name.{listener}.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_{plain_user}=\"{plain_password}\";"
            );
            for mechanism in ["scram-sha-256", "scram-sha-512"] {
                let _ = writeln!(
                    c,
                    "listener.name.{listener}.{mechanism}.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
                );
            }
        }
        let _ = writeln!(c, "log.dirs={}", n.dir.join("data").display());
        for key in [
            "offsets.topic.replication.factor",
            "transaction.state.log.replication.factor",
            "share.coordinator.state.topic.replication.factor",
            "default.replication.factor",
        ] {
            let _ = writeln!(c, "{key}={replication}");
        }
        c.push_str(
            "transaction.state.log.min.isr=1\nshare.coordinator.state.topic.min.isr=1\n\
             group.initial.rebalance.delay.ms=0\nnum.partitions=1\nauto.create.topics.enable=false\n\
             offsets.topic.num.partitions=3\ntransaction.state.log.num.partitions=3\n\
             broker.session.timeout.ms=3000\nbroker.heartbeat.interval.ms=500\n",
        );
        for (key, value) in &self.extra {
            // `{id}` stands for the node's id: a rack per node, say.
            let _ = writeln!(c, "{key}={}", value.replace("{id}", &n.id.to_string()));
        }
        std::fs::write(n.dir.join("server.properties"), c)?;
        // KWIRE_KAFKA_LOG=DEBUG for a broker that says more (its logs are kept on failure).
        let level = std::env::var("KWIRE_KAFKA_LOG").unwrap_or_else(|_| "INFO".to_string());
        let log4j = format!(
            "rootLogger.level={level}\nrootLogger.appenderRef.file.ref=file\nappender.file.type=File\n\
             appender.file.name=file\nappender.file.fileName={}\nappender.file.layout.type=PatternLayout\n\
             appender.file.layout.pattern=[%d] %p %m (%c)%n\n",
            n.dir.join("server.log").display()
        );
        std::fs::write(n.dir.join("log4j2.properties"), log4j)
    }

    fn java(&self, node: &Node, heap: &str) -> Command {
        let mut cmd = Command::new("java");
        cmd.arg(format!("-Xmx{heap}"))
            .arg("-Xms128m")
            .arg("-XX:+UseSerialGC")
            .arg(format!("-Dlog4j2.configurationFile={}", node.dir.join("log4j2.properties").display()))
            .arg("-cp")
            .arg(format!("{}/*", self.jars.display()))
            .current_dir(&node.dir);
        cmd
    }

    fn format(&self, i: usize) -> std::io::Result<()> {
        let n = &self.nodes[i];
        let scram =
            |mechanism: &str, (user, password): (&str, &str)| format!("{mechanism}=[name={user},password={password}]");
        let out = self
            .java(n, "256m")
            .args(["kafka.tools.StorageTool", "format", &format!("--cluster-id={}", self.cluster_id)])
            .args(["-c", "server.properties"])
            .args(["--add-scram", &scram("SCRAM-SHA-256", SCRAM_SHA256_USER)])
            .args(["--add-scram", &scram("SCRAM-SHA-512", SCRAM_SHA512_USER)])
            .output()?;
        if !out.status.success() {
            return Err(std::io::Error::other(format!(
                "formatting node {}: {}{}",
                n.id,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(())
    }

    /// Starts node `i`'s JVM under a shell that kills it when our end of its stdin closes.
    fn launch(&mut self, i: usize) -> std::io::Result<()> {
        let heap = if self.nodes.len() > 1 { "512m" } else { "1g" };
        let java = self.java(&self.nodes[i], heap);
        let mut line = format!("exec {:?}", java.get_program());
        for arg in java.get_args() {
            line.push_str(&format!(" '{}'", arg.to_string_lossy().replace('\'', "'\\''")));
        }
        line.push_str(" kafka.Kafka server.properties");
        let n = &mut self.nodes[i];
        let script = format!(
            "({line}) >stdout.log 2>&1 </dev/null & pid=$!\necho $pid\ncat >/dev/null\nkill -9 $pid 2>/dev/null\nwait $pid 2>/dev/null\n"
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(&n.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin piped");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout piped")).read_line(&mut first)?;
        n.pid =
            first.trim().parse().map_err(|_| std::io::Error::other(format!("no JVM pid from the shell: {first:?}")))?;
        n.shell = Some((child, stdin));
        Ok(())
    }

    fn wait_started(&self, i: usize) -> std::io::Result<()> {
        self.wait_started_after(i, 0)
    }

    /// Waits until node `i`'s log says it started for the `starts + 1`th time.
    fn wait_started_after(&self, i: usize, starts: usize) -> std::io::Result<()> {
        let n = &self.nodes[i];
        let deadline = Instant::now() + START_TIMEOUT;
        let log = n.dir.join("server.log");
        while Instant::now() < deadline {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.matches("Kafka Server started").count() > starts {
                return Ok(());
            }
            if !Path::new(&format!("/proc/{}", n.pid)).exists() {
                return Err(std::io::Error::other(format!("node {} exited while starting:\n{}", n.id, self.logs())));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(std::io::Error::other(format!("node {} did not start within {START_TIMEOUT:?}:\n{}", n.id, self.logs())))
    }

    /// `host:port` of every node's PLAINTEXT listener, comma-separated.
    pub fn bootstrap(&self) -> String {
        self.nodes.iter().map(|n| format!("127.0.0.1:{}", n.plaintext)).collect::<Vec<_>>().join(",")
    }

    /// The PLAINTEXT listener of the first node.
    pub fn plaintext(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.nodes[0].plaintext))
    }

    /// The SASL_PLAINTEXT listener of the first node.
    pub fn sasl(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.nodes[0].sasl))
    }

    /// The SSL listener of the first node.
    pub fn ssl(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.nodes[0].ssl))
    }

    /// The SASL_SSL listener of the first node.
    pub fn sasl_ssl(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.nodes[0].sasl_ssl))
    }

    /// The node with id `id`.
    pub fn node(&self, id: i32) -> &Node {
        self.nodes.iter().find(|n| n.id == id).expect("a node of this cluster")
    }

    /// Kills node `id`'s JVM with SIGKILL (power cut for the broker, not for the machine).
    pub fn kill9(&mut self, id: i32) -> std::io::Result<()> {
        let n = self.nodes.iter_mut().find(|n| n.id == id).expect("a node of this cluster");
        let status = Command::new("kill").args(["-9", &n.pid.to_string()]).status()?;
        if let Some((mut child, stdin)) = n.shell.take() {
            drop(stdin);
            let _ = child.wait();
        }
        if status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("kill -9 {} failed", n.pid)))
        }
    }

    /// Starts node `id` again after [`Kafka::kill9`], on its ports and its data, and waits
    /// until it says it started.
    pub fn restart(&mut self, id: i32) -> std::io::Result<()> {
        let i = self.nodes.iter().position(|n| n.id == id).expect("a node of this cluster");
        let log = self.nodes[i].dir.join("server.log");
        let starts = std::fs::read_to_string(&log).unwrap_or_default().matches("Kafka Server started").count();
        self.launch(i)?;
        self.wait_started_after(i, starts)
    }

    /// Chaos for a running test: each node in turn is killed with SIGKILL 3 s after the last
    /// one is back and started again 3 s later, until every node went once and `at_least`
    /// passed. Returns what it did, with times, for the test's failure message.
    pub fn kill_each_in_turn(kafka: &std::sync::Mutex<Kafka>, at_least: Duration) -> Vec<String> {
        let ids: Vec<i32> = kafka.lock().unwrap_or_else(|e| e.into_inner()).nodes.iter().map(|n| n.id).collect();
        let started = Instant::now();
        let mut log = Vec::new();
        for (i, id) in ids.iter().copied().cycle().enumerate() {
            if i >= ids.len() && started.elapsed() >= at_least {
                break;
            }
            std::thread::sleep(Duration::from_secs(3));
            kafka.lock().unwrap_or_else(|e| e.into_inner()).kill9(id).expect("kill -9");
            log.push(format!("killed node {id} at {:.1?}", started.elapsed()));
            std::thread::sleep(Duration::from_secs(3));
            kafka.lock().unwrap_or_else(|e| e.into_inner()).restart(id).expect("a restarted node");
            log.push(format!("node {id} back at {:.1?}", started.elapsed()));
        }
        log
    }

    /// The last lines of every node's log, for a failure message.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for n in &self.nodes {
            let text = std::fs::read_to_string(n.dir.join("server.log")).unwrap_or_default();
            let stdout = std::fs::read_to_string(n.dir.join("stdout.log")).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            let _ = writeln!(out, "--- node {} ({}), last lines of server.log:", n.id, n.dir.display());
            for line in tail.into_iter().rev() {
                let _ = writeln!(out, "{line}");
            }
            if !stdout.trim().is_empty() {
                let _ = writeln!(out, "--- stdout.log:\n{stdout}");
            }
        }
        out
    }
}

impl Drop for Kafka {
    fn drop(&mut self) {
        for n in &mut self.nodes {
            if let Some((mut child, stdin)) = n.shell.take() {
                drop(stdin);
                let _ = child.wait();
            }
        }
        if std::thread::panicking() {
            if let Some(dir) = self.dir.take() {
                eprintln!("Kafka's logs kept in {}", dir.path().display());
                std::mem::forget(dir);
            }
        }
    }
}

/// A CA of its own, which signed none of the brokers' certificates: what a client that
/// trusts the wrong CA holds.
pub fn other_ca_pem() -> String {
    certificates().expect("rcgen makes certificates").0
}

/// A CA and a certificate it signed for "localhost" and 127.0.0.1: the CA's PEM, and the
/// broker's private key (PKCS#8) followed by its certificate chain, the one PEM file Kafka's
/// `ssl.keystore.type=PEM` reads.
fn certificates() -> std::io::Result<(String, String)> {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let fail = |e: rcgen::Error| std::io::Error::other(format!("making the test certificates: {e}"));
    let ca_key = KeyPair::generate().map_err(fail)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(fail)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).map_err(fail)?;
    let key = KeyPair::generate().map_err(fail)?;
    let params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).map_err(fail)?;
    let cert = params.signed_by(&key, &ca, &ca_key).map_err(fail)?;
    Ok((ca.pem(), format!("{}{}{}", key.serialize_pem(), cert.pem(), ca.pem())))
}
