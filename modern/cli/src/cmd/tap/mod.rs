//! `kwire tap`: a proxy for modern Kafka traffic that forwards bytes both ways unchanged and
//! decodes every request and response with the generated code, matching responses to requests
//! by correlation id per connection.

mod acks;
mod errors;
mod pending;
mod reencode;
mod report;
mod rewrite;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use clap::Args;
use kwire::messages::{ApiKey, RequestFrame, ResponseFrame};
use kwire::runtime::framing::{Framer, Piece};
use kwire::Bytes;
use kwire_inspect::explain::Schemas;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::cmd::CmdResult;
use pending::{Answered, Request, Waiting};
use report::{Exchange, Reporter};
use rewrite::Rewriter;

#[derive(Debug, Args)]
#[command(after_help = "Frames are forwarded byte for byte, except Metadata and FindCoordinator responses whose \
broker addresses are rewritten to the tap's (so that clients, which reconnect to the addresses a broker advertises, \
stay on the tap): those are decoded, changed and re-encoded at the same version with the generated code. An address \
is rewritten when it is the upstream's, or when a Metadata response lists a single broker; --no-rewrite turns this off.")]
pub struct TapArgs {
    /// Where clients connect.
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: String,
    /// The Kafka broker to forward to.
    #[arg(long, value_name = "HOST:PORT")]
    pub upstream: String,
    /// The address written into rewritten responses (default: --listen's).
    #[arg(long, value_name = "HOST:PORT")]
    pub advertise: Option<String>,
    /// Forward Metadata and FindCoordinator responses unchanged.
    #[arg(long)]
    pub no_rewrite: bool,
    /// Print each frame's object tree (needs the schema folder: --schemas or KAFKA_SCHEMAS_DIR).
    #[arg(long, conflicts_with = "json")]
    pub explain: bool,
    /// One JSON object per frame instead of one line per exchange.
    #[arg(long)]
    pub json: bool,
    /// Kafka's message schema folder, for --explain (default: $KAFKA_SCHEMAS_DIR).
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
    /// Save every frame, as received, to FILE (replay: kwire-codegen explain --file FILE).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Frames larger than this are forwarded without being decoded.
    #[arg(long, value_name = "BYTES", default_value_t = 100 * 1024 * 1024)]
    pub max_frame: usize,
    /// Forward every frame that decodes as re-encoded from its decoded value, and report each
    /// whose re-encoding differs from what was sent (where, the field, and whether the decoded
    /// values agree). --schemas or KAFKA_SCHEMAS_DIR, when given, name the field.
    #[arg(long)]
    pub reencode: bool,
    /// Offer clients only the versions this build decodes: ApiVersions answers are cut to
    /// them, and an ApiVersions request newer than this build knows is answered by the tap as a
    /// broker that does not know it answers (UNSUPPORTED_VERSION in version 0, KIP-511), so the
    /// client retries at one it does and every later frame decodes.
    #[arg(long)]
    pub clamp_versions: bool,
}

/// What each connection's tasks share.
struct Shared {
    reporter: Arc<Reporter>,
    rewriter: Option<Arc<Rewriter>>,
    /// Set by --reencode: the schemas (if found) that name the field where bytes differ.
    reencode: Option<Option<Schemas>>,
    clamp_versions: bool,
    max_frame: usize,
}

/// The client's half of the connection, written by the response task and, for the answers
/// the tap gives itself (--clamp-versions), by the request task.
type ClientWriter = Arc<tokio::sync::Mutex<tokio::net::tcp::OwnedWriteHalf>>;

/// A connection's requests waiting for responses, shared by its two tasks.
type PendingMap = Arc<Mutex<Waiting>>;

/// The requests waiting for answers (a panic elsewhere does not make them unreadable).
fn waiting(pending: &PendingMap) -> MutexGuard<'_, Waiting> {
    pending.lock().unwrap_or_else(|p| p.into_inner())
}

/// At most this many unanswered requests are named when a connection ends.
const UNANSWERED_NAMED: usize = 20;

pub async fn run(args: TapArgs) -> CmdResult {
    let listener =
        TcpListener::bind(&args.listen).await.map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let local = listener.local_addr()?;
    let advertise = match &args.advertise {
        Some(a) => a.clone(),
        None if local.ip().is_unspecified() => {
            return Err(
                "--listen is a wildcard address: say which address clients reach the tap at with --advertise".into()
            )
        }
        None => local.to_string(),
    };
    let dir = args.schemas.clone().or_else(|| std::env::var_os("KAFKA_SCHEMAS_DIR").map(PathBuf::from));
    let schemas = match (args.explain, &dir) {
        (false, _) => None,
        (true, None) => return Err("--explain needs the schema folder: --schemas DIR or KAFKA_SCHEMAS_DIR".into()),
        (true, Some(dir)) => Some(Schemas::load(&[dir]).map_err(|e| format!("{}: {e}", dir.display()))?),
    };
    let reporter = Arc::new(Reporter::new(&args, schemas)?);
    let rewriter = (!args.no_rewrite || args.clamp_versions)
        .then(|| Arc::new(Rewriter::new(&args.upstream, &advertise, !args.no_rewrite, args.clamp_versions)));
    let reencode = args.reencode.then(|| dir.as_ref().and_then(|d| Schemas::load(&[d]).ok()));
    let shared = Arc::new(Shared {
        reporter,
        rewriter,
        reencode,
        clamp_versions: args.clamp_versions,
        max_frame: args.max_frame,
    });
    eprintln!("kwire tap: listening on {local}, forwarding to {}, advertising {advertise}", args.upstream);
    let connections = AtomicU32::new(0);
    loop {
        let (client, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                eprintln!("kwire tap: accept: {e}");
                continue;
            }
        };
        let id = connections.fetch_add(1, Ordering::Relaxed) + 1;
        let upstream = args.upstream.clone();
        let shared = shared.clone();
        tokio::spawn(async move {
            if let Err(e) = connection(id, peer, client, &upstream, shared.clone()).await {
                shared.reporter.note(id, &format!("connection ended: {e}"));
            }
        });
    }
}

async fn connection(id: u32, peer: SocketAddr, client: TcpStream, upstream: &str, shared: Arc<Shared>) -> CmdResult {
    let reporter = shared.reporter.clone();
    let server = TcpStream::connect(upstream).await.map_err(|e| format!("cannot reach upstream {upstream}: {e}"))?;
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    reporter.note(id, &format!("connected from {peer}"));
    let (client_read, client_write) = client.into_split();
    let client_write: ClientWriter = Arc::new(tokio::sync::Mutex::new(client_write));
    let (server_read, server_write) = server.into_split();
    let pending: PendingMap = Arc::default();
    let requests = requests(id, client_read, server_write, client_write.clone(), pending.clone(), &shared);
    let responses = responses(id, server_read, client_write, pending.clone(), &shared);
    // Either side closing ends the connection (the other half is dropped, which closes it).
    let why = tokio::select! {
        r = requests => r.map(|()| "the client disconnected".to_string()),
        r = responses => r.map(|()| "the upstream disconnected".to_string()),
    };
    let mut why = why.unwrap_or_else(|e| format!("ended: {e}"));
    let waiting = waiting(&pending);
    why.push_str(&format!("; {}", waiting.summary()));
    if !waiting.is_empty() {
        let list: Vec<String> = waiting.unanswered().take(UNANSWERED_NAMED).map(describe).collect();
        why.push_str(&format!("; unanswered: {}", list.join(", ")));
        if waiting.len() > UNANSWERED_NAMED {
            why.push_str(&format!(" and {} more", waiting.len() - UNANSWERED_NAMED));
        }
    }
    reporter.note(id, &why);
    Ok(())
}

/// `Produce v9 corr 4`.
fn describe(r: &Request) -> String {
    format!("{} v{} corr {}", report::api_name(r.api_key), r.version, r.correlation)
}

/// The next piece of `from`'s stream, reading as needed; `None` at a clean end of stream (one
/// inside a frame is an error). Framing is the runtime's one reader (`kwire::runtime::framing`).
async fn next_piece(from: &mut (impl AsyncRead + Unpin), framer: &mut Framer) -> std::io::Result<Option<Piece>> {
    loop {
        if let Some(piece) = framer.next_piece().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))? {
            return Ok(Some(piece));
        }
        if from.read_buf(framer.read_buf()).await? == 0 {
            if framer.inside_frame() {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the stream ended inside a frame"));
            }
            return Ok(None);
        }
    }
}

/// The next frame small enough to decode (size prefix included); larger ones are streamed
/// through on the way (and noted). `None` at a clean end of stream.
async fn next_frame(
    what: &str,
    id: u32,
    from: &mut (impl AsyncRead + Unpin),
    framer: &mut Framer,
    to: &mut (impl AsyncWrite + Unpin),
    reporter: &Reporter,
) -> std::io::Result<Option<Bytes>> {
    loop {
        match next_piece(from, framer).await? {
            None => return Ok(None),
            Some(Piece::Frame(frame)) => return Ok(Some(frame)),
            Some(Piece::Oversized { size }) => {
                reporter.note(id, &format!("{what} frame of {size} bytes (over --max-frame) forwarded undecoded"));
                to.write_all(&(size as i32).to_be_bytes()).await?;
            }
            Some(Piece::Rest { bytes, .. }) => to.write_all(&bytes).await?,
        }
    }
}

async fn requests(
    id: u32,
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    client: ClientWriter,
    pending: PendingMap,
    shared: &Shared,
) -> CmdResult {
    let reporter = &shared.reporter;
    let mut cap_noted = false;
    let mut framer = Framer::new(0, shared.max_frame);
    while let Some(frame) = next_frame("request", id, &mut from, &mut framer, &mut to, reporter).await? {
        if shared.clamp_versions {
            if let Some(answer) = rewrite::answer_unknown_api_versions(&frame) {
                let (_, version, _) = header_fields(&frame);
                reporter.note(
                    id,
                    &format!("ApiVersions v{version} answered by the tap: UNSUPPORTED_VERSION (--clamp-versions)"),
                );
                client.lock().await.write_all(&answer).await?;
                continue;
            }
        }
        // Registered before the bytes go on (the response may come back before this task
        // runs again), then forwarded before decoding (unless re-encoding): decoding never
        // delays the bytes. A Produce with acks=0 gets no response: nothing waits for one.
        let (api_key, version, correlation) = header_fields(&frame);
        let request = Request { api_key, version, correlation, at: Instant::now(), size: frame.len() };
        let expects_response = acks::produce_acks(&frame) != Some(0);
        if expects_response {
            if let Some(old) = waiting(&pending).expect(request) {
                if !cap_noted {
                    cap_noted = true;
                    let (max, old) = (pending::MAX_WAITING, describe(&old));
                    reporter.note(
                        id,
                        &format!(
                            "over {max} requests wait for responses: {old} given up (later ones counted at the end)"
                        ),
                    );
                }
            }
        } else {
            waiting(&pending).unasked(request);
        }
        let decoded = match &shared.reencode {
            None => {
                to.write_all(&frame).await?;
                RequestFrame::decode_with_trailing(frame.slice(4..))
            }
            Some(schemas) => {
                let decoded = RequestFrame::decode_with_trailing(frame.slice(4..));
                let outcome = decoded
                    .as_ref()
                    .map(|(f, trailing)| reencode::request(&frame, f, trailing.len(), schemas.as_ref()));
                forward(id, "request", api_key, version, &frame, outcome.ok(), &mut to, reporter).await?;
                decoded
            }
        };
        reporter.request(id, &frame, decoded.as_ref().map(|(f, trailing)| (f, trailing.len())), expects_response);
    }
    Ok(())
}

/// Api key, version and correlation id from a request frame's first bytes (zeros if short).
fn header_fields(frame: &[u8]) -> (i16, i16, i32) {
    match *frame {
        [_, _, _, _, k0, k1, v0, v1, c0, c1, c2, c3, ..] => {
            (i16::from_be_bytes([k0, k1]), i16::from_be_bytes([v0, v1]), i32::from_be_bytes([c0, c1, c2, c3]))
        }
        _ => (0, 0, 0),
    }
}

async fn responses(
    id: u32,
    mut from: impl AsyncRead + Unpin,
    to: ClientWriter,
    pending: PendingMap,
    shared: &Shared,
) -> CmdResult {
    let reporter = &shared.reporter;
    let mut framer = Framer::new(0, shared.max_frame);
    loop {
        // The client's half is locked only to write, never while waiting for the upstream.
        let frame = match next_piece(&mut from, &mut framer).await? {
            None => break,
            Some(Piece::Frame(frame)) => frame,
            Some(Piece::Oversized { size }) => {
                oversized_response(id, size, &mut from, &mut framer, &to, &pending, reporter).await?;
                continue;
            }
            Some(Piece::Rest { .. }) => unreachable!("oversized_response takes a frame's every piece"),
        };
        let mut to = to.lock().await;
        let to = &mut *to;
        let correlation = frame.get(4..8).map_or(0, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let (request, expected) = match settle(id, &pending, correlation, reporter) {
            Answered::Waited(r) => (r, true),
            Answered::Unasked(r) => (r, false),
            Answered::Unknown => {
                to.write_all(&frame).await?;
                reporter.unmatched(id, &frame, correlation);
                continue;
            }
        };
        let latency = request.at.elapsed();
        let decoded = ApiKey::from_key(request.api_key)
            .ok_or_else(|| format!("unknown api key {}", request.api_key))
            .and_then(|api| decode_response(&frame, api, request.version).map_err(|e| e.to_string()));
        let mut rewritten = None;
        if let (Some(rw), Ok((f, _, read_at))) = (&shared.rewriter, &decoded) {
            rewritten = rw.rewrite(f, *read_at);
        }
        match (&shared.reencode, &rewritten, &decoded) {
            // A rewritten frame is a re-encoding already; its addresses differ on purpose.
            (Some(schemas), None, Ok((f, trailing, read_at))) => {
                let outcome = reencode::response(&frame, f, *read_at, *trailing, schemas.as_ref());
                forward(id, "response", request.api_key, *read_at, &frame, Some(outcome), to, reporter).await?;
            }
            _ => to.write_all(rewritten.as_deref().unwrap_or(&frame)).await?,
        }
        let exchange = Exchange {
            connection: id,
            api_key: request.api_key,
            version: request.version,
            correlation,
            request_size: request.size,
            response_size: frame.len(),
            latency,
            rewritten: rewritten.is_some(),
            expected,
        };
        reporter.response(&exchange, &frame, decoded.as_ref().map(|(f, trailing, _)| (f, *trailing)));
    }
    Ok(())
}

/// Forwards a response too large to decode, its pieces as they come, the client's half locked
/// throughout (so that nothing the tap writes itself lands inside it). Its correlation id is
/// read from its first bytes, so that the request it answers waits no more.
async fn oversized_response(
    id: u32,
    size: usize,
    from: &mut (impl AsyncRead + Unpin),
    framer: &mut Framer,
    to: &ClientWriter,
    pending: &PendingMap,
    reporter: &Reporter,
) -> std::io::Result<()> {
    let mut to = to.lock().await;
    to.write_all(&(size as i32).to_be_bytes()).await?;
    let note = |answers: &str| {
        reporter.note(id, &format!("response frame of {size} bytes{answers} (over --max-frame) forwarded undecoded"))
    };
    let mut head = Vec::with_capacity(4);
    if size < 4 {
        note("");
    }
    loop {
        let Some(Piece::Rest { bytes, last }) = next_piece(from, framer).await? else {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the stream ended inside a frame"));
        };
        if head.len() < 4 && size >= 4 {
            head.extend_from_slice(&bytes[..bytes.len().min(4 - head.len())]);
            if let Ok(correlation) = <[u8; 4]>::try_from(&head[..]) {
                match settle(id, pending, i32::from_be_bytes(correlation), reporter) {
                    Answered::Waited(r) | Answered::Unasked(r) => note(&format!(" to {}", describe(&r))),
                    Answered::Unknown => note(""),
                }
            }
        }
        to.write_all(&bytes).await?;
        if last {
            return Ok(());
        }
    }
}

/// The request a response with `correlation` answers. Those sent before it and still waiting
/// will not be answered (Kafka answers in order): they are let go, and named.
fn settle(id: u32, pending: &PendingMap, correlation: i32, reporter: &Reporter) -> Answered {
    let mut passed_over = Vec::new();
    let answered = waiting(pending).answer(correlation, &mut passed_over);
    if !passed_over.is_empty() {
        let list: Vec<String> = passed_over.iter().take(UNANSWERED_NAMED).map(describe).collect();
        let more = passed_over.len().saturating_sub(UNANSWERED_NAMED);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        reporter.note(
            id,
            &format!("the response to corr {correlation} came first, so unanswered: {}{more}", list.join(", ")),
        );
    }
    answered
}

/// Decodes a response frame: the frame, its trailing byte count and the version it was read at.
/// An ApiVersions error response is read at v0 when the request's version does not fit it
/// (brokers answer an unsupported ApiVersions version so, KIP-511).
fn decode_response(
    frame: &Bytes,
    api: ApiKey,
    version: i16,
) -> Result<(ResponseFrame, usize, i16), kwire::DecodeError> {
    let payload = frame.slice(4..);
    match ResponseFrame::decode_with_trailing(payload.clone(), api, version) {
        Ok((f, trailing)) => Ok((f, trailing.len(), version)),
        Err(e) if api == ApiKey::ApiVersions && version > 0 => {
            ResponseFrame::decode_with_trailing(payload, api, 0).map(|(f, t)| (f, t.len(), 0)).map_err(|_| e)
        }
        Err(e) => Err(e),
    }
}

/// Forwards a frame under --reencode: the re-encoding when it differs (reported), the original
/// when it is the same, did not decode (`None`) or would not encode (reported).
#[allow(clippy::too_many_arguments)]
async fn forward(
    id: u32,
    side: &str,
    api_key: i16,
    version: i16,
    frame: &Bytes,
    outcome: Option<reencode::Reencoded>,
    to: &mut (impl AsyncWrite + Unpin),
    reporter: &Reporter,
) -> std::io::Result<()> {
    match outcome {
        Some(reencode::Reencoded::Differs { bytes, why }) => {
            reporter.reencoded(id, side, api_key, version, &why);
            to.write_all(&bytes).await
        }
        Some(reencode::Reencoded::Failed(e)) => {
            reporter.reencoded(id, side, api_key, version, &format!("would not re-encode ({e}); forwarded as sent"));
            to.write_all(frame).await
        }
        Some(reencode::Reencoded::Same) | None => to.write_all(frame).await,
    }
}
