//! Rules shared by every node that lists broker or partition ids.

use std::collections::BTreeSet;

use super::error::ZkDataError;

/// Checks a replica (or ISR) list: ids are broker ids (≥ 0) and none appears twice.
pub(crate) fn check_broker_list(path: &str, what: &str, ids: &[i32], allow_empty: bool) -> Result<(), ZkDataError> {
    if ids.is_empty() && !allow_empty {
        return Err(ZkDataError::invalid(path, format!("{what} is empty")));
    }
    let mut seen = BTreeSet::new();
    for &id in ids {
        if id < 0 {
            return Err(ZkDataError::invalid(path, format!("{what} holds the negative broker id {id}")));
        }
        if !seen.insert(id) {
            return Err(ZkDataError::invalid(path, format!("{what} lists broker {id} twice")));
        }
    }
    Ok(())
}

/// Checks that a partition id or epoch read from JSON is not negative.
pub(crate) fn check_non_negative(path: &str, what: &str, value: i32) -> Result<(), ZkDataError> {
    if value < 0 {
        return Err(ZkDataError::invalid(path, format!("{what} is negative ({value})")));
    }
    Ok(())
}
