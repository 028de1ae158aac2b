//! SASL on the fake's listeners: our client with SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN, a
//! wrong password refused with Kafka's code and message, nothing but ApiVersions answered
//! before authentication; and librdkafka authenticating to the binary.

mod support;

use std::process::Command;

use kwire::messages::{ApiKey, MetadataRequest};
use kwire::ErrorCode;
use kwire_connection::{Client, ClientConfig, Credentials, Error};
use kwire_fake::{FakeCluster, FakeConfig};
use kwire_test_support::env_or_skip;

async fn cluster() -> FakeCluster {
    let config = FakeConfig::default()
        .sasl_user(Credentials::scram_sha256("alice", "alice-secret"))
        .sasl_user(Credentials::scram_sha512("bob", "bob-secret"))
        .sasl_user(Credentials::plain("carol", "carol-secret"));
    FakeCluster::start(config).await.unwrap()
}

#[tokio::test]
async fn every_mechanism_authenticates_and_a_wrong_password_is_refused() {
    let fake = cluster().await;
    let addr = fake.listen_addrs()[0].to_string();
    for credentials in [
        Credentials::scram_sha256("alice", "alice-secret"),
        Credentials::scram_sha512("bob", "bob-secret"),
        Credentials::plain("carol", "carol-secret"),
    ] {
        let client = Client::connect(&addr, ClientConfig::default().sasl(credentials.clone())).await.unwrap();
        let metadata = client.send(MetadataRequest::default()).await.unwrap();
        assert_eq!(metadata.brokers.len(), 1, "{credentials:?}");
    }
    for wrong in [Credentials::scram_sha512("bob", "guess"), Credentials::plain("carol", "guess")] {
        match Client::connect(&addr, ClientConfig::default().sasl(wrong.clone())).await {
            Err(Error::Authentication { code, message }) => {
                assert_eq!(code, ErrorCode::SASL_AUTHENTICATION_FAILED, "{wrong:?}");
                assert!(message.starts_with("Authentication failed"), "{message}");
            }
            other => panic!("{wrong:?} authenticated: {other:?}"),
        }
    }
    // A mechanism the cluster has no user of.
    let unknown = Credentials::scram_sha256("carol", "carol-secret");
    assert!(Client::connect(&addr, ClientConfig::default().sasl(unknown)).await.is_err());
    fake.shutdown().await;
}

#[tokio::test]
async fn before_authentication_only_api_versions_is_answered() {
    let fake = cluster().await;
    let addr = fake.listen_addrs()[0].to_string();
    // ApiVersions (the handshake of connect) is answered...
    let client = Client::connect(&addr, ClientConfig::default()).await.unwrap();
    assert!(client.version_of(ApiKey::SaslAuthenticate).is_some());
    // ...anything else closes the connection, as a SASL listener does.
    assert!(client.send(MetadataRequest::default()).await.is_err());
    fake.shutdown().await;
}

#[test]
fn librdkafka_authenticates_with_scram_and_plain() {
    let Some(python) = env_or_skip("KWIRE_PYTHON") else { return };
    let fake =
        support::fake(&["--sasl", "SCRAM-SHA-256:alice:alice-secret", "--sasl", "PLAIN:carol:carol:with:colons"]);
    // Produce and read back one record as each user.
    let script = r#"
import sys
from confluent_kafka import Consumer, Producer, TopicPartition
bootstrap, mechanism, user, password = sys.argv[1:]
auth = {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
        "sasl.username": user, "sasl.password": password}
p = Producer(auth)
p.produce("sasl-" + user, b"hello " + user.encode(), partition=0)
assert p.flush(20) == 0
c = Consumer({**auth, "group.id": "sasl", "enable.auto.commit": False})
c.assign([TopicPartition("sasl-" + user, 0, 0)])
m = c.poll(20)
assert m is not None and not m.error(), m and m.error()
print(m.value().decode())
"#;
    for (mechanism, user, password) in
        [("SCRAM-SHA-256", "alice", "alice-secret"), ("PLAIN", "carol", "carol:with:colons")]
    {
        let out =
            Command::new(&python).args(["-c", script, &fake.bootstrap, mechanism, user, password]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{mechanism}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(stdout.trim(), format!("hello {user}"));
    }
}
