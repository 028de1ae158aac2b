//! `kwire groups`: every consumer group of the cluster (ListGroups on every broker), each with
//! its type, state and assignor, its members and what they are assigned (DescribeGroups for
//! classic groups, ConsumerGroupDescribe for KIP-848 ones), and its committed offsets with the
//! lag behind each partition's end (OffsetFetch, ListOffsets): what kcat's users ask for.

use std::collections::{BTreeMap, BTreeSet};

use clap::Args;
use kwire::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kwire::messages::offset_fetch_request::OffsetFetchRequestGroup;
use kwire::messages::{
    ConsumerGroupDescribeRequest, DescribeGroupsRequest, ListGroupsRequest, ListOffsetsRequest, OffsetFetchRequest,
};
use kwire::{BrokerId, ErrorCode, GroupId, TopicName};
use kwire_client::consumer::protocol::decode_assignment;
use kwire_connection::{ClientConfig, Cluster, CoordinatorType};

use crate::cmd::CmdResult;

#[derive(Debug, Args)]
#[command(about = "List consumer groups: state, members, committed offsets and lag")]
pub struct GroupsArgs {
    /// Bootstrap brokers, HOST:PORT, comma-separated.
    #[arg(short = 'b', long = "brokers", value_name = "HOST:PORT,...")]
    pub brokers: String,
    /// Only this group (repeatable); every group otherwise.
    #[arg(short = 'g', long = "group")]
    pub groups: Vec<String>,
    /// As JSON (one object per group, in an array).
    #[arg(short = 'J', long = "json")]
    pub json: bool,
}

#[derive(Debug, Default)]
struct Member {
    member_id: String,
    instance_id: Option<String>,
    client_id: String,
    host: String,
    assignment: Vec<(String, i32)>,
}

#[derive(Debug, Default)]
struct Group {
    id: String,
    kind: String,
    state: String,
    assignor: String,
    coordinator: i32,
    members: Vec<Member>,
    /// (topic, partition) -> committed offset.
    committed: BTreeMap<(String, i32), i64>,
    /// (topic, partition) -> end offset.
    ends: BTreeMap<(String, i32), i64>,
    error: Option<String>,
}

pub async fn run(a: GroupsArgs) -> CmdResult {
    let servers: Vec<&str> = a.brokers.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default().client_id("kwire-groups")).await?;
    let listed = list(&cluster).await?;
    let wanted: Vec<(String, String)> = if a.groups.is_empty() {
        listed.into_iter().collect()
    } else {
        a.groups.iter().map(|g| (g.clone(), listed.get(g).cloned().unwrap_or_else(|| "classic".into()))).collect()
    };
    let mut groups = Vec::new();
    for (id, kind) in wanted {
        let mut group = Group { id: id.clone(), kind, ..Default::default() };
        if let Err(e) = describe(&cluster, &mut group).await {
            group.error = Some(e.to_string());
        }
        groups.push(group);
    }
    let text = if a.json {
        serde_json::Value::Array(groups.iter().map(json).collect()).to_string() + "\n"
    } else {
        text(&groups)
    };
    use std::io::Write;
    match std::io::stdout().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Every group id with its type, from ListGroups on every broker (each lists the groups it
/// coordinates).
async fn list(cluster: &Cluster) -> CmdResult<BTreeMap<String, String>> {
    let mut groups = BTreeMap::new();
    for broker in cluster.metadata().brokers.keys() {
        let client = cluster.broker(*broker).await?;
        let listed = client.send(ListGroupsRequest::default()).await?;
        if listed.error_code != ErrorCode::NONE {
            return Err(format!("ListGroups on broker {broker}: {}", listed.error_code).into());
        }
        for g in listed.groups {
            // Before ListGroups v5 every group is classic.
            let kind = if g.group_type.is_empty() { "classic" } else { g.group_type.as_str() };
            groups.insert(g.group_id.as_str().to_owned(), kind.to_owned());
        }
    }
    Ok(groups)
}

async fn describe(cluster: &Cluster, group: &mut Group) -> CmdResult {
    let coordinator = cluster.coordinator(CoordinatorType::Group, &group.id).await?;
    let metadata = cluster.metadata();
    group.coordinator =
        metadata.brokers.values().find(|b| b.address().parse().ok() == Some(coordinator.peer())).map_or(-1, |b| b.id);
    if group.kind == "consumer" {
        let request =
            ConsumerGroupDescribeRequest { group_ids: vec![GroupId::from(group.id.as_str())], ..Default::default() };
        let described = coordinator.send(request).await?;
        let d = described.groups.into_iter().next().ok_or("ConsumerGroupDescribe answered no group")?;
        if d.error_code != ErrorCode::NONE {
            return Err(format!("ConsumerGroupDescribe: {}", d.error_code).into());
        }
        group.state = d.group_state.as_str().to_owned();
        group.assignor = d.assignor_name.as_str().to_owned();
        group.members = d
            .members
            .iter()
            .map(|m| Member {
                member_id: m.member_id.as_str().to_owned(),
                instance_id: m.instance_id.as_ref().map(|i| i.as_str().to_owned()),
                client_id: m.client_id.as_str().to_owned(),
                host: m.client_host.as_str().to_owned(),
                assignment: m
                    .assignment
                    .topic_partitions
                    .iter()
                    .flat_map(|t| t.partitions.iter().map(move |p| (t.topic_name.as_str().to_owned(), p)))
                    .collect(),
            })
            .collect();
    } else {
        let request = DescribeGroupsRequest { groups: vec![GroupId::from(group.id.as_str())], ..Default::default() };
        let described = coordinator.send(request).await?;
        let d = described.groups.into_iter().next().ok_or("DescribeGroups answered no group")?;
        if d.error_code != ErrorCode::NONE {
            return Err(format!("DescribeGroups: {}", d.error_code).into());
        }
        group.state = d.group_state.as_str().to_owned();
        group.assignor = d.protocol_data.as_str().to_owned();
        group.members = d
            .members
            .iter()
            .map(|m| Member {
                member_id: m.member_id.as_str().to_owned(),
                instance_id: m.group_instance_id.as_ref().map(|i| i.as_str().to_owned()),
                client_id: m.client_id.as_str().to_owned(),
                host: m.client_host.as_str().to_owned(),
                // Members of other protocol types (Connect, say) have assignments of their own.
                assignment: decode_assignment(&m.member_assignment)
                    .map(|list| list.into_iter().map(|tp| (tp.topic.to_string(), tp.partition)).collect())
                    .unwrap_or_default(),
            })
            .collect();
    }
    committed(cluster, group).await?;
    ends(cluster, group).await
}

/// The group's committed offsets, for every partition it committed.
async fn committed(cluster: &Cluster, group: &mut Group) -> CmdResult {
    let id = group.id.clone();
    let (error, rows) = cluster
        .with_coordinator(CoordinatorType::Group, &id, |client| {
            let id = id.clone();
            async move {
                let version = client.version_of(kwire::messages::ApiKey::OffsetFetch).unwrap_or(0);
                let mut request = OffsetFetchRequest::default();
                if version >= 8 {
                    request.groups = vec![OffsetFetchRequestGroup {
                        group_id: GroupId::from(id.as_str()),
                        topics: None,
                        ..Default::default()
                    }];
                } else {
                    request.group_id = GroupId::from(id.as_str());
                    request.topics = None;
                }
                let response = client.send_at(request, version).await?;
                let mut rows = Vec::new();
                let error = if version >= 8 {
                    let g = response.groups.into_iter().next();
                    let error = g.as_ref().map_or(ErrorCode::NONE, |g| g.error_code);
                    for t in g.map(|g| g.topics).unwrap_or_default() {
                        for p in t.partitions {
                            rows.push((t.name.as_str().to_owned(), t.topic_id, p.partition_index, p.committed_offset));
                        }
                    }
                    error
                } else {
                    for t in response.topics {
                        for p in t.partitions {
                            rows.push((
                                t.name.as_str().to_owned(),
                                kwire::Uuid::nil(),
                                p.partition_index,
                                p.committed_offset,
                            ));
                        }
                    }
                    response.error_code
                };
                Ok((error, rows))
            }
        })
        .await?;
    if error != ErrorCode::NONE {
        return Err(format!("OffsetFetch: {error}").into());
    }
    // OffsetFetch v10 names topics by id: find their names.
    let needs_names = rows.iter().any(|(name, id, _, _)| name.is_empty() && !id.is_nil());
    if needs_names {
        cluster.refresh_all().await?;
    }
    let metadata = cluster.metadata();
    for (name, id, partition, offset) in rows {
        let name = if name.is_empty() {
            metadata.topics.values().find(|t| t.id == id).map(|t| t.name.clone()).unwrap_or_else(|| id.to_string())
        } else {
            name
        };
        if offset >= 0 {
            group.committed.insert((name, partition), offset);
        }
    }
    Ok(())
}

/// The end offset of every partition the group committed or is assigned, from the leaders.
async fn ends(cluster: &Cluster, group: &mut Group) -> CmdResult {
    let mut partitions: BTreeSet<(String, i32)> = group.committed.keys().cloned().collect();
    partitions.extend(group.members.iter().flat_map(|m| m.assignment.iter().cloned()));
    let topics: Vec<&str> = partitions.iter().map(|(t, _)| t.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
    if topics.is_empty() {
        return Ok(());
    }
    cluster.refresh_topics(&topics, false).await?;
    let metadata = cluster.metadata();
    let mut by_leader: BTreeMap<i32, BTreeMap<String, Vec<i32>>> = BTreeMap::new();
    for (topic, partition) in &partitions {
        if let Some(leader) = metadata.leader(topic, *partition) {
            by_leader.entry(leader).or_default().entry(topic.clone()).or_default().push(*partition);
        }
    }
    for (leader, topics) in by_leader {
        let request = ListOffsetsRequest {
            replica_id: BrokerId(-1),
            topics: topics
                .iter()
                .map(|(name, partitions)| ListOffsetsTopic {
                    name: TopicName::from(name.as_str()),
                    partitions: partitions
                        .iter()
                        .map(|p| ListOffsetsPartition { partition_index: *p, timestamp: -1, ..Default::default() })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let answer = cluster.broker(leader).await?.send(request).await?;
        for t in answer.topics {
            for p in t.partitions.iter().filter(|p| p.error_code == ErrorCode::NONE) {
                group.ends.insert((t.name.as_str().to_owned(), p.partition_index), p.offset);
            }
        }
    }
    Ok(())
}

fn owner<'a>(group: &'a Group, topic: &str, partition: i32) -> Option<&'a Member> {
    group.members.iter().find(|m| m.assignment.iter().any(|(t, p)| t == topic && *p == partition))
}

/// A partition of a group's table: topic, partition, committed offset, end offset, owner.
type Row<'a> = (String, i32, Option<i64>, Option<i64>, Option<&'a Member>);

fn rows(group: &Group) -> Vec<Row<'_>> {
    let mut partitions: BTreeSet<(String, i32)> = group.committed.keys().cloned().collect();
    partitions.extend(group.members.iter().flat_map(|m| m.assignment.iter().cloned()));
    partitions
        .into_iter()
        .map(|(t, p)| {
            let committed = group.committed.get(&(t.clone(), p)).copied();
            let end = group.ends.get(&(t.clone(), p)).copied();
            let member = owner(group, &t, p);
            (t, p, committed, end, member)
        })
        .collect()
}

fn text(groups: &[Group]) -> String {
    let mut out = String::new();
    for g in groups {
        out += &format!(
            "group {} ({}, {}, assignor {}, coordinator {}, {} members)\n",
            g.id,
            g.kind,
            if g.state.is_empty() { "?" } else { &g.state },
            if g.assignor.is_empty() { "-" } else { &g.assignor },
            g.coordinator,
            g.members.len()
        );
        if let Some(error) = &g.error {
            out += &format!("  error: {error}\n");
        }
        for m in &g.members {
            let instance = m.instance_id.as_deref().map(|i| format!(", instance {i}")).unwrap_or_default();
            let assigned: Vec<String> = m.assignment.iter().map(|(t, p)| format!("{t}-{p}")).collect();
            out += &format!(
                "  member {} (client {}, host {}{instance}): {}\n",
                m.member_id,
                m.client_id,
                m.host,
                assigned.join(", ")
            );
        }
        let rows = rows(g);
        if !rows.is_empty() {
            out += &format!(
                "  {:<30} {:>9} {:>12} {:>12} {:>8}  MEMBER\n",
                "TOPIC", "PARTITION", "COMMITTED", "END", "LAG"
            );
            for (t, p, committed, end, member) in rows {
                let lag = match (committed, end) {
                    (Some(c), Some(e)) => (e - c).max(0).to_string(),
                    (None, Some(_)) => "-".into(),
                    _ => "?".into(),
                };
                let show = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
                out += &format!(
                    "  {:<30} {:>9} {:>12} {:>12} {:>8}  {}\n",
                    t,
                    p,
                    show(committed),
                    show(end),
                    lag,
                    member.map_or("-", |m| m.member_id.as_str())
                );
            }
        }
    }
    if groups.is_empty() {
        out += "no groups\n";
    }
    out
}

fn json(g: &Group) -> serde_json::Value {
    serde_json::json!({
        "group": g.id,
        "type": g.kind,
        "state": g.state,
        "assignor": g.assignor,
        "coordinator": g.coordinator,
        "error": g.error,
        "members": g.members.iter().map(|m| serde_json::json!({
            "member_id": m.member_id,
            "instance_id": m.instance_id,
            "client_id": m.client_id,
            "host": m.host,
            "assignment": m.assignment.iter().map(|(t, p)| serde_json::json!({ "topic": t, "partition": p })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "offsets": rows(g).into_iter().map(|(t, p, committed, end, member)| serde_json::json!({
            "topic": t,
            "partition": p,
            "committed": committed,
            "end": end,
            "lag": committed.zip(end).map(|(c, e)| (e - c).max(0)),
            "member": member.map(|m| m.member_id.clone()),
        })).collect::<Vec<_>>(),
    })
}
