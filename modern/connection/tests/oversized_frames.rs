//! Adversarial frame headers from a scripted peer: one claiming 100 MiB (the default maximum)
//! that sends a few bytes and then nothing, and one above the configured maximum. The caller
//! gets a typed error within its timeout, no allocation anywhere near the claimed size is
//! made (this binary's allocator records the largest one: buffers grow as bytes arrive), and
//! a `Cluster` serves the next request once the peer is back.

#![allow(unsafe_code)] // the recording allocator below, which only forwards to the system's

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::peer::{cluster_recovers, Mode, Options, Peer, MARGIN};
use kwire::messages::MetadataRequest;
use kwire_connection::{ClientConfig, Cluster, Error, DEFAULT_MAX_FRAME_SIZE};

/// The system allocator, recording the largest single allocation asked for.
struct Recording;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Recording = Recording;

/// Far below the 100 MiB claimed, far above any buffer the client needs here.
const BOUND: usize = 4 << 20;

#[tokio::test]
async fn a_header_claiming_100_mib_reserves_nothing_and_times_out() {
    let timeout = Duration::from_millis(500);
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let cluster = Cluster::connect(&[&peer.address()], ClientConfig::default().request_timeout(timeout)).await.unwrap();
    let client = cluster.any().await.unwrap();
    peer.set(Mode::Claim(DEFAULT_MAX_FRAME_SIZE as i32));
    let start = Instant::now();
    let error = client.send(MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(error, Error::Timeout(_)), "{error}");
    assert!(start.elapsed() < timeout + MARGIN);
    assert!(client.is_closed(), "the half-read frame's connection stays open");
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(largest < BOUND, "an allocation of {largest} bytes for a frame that sent a few");
    cluster_recovers(&cluster, &peer).await;
}

#[tokio::test]
async fn a_header_above_the_maximum_is_refused_at_once() {
    let max = 1 << 20;
    // Its request timeout is never reached: the header alone is refused.
    let config = ClientConfig::default().max_frame_size(max).request_timeout(Duration::from_secs(60));
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let cluster = Cluster::connect(&[&peer.address()], config).await.unwrap();
    let client = cluster.any().await.unwrap();
    for claim in [max as i32 + 1, i32::MAX] {
        peer.set(Mode::Claim(claim));
        let client = cluster.any().await.unwrap();
        let start = Instant::now();
        let error = client.send(MetadataRequest::default()).await.unwrap_err();
        assert!(
            matches!(error, Error::FrameTooLarge { size, max: m } if size == i64::from(claim) && m == max),
            "{error}"
        );
        assert!(start.elapsed() < MARGIN);
        assert!(client.is_closed());
    }
    assert!(client.is_closed());
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(largest < BOUND, "an allocation of {largest} bytes for a frame refused");
    cluster_recovers(&cluster, &peer).await;
}
