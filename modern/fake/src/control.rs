//! Control for tests: hooks that see each request of an API before it is handled and decide
//! what happens to it, as franz-go's kfake `ControlKey` does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use kwire::messages::{ApiKey, RequestKind, ResponseKind};
use kwire::ErrorCode;

/// What a hook does with a request.
#[derive(Debug)]
pub enum Action {
    /// Nothing: the request is handled as usual, and the hook stays for the next one (a hook
    /// that answers `Pass` is not counted as having run).
    Pass,
    /// Answer with this error wherever the response carries one (per partition, per group, …),
    /// nothing handled, as Kafka answers a request it fails.
    Error(ErrorCode),
    /// Wait, then handle the request as usual.
    Delay(Duration),
    /// Close the connection without answering.
    Drop,
    /// Answer with this body instead (it must be the request's API).
    Respond(Box<ResponseKind>),
}

/// A request as a hook sees it.
#[derive(Debug)]
pub struct Intercepted<'a> {
    /// The node it came to.
    pub node: i32,
    /// Its version.
    pub version: i16,
    /// Its body, decoded.
    pub request: &'a RequestKind,
}

/// How many requests a hook acts on before it is removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Times {
    /// The next one.
    Once,
    /// The next `n`.
    N(usize),
    /// Every one, until [`FakeCluster::remove_hook`](crate::FakeCluster::remove_hook).
    Always,
}

/// A hook's handle, to remove it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HookId(u64);

type HookFn = Box<dyn FnMut(&Intercepted<'_>) -> Action + Send>;

struct Hook {
    id: HookId,
    api: ApiKey,
    left: Option<usize>,
    run: HookFn,
}

/// The hooks of a cluster, in the order they were added.
#[derive(Default)]
pub(crate) struct Hooks {
    hooks: Mutex<Vec<Hook>>,
    next: AtomicU64,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.hooks.lock().map_or(0, |h| h.len());
        f.debug_struct("Hooks").field("count", &n).finish()
    }
}

impl Hooks {
    pub fn add(&self, api: ApiKey, times: Times, run: HookFn) -> HookId {
        let id = HookId(self.next.fetch_add(1, Ordering::Relaxed));
        let left = match times {
            Times::Once => Some(1),
            Times::N(n) => Some(n),
            Times::Always => None,
        };
        self.hooks.lock().unwrap_or_else(|p| p.into_inner()).push(Hook { id, api, left, run });
        id
    }

    pub fn remove(&self, id: HookId) -> bool {
        let mut hooks = self.hooks.lock().unwrap_or_else(|p| p.into_inner());
        let before = hooks.len();
        hooks.retain(|h| h.id != id);
        hooks.len() != before
    }

    /// The first hook of `api` that acts on this request decides; `Pass` when none does.
    /// Hooks run under a lock: one must not add or remove hooks itself.
    pub fn decide(&self, api: ApiKey, seen: &Intercepted<'_>) -> Action {
        let mut hooks = self.hooks.lock().unwrap_or_else(|p| p.into_inner());
        let mut decided = Action::Pass;
        let mut spent = None;
        for (i, hook) in hooks.iter_mut().enumerate().filter(|(_, h)| h.api == api) {
            let action = (hook.run)(seen);
            if matches!(action, Action::Pass) {
                continue;
            }
            if let Some(left) = hook.left.as_mut() {
                *left -= 1;
                if *left == 0 {
                    spent = Some(i);
                }
            }
            decided = action;
            break;
        }
        if let Some(i) = spent {
            hooks.remove(i);
        }
        decided
    }
}
