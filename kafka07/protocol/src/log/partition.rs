//! One partition's log: segments, append with validation, roll, flush, reads, OFFSETS and
//! retention (spec §3). Not synchronised itself; [`crate::log::LogManager`] puts each one
//! behind a mutex.

use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;

use crate::log::config::{LogConfig, Visibility};
use crate::log::durable::sync_dir;
use crate::log::error::LogError;
use crate::log::recovery::valid_prefix;
use crate::log::segment::{parse_segment_file_name, Segment};
use crate::log::slice::FileSlice;
use crate::{validate_message_set, SetSummary};

/// A shared partition log.
pub type PartitionHandle = Arc<Mutex<PartitionLog>>;

/// Locks a partition; a poisoned lock is still usable because no log operation panics midway.
pub(crate) fn lock(handle: &PartitionHandle) -> MutexGuard<'_, PartitionLog> {
    handle.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where an append landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendInfo {
    /// Log offset of the first appended byte.
    pub offset: u64,
    /// Log offset after the appended bytes.
    pub next_offset: u64,
    /// Bytes appended (the set trimmed to its complete messages).
    pub bytes: u64,
    /// Messages appended, counting each one inside compressed wrappers.
    pub messages: u64,
}

/// What a retention run deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RetentionInfo {
    pub segments_deleted: usize,
    pub bytes_deleted: u64,
}

/// A segment as seen from outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentInfo {
    pub start: u64,
    pub size: u64,
    pub flushed: u64,
    pub path: PathBuf,
}

/// A flush in progress, from [`PartitionLog::begin_flush`]: the segment file and the position
/// whose bytes the fsync covers.
#[derive(Debug)]
pub struct FlushTicket {
    file: Arc<File>,
    path: Arc<Path>,
    segment_start: u64,
    upto: u64,
    messages: u64,
}

impl FlushTicket {
    /// fdatasync of the segment file (its length and data; the name was synced at creation).
    /// Call it without holding the log's lock.
    pub fn sync(&self) -> Result<(), LogError> {
        self.file.sync_data().map_err(LogError::io("fsync segment", self.path.to_path_buf()))
    }

    /// Log offset up to which the flush makes data durable.
    pub fn offset(&self) -> u64 {
        self.segment_start + self.upto
    }
}

#[derive(Debug)]
pub struct PartitionLog {
    dir: PathBuf,
    config: LogConfig,
    /// Sorted by start, contiguous, never empty; the last is the active segment.
    segments: Vec<Segment>,
    unflushed_messages: u64,
    last_flush: SystemTime,
    /// First append to the active segment since this process opened or rolled it.
    first_append: Option<SystemTime>,
    closed: bool,
}

fn millis(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// `now - then > limit`, false when `then` is in the future.
fn older_than(now: SystemTime, then: SystemTime, limit: Duration) -> bool {
    now.duration_since(then).is_ok_and(|age| age > limit)
}

impl PartitionLog {
    /// Opens the partition directory `dir`, creating it with one empty segment at offset 0 if
    /// it does not exist. With `recover`, the active segment is scanned and truncated after its
    /// last good entry; otherwise (clean shutdown) its length is trusted.
    pub fn open(dir: impl Into<PathBuf>, config: LogConfig, recover: bool, now: SystemTime) -> Result<Self, LogError> {
        let dir = dir.into();
        let mut created = false;
        if !dir.exists() {
            fs::create_dir(&dir).map_err(LogError::io("create partition directory", &dir))?;
            created = true;
        }
        let mut starts = Vec::new();
        for entry in fs::read_dir(&dir).map_err(LogError::io("list partition directory", &dir))? {
            let entry = entry.map_err(LogError::io("list partition directory", &dir))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if !name.ends_with(".kafka") {
                continue;
            }
            let start = parse_segment_file_name(name).ok_or_else(|| LogError::BadSegmentName(entry.path()))?;
            starts.push(start);
        }
        starts.sort_unstable();

        let mut segments = Vec::with_capacity(starts.len().max(1));
        let count = starts.len();
        for (i, &start) in starts.iter().enumerate() {
            let active = i + 1 == count;
            segments.push(Segment::open(dir.join(crate::log::segment_file_name(start)), start, active)?);
        }
        for pair in segments.windows(2) {
            if pair[0].end() != pair[1].start {
                return Err(LogError::NonContiguous {
                    first: pair[0].path.to_path_buf(),
                    first_end: pair[0].end(),
                    second: pair[1].path.to_path_buf(),
                    second_start: pair[1].start,
                });
            }
        }
        if segments.is_empty() {
            segments.push(Segment::create(&dir, 0)?);
            created = true;
        } else if recover {
            if let Some(active) = segments.last_mut() {
                let good = valid_prefix(&active.file, active.size)
                    .map_err(LogError::io("recover segment", active.path.to_path_buf()))?;
                if good < active.size {
                    active.file.set_len(good).map_err(LogError::io("truncate segment", active.path.to_path_buf()))?;
                    active.file.sync_all().map_err(LogError::io("fsync segment", active.path.to_path_buf()))?;
                }
                active.size = good;
                active.flushed = good;
            }
        }
        if created {
            sync_dir(&dir)?;
            if let Some(parent) = dir.parent() {
                sync_dir(parent)?;
            }
        }
        Ok(PartitionLog {
            dir,
            config,
            segments,
            unflushed_messages: 0,
            last_flush: now,
            first_append: None,
            closed: false,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    fn active(&self) -> &Segment {
        // `segments` is never empty.
        &self.segments[self.segments.len() - 1]
    }

    fn active_mut(&mut self) -> &mut Segment {
        let last = self.segments.len() - 1;
        &mut self.segments[last]
    }

    fn check_open(&self) -> Result<(), LogError> {
        if self.closed {
            return Err(LogError::Closed(self.dir.clone()));
        }
        Ok(())
    }

    /// Bytes of the active segment that readers may see.
    fn active_visible(&self) -> u64 {
        let a = self.active();
        match self.config.visibility {
            Visibility::AfterAppend => a.size,
            Visibility::AfterFlush => a.flushed,
        }
    }

    /// Offset of the first byte still in the log.
    pub fn start_offset(&self) -> u64 {
        self.segments[0].start
    }

    /// The end readers see (the FETCH range check, OFFSETS latest): depends on [`Visibility`].
    pub fn end_offset(&self) -> u64 {
        self.active().start + self.active_visible()
    }

    /// Offset after the last written byte, flushed or not.
    pub fn written_end(&self) -> u64 {
        self.active().end()
    }

    /// Offset up to which data is on stable storage.
    pub fn flushed_end(&self) -> u64 {
        self.active().start + self.active().flushed
    }

    pub fn unflushed_messages(&self) -> u64 {
        self.unflushed_messages
    }

    pub fn segments(&self) -> Vec<SegmentInfo> {
        self.segments
            .iter()
            .map(|s| SegmentInfo { start: s.start, size: s.size, flushed: s.flushed, path: s.path.to_path_buf() })
            .collect()
    }

    /// Replaces the configuration; a lower flush threshold flushes at once.
    pub fn set_config(&mut self, config: LogConfig, now: SystemTime) -> Result<(), LogError> {
        self.config = config;
        if self.unflushed_messages > 0 && self.unflushed_messages >= self.config.flush_interval_messages {
            self.flush(now)?;
        }
        Ok(())
    }

    /// Validates `set` (sizes, every CRC including inside compressed wrappers, magic, codec),
    /// trims it to its complete messages and appends those bytes unchanged, rolling first if the
    /// active segment is too large or too old, and flushing after if enough messages are
    /// unflushed. Nothing is written if validation fails.
    pub fn append(&mut self, set: &[u8], now: SystemTime) -> Result<AppendInfo, LogError> {
        let (info, flush_due) = self.append_deferred(set, now)?;
        if flush_due {
            self.flush(now)?;
        }
        Ok(info)
    }

    /// [`PartitionLog::append`] without the fsync: returns whether `log.flush.interval` asks for
    /// a flush now. The caller runs that flush itself, typically without holding this log's lock
    /// (group commit: [`PartitionLog::begin_flush`], [`FlushTicket::sync`],
    /// [`PartitionLog::finish_flush`]), so appends go on while the disk works.
    pub fn append_deferred(&mut self, set: &[u8], now: SystemTime) -> Result<(AppendInfo, bool), LogError> {
        self.check_open()?;
        let summary =
            validate_message_set(set, self.written_end(), self.config.max_message_size, &self.config.decode_limits)?;
        self.append_validated(set, &summary, now)
    }

    /// [`PartitionLog::append_deferred`] of a set that [`validate_message_set`] (or its
    /// budgeted form) already accepted under this log's `max.message.size` and decode limits:
    /// validation, which may decompress megabytes, then runs without holding this log's lock.
    pub fn append_validated(
        &mut self,
        set: &[u8],
        summary: &SetSummary,
        now: SystemTime,
    ) -> Result<(AppendInfo, bool), LogError> {
        self.check_open()?;
        let bytes = set.get(..summary.valid_bytes).unwrap_or(set);
        if bytes.is_empty() {
            let end = self.written_end();
            return Ok((AppendInfo { offset: end, next_offset: end, bytes: 0, messages: 0 }, false));
        }
        self.maybe_roll(now)?;
        let active = self.active_mut();
        let offset = active.end();
        if let Err(source) = active.file.write_all_at(bytes, active.size) {
            // Drop any partial write so the file and `size` agree again.
            let _ = active.file.set_len(active.size);
            return Err(LogError::Io { op: "append to segment", path: active.path.to_path_buf(), source });
        }
        active.size += bytes.len() as u64;
        self.first_append.get_or_insert(now);
        self.unflushed_messages += summary.deep_count;
        let info = AppendInfo {
            offset,
            next_offset: offset + bytes.len() as u64,
            bytes: bytes.len() as u64,
            messages: summary.deep_count,
        };
        Ok((info, self.unflushed_messages >= self.config.flush_interval_messages))
    }

    fn maybe_roll(&mut self, now: SystemTime) -> Result<(), LogError> {
        let too_big = self.active().size > self.config.segment_bytes;
        let too_old = match (self.first_append, self.config.roll_age) {
            (Some(first), Some(limit)) => older_than(now, first, limit),
            _ => false,
        };
        if too_big || too_old {
            self.roll(now)?;
        }
        Ok(())
    }

    /// Flushes the active segment and starts a new one at the end of the log. Does nothing when
    /// the active segment is empty (a roll never creates an empty segment behind it).
    pub fn roll(&mut self, now: SystemTime) -> Result<(), LogError> {
        self.check_open()?;
        if self.active().size == 0 {
            return Ok(());
        }
        self.flush(now)?;
        let start = self.written_end();
        let segment = Segment::create(&self.dir, start)?;
        sync_dir(&self.dir)?;
        self.segments.push(segment);
        self.first_append = None;
        Ok(())
    }

    /// fsyncs the active segment (older ones were synced when rolled) and moves the
    /// high-water mark to the written end.
    pub fn flush(&mut self, now: SystemTime) -> Result<(), LogError> {
        self.active_mut().sync()?;
        self.unflushed_messages = 0;
        self.last_flush = now;
        Ok(())
    }

    /// The time-based flush: flushes if there is unflushed data and the last flush is at least
    /// `flush_interval` old. Returns whether it flushed.
    pub fn flush_if_due(&mut self, now: SystemTime) -> Result<bool, LogError> {
        let due = self.flush_is_due(now);
        if due {
            self.flush(now)?;
        }
        Ok(due)
    }

    /// Whether the time-based flush applies: unflushed data and a last flush (or flush start) at
    /// least `flush_interval` old.
    pub fn flush_is_due(&self, now: SystemTime) -> bool {
        let active = self.active();
        active.flushed < active.size
            && now.duration_since(self.last_flush).is_ok_and(|d| d >= self.config.flush_interval)
    }

    /// Starts a flush that runs without this log's lock: captures the active segment's written
    /// end and hands out its file. After [`FlushTicket::sync`] returns, [`PartitionLog::finish_flush`]
    /// moves the high-water mark to the captured position, never further: bytes appended while
    /// the fsync ran wait for the next flush. `None` when nothing is unflushed (or the log is
    /// closed, which flushed it). The message counter restarts from zero at once, so appends
    /// during the fsync count towards the next flush.
    pub fn begin_flush(&mut self, now: SystemTime) -> Option<FlushTicket> {
        let active = self.active();
        if self.closed || active.flushed >= active.size {
            return None;
        }
        let ticket = FlushTicket {
            file: active.file.clone(),
            path: active.path.clone(),
            segment_start: active.start,
            upto: active.size,
            messages: self.unflushed_messages,
        };
        self.unflushed_messages = 0;
        self.last_flush = now;
        Some(ticket)
    }

    /// Completes a flush whose [`FlushTicket::sync`] succeeded. A segment rolled or deleted
    /// meanwhile is left as it is (a roll flushes the old segment itself).
    pub fn finish_flush(&mut self, ticket: FlushTicket) {
        let segment = self.segments.iter_mut().rev().find(|s| Arc::ptr_eq(&s.file, &ticket.file));
        if let Some(s) = segment {
            s.flushed = s.flushed.max(ticket.upto.min(s.size));
        }
    }

    /// Gives up a flush whose fsync failed: its messages count as unflushed again.
    pub fn abort_flush(&mut self, ticket: FlushTicket) {
        self.unflushed_messages += ticket.messages;
    }

    /// Whether the log was closed (shut down or deleted) and takes no more writes.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The byte range for a FETCH at `offset` of at most `max_size` bytes. It never crosses a
    /// segment boundary; an offset at the end of the log gives an empty range; one before the
    /// first segment or after the end is `OffsetOutOfRange`. A negative `max_size` reads nothing.
    pub fn read_slice(&self, offset: i64, max_size: i64) -> Result<FileSlice, LogError> {
        let start = self.start_offset();
        let end = self.end_offset();
        let out_of_range = || LogError::OffsetOutOfRange { offset, start, end };
        let off = u64::try_from(offset).map_err(|_| out_of_range())?;
        if off < start || off > end {
            return Err(out_of_range());
        }
        // The last segment starting at or before `off`.
        let idx = self.segments.partition_point(|s| s.start <= off).saturating_sub(1);
        let seg = &self.segments[idx];
        let visible = if idx + 1 == self.segments.len() { self.active_visible() } else { seg.size };
        let position = off - seg.start;
        let available = visible.saturating_sub(position);
        let max = u64::try_from(max_size).unwrap_or(0);
        Ok(FileSlice {
            file: seg.file.clone(),
            path: seg.path.clone(),
            segment_start: seg.start,
            position,
            len: available.min(max),
        })
    }

    /// [`PartitionLog::read_slice`] copied into memory.
    pub fn read(&self, offset: i64, max_size: i64) -> Result<Bytes, LogError> {
        self.read_slice(offset, max_size)?.to_bytes()
    }

    /// OFFSETS (spec §3.7): segment starts (and the end, if the active segment has visible
    /// data) whose time is ≤ `time`, newest first, at most `max` of them. `time` −1 means the
    /// latest, −2 the earliest. Segment times are file modification times.
    pub fn offsets_before(&self, time: i64, max: i32, now: SystemTime) -> Result<Vec<i64>, LogError> {
        let mut pairs: Vec<(u64, i64)> = Vec::with_capacity(self.segments.len() + 1);
        for s in &self.segments {
            pairs.push((s.start, millis(s.modified()?)));
        }
        let visible = self.active_visible();
        if visible > 0 {
            pairs.push((self.active().start + visible, millis(now)));
        }
        let start_index: Option<usize> = match time {
            -1 => Some(pairs.len() - 1),
            -2 => Some(0),
            t => pairs.iter().rposition(|&(_, mtime)| mtime <= t),
        };
        let Some(idx) = start_index else { return Ok(Vec::new()) };
        let n = usize::try_from(max).unwrap_or(0).min(idx + 1);
        Ok(pairs[..=idx].iter().rev().take(n).map(|&(o, _)| o as i64).collect())
    }

    /// Retention (spec §3.8): first by age (a take-while from the oldest segment), then by
    /// total size. The last segment is never deleted and the log never goes back to offset 0:
    /// if every segment is due and the active one holds data, it is rolled first.
    pub fn apply_retention(&mut self, now: SystemTime) -> Result<RetentionInfo, LogError> {
        self.check_open()?;
        let mut info = RetentionInfo::default();
        if let Some(limit) = self.config.retention_age {
            let mut n = 0;
            for s in &self.segments {
                if !older_than(now, s.modified()?, limit) {
                    break;
                }
                n += 1;
            }
            self.delete_oldest(n, now, &mut info)?;
        }
        if let Some(limit) = self.config.retention_bytes {
            let last = self.segments.len() - 1;
            let total: u64 =
                self.segments.iter().enumerate().map(|(i, s)| if i == last { s.flushed } else { s.size }).sum();
            if total >= limit {
                let mut excess = total - limit;
                let mut n = 0;
                for (i, s) in self.segments.iter().enumerate() {
                    let size = if i == last { s.flushed } else { s.size };
                    if excess < size {
                        break;
                    }
                    excess -= size;
                    n += 1;
                }
                self.delete_oldest(n, now, &mut info)?;
            }
        }
        Ok(info)
    }

    fn delete_oldest(&mut self, mut n: usize, now: SystemTime, info: &mut RetentionInfo) -> Result<(), LogError> {
        if n == 0 {
            return Ok(());
        }
        if n >= self.segments.len() {
            n = self.segments.len();
            if self.active().size > 0 {
                self.roll(now)?;
            } else {
                n -= 1;
                let active = self.active();
                active.file.set_modified(now).map_err(LogError::io("touch segment", active.path.to_path_buf()))?;
            }
        }
        for s in self.segments.drain(..n) {
            fs::remove_file(&s.path).map_err(LogError::io("delete segment", s.path.to_path_buf()))?;
            info.segments_deleted += 1;
            info.bytes_deleted += s.size;
        }
        if n > 0 {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }

    /// Flushes, drops any bytes past the written end and refuses further use. After this the
    /// files are consistent without recovery.
    pub fn close(&mut self, now: SystemTime) -> Result<(), LogError> {
        if self.closed {
            return Ok(());
        }
        self.flush(now)?;
        let active = self.active();
        let len = active.file.metadata().map_err(LogError::io("stat segment", active.path.to_path_buf()))?.len();
        if len != active.size {
            active.file.set_len(active.size).map_err(LogError::io("truncate segment", active.path.to_path_buf()))?;
            active.file.sync_all().map_err(LogError::io("fsync segment", active.path.to_path_buf()))?;
        }
        self.closed = true;
        Ok(())
    }

    /// Marks the log unusable without flushing (used when its files are about to be deleted).
    pub(crate) fn mark_closed(&mut self) {
        self.closed = true;
    }
}
