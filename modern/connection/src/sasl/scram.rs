//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), client side: the nonce, the salted
//! password through PBKDF2, the proof, and the check of the server's signature, with the
//! hashing from the RustCrypto crates.

use std::marker::PhantomData;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Digest;

use super::{protocol_error, Session};
use crate::error::Error;

/// The most PBKDF2 iterations a server may ask for: Kafka's own limit, so that a hostile
/// server cannot make the client spin.
const MAX_ITERATIONS: u32 = 16_384;
/// The fewest: Kafka's client refuses less (`ScramMechanism.minIterations`), since a server
/// asking for fewer would get a proof cheap to brute-force the password from.
const MIN_ITERATIONS: u32 = 4096;

/// The hash a SCRAM variant uses.
pub trait Hash {
    /// HMAC keyed with `key`.
    fn hmac(key: &[u8], data: &[u8]) -> Vec<u8>;
    /// The plain digest (SCRAM's `H`).
    fn digest(data: &[u8]) -> Vec<u8>;
    /// PBKDF2 of the password (SCRAM's `Hi`).
    fn salted_password(password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8>;
}

/// SCRAM-SHA-256's hash.
pub struct Sha256;
/// SCRAM-SHA-512's hash.
pub struct Sha512;

macro_rules! scram_hash {
    ($name:ident, $digest:ty, $len:expr) => {
        impl Hash for $name {
            fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
                let mut mac = Hmac::<$digest>::new_from_slice(key).expect("HMAC takes keys of any length");
                mac.update(data);
                mac.finalize().into_bytes().to_vec()
            }
            fn digest(data: &[u8]) -> Vec<u8> {
                <$digest>::digest(data).to_vec()
            }
            fn salted_password(password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
                let mut out = [0u8; $len];
                pbkdf2::pbkdf2_hmac::<$digest>(password, salt, iterations, &mut out);
                out.to_vec()
            }
        }
    };
}
scram_hash!(Sha256, sha2::Sha256, 32);
scram_hash!(Sha512, sha2::Sha512, 64);

enum State {
    Start,
    SentFirst,
    SentFinal { server_signature: Vec<u8> },
    Done,
}

pub struct Scram<H> {
    password: String,
    nonce: String,
    client_first_bare: String,
    state: State,
    hash: PhantomData<H>,
}

/// A user name as SCRAM writes it: `=` and `,` escaped.
fn sasl_name(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

/// The value of `key=` in a SCRAM message.
fn attribute(message: &str, key: char) -> Option<&str> {
    message.split(',').find_map(|part| part.strip_prefix(key).and_then(|rest| rest.strip_prefix('=')))
}

impl<H: Hash> Scram<H> {
    /// With a nonce of 24 bytes from the operating system's CSPRNG: a guessable one would let
    /// a recorded exchange be replayed.
    pub fn new(username: &str, password: &str) -> Result<Self, Error> {
        let mut random = [0u8; 24];
        getrandom::fill(&mut random).map_err(|e| protocol_error(format!("no random SCRAM nonce: {e}")))?;
        Ok(Self::with_nonce(username, password, &STANDARD.encode(random)))
    }

    /// With a given client nonce (RFC 7677's test vector uses one).
    pub fn with_nonce(username: &str, password: &str, nonce: &str) -> Self {
        Scram {
            password: password.to_string(),
            nonce: nonce.to_string(),
            client_first_bare: format!("n={},r={nonce}", sasl_name(username)),
            state: State::Start,
            hash: PhantomData,
        }
    }

    fn client_final(&mut self, server_first: &str) -> Result<Vec<u8>, Error> {
        let nonce = attribute(server_first, 'r').ok_or_else(|| protocol_error("SCRAM server-first has no nonce"))?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err(protocol_error("SCRAM server nonce does not extend the client's"));
        }
        let salt = attribute(server_first, 's')
            .and_then(|s| STANDARD.decode(s).ok())
            .ok_or_else(|| protocol_error("SCRAM server-first has no valid salt"))?;
        let iterations: u32 = attribute(server_first, 'i')
            .and_then(|i| i.parse().ok())
            .filter(|i| (MIN_ITERATIONS..=MAX_ITERATIONS).contains(i))
            .ok_or_else(|| {
                protocol_error(format!("SCRAM iteration count missing or outside {MIN_ITERATIONS}..={MAX_ITERATIONS}"))
            })?;
        let salted = H::salted_password(self.password.as_bytes(), &salt, iterations);
        let client_key = H::hmac(&salted, b"Client Key");
        let stored_key = H::digest(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let signature = H::hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key.iter().zip(&signature).map(|(k, s)| k ^ s).collect();
        let server_key = H::hmac(&salted, b"Server Key");
        self.state = State::SentFinal { server_signature: H::hmac(&server_key, auth_message.as_bytes()) };
        Ok(format!("{without_proof},p={}", STANDARD.encode(proof)).into_bytes())
    }
}

impl<H: Hash> Session for Scram<H> {
    fn first(&mut self) -> Vec<u8> {
        self.state = State::SentFirst;
        format!("n,,{}", self.client_first_bare).into_bytes()
    }

    fn answer(&mut self, server: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        let text = std::str::from_utf8(server).map_err(|_| protocol_error("SCRAM message is not UTF-8"))?;
        if let Some(error) = attribute(text, 'e') {
            return Err(protocol_error(format!("SCRAM server error: {error}")));
        }
        match std::mem::replace(&mut self.state, State::Done) {
            State::SentFirst => self.client_final(text).map(Some),
            State::SentFinal { server_signature } => {
                let verifier = attribute(text, 'v').and_then(|v| STANDARD.decode(v).ok());
                if verifier.as_deref() != Some(&server_signature[..]) {
                    return Err(protocol_error(
                        "SCRAM server signature does not verify: not the server holding the credentials",
                    ));
                }
                Ok(None)
            }
            State::Start | State::Done => Err(protocol_error("SCRAM message out of turn")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's SCRAM-SHA-256 exchange (user "user", password "pencil").
    #[test]
    fn rfc_7677_test_vector() {
        let mut scram = Scram::<Sha256>::with_nonce("user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(scram.first(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let client_final = scram.answer(server_first).unwrap().unwrap();
        assert_eq!(
            String::from_utf8(client_final).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert_eq!(scram.answer(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=").unwrap(), None);
    }

    #[test]
    fn a_wrong_server_signature_or_iteration_count_is_refused() {
        let mut scram = Scram::<Sha256>::with_nonce("user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        scram.first();
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        scram.answer(server_first).unwrap();
        assert!(scram.answer(b"v=AAAA").is_err());
        let mut greedy = Scram::<Sha512>::with_nonce("user", "pencil", "abc");
        greedy.first();
        assert!(greedy.answer(b"r=abcdef,s=AAAA,i=100000000").is_err());
        assert!(greedy.answer(b"e=invalid-proof").is_err());
    }

    /// Below Kafka's minimum of 4096 a server could ask for a proof cheap to brute-force: 4095
    /// and 1 are refused (the old check took any count from 1), 4096 is taken.
    #[test]
    fn iteration_counts_below_4096_are_refused() {
        for (count, taken) in [(1, false), (4095, false), (4096, true)] {
            let mut scram = Scram::<Sha256>::with_nonce("user", "pencil", "abc");
            scram.first();
            let server_first = format!("r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i={count}");
            let answer = scram.answer(server_first.as_bytes());
            assert_eq!(answer.is_ok(), taken, "i={count}: {answer:?}");
            if let Err(error) = answer {
                assert!(matches!(error, Error::Authentication { .. }), "{error}");
            }
        }
    }

    /// Two sessions draw different nonces, of 24 random bytes each.
    #[test]
    fn nonces_come_from_the_os_and_differ() {
        let a = Scram::<Sha256>::new("user", "pencil").unwrap();
        let b = Scram::<Sha256>::new("user", "pencil").unwrap();
        assert_ne!(a.nonce, b.nonce);
        assert_eq!(STANDARD.decode(&a.nonce).unwrap().len(), 24);
    }
}
