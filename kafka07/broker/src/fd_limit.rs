//! File descriptors: every open partition holds one, every connection one. The broker raises
//! its soft limit to the hard limit at start-up (as most servers do) and, unless
//! `kwire.max.partitions` says otherwise, lets partitions use half of what it then has, so
//! that auto-created topics can never take the descriptors connections need.

/// Descriptors kept out of the partitions' share: standard streams, the listener, ZooKeeper,
/// segment files opened for reads and retention, the lock file.
const RESERVED: u64 = 64;
/// The default when the limit cannot be read.
const FALLBACK: usize = 1_024;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the soft limit in force.
pub fn raise_nofile_limit() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::resource::{getrlimit, setrlimit, Resource};
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
        if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
            return Some(hard);
        }
        Some(soft)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// `kwire.max.partitions`' default for a descriptor limit (`None`: unknown): half of what is
/// left after the descriptors reserved for everything else, at least 16.
pub fn default_max_partitions(nofile: Option<u64>) -> usize {
    match nofile {
        Some(limit) => (limit.saturating_sub(RESERVED) / 2).clamp(16, 1 << 20) as usize,
        None => FALLBACK,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_leaves_room_for_connections() {
        assert_eq!(super::default_max_partitions(Some(1024)), 480);
        assert_eq!(super::default_max_partitions(Some(10)), 16);
        let limit = super::raise_nofile_limit();
        let max = super::default_max_partitions(limit);
        assert!(limit.is_none_or(|l| (max as u64) < l), "{max} partitions with {limit:?} descriptors");
    }
}
