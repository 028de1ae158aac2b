//! Ids the cluster hands out: topic ids, member ids.

use kwire::Uuid;

/// A random version-4 UUID (topic ids, member ids), never the nil id Kafka reserves.
pub(crate) fn random_uuid() -> Uuid {
    let mut bytes = [0u8; 16];
    // The operating system's generator; without one, a time-based id still differs per topic.
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        bytes = now.as_nanos().to_be_bytes();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Uuid::from_bytes(bytes)
}
