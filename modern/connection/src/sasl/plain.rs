//! PLAIN (RFC 4616): one token, `\0user\0password`; the broker answers with an empty token.

use super::Session;
use crate::error::Error;

pub struct Plain {
    token: Vec<u8>,
}

impl Plain {
    pub fn new(username: &str, password: &str) -> Self {
        let mut token = Vec::with_capacity(username.len() + password.len() + 2);
        token.push(0);
        token.extend_from_slice(username.as_bytes());
        token.push(0);
        token.extend_from_slice(password.as_bytes());
        Plain { token }
    }
}

impl Session for Plain {
    fn first(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.token)
    }

    fn answer(&mut self, _server: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        Ok(None)
    }
}
