//! Topic-name validation exactly as Kafka 0.7.2's `Topic.validate`. A topic name becomes a
//! directory name under the log dir, so this is a security boundary: `..`, `/` and control
//! characters would let a client escape or confuse the log directory.

/// 0.7.2's default `max.topic.name.length`.
pub const DEFAULT_MAX_TOPIC_NAME_LENGTH: usize = 255;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopicError {
    #[error("topic name is empty")]
    Empty,
    #[error("topic name is {length} characters long, the limit is {max}")]
    TooLong { length: usize, max: usize },
    #[error("topic name {0:?} is a relative path component")]
    DotName(String),
    #[error("topic name {name:?} contains the illegal character U+{code:04X}")]
    IllegalChar { name: String, code: u32 },
    #[error(
        "topic name is {bytes} bytes long: partition {partition}'s directory `<topic>-{partition}` would exceed \
         the {max}-byte limit of a file name"
    )]
    DirNameTooLong { bytes: usize, partition: i32, max: usize },
}

/// Longest file name the filesystems a log lives on allow (ext4, xfs, btrfs, tmpfs), in bytes:
/// a partition's directory `<topic>-<partition>` must fit.
pub const MAX_DIR_NAME_BYTES: usize = 255;

/// Checks that the directory of every partition `0..partitions` of `name` fits in a file name
/// (bytes, not characters: `日` is 3 bytes on disk). 0.7 checks only the length in characters
/// and then fails to create the directory.
pub fn validate_topic_dirs(name: &str, partitions: i32) -> Result<(), TopicError> {
    let highest = partitions.max(1) - 1;
    let digits = highest.checked_ilog10().map_or(1, |d| d as usize + 1);
    if name.len() + 1 + digits > MAX_DIR_NAME_BYTES {
        return Err(TopicError::DirNameTooLong { bytes: name.len(), partition: highest, max: MAX_DIR_NAME_BYTES });
    }
    Ok(())
}

/// Whether 0.7.2 refuses this character in a topic name: `/`, C0 and C1 controls (with DEL),
/// U+D800–U+F8FF (surrogates and private use) and U+FFF0–U+FFFF (specials, including the
/// U+FFFD that replaces invalid UTF-8).
fn is_illegal(c: char) -> bool {
    matches!(c as u32, 0x2F | 0x00..=0x1F | 0x7F..=0x9F | 0xD800..=0xF8FF | 0xFFF0..=0xFFFF)
}

/// Validates `name` as 0.7.2 does. Length is counted in UTF-16 code units, as Java's
/// `String.length` does, and compared with `max_len` (`max.topic.name.length`).
pub fn validate_topic(name: &str, max_len: usize) -> Result<(), TopicError> {
    if name.is_empty() {
        return Err(TopicError::Empty);
    }
    let length = name.encode_utf16().count();
    if length > max_len {
        return Err(TopicError::TooLong { length, max: max_len });
    }
    if name == "." || name == ".." {
        return Err(TopicError::DotName(name.to_owned()));
    }
    if let Some(c) = name.chars().find(|&c| is_illegal(c)) {
        return Err(TopicError::IllegalChar { name: name.to_owned(), code: c as u32 });
    }
    Ok(())
}

/// Validates a topic that logs are to be created for: 0.7.2's rules ([`validate_topic`]) and
/// every one of its `partitions` directories fitting in a file name ([`validate_topic_dirs`]).
pub fn validate_new_topic(name: &str, max_len: usize, partitions: i32) -> Result<(), TopicError> {
    validate_topic(name, max_len)?;
    validate_topic_dirs(name, partitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_names_must_fit_in_bytes() {
        assert_eq!(validate_topic_dirs(&"a".repeat(253), 1), Ok(()));
        assert_eq!(validate_topic_dirs(&"a".repeat(253), 10), Ok(()));
        assert_eq!(validate_topic_dirs(&"a".repeat(252), 11), Ok(()));
        assert!(matches!(
            validate_topic_dirs(&"a".repeat(253), 11),
            Err(TopicError::DirNameTooLong { bytes: 253, partition: 10, max: 255 })
        ));
        assert!(validate_topic_dirs(&"a".repeat(254), 1).is_err());
        assert!(validate_topic_dirs(&"日".repeat(100), 1).is_err(), "300 bytes");
        assert!(validate_topic_dirs(&"😀".repeat(64), 1).is_err(), "256 bytes");
        assert_eq!(validate_topic_dirs(&"日".repeat(84), 1), Ok(()), "252 bytes");
        assert!(validate_topic_dirs("t", i32::MAX).is_ok());
    }

    #[test]
    fn accepts_ordinary_names() {
        for name in ["events", "a", "my-topic", "a.b", "...", "x..y", "t-1-2", "日本"] {
            assert_eq!(validate_topic(name, 255), Ok(()), "{name}");
        }
    }

    #[test]
    fn refuses_path_tricks() {
        assert!(matches!(validate_topic("..", 255), Err(TopicError::DotName(_))));
        assert!(matches!(validate_topic(".", 255), Err(TopicError::DotName(_))));
        assert!(matches!(validate_topic("../etc", 255), Err(TopicError::IllegalChar { code: 0x2F, .. })));
        assert!(matches!(validate_topic("a/b", 255), Err(TopicError::IllegalChar { code: 0x2F, .. })));
        assert!(matches!(validate_topic("/abs", 255), Err(TopicError::IllegalChar { code: 0x2F, .. })));
    }

    #[test]
    fn refuses_control_and_special_ranges() {
        for code in [0x00u32, 0x0A, 0x1F, 0x7F, 0x85, 0x9F, 0xE000, 0xF8FF, 0xFFF0, 0xFFFD, 0xFFFF] {
            let c = char::from_u32(code).unwrap();
            let name = format!("ab{c}cd");
            assert_eq!(
                validate_topic(&name, 255),
                Err(TopicError::IllegalChar { name: name.clone(), code }),
                "U+{code:04X}"
            );
        }
        // The neighbours of each range are allowed.
        for code in [0x20u32, 0x7E, 0xA0, 0xD7FF, 0xF900, 0xFFEF] {
            let name = format!("ab{}cd", char::from_u32(code).unwrap());
            assert_eq!(validate_topic(&name, 255), Ok(()), "U+{code:04X}");
        }
    }

    #[test]
    fn length_limit_counts_utf16_units() {
        assert_eq!(validate_topic(&"a".repeat(255), 255), Ok(()));
        assert_eq!(validate_topic(&"a".repeat(256), 255), Err(TopicError::TooLong { length: 256, max: 255 }));
        assert_eq!(validate_topic("", 255), Err(TopicError::Empty));
        // A supplementary character is two UTF-16 units, as in Java.
        assert_eq!(validate_topic("\u{1F600}", 1), Err(TopicError::TooLong { length: 2, max: 1 }));
        assert_eq!(validate_topic("\u{1F600}", 2), Ok(()));
    }
}
