//! KIP-848's `range` assignor.

use super::{Assignable, Owned, Subscriptions, Target};

/// `range`: per topic, its members in id order each take a run of consecutive partitions, the
/// first `partitions % members` one more.
pub(crate) fn range(subscriptions: &Subscriptions, topics: &Assignable) -> Target {
    let mut target: Target = subscriptions.keys().map(|m| (m.clone(), Owned::new())).collect();
    for (name, (id, n)) in topics {
        let members: Vec<&String> = subscriptions.iter().filter(|(_, s)| s.contains(name)).map(|(m, _)| m).collect();
        if members.is_empty() {
            continue;
        }
        let (each, extra) = (*n as usize / members.len(), *n as usize % members.len());
        let mut next = 0;
        for (i, m) in members.into_iter().enumerate() {
            let count = each + usize::from(i < extra);
            if count > 0 {
                target.get_mut(m).expect("a member").insert(*id, (next..next + count as i32).collect());
            }
            next += count as i32;
        }
    }
    target
}

#[cfg(test)]
mod tests {
    use kwire::Uuid;

    use super::*;

    #[test]
    fn range_gives_runs_per_topic() {
        let (x, y) = (Uuid::from_bytes([1; 16]), Uuid::from_bytes([2; 16]));
        let topics: Assignable = [("x".to_string(), (x, 3)), ("y".to_string(), (y, 2))].into();
        let subs: Subscriptions =
            [("a".to_string(), ["x".to_string(), "y".to_string()].into()), ("b".to_string(), ["x".to_string()].into())]
                .into();
        let t = range(&subs, &topics);
        assert_eq!(t["a"][&x], [0, 1].into());
        assert_eq!(t["b"][&x], [2].into());
        assert_eq!(t["a"][&y], [0, 1].into());
    }
}
