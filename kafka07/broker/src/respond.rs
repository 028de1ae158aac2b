//! Answering one request that has a response (FETCH, MULTIFETCH, OFFSETS, MODIFY_TOPIC) and
//! writing the answer: fetched log bytes go out with `sendfile` behind their header.
//!
//! FETCH and MULTIFETCH are first tried right here on the event loop: they only lock a log
//! long enough to compute a file range, so a hand-off to a blocking thread would cost more than
//! the work. When a log is locked (an append or a roll in progress), the request goes to a
//! blocking thread like OFFSETS, whose file metadata reads may wait on the disk.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use kwire07_protocol::{FetchResponse, MultiFetchResponse, Request};
use tokio::net::TcpStream;

use crate::handler::{handle, FetchAnswer, Outcome};
use crate::state::BrokerState;
use crate::transport::{send_slice, write_all, Cork};

pub async fn respond(
    stream: &TcpStream,
    state: &Arc<BrokerState>,
    request: Request,
    timeout: Duration,
) -> io::Result<()> {
    let encode_err = |e| io::Error::new(io::ErrorKind::InvalidData, e);
    if let Request::ModifyTopic(m) = request {
        // Talks to ZooKeeper: handled on the async side, its file I/O on blocking threads.
        let mut out = BytesMut::new();
        crate::admin::handle(state, m).await.encode(&mut out).map_err(encode_err)?;
        return write_all(stream, &out, timeout).await;
    }
    let outcome = match handle(state, &request, true) {
        Some(outcome) => outcome,
        None => {
            let state = state.clone();
            tokio::task::spawn_blocking(move || handle(&state, &request, false))
                .await
                .map_err(io::Error::other)?
                .ok_or_else(|| io::Error::other("blocking handler declined a request"))?
        }
    };
    match outcome {
        Outcome::Close(reason) => Err(io::Error::new(io::ErrorKind::InvalidData, reason)),
        Outcome::Offsets(o) => {
            let mut out = BytesMut::new();
            o.encode(&mut out).map_err(encode_err)?;
            write_all(stream, &out, timeout).await
        }
        Outcome::Fetch(answer) => {
            let header = FetchResponse::header(answer.error, answer.len() as usize).map_err(encode_err)?;
            let _cork = Cork::new(stream);
            write_all(stream, &header, timeout).await?;
            send_data(stream, &answer, timeout).await
        }
        Outcome::MultiFetch(answers) => {
            let total = answers.iter().map(|a| a.len() as usize).sum();
            let header = MultiFetchResponse::header(answers.len(), total).map_err(encode_err)?;
            let _cork = Cork::new(stream);
            write_all(stream, &header, timeout).await?;
            for a in &answers {
                let h = FetchResponse::header(a.error, a.len() as usize).map_err(encode_err)?;
                write_all(stream, &h, timeout).await?;
                send_data(stream, a, timeout).await?;
            }
            Ok(())
        }
    }
}

async fn send_data(stream: &TcpStream, answer: &FetchAnswer, timeout: Duration) -> io::Result<()> {
    match &answer.data {
        Some(slice) if !slice.is_empty() => send_slice(stream, slice, timeout).await,
        _ => Ok(()),
    }
}
