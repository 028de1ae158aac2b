//! SASL authentication as Kafka runs it (SaslHandshake v1, then SaslAuthenticate): the
//! mechanisms, each a small state machine over the tokens exchanged.

mod plain;
mod scram;

/// SCRAM's hash functions (HMAC, the digest, PBKDF2), which a server verifying a client (the
/// in-process cluster of `kwire-fake`) computes the same way.
pub use scram::{Hash as ScramHash, Sha256, Sha512};

use crate::error::Error;

/// A SASL mechanism this client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    Plain,
    ScramSha256,
    ScramSha512,
}

impl Mechanism {
    /// The name Kafka's SaslHandshake uses.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

/// A user name and password for one mechanism.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub mechanism: Mechanism,
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The password never reaches a log.
        f.debug_struct("Credentials").field("mechanism", &self.mechanism).field("username", &self.username).finish()
    }
}

impl Credentials {
    pub fn new(mechanism: Mechanism, username: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials { mechanism, username: username.into(), password: password.into() }
    }

    pub fn plain(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self::new(Mechanism::Plain, username, password)
    }

    pub fn scram_sha256(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self::new(Mechanism::ScramSha256, username, password)
    }

    pub fn scram_sha512(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self::new(Mechanism::ScramSha512, username, password)
    }

    /// The client side of one authentication exchange; an error only when the operating
    /// system has no randomness for a SCRAM nonce.
    pub fn session(&self) -> Result<Box<dyn Session + Send>, Error> {
        Ok(match self.mechanism {
            Mechanism::Plain => Box::new(plain::Plain::new(&self.username, &self.password)),
            Mechanism::ScramSha256 => Box::new(scram::Scram::<Sha256>::new(&self.username, &self.password)?),
            Mechanism::ScramSha512 => Box::new(scram::Scram::<Sha512>::new(&self.username, &self.password)?),
        })
    }
}

/// The client side of a SASL exchange: the first token, then one answer per server token
/// until the mechanism is satisfied.
pub trait Session {
    /// The client's first token.
    fn first(&mut self) -> Vec<u8>;
    /// The answer to a server token: `Some(token)` to send, `None` once authenticated (the
    /// server's last token checked, where the mechanism has one).
    fn answer(&mut self, server: &[u8]) -> Result<Option<Vec<u8>>, Error>;
}

fn protocol_error(message: impl Into<String>) -> Error {
    Error::Authentication { code: kwire::ErrorCode::SASL_AUTHENTICATION_FAILED, message: message.into() }
}
