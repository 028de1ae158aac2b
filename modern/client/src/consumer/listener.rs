//! The rebalance listener (Kafka's `ConsumerRebalanceListener`): told of partitions assigned,
//! revoked and lost, inside `poll`, on the application's task, with the consumer at hand, so
//! that it can commit what it processed before a partition goes to another member.

use std::future::Future;
use std::pin::Pin;

use super::record::TopicPartition;
use super::Consumer;

/// A boxed future borrowing the listener and the consumer.
pub type ListenerFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Called by `poll` (and `close`, `unsubscribe`) around rebalances. Every method has a default
/// that does nothing (`on_partitions_lost` calls `on_partitions_revoked`, as Kafka's does).
///
/// ```no_run
/// use kwire_client::consumer::{Consumer, ConsumerRebalanceListener, ListenerFuture, TopicPartition};
///
/// struct CommitOnRevoke;
///
/// impl ConsumerRebalanceListener for CommitOnRevoke {
///     fn on_partitions_revoked<'a>(&'a mut self, consumer: &'a Consumer, _: &'a [TopicPartition]) -> ListenerFuture<'a> {
///         Box::pin(async move {
///             if let Err(e) = consumer.commit_sync().await {
///                 eprintln!("commit before revocation failed: {e}");
///             }
///         })
///     }
/// }
/// ```
pub trait ConsumerRebalanceListener: Send {
    /// Partitions this member gives up in a rebalance; commit their offsets here. With an
    /// eager assignor every owned partition is revoked before each rebalance; with
    /// cooperative-sticky and KIP-848 groups only those moving elsewhere.
    fn on_partitions_revoked<'a>(
        &'a mut self,
        consumer: &'a Consumer,
        partitions: &'a [TopicPartition],
    ) -> ListenerFuture<'a> {
        let _ = (consumer, partitions);
        Box::pin(async {})
    }

    /// Partitions newly assigned (possibly none, after a rebalance that changed nothing here).
    fn on_partitions_assigned<'a>(
        &'a mut self,
        consumer: &'a Consumer,
        partitions: &'a [TopicPartition],
    ) -> ListenerFuture<'a> {
        let _ = (consumer, partitions);
        Box::pin(async {})
    }

    /// Partitions already owned by another member (this one was fenced or its session
    /// expired): committing them would fail.
    fn on_partitions_lost<'a>(
        &'a mut self,
        consumer: &'a Consumer,
        partitions: &'a [TopicPartition],
    ) -> ListenerFuture<'a> {
        self.on_partitions_revoked(consumer, partitions)
    }
}
