//! [`Shared`]: what every node, connection and handler of one cluster shares.

use std::sync::{Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::config::FakeConfig;
use crate::control::Hooks;
use crate::request_budget::RequestBudget;
use crate::state::State;

/// What the nodes share: the data, a wake-up for fetches waiting for records, the config.
#[derive(Debug)]
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Woken on every append (and whenever records become readable or available again), for
    /// fetches and share fetches waiting for some.
    pub appended: Notify,
    /// Woken on every change to a group, for JoinGroup and SyncGroup waiting on one.
    pub groups_changed: Notify,
    pub hooks: Hooks,
    /// The bytes of requests still arriving, shared by every connection of every node.
    pub request_budget: RequestBudget,
    pub config: FakeConfig,
}

impl Shared {
    pub fn new(state: State, request_budget: RequestBudget, config: FakeConfig) -> Shared {
        Shared {
            state: Mutex::new(state),
            appended: Notify::new(),
            groups_changed: Notify::new(),
            hooks: Hooks::default(),
            request_budget,
            config,
        }
    }

    /// The cluster's data. A handler that panicked while holding it left nothing half-written
    /// that a later request could trip on (every change is made whole), so the lock is taken
    /// back rather than failing every request after.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
