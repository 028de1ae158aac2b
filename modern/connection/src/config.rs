//! How a client connects: its name, limits, timeouts and credentials.

use std::time::Duration;

use crate::connection::DEFAULT_MAX_FRAME_SIZE;
use crate::sasl::Credentials;

/// Settings of a [`crate::Client`]; `ClientConfig::default()` and the builder methods.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The `client_id` of every request header.
    pub client_id: Option<String>,
    /// Sent in ApiVersions v3+ (KIP-511), shown by the broker's metrics.
    pub software_name: String,
    pub software_version: String,
    /// The largest response frame accepted (Kafka's `socket.request.max.bytes`, 100 MiB).
    pub max_frame_size: usize,
    /// Requests written before their responses arrive (Kafka's
    /// `max.in.flight.requests.per.connection`, 5).
    pub max_in_flight: usize,
    /// How long a request waits for its response (Kafka's `request.timeout.ms`). One written
    /// that waits longer closes the connection: every request on it fails.
    pub request_timeout: Duration,
    /// How long the TCP connect, the ApiVersions handshake and SASL may take.
    pub connect_timeout: Duration,
    /// SASL credentials, for a SASL listener.
    pub sasl: Option<Credentials>,
    /// The version the first ApiVersions request claims. Above the newest this code writes,
    /// the newest body is sent under it: what a newer client sends, to exercise a broker's
    /// KIP-511 fallback.
    pub first_api_versions_version: Option<i16>,
    /// Whether a throttled connection waits out the broker's `throttle_time_ms` before
    /// writing its next request, as Kafka's clients do (KIP-219). Without it, requests
    /// written meanwhile wait in the broker's muted socket instead, counted against
    /// `request_timeout`.
    pub honour_throttle: bool,
    /// TLS, for an SSL or SASL_SSL listener.
    #[cfg(feature = "tls")]
    pub tls: Option<crate::tls::TlsConfig>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            client_id: Some("kwire".to_string()),
            software_name: "kwire".to_string(),
            software_version: env!("CARGO_PKG_VERSION").to_string(),
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            max_in_flight: 5,
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            sasl: None,
            first_api_versions_version: None,
            honour_throttle: true,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }
}

impl ClientConfig {
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    pub fn sasl(mut self, credentials: Credentials) -> Self {
        self.sasl = Some(credentials);
        self
    }

    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: crate::tls::TlsConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// This configuration for the broker at `address` (`host:port`): with TLS, the host is
    /// the name its certificate must carry, unless one was set.
    pub(crate) fn for_address(&self, address: &str) -> ClientConfig {
        #[cfg(feature = "tls")]
        return ClientConfig { tls: self.tls.as_ref().map(|tls| tls.for_address(address)), ..self.clone() };
        #[cfg(not(feature = "tls"))]
        {
            let _ = address;
            self.clone()
        }
    }

    pub fn honour_throttle(mut self, honour: bool) -> Self {
        self.honour_throttle = honour;
        self
    }

    pub fn max_frame_size(mut self, bytes: usize) -> Self {
        self.max_frame_size = bytes;
        self
    }
}
