//! Our consumers and Kafka's own Java consumers (`GroupMember`) in the same group, against
//! Apache Kafka 4.4: classic with each assignor, and KIP-848. While records are produced,
//! members join, one Java member is killed (SIGKILL, no leave), one of ours leaves, another
//! Java member joins. Then: every record produced was read, each member read each partition in
//! order, the group's committed offsets never moved backwards, and no partition was held by
//! two live members at once (from each member's log of its assignments).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::*;
use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::CreateTopicsRequest;
use kwire_client::consumer::{AssignmentStrategy, Consumer, ConsumerConfig, GroupProtocol, TopicPartition};
use kwire_test_support::kafka::{java_program, java_program_built};
use kwire_test_support::Kafka;

const PARTITIONS: i32 = 6;

fn kafka() -> Option<&'static Kafka> {
    static KAFKA: OnceLock<Option<Kafka>> = OnceLock::new();
    KAFKA
        .get_or_init(|| {
            // KIP-848 members time out as fast as classic ones here (Kafka's floor is 45 s).
            Kafka::start_or_skip_with(
                1,
                &[
                    ("group.consumer.session.timeout.ms", "6000"),
                    ("group.consumer.min.session.timeout.ms", "6000"),
                    ("group.consumer.heartbeat.interval.ms", "500"),
                    ("group.consumer.min.heartbeat.interval.ms", "500"),
                ],
            )
        })
        .as_ref()
}

/// One scenario at a time: each runs several JVMs.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A member's life as the checks read it.
#[derive(Debug, Default, Clone)]
struct Timeline {
    name: String,
    records: Vec<(i32, i64)>,
    /// (ms, partitions held from then on).
    holds: Vec<(u64, BTreeSet<i32>)>,
    /// When it stopped holding anything (closed or killed).
    end: u64,
    errors: Vec<String>,
}

impl Timeline {
    fn of_ours(name: &str, log: &MemberLog, end: u64) -> Timeline {
        Timeline {
            name: name.into(),
            records: log.records.iter().map(|r| (r.partition, r.offset)).collect(),
            holds: log.assignments.iter().map(|(t, held)| (*t, held.iter().map(|tp| tp.partition).collect())).collect(),
            end,
            errors: log.errors.clone(),
        }
    }
}

/// Kafka's Java consumer in the group, as a process.
struct JavaMember {
    name: String,
    child: Arc<Mutex<Child>>,
    lines: Arc<Mutex<Vec<String>>>,
    /// Reads its stdout until the process is gone.
    reader: std::thread::JoinHandle<()>,
}

impl JavaMember {
    fn start(bootstrap: &str, group: &str, topic: &str, protocol: &str, assignor: &str, name: &str) -> JavaMember {
        let mut child = java_program("GroupMember", &[bootstrap, group, topic, protocol, assignor, name])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("java starts");
        let stdout = child.stdout.take().expect("piped");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        JavaMember { name: name.into(), child: Arc::new(Mutex::new(child)), lines, reader }
    }

    /// Partitions held now, from the callbacks so far; a member that exited fails the test.
    fn held(&self) -> BTreeSet<i32> {
        if let Ok(Some(status)) = self.child.lock().unwrap().try_wait() {
            panic!("the Java member {} exited: {status}", self.name);
        }
        parse(&self.name, &self.lines.lock().unwrap(), 0).holds.last().map(|(_, h)| h.clone()).unwrap_or_default()
    }

    /// The (partition, offset) of every record read so far.
    fn read(&self) -> Vec<(i32, i64)> {
        parse(&self.name, &self.lines.lock().unwrap(), 0).records
    }

    /// Closes it (its stdin ends: it closes and leaves the group).
    async fn close(self) -> Timeline {
        drop(self.child.lock().unwrap().stdin.take());
        let child = self.child.clone();
        let reader = self.reader;
        let _ = tokio::task::spawn_blocking(move || {
            let _ = child.lock().unwrap().wait();
            // Every line it wrote, read.
            let _ = reader.join();
        })
        .await;
        let lines = self.lines.lock().unwrap().clone();
        let end = lines
            .iter()
            .rev()
            .find_map(|l| l.contains("\"closed\"").then(|| field(l, "t")))
            .flatten()
            .unwrap_or(now_ms());
        parse(&self.name, &lines, end)
    }

    /// Kills it with SIGKILL: no leave, no commit.
    fn kill(self) -> Timeline {
        let end = now_ms();
        {
            let mut child = self.child.lock().unwrap();
            let _ = child.kill();
            let _ = child.wait();
        }
        // Every line it wrote before it died, read.
        let _ = self.reader.join();
        let lines = self.lines.lock().unwrap().clone();
        parse(&self.name, &lines, end)
    }
}

fn field(line: &str, name: &str) -> Option<u64> {
    let at = line.find(&format!("\"{name}\":"))? + name.len() + 3;
    line[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

fn parse(name: &str, lines: &[String], end: u64) -> Timeline {
    let mut timeline = Timeline { name: name.into(), end, ..Default::default() };
    let mut held: BTreeSet<i32> = BTreeSet::new();
    for line in lines {
        let t = field(line, "t").unwrap_or(0);
        if let (Some(p), Some(o)) = (field(line, "p"), field(line, "o")) {
            timeline.records.push((p as i32, o as i64));
            continue;
        }
        let list = |line: &str| -> BTreeSet<i32> {
            let Some(start) = line.find('[') else { return BTreeSet::new() };
            let end = line[start..].find(']').map_or(line.len(), |e| start + e);
            line[start + 1..end].split(',').filter_map(|p| p.trim().parse().ok()).collect()
        };
        if line.contains("\"assigned\"") {
            held.extend(list(line));
            timeline.holds.push((t, held.clone()));
        } else if line.contains("\"revoked\"") || line.contains("\"lost\"") {
            for p in list(line) {
                held.remove(&p);
            }
            timeline.holds.push((t, held.clone()));
        } else if line.contains("\"error\"") {
            timeline.errors.push(line.clone());
        }
    }
    timeline
}

/// Checks that no partition was held by two members at once: a member holds a partition
/// from the step that gave it until the step that took it, or its end.
fn check_exclusive(timelines: &[Timeline]) {
    let mut intervals: BTreeMap<i32, Vec<(u64, u64, &str)>> = BTreeMap::new();
    for tl in timelines {
        let mut since: BTreeMap<i32, u64> = BTreeMap::new();
        for (t, held) in &tl.holds {
            for p in since.keys().copied().collect::<Vec<_>>() {
                if !held.contains(&p) {
                    intervals.entry(p).or_default().push((since.remove(&p).unwrap(), *t, &tl.name));
                }
            }
            for p in held {
                since.entry(*p).or_insert(*t);
            }
        }
        for (p, from) in since {
            intervals.entry(p).or_default().push((from, tl.end, &tl.name));
        }
    }
    for (p, mut list) in intervals {
        list.sort();
        for pair in list.windows(2) {
            let ((_, end_a, a), (start_b, _, b)) = (pair[0], pair[1]);
            assert!(start_b >= end_a, "partition {p} held by {a} until {end_a} and by {b} from {start_b}: {list:?}");
        }
    }
}

/// Offsets read, per partition, as runs `p:from-to` in the order read.
fn runs(records: &[(i32, i64)]) -> String {
    let mut by_partition: BTreeMap<i32, Vec<(i64, i64)>> = BTreeMap::new();
    for (p, o) in records {
        let list = by_partition.entry(*p).or_default();
        match list.last_mut() {
            Some((_, end)) if *end + 1 == *o => *end = *o,
            _ => list.push((*o, *o)),
        }
    }
    by_partition.iter().map(|(p, list)| format!("{p}:{list:?}")).collect::<Vec<_>>().join(" ")
}

async fn create_topic(bootstrap: &str, topic: &str) {
    let cluster = writer(bootstrap).await;
    let admin = cluster.any().await.unwrap();
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: topic.into(),
            num_partitions: PARTITIONS,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let created = admin.send(request).await.unwrap();
    assert!(created
        .topics
        .iter()
        .all(|t| t.error_code == kwire::ErrorCode::NONE || t.error_code == kwire::ErrorCode::TOPIC_ALREADY_EXISTS));
}

/// Produces to every partition until told to stop; the number written per partition.
fn start_producing(
    bootstrap: String,
    topic: String,
) -> (tokio::sync::watch::Sender<bool>, tokio::task::JoinHandle<BTreeMap<i32, u64>>) {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(async move {
        let cluster = writer(&bootstrap).await;
        let mut written: BTreeMap<i32, u64> = (0..PARTITIONS).map(|p| (p, 0)).collect();
        while !*stopped.borrow() {
            for p in 0..PARTITIONS {
                let from = written[&p];
                produce(&cluster, &topic, p, from, from + 20, 20).await;
                written.insert(p, from + 20);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        written
    });
    (stop, task)
}

/// Reads the group's committed offsets every 100 ms until told to stop; fails if one moves
/// backwards.
fn watch_commits(
    bootstrap: String,
    group: String,
    topic: String,
) -> (tokio::sync::watch::Sender<bool>, tokio::task::JoinHandle<Vec<String>>) {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(async move {
        let observer = Consumer::new(ConsumerConfig::new(&bootstrap).group_id(group)).await.unwrap();
        let partitions: Vec<TopicPartition> = (0..PARTITIONS).map(|p| TopicPartition::new(topic.as_str(), p)).collect();
        let mut last: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        let mut backwards = Vec::new();
        while !*stopped.borrow() {
            if let Ok(committed) = observer.committed(&partitions).await {
                for (tp, offset) in committed {
                    let Some(offset) = offset else { continue };
                    let before = last.insert(tp.clone(), offset.offset);
                    if before.is_some_and(|b| b > offset.offset) {
                        backwards.push(format!("{tp}: {before:?} -> {}", offset.offset));
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        observer.close().await.unwrap();
        backwards
    });
    (stop, task)
}

async fn scenario(protocol: GroupProtocol, strategy: AssignmentStrategy) {
    let Some(kafka) = kafka() else { return };
    java_program_built("GroupMember").expect("scripts/kafka-release builds the Java members");
    let _serial = SERIAL.lock().await;
    logs();
    let bootstrap = kafka.bootstrap();
    let name = format!("{protocol:?}-{}", strategy.name()).to_lowercase();
    let (topic, group) = (format!("mixed-{name}"), format!("mixed-{name}"));
    create_topic(&bootstrap, &topic).await;
    let (java_protocol, java_assignor) = match protocol {
        GroupProtocol::Classic => ("classic", strategy.name()),
        GroupProtocol::Consumer => ("consumer", "uniform"),
    };
    let ours = |member: &str| {
        ConsumerConfig::new(&bootstrap)
            .client_id(member)
            .group_id(group.clone())
            .group_protocol(protocol)
            .partition_assignment_strategy([strategy])
            .auto_offset_reset(kwire_client::consumer::OffsetReset::Earliest)
            .enable_auto_commit(false)
            .session_timeout(Duration::from_secs(6))
            .heartbeat_interval(Duration::from_millis(500))
    };
    let (stop_producing, producing) = start_producing(bootstrap.clone(), topic.clone());
    let (stop_watching, watching) = watch_commits(bootstrap.clone(), group.clone(), topic.clone());

    let a = Running::start(ours("ours-a"), &[&topic]).await;
    let b = JavaMember::start(&bootstrap, &group, &topic, java_protocol, java_assignor, "java-b");
    let both = eventually(Duration::from_secs(60), || !a.held().is_empty() && !b.held().is_empty()).await;
    assert!(both, "{name}: a holds {:?}, java b holds {:?}", a.held(), b.held());
    let c = Running::start(ours("ours-c"), &[&topic]).await;
    let three =
        eventually(Duration::from_secs(60), || !c.held().is_empty() && !a.held().is_empty() && !b.held().is_empty())
            .await;
    assert!(three, "{name}: a {:?}, b {:?}, c {:?}", a.held(), b.held(), c.held());
    let b = b.kill();
    // b's partitions come back once its session times out.
    let covered = eventually(Duration::from_secs(60), || a.held().len() + c.held().len() == PARTITIONS as usize).await;
    assert!(covered, "{name}: after the kill a {:?}, c {:?}", a.held(), c.held());
    let d = JavaMember::start(&bootstrap, &group, &topic, java_protocol, java_assignor, "java-d");
    assert!(eventually(Duration::from_secs(60), || !d.held().is_empty()).await, "{name}: java d gets partitions");
    let a_log = a.stop(true).await;
    let a_end = now_ms();
    let covered = eventually(Duration::from_secs(60), || c.held().len() + d.held().len() == PARTITIONS as usize).await;
    assert!(covered, "{name}: after a left c {:?}, d {:?}", c.held(), d.held());
    let _ = stop_producing.send(true);
    let written = producing.await.unwrap();
    let total: u64 = written.values().sum();
    let mut read_before: BTreeSet<(i32, i64)> = a_log.records.iter().map(|r| (r.partition, r.offset)).collect();
    read_before.extend(b.records.iter().copied());
    let everything = eventually(Duration::from_secs(60), || {
        let mut read = read_before.clone();
        read.extend(c.log.lock().unwrap().records.iter().map(|r| (r.partition, r.offset)));
        read.extend(d.read());
        read.len() as u64 >= total
    })
    .await;
    let c_log = c.stop(true).await;
    let c_end = now_ms();
    let d = d.close().await;
    let _ = stop_watching.send(true);
    let backwards = watching.await.unwrap();

    let timelines = [Timeline::of_ours("ours-a", &a_log, a_end), b, Timeline::of_ours("ours-c", &c_log, c_end), d];
    let mut seen: BTreeSet<(i32, i64)> = BTreeSet::new();
    for tl in &timelines {
        let mut by_partition: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
        for (p, o) in &tl.records {
            by_partition.entry(*p).or_default().push(*o);
            seen.insert((*p, *o));
        }
        for (p, offsets) in by_partition {
            assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{name}: {} read partition {p} out of order", tl.name);
        }
        let unexpected: Vec<&String> =
            tl.errors.iter().filter(|e| !e.contains("RebalanceInProgress") && !e.contains("rebalanc")).collect();
        assert!(unexpected.is_empty(), "{name}: {} reported {unexpected:?}", tl.name);
    }
    let mut missing: Vec<(i32, u64)> = Vec::new();
    for (p, n) in &written {
        missing.extend((0..*n).filter(|o| !seen.contains(&(*p, *o as i64))).map(|o| (*p, o)));
    }
    if !everything || !missing.is_empty() {
        for tl in &timelines {
            eprintln!("{}: holds {:?} until {}; reads {}", tl.name, tl.holds, tl.end, runs(&tl.records));
        }
    }
    assert!(
        everything && missing.is_empty(),
        "{name}: {} of {total} records never read: {}",
        missing.len(),
        runs(&missing.iter().map(|(p, o)| (*p, *o as i64)).collect::<Vec<_>>())
    );
    assert!(backwards.is_empty(), "{name}: committed offsets moved backwards: {backwards:?}");
    check_exclusive(&timelines);
    let _ = TopicPartition::new(topic.as_str(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn classic_range_with_java_members() {
    scenario(GroupProtocol::Classic, AssignmentStrategy::Range).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn classic_roundrobin_with_java_members() {
    scenario(GroupProtocol::Classic, AssignmentStrategy::RoundRobin).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn classic_cooperative_sticky_with_java_members() {
    scenario(GroupProtocol::Classic, AssignmentStrategy::CooperativeSticky).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip848_with_java_members() {
    scenario(GroupProtocol::Consumer, AssignmentStrategy::Range).await;
}
