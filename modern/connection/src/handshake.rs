//! What happens on a new connection before it carries requests: ApiVersions (with KIP-511's
//! fallback), then SASL when configured. Sequential, over the socket the client will use; SASL
//! runs again on a connection whose session has a lifetime (KIP-368).

use std::time::Duration;

use kwire::messages::{
    ApiKey, ApiRequest, ApiVersionsRequest, ApiVersionsResponse, NegotiatedVersions, SaslAuthenticateRequest,
    SaslHandshakeRequest,
};
use kwire::{Encode, ErrorCode};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::config::ClientConfig;
use crate::connection::{Connection, Received, Sent};
use crate::error::Error;

/// The broker's answer to ApiVersions and what both sides share.
#[derive(Debug, Clone)]
pub struct Negotiated {
    pub response: ApiVersionsResponse,
    pub versions: NegotiatedVersions,
    /// The ApiVersions version the answer was read at.
    pub api_versions_version: i16,
}

/// Writes what `conn` holds and reads until the response to `sent` arrives.
async fn exchange(
    stream: &mut (impl AsyncRead + AsyncWrite + Unpin),
    conn: &mut Connection,
    sent: Sent,
) -> Result<Received, Error> {
    stream.write_all(&conn.take_outgoing()).await?;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if let Some(received) = conn.next_response()? {
            if received.correlation_id == sent.correlation_id {
                return Ok(received);
            }
            continue;
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Err(Error::Closed(Some(format!("the broker closed the connection during {:?}", sent.api).into())));
        }
        conn.receive(&buf[..n]);
    }
}

async fn request<R: ApiRequest>(
    stream: &mut (impl AsyncRead + AsyncWrite + Unpin),
    conn: &mut Connection,
    request: R,
    version: i16,
) -> Result<R::Response, Error> {
    let sent = conn.send(request, version)?;
    exchange(stream, conn, sent).await?.into_typed::<R>()
}

/// One request and its response, for SASL: straight over the socket on connect, through the
/// client's reader and writer tasks when re-authenticating (KIP-368).
pub(crate) trait Exchange {
    async fn request<R: ApiRequest + Send>(&mut self, request: R, version: i16) -> Result<R::Response, Error>;
}

/// The socket and its sans-io state before the client's tasks take them over.
struct Direct<'a, S> {
    stream: &'a mut S,
    conn: &'a mut Connection,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Exchange for Direct<'_, S> {
    async fn request<R: ApiRequest + Send>(&mut self, body: R, version: i16) -> Result<R::Response, Error> {
        request(self.stream, self.conn, body, version).await
    }
}

/// ApiVersions at the newest version this code writes (or the configured first version);
/// when the broker answers UNSUPPORTED_VERSION with its own range, once more at the newest
/// version both know (version 0 if it gave none), as KIP-511 specifies.
pub async fn negotiate(
    stream: &mut (impl AsyncRead + AsyncWrite + Unpin),
    conn: &mut Connection,
    config: &ClientConfig,
) -> Result<Negotiated, Error> {
    let ours = ApiKey::ApiVersions.valid_versions().expect("ApiVersions is live");
    let body = ApiVersionsRequest {
        client_software_name: config.software_name.as_str().into(),
        client_software_version: config.software_version.as_str().into(),
        ..Default::default()
    };
    let first = config.first_api_versions_version.unwrap_or(ours.max);
    let sent = if first > ours.max {
        let encoded = body.encode_to_bytes(ours.max).map_err(|source| Error::Encode {
            api: ApiKey::ApiVersions,
            version: ours.max,
            source,
        })?;
        conn.send_encoded(ApiKey::ApiVersions, first, &encoded, ours.max)?
    } else {
        conn.send(body.clone(), first)?
    };
    let received = exchange(stream, conn, sent).await?;
    let mut version = received.version;
    let mut response = received.into_typed::<ApiVersionsRequest>()?;
    if response.error_code == ErrorCode::UNSUPPORTED_VERSION {
        let theirs = response.api_keys.iter().find(|k| k.api_key == ApiKey::ApiVersions.key());
        let retry = theirs.and_then(|k| ours.highest_common(&kwire::VersionRange::new(k.min_version, k.max_version)));
        version = retry.unwrap_or(0);
        tracing::debug!(first, retry = version, "ApiVersions: the broker does not know the version asked; retrying");
        response = request(stream, conn, body, version).await?;
    }
    if response.error_code != ErrorCode::NONE {
        return Err(Error::Broker { api: ApiKey::ApiVersions, code: response.error_code, message: None });
    }
    let versions = NegotiatedVersions::from_response(&response);
    Ok(Negotiated { response, versions, api_versions_version: version })
}

/// SASL over the socket, as [`authenticate_over`] runs it.
pub async fn authenticate(
    stream: &mut (impl AsyncRead + AsyncWrite + Unpin),
    conn: &mut Connection,
    config: &ClientConfig,
    versions: &NegotiatedVersions,
) -> Result<Option<Duration>, Error> {
    authenticate_over(&mut Direct { stream, conn }, config, versions).await
}

/// SaslHandshake v1 with the configured mechanism, then SaslAuthenticate until the mechanism
/// is satisfied. A refusal is a typed error carrying Kafka's message. Returns the session's
/// lifetime when the broker gives one (KIP-368, `connections.max.reauth.ms`): past it the
/// broker closes the connection unless it re-authenticates.
pub(crate) async fn authenticate_over(
    exchange: &mut impl Exchange,
    config: &ClientConfig,
    versions: &NegotiatedVersions,
) -> Result<Option<Duration>, Error> {
    let Some(credentials) = &config.sasl else { return Ok(None) };
    let mechanism = credentials.mechanism.name();
    let handshake_version = versions.version(ApiKey::SaslHandshake).filter(|v| *v >= 1);
    let handshake_version = handshake_version.ok_or(Error::NoCommonVersion(ApiKey::SaslHandshake))?;
    let handshake = SaslHandshakeRequest { mechanism: mechanism.into() };
    let answer = exchange.request(handshake, handshake_version).await?;
    if answer.error_code == ErrorCode::UNSUPPORTED_SASL_MECHANISM {
        let enabled = answer.mechanisms.iter().map(|m| m.to_string()).collect();
        return Err(Error::MechanismNotEnabled { mechanism: mechanism.to_string(), enabled });
    }
    if answer.error_code != ErrorCode::NONE {
        return Err(Error::Broker { api: ApiKey::SaslHandshake, code: answer.error_code, message: None });
    }
    let auth_version =
        versions.version(ApiKey::SaslAuthenticate).ok_or(Error::NoCommonVersion(ApiKey::SaslAuthenticate))?;
    let mut session = credentials.session()?;
    let mut token = session.first();
    loop {
        let body = SaslAuthenticateRequest { auth_bytes: token.into(), ..Default::default() };
        let answer = exchange.request(body, auth_version).await?;
        if answer.error_code != ErrorCode::NONE {
            let message = answer.error_message.map(|m| m.to_string()).unwrap_or_default();
            return Err(Error::Authentication { code: answer.error_code, message });
        }
        match session.answer(&answer.auth_bytes)? {
            Some(next) => token = next,
            None => {
                let lifetime = u64::try_from(answer.session_lifetime_ms).ok().filter(|ms| *ms > 0);
                return Ok(lifetime.map(Duration::from_millis));
            }
        }
    }
}
