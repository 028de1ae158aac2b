//! TLS under the connection (feature `tls`), for Kafka's SSL and SASL_SSL listeners: rustls
//! with the ring provider; the broker's certificate is checked against the configured roots
//! and the name the client dialled, as Kafka's clients do by default
//! (`ssl.endpoint.identification.algorithm=https`).

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
pub use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::TlsConnector;

use crate::error::Error;

/// How to speak TLS to brokers: a rustls client configuration, and the name to check the
/// broker's certificate against (by default the host the client was given, or the peer's IP).
#[derive(Clone)]
pub struct TlsConfig {
    config: Arc<rustls::ClientConfig>,
    server_name: Option<ServerName<'static>>,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig").field("server_name", &self.server_name).finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// Any rustls configuration: client certificates (mutual TLS), custom verifiers.
    pub fn new(config: Arc<rustls::ClientConfig>) -> Self {
        TlsConfig { config, server_name: None }
    }

    /// Trusts the CA certificates in `pem` (Kafka's `ssl.truststore.type=PEM`), without a
    /// client certificate.
    pub fn with_ca_pem(pem: &[u8]) -> Result<Self, Error> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| Error::Tls(format!("reading a CA certificate: {e}")))?;
            roots.add(cert).map_err(|e| Error::Tls(format!("adding a CA certificate: {e}")))?;
        }
        if roots.is_empty() {
            return Err(Error::Tls("no CA certificate in the PEM given".into()));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Tls(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(TlsConfig::new(Arc::new(config)))
    }

    /// Checks every broker's certificate against `name` instead of the host dialled.
    pub fn server_name(mut self, name: &str) -> Result<Self, Error> {
        let name =
            ServerName::try_from(name.to_string()).map_err(|e| Error::Tls(format!("server name {name:?}: {e}")))?;
        self.server_name = Some(name);
        Ok(self)
    }

    /// This configuration for a broker dialled as `host:port`: its host becomes the name
    /// checked, unless one was set.
    pub(crate) fn for_address(&self, address: &str) -> TlsConfig {
        let host = address.rsplit_once(':').map_or(address, |(host, _)| host).trim_matches(['[', ']']);
        let dialled = ServerName::try_from(host.to_string()).ok();
        TlsConfig { config: self.config.clone(), server_name: self.server_name.clone().or(dialled) }
    }

    /// The TLS handshake over `stream` to `peer`.
    pub(crate) async fn connect(&self, stream: TcpStream, peer: SocketAddr) -> Result<TlsStream<TcpStream>, Error> {
        let name = self.server_name.clone().unwrap_or(ServerName::IpAddress(peer.ip().into()));
        TlsConnector::from(self.config.clone()).connect(name, stream).await.map_err(|e| Error::Tls(e.to_string()))
    }
}
