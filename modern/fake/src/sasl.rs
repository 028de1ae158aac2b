//! SASL on the cluster's listeners, as a Kafka SASL_PLAINTEXT listener runs it: SaslHandshake
//! v1 picks a mechanism, SaslAuthenticate carries the tokens, and nothing but ApiVersions is
//! answered before a connection has authenticated. PLAIN checks the password; SCRAM-SHA-256
//! and -512 run RFC 5802's exchange with the server's salted credentials (4,096 iterations,
//! Kafka's minimum), with the hashes of `kwire-connection`'s client.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kwire_connection::sasl::{ScramHash, Sha256, Sha512};
use kwire_connection::{Credentials, Mechanism};

/// PBKDF2 iterations of the stored SCRAM credentials.
const ITERATIONS: u32 = 4096;

/// Where one connection stands.
#[derive(Debug, Default)]
pub(crate) enum Auth {
    /// Nothing yet: ApiVersions and SaslHandshake only.
    #[default]
    Start,
    /// SaslHandshake chose this mechanism.
    Chosen(Mechanism),
    /// SCRAM: the server-first message went out.
    ScramFirst {
        mechanism: Mechanism,
        user: String,
        client_first_bare: String,
        server_first: String,
    },
    Done,
}

/// Why authentication failed: Kafka's message for it.
pub(crate) struct Failed(pub String);

impl Auth {
    pub fn done(&self) -> bool {
        matches!(self, Auth::Done)
    }

    /// One SaslAuthenticate token: the server's answer, or the failure.
    pub fn step(&mut self, users: &[Credentials], token: &[u8]) -> Result<Vec<u8>, Failed> {
        match std::mem::take(self) {
            Auth::Chosen(Mechanism::Plain) => {
                // authzid NUL user NUL password
                let mut parts = token.split(|b| *b == 0);
                let (_, user, password) = (parts.next(), parts.next(), parts.next());
                let known = users.iter().any(|u| {
                    u.mechanism == Mechanism::Plain
                        && Some(u.username.as_bytes()) == user
                        && Some(u.password.as_bytes()) == password
                });
                if !known {
                    return Err(Failed("Authentication failed: Invalid username or password".to_string()));
                }
                *self = Auth::Done;
                Ok(Vec::new())
            }
            Auth::Chosen(mechanism) => {
                let invalid = || failed(mechanism);
                let text = std::str::from_utf8(token).map_err(|_| invalid())?;
                // gs2 header ("n,," or "n,a=authzid,"), then the bare message.
                let bare = text.splitn(3, ',').nth(2).ok_or_else(invalid)?;
                let user = attribute(bare, 'n').map(unescape).ok_or_else(invalid)?;
                let client_nonce = attribute(bare, 'r').ok_or_else(invalid)?;
                if !users.iter().any(|u| u.mechanism == mechanism && u.username == user) {
                    return Err(invalid());
                }
                let mut random = [0u8; 18];
                getrandom::fill(&mut random).map_err(|_| invalid())?;
                let nonce = format!("{client_nonce}{}", STANDARD.encode(random));
                let server_first = format!("r={nonce},s={},i={ITERATIONS}", STANDARD.encode(salt(&user)));
                *self = Auth::ScramFirst {
                    mechanism,
                    user,
                    client_first_bare: bare.to_string(),
                    server_first: server_first.clone(),
                };
                Ok(server_first.into_bytes())
            }
            Auth::ScramFirst { mechanism, user, client_first_bare, server_first } => {
                let password = users
                    .iter()
                    .find(|u| u.mechanism == mechanism && u.username == user)
                    .map(|u| u.password.clone())
                    .ok_or_else(|| failed(mechanism))?;
                let final_message = std::str::from_utf8(token).map_err(|_| failed(mechanism))?;
                let signature = match mechanism {
                    Mechanism::ScramSha512 => {
                        verify::<Sha512>(&password, &user, &client_first_bare, &server_first, final_message)
                    }
                    _ => verify::<Sha256>(&password, &user, &client_first_bare, &server_first, final_message),
                }
                .ok_or_else(|| failed(mechanism))?;
                *self = Auth::Done;
                Ok(format!("v={}", STANDARD.encode(signature)).into_bytes())
            }
            Auth::Start | Auth::Done => Err(Failed("Unexpected SaslAuthenticate request".to_string())),
        }
    }
}

fn failed(mechanism: Mechanism) -> Failed {
    Failed(format!(
        "Authentication failed during authentication due to invalid credentials with SASL mechanism {}",
        mechanism.name()
    ))
}

/// A user's salt: fixed per user, as stored credentials are.
fn salt(user: &str) -> Vec<u8> {
    let mut salt = b"kwire-fake:".to_vec();
    salt.extend_from_slice(user.as_bytes());
    salt
}

/// The client-final check (RFC 5802 §3): the channel binding and nonce, then the proof against
/// the stored key; the server signature for the answer.
fn verify<H: ScramHash>(
    password: &str,
    user: &str,
    client_first_bare: &str,
    server_first: &str,
    client_final: &str,
) -> Option<Vec<u8>> {
    let (without_proof, proof) = client_final.rsplit_once(",p=")?;
    let proof = STANDARD.decode(proof).ok()?;
    if attribute(without_proof, 'c') != Some("biws") || attribute(without_proof, 'r') != attribute(server_first, 'r') {
        return None;
    }
    let salted = H::salted_password(password.as_bytes(), &salt(user), ITERATIONS);
    let stored_key = H::digest(&H::hmac(&salted, b"Client Key"));
    let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
    let client_signature = H::hmac(&stored_key, auth_message.as_bytes());
    if proof.len() != client_signature.len() {
        return None;
    }
    let client_key: Vec<u8> = proof.iter().zip(&client_signature).map(|(p, s)| p ^ s).collect();
    if H::digest(&client_key) != stored_key {
        return None;
    }
    Some(H::hmac(&H::hmac(&salted, b"Server Key"), auth_message.as_bytes()))
}

/// The value of `key=` in a SCRAM message.
fn attribute(message: &str, key: char) -> Option<&str> {
    message.split(',').find_map(|part| part.strip_prefix(key).and_then(|rest| rest.strip_prefix('=')))
}

/// A SCRAM user name with `=2C` and `=3D` back to `,` and `=`.
fn unescape(name: &str) -> String {
    name.replace("=2C", ",").replace("=3D", "=")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our client's SCRAM against this server, both mechanisms, and a wrong password.
    #[test]
    fn scram_and_plain_exchanges() {
        let users = [
            Credentials::scram_sha256("alice", "alice-secret"),
            Credentials::scram_sha512("bob", "bob-secret"),
            Credentials::plain("carol", "carol-secret"),
        ];
        for (client, ok) in [
            (Credentials::scram_sha256("alice", "alice-secret"), true),
            (Credentials::scram_sha512("bob", "bob-secret"), true),
            (Credentials::scram_sha256("alice", "wrong"), false),
            (Credentials::scram_sha512("alice", "alice-secret"), false),
            (Credentials::plain("carol", "carol-secret"), true),
            (Credentials::plain("carol", "nope"), false),
        ] {
            let mut session = client.session().unwrap();
            let mut server = Auth::Chosen(client.mechanism);
            let mut token = session.first();
            let outcome = loop {
                match server.step(&users, &token) {
                    Err(_) => break false,
                    Ok(answer) if server.done() => {
                        // The client checks the server's signature (SCRAM) or has nothing to check.
                        break client.mechanism == Mechanism::Plain || session.answer(&answer).unwrap().is_none();
                    }
                    Ok(answer) => token = session.answer(&answer).unwrap().unwrap(),
                }
            };
            assert_eq!(outcome, ok, "{client:?}");
        }
    }
}
