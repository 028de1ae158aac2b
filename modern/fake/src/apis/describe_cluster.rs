//! DescribeCluster: the cluster id, controller and live nodes.

use kwire::messages::describe_cluster_response::DescribeClusterBroker;
use kwire::messages::{DescribeClusterRequest, DescribeClusterResponse};
use kwire::{BrokerId, ErrorCode, StrBytes};

use super::Ctx;

/// DescribeCluster v1's endpoint types: brokers, or controllers (which a broker does not list).
const BROKERS: i8 = 1;

pub(super) async fn handle(ctx: &Ctx<'_>, request: DescribeClusterRequest) -> DescribeClusterResponse {
    let state = ctx.shared.state();
    if ctx.version >= 1 && request.endpoint_type != BROKERS {
        return DescribeClusterResponse {
            error_code: ErrorCode::UNSUPPORTED_ENDPOINT_TYPE,
            endpoint_type: request.endpoint_type,
            ..Default::default()
        };
    }
    DescribeClusterResponse {
        endpoint_type: BROKERS,
        cluster_id: StrBytes::from(state.cluster_id().to_string()),
        controller_id: BrokerId(state.live_nodes().first().copied().unwrap_or(-1)),
        // Kafka's schema default when not asked for.
        cluster_authorized_operations: if request.include_cluster_authorized_operations {
            super::authorized::CLUSTER
        } else {
            i32::MIN
        },
        brokers: state
            .nodes()
            .filter(|(_, n)| n.alive)
            .map(|(id, n)| DescribeClusterBroker {
                broker_id: BrokerId(id),
                host: StrBytes::from(n.host.clone()),
                port: n.port,
                rack: None,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
