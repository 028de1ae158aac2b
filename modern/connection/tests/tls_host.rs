//! TLS checks the host dialled through `Client::connect` too, not only through `Cluster`:
//! against a scripted peer whose certificate names "localhost" and no IP, "localhost:port"
//! connects (the old client checked 127.0.0.1, the peer's IP, and was refused) and the socket
//! address, which names only the IP, is refused with a typed error.

mod common;

use std::sync::Arc;

use common::peer::{Mode, Options, Peer};
use kwire::messages::MetadataRequest;
use kwire_connection::tls::rustls;
use kwire_connection::{Client, ClientConfig, Error, TlsConfig};
use rustls::pki_types::{CertificateDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// A CA's PEM, and a server configuration presenting a certificate it signed for "localhost".
fn certificates() -> (String, rustls::ServerConfig) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_string()]).unwrap().signed_by(&key, &ca, &ca_key).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        )
        .unwrap();
    (ca.pem(), server)
}

/// A TLS listener on 127.0.0.1 in front of a scripted peer.
async fn tls_peer(server: rustls::ServerConfig) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let acceptor = TlsAcceptor::from(Arc::new(server));
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (acceptor, peer) = (acceptor.clone(), peer.clone());
            tokio::spawn(async move {
                if let Ok(stream) = acceptor.accept(socket).await {
                    peer.serve(stream).await;
                }
            });
        }
    });
    port
}

#[tokio::test]
async fn client_connect_checks_the_host_dialled() {
    let (ca, server) = certificates();
    let port = tls_peer(server).await;
    let config = ClientConfig::default().tls(TlsConfig::with_ca_pem(ca.as_bytes()).unwrap());
    let client =
        Client::connect(format!("localhost:{port}"), config.clone()).await.expect("the certificate names localhost");
    client.send(MetadataRequest::default()).await.unwrap();
    match Client::connect(std::net::SocketAddr::from(([127, 0, 0, 1], port)), config).await {
        Err(Error::Tls(message)) => assert!(message.contains("certificate"), "{message}"),
        other => panic!("an IP the certificate does not name: {other:?}"),
    }
}
