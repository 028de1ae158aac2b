//! All partition logs of one log directory, shareable between threads.
//!
//! Each partition sits behind its own mutex; the map of partitions behind a read-write lock.
//! Reads lock a partition only to compute a [`FileSlice`] and do their I/O outside the lock.
//! Time comes from a clock function so retention and time-based flushes can be tested.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, TryLockError};
use std::time::SystemTime;

use crate::log::config::{LogConfig, TopicOverrides};
use crate::log::durable::sync_dir;
use crate::log::error::LogError;
use crate::log::flusher::{flush_outside_lock, Flusher};
use crate::log::partition::{lock, AppendInfo, PartitionHandle, PartitionLog, RetentionInfo};
use crate::log::slice::FileSlice;
use crate::{
    validate_message_set_within, validate_new_topic, validate_topic, DEFAULT_MAX_TOPIC_NAME_LENGTH, OFFSETS_EARLIEST,
    OFFSETS_LATEST,
};

/// Created in the log dir by a clean shutdown; its presence at startup skips recovery.
pub const CLEAN_SHUTDOWN_FILE: &str = ".kafka_cleanshutdown";

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl TopicPartition {
    /// The partition directory name, `<topic>-<partition>`.
    pub fn dir_name(&self) -> String {
        format!("{}-{}", self.topic, self.partition)
    }

    /// Parses a directory name: the partition follows the last `-`.
    pub fn from_dir_name(name: &str) -> Option<TopicPartition> {
        let (topic, partition) = name.rsplit_once('-')?;
        if partition.is_empty() || !partition.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(TopicPartition { topic: topic.to_owned(), partition: partition.parse().ok()? })
    }
}

/// A position that must reach stable storage before the appends that wrote it count as
/// flushed: see [`LogManager::append_deferred`] and [`LogManager::flush_to`].
#[derive(Debug, Clone)]
pub struct FlushPoint {
    handle: PartitionHandle,
    offset: u64,
}

impl FlushPoint {
    /// Log offset that must be flushed.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Whether `other` is the same partition's log.
    pub fn same_log(&self, other: &FlushPoint) -> bool {
        Arc::ptr_eq(&self.handle, &other.handle)
    }
}

/// What [`LogManager::append_deferred`] did.
#[derive(Debug, Clone)]
pub struct DeferredAppend {
    pub info: AppendInfo,
    /// Set when `log.flush.interval` asked for a flush: the flush is queued (or, without a
    /// background flusher, left to the caller), and is complete once [`LogManager::flush_to`]
    /// returns for this point.
    pub flush: Option<FlushPoint>,
}

type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

pub struct LogManager {
    dir: PathBuf,
    defaults: LogConfig,
    overrides: RwLock<HashMap<String, TopicOverrides>>,
    logs: RwLock<HashMap<TopicPartition, PartitionHandle>>,
    clock: Clock,
    max_topic_len: usize,
    /// Most partitions open at once (`None`: no limit); see [`LogManager::set_max_partitions`].
    max_partitions: Option<usize>,
    recovered: bool,
    warnings: Vec<String>,
    /// The group-commit thread, once [`LogManager::start_background_flush`] ran.
    flusher: Option<Flusher>,
}

impl std::fmt::Debug for LogManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogManager").field("dir", &self.dir).field("recovered", &self.recovered).finish()
    }
}

impl LogManager {
    /// Opens every partition in `dir` (creating `dir` if missing) with the system clock.
    pub fn open(
        dir: impl Into<PathBuf>,
        defaults: LogConfig,
        overrides: HashMap<String, TopicOverrides>,
    ) -> Result<LogManager, LogError> {
        Self::open_with_clock(dir, defaults, overrides, Arc::new(SystemTime::now))
    }

    /// Like [`LogManager::open`] with a custom clock.
    pub fn open_with_clock(
        dir: impl Into<PathBuf>,
        defaults: LogConfig,
        overrides: HashMap<String, TopicOverrides>,
        clock: Arc<dyn Fn() -> SystemTime + Send + Sync>,
    ) -> Result<LogManager, LogError> {
        let dir = dir.into();
        // Created durably: a log directory whose name is lost takes every acknowledged
        // message with it.
        crate::log::durable::create_dir_all(&dir)?;
        let marker = dir.join(CLEAN_SHUTDOWN_FILE);
        let clean = marker.exists();
        let now = clock();
        let mut warnings = Vec::new();
        let mut logs = HashMap::new();
        for entry in fs::read_dir(&dir).map_err(LogError::io("list log directory", &dir))? {
            let entry = entry.map_err(LogError::io("list log directory", &dir))?;
            let path = entry.path();
            let name = entry.file_name();
            if name == CLEAN_SHUTDOWN_FILE {
                continue;
            }
            let is_dir = entry.file_type().map_err(LogError::io("stat", &path))?.is_dir();
            if !is_dir {
                // Hidden files (such as a broker's topic configuration) belong to others.
                if name.to_str().is_some_and(|n| n.starts_with('.')) {
                    continue;
                }
                warnings.push(format!("skipping file {} in the log directory", path.display()));
                continue;
            }
            let parsed = name.to_str().and_then(TopicPartition::from_dir_name);
            let Some(tp) = parsed.filter(|tp| validate_topic(&tp.topic, usize::MAX).is_ok()) else {
                warnings.push(format!("skipping directory {}: not <topic>-<partition>", path.display()));
                continue;
            };
            let config = defaults.with_overrides(overrides.get(&tp.topic).unwrap_or(&TopicOverrides::default()));
            let log = PartitionLog::open(path, config, !clean, now)?;
            logs.insert(tp, Arc::new(Mutex::new(log)));
        }
        if clean {
            fs::remove_file(&marker).map_err(LogError::io("remove clean-shutdown marker", &marker))?;
            // A marker that reappears after a crash would skip a needed recovery.
            sync_dir(&dir)?;
        }
        Ok(LogManager {
            dir,
            defaults,
            overrides: RwLock::new(overrides),
            logs: RwLock::new(logs),
            clock,
            max_topic_len: DEFAULT_MAX_TOPIC_NAME_LENGTH,
            max_partitions: None,
            recovered: !clean,
            warnings,
            flusher: None,
        })
    }

    /// Starts the group-commit thread: from now on [`LogManager::append_deferred`] queues the
    /// flushes `log.flush.interval` asks for instead of leaving them to the caller, and the
    /// time-based flush ([`LogManager::flush_due`]) never holds a log's lock during an fsync.
    pub fn start_background_flush(&mut self) -> Result<(), LogError> {
        if self.flusher.is_none() {
            self.flusher = Some(Flusher::start(self.clock.clone())?);
        }
        Ok(())
    }

    /// Errors of background flushes since the last call (for the caller to log), and how many
    /// more happened but were not kept.
    pub fn take_flush_errors(&self) -> (Vec<LogError>, usize) {
        self.flusher.as_ref().map_or((Vec::new(), 0), Flusher::take_errors)
    }

    /// Sets `max.topic.name.length` for new topics.
    pub fn set_max_topic_name_length(&mut self, max: usize) {
        self.max_topic_len = max;
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether startup ran recovery (no clean-shutdown marker was found).
    pub fn recovered(&self) -> bool {
        self.recovered
    }

    /// Things skipped while loading, for the caller to log.
    pub fn load_warnings(&self) -> &[String] {
        &self.warnings
    }

    pub fn now(&self) -> SystemTime {
        (self.clock)()
    }

    fn config_for(&self, topic: &str) -> LogConfig {
        let overrides = self.overrides.read().unwrap_or_else(|e| e.into_inner());
        match overrides.get(topic) {
            Some(o) => self.defaults.with_overrides(o),
            None => self.defaults.clone(),
        }
    }

    fn check_name(&self, topic: &str, partition: i32) -> Result<(), LogError> {
        if partition < 0 {
            return Err(LogError::InvalidPartition(partition));
        }
        validate_new_topic(topic, self.max_topic_len, partition.saturating_add(1))?;
        Ok(())
    }

    /// Caps how many partitions may be open at once: each holds a file descriptor, and a
    /// client that auto-creates topics must not exhaust them. Creating one more is then
    /// refused with [`LogError::TooManyPartitions`]; partitions already on disk at start-up
    /// are opened regardless.
    pub fn set_max_partitions(&mut self, max: Option<usize>) {
        self.max_partitions = max;
    }

    /// The limit set by [`LogManager::set_max_partitions`].
    pub fn max_partitions(&self) -> Option<usize> {
        self.max_partitions
    }

    /// How many partitions are open.
    pub fn partition_count(&self) -> usize {
        self.logs.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The partition's log if it exists. Never creates anything.
    pub fn get(&self, topic: &str, partition: i32) -> Option<PartitionHandle> {
        let logs = self.logs.read().unwrap_or_else(|e| e.into_inner());
        logs.get(&TopicPartition { topic: topic.to_owned(), partition }).cloned()
    }

    /// The partition's log, created (directory and empty segment) if needed. The topic name is
    /// validated first: it becomes a directory name.
    pub fn get_or_create(&self, topic: &str, partition: i32) -> Result<PartitionHandle, LogError> {
        if let Some(h) = self.get(topic, partition) {
            return Ok(h);
        }
        self.check_name(topic, partition)?;
        let tp = TopicPartition { topic: topic.to_owned(), partition };
        let mut logs = self.logs.write().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = logs.get(&tp) {
            return Ok(h.clone());
        }
        if let Some(max) = self.max_partitions.filter(|max| logs.len() >= *max) {
            return Err(LogError::TooManyPartitions { topic: tp.topic, partition, open: logs.len(), max });
        }
        let log = PartitionLog::open(self.dir.join(tp.dir_name()), self.config_for(topic), true, self.now())?;
        let handle = Arc::new(Mutex::new(log));
        logs.insert(tp, handle.clone());
        Ok(handle)
    }

    /// Appends a produced set, creating the log if needed (0.7's PRODUCE).
    pub fn append(&self, topic: &str, partition: i32, set: &[u8]) -> Result<AppendInfo, LogError> {
        let handle = self.get_or_create(topic, partition)?;
        let now = self.now();
        let mut log = lock(&handle);
        log.append(set, now)
    }

    /// [`LogManager::append`] without waiting for the fsync `log.flush.interval` may ask for
    /// (group commit). When it asks, the returned [`FlushPoint`] says what must be flushed: the
    /// background flusher (if started) is already on it, and [`LogManager::flush_to`] waits
    /// for it. Until then the appended data must not be reported as flushed.
    ///
    /// The set is validated (decompressing its wrappers) without holding the partition's lock,
    /// so a set that takes seconds to check never holds up the partition's fetches and offsets.
    pub fn append_deferred(&self, topic: &str, partition: i32, set: &[u8]) -> Result<DeferredAppend, LogError> {
        let mut unlimited = usize::MAX;
        self.append_deferred_within(topic, partition, set, &mut unlimited)
    }

    /// [`LogManager::append_deferred`] within a decompression budget shared by every set of
    /// one request (a broker's MULTIPRODUCE). Like 0.7, the log is created even if the set is
    /// refused.
    pub fn append_deferred_within(
        &self,
        topic: &str,
        partition: i32,
        set: &[u8],
        request_budget: &mut usize,
    ) -> Result<DeferredAppend, LogError> {
        let handle = self.get_or_create(topic, partition)?;
        // The partition's own limits and end (for error offsets), read in one brief lock.
        let (base, max_message_size, limits) = {
            let log = lock(&handle);
            (log.written_end(), log.config().max_message_size, log.config().decode_limits)
        };
        let summary = validate_message_set_within(set, base, max_message_size, &limits, request_budget)?;
        let now = self.now();
        let (info, flush_due) = lock(&handle).append_validated(set, &summary, now)?;
        Ok(self.deferred(handle, info, flush_due))
    }

    fn deferred(&self, handle: PartitionHandle, info: AppendInfo, flush_due: bool) -> DeferredAppend {
        let flush = flush_due.then(|| {
            if let Some(f) = &self.flusher {
                f.request(&handle);
            }
            FlushPoint { handle, offset: info.next_offset }
        });
        DeferredAppend { info, flush }
    }

    /// Blocks until `point` is on stable storage: returns at once when a flush already covered
    /// it (or the log was closed, which flushed it, or deleted), otherwise fsyncs the segment
    /// itself, without holding the log's lock.
    pub fn flush_to(&self, point: &FlushPoint) -> Result<(), LogError> {
        flush_outside_lock(&point.handle, self.now(), |log| !log.is_closed() && log.flushed_end() < point.offset)
            .map(|_| ())
    }

    /// A FETCH: `Ok(None)` when the partition has no log (0.7 answers error 0 with no data).
    pub fn read(&self, topic: &str, partition: i32, offset: i64, max_size: i64) -> Result<Option<FileSlice>, LogError> {
        validate_topic(topic, self.max_topic_len)?;
        let Some(handle) = self.get(topic, partition) else { return Ok(None) };
        let log = lock(&handle);
        log.read_slice(offset, max_size).map(Some)
    }

    /// [`LogManager::read`] that never waits for a lock: `None` when the log map or the
    /// partition is locked by someone else (a topic being created, an append in progress), so
    /// an event-loop thread can try it first and hand the request to a blocking thread only
    /// then.
    pub fn try_read(
        &self,
        topic: &str,
        partition: i32,
        offset: i64,
        max_size: i64,
    ) -> Option<Result<Option<FileSlice>, LogError>> {
        if let Err(e) = validate_topic(topic, self.max_topic_len) {
            return Some(Err(e.into()));
        }
        let handle = {
            let logs = match self.logs.try_read() {
                Ok(l) => l,
                Err(TryLockError::Poisoned(e)) => e.into_inner(),
                Err(TryLockError::WouldBlock) => return None,
            };
            match logs.get(&TopicPartition { topic: topic.to_owned(), partition }) {
                Some(h) => h.clone(),
                None => return Some(Ok(None)),
            }
        };
        let log = match handle.try_lock() {
            Ok(l) => l,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(log.read_slice(offset, max_size).map(Some))
    }

    /// OFFSETS; for a partition without a log, `[0]` for latest/earliest and `[]` otherwise.
    pub fn offsets_before(&self, topic: &str, partition: i32, time: i64, max: i32) -> Result<Vec<i64>, LogError> {
        validate_topic(topic, self.max_topic_len)?;
        match self.get(topic, partition) {
            Some(handle) => lock(&handle).offsets_before(time, max, self.now()),
            None if time == OFFSETS_LATEST || time == OFFSETS_EARLIEST => Ok(vec![0]),
            None => Ok(Vec::new()),
        }
    }

    fn handles(&self) -> Vec<(TopicPartition, PartitionHandle)> {
        let logs = self.logs.read().unwrap_or_else(|e| e.into_inner());
        logs.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Every topic with its partitions that have a log, sorted.
    pub fn topics(&self) -> Vec<(String, Vec<i32>)> {
        let mut map: HashMap<String, Vec<i32>> = HashMap::new();
        for (tp, _) in self.handles() {
            map.entry(tp.topic).or_default().push(tp.partition);
        }
        let mut out: Vec<_> = map.into_iter().collect();
        out.sort();
        for (_, parts) in &mut out {
            parts.sort_unstable();
        }
        out
    }

    /// The time-based flush over every log; call it every `log.default.flush.scheduler.interval.ms`.
    /// Returns how many logs were flushed.
    /// The fsyncs run without holding a log's lock, so appends to it go on meanwhile.
    pub fn flush_due(&self) -> Result<usize, LogError> {
        let now = self.now();
        let mut flushed = 0;
        for (_, h) in self.handles() {
            if flush_outside_lock(&h, now, |log| log.flush_is_due(now))? {
                flushed += 1;
            }
        }
        Ok(flushed)
    }

    pub fn flush_all(&self) -> Result<(), LogError> {
        let now = self.now();
        for (_, h) in self.handles() {
            lock(&h).flush(now)?;
        }
        Ok(())
    }

    /// Retention over every log; call it every `log.cleanup.interval.mins`.
    pub fn cleanup(&self) -> Result<RetentionInfo, LogError> {
        let now = self.now();
        let mut total = RetentionInfo::default();
        for (_, h) in self.handles() {
            let info = lock(&h).apply_retention(now)?;
            total.segments_deleted += info.segments_deleted;
            total.bytes_deleted += info.bytes_deleted;
        }
        Ok(total)
    }

    /// Replaces a topic's overrides and applies them to its live logs at once: the new roll size
    /// and age count from the next append, a lower flush threshold flushes now, and the new
    /// retention applies from the next cleanup.
    pub fn set_topic_overrides(&self, topic: &str, overrides: TopicOverrides) -> Result<(), LogError> {
        {
            let mut map = self.overrides.write().unwrap_or_else(|e| e.into_inner());
            if overrides == TopicOverrides::default() {
                map.remove(topic);
            } else {
                map.insert(topic.to_owned(), overrides);
            }
        }
        let config = self.config_for(topic);
        let now = self.now();
        for (tp, h) in self.handles() {
            if tp.topic == topic {
                lock(&h).set_config(config.clone(), now)?;
            }
        }
        Ok(())
    }

    /// Deletes every partition log of `topic` (files and directories). Handles still held by
    /// others refuse further writes; slices already handed out stay readable.
    pub fn delete_topic(&self, topic: &str) -> Result<usize, LogError> {
        validate_topic(topic, self.max_topic_len)?;
        // The map stays write-locked until the directories are gone, so a concurrent produce
        // cannot reopen a directory that is being deleted.
        let mut logs = self.logs.write().unwrap_or_else(|e| e.into_inner());
        let keys: Vec<TopicPartition> = logs.keys().filter(|tp| tp.topic == topic).cloned().collect();
        for tp in &keys {
            if let Some(h) = logs.remove(tp) {
                lock(&h).mark_closed();
            }
            let path = self.dir.join(tp.dir_name());
            fs::remove_dir_all(&path).map_err(LogError::io("delete partition directory", &path))?;
        }
        if !keys.is_empty() {
            sync_dir(&self.dir)?;
        }
        Ok(keys.len())
    }

    /// Flushes and closes every log, then writes the clean-shutdown marker so the next start
    /// skips recovery. Further writes fail.
    pub fn shutdown(&self) -> Result<(), LogError> {
        if let Some(f) = &self.flusher {
            f.stop();
        }
        let now = self.now();
        for (_, h) in self.handles() {
            lock(&h).close(now)?;
        }
        let marker = self.dir.join(CLEAN_SHUTDOWN_FILE);
        fs::File::create(&marker)
            .and_then(|f| f.sync_all())
            .map_err(LogError::io("create clean-shutdown marker", &marker))?;
        sync_dir(&self.dir)
    }
}
