//! `kwire-codegen site` over Kafka's corpus, rendered in a real browser: Debian's
//! `chromium`, headless, loads the index and the BrokerRegistration v4 page from `file://`,
//! runs their script without an error, and shows seed 001's 79 + 24 bytes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap().to_path_buf()
}

/// The browser, or `None` (skipped) outside CI; under CI a missing browser fails.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|name| {
        std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(name)).find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none(), "chromium is not installed (.ci/run installs it)");
        eprintln!("chromium not found: browser checks skipped");
    }
    found
}

/// Runs headless chromium on a page; returns (stdout, stderr).
fn browse(browser: &Path, args: &[&str], page: &Path) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"])
        .args(["--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("runs chromium");
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn no_script_errors(stderr: &str, page: &str) {
    for line in stderr.lines() {
        assert!(!line.contains("Uncaught") && !line.contains("Refused to"), "{page}: {line}");
    }
}

#[test]
fn site_of_the_corpus_renders_in_chromium() {
    let messages = kwire_codegen::locate_kafka_schemas(&workspace()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let run = Command::new(env!("CARGO_BIN_EXE_kwire-codegen"))
        .args(["site", "--schemas"])
        .arg(&messages)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    println!("site: {} ({:.2} s)", String::from_utf8_lossy(&run.stdout).trim(), started.elapsed().as_secs_f64());

    let index = out.path().join("index.html");
    let text = std::fs::read_to_string(&index).unwrap();
    for api in ["Produce", "Fetch", "BrokerRegistration", "ApiVersions"] {
        assert!(text.contains(&format!("<a href=\"{api}.html\">{api}</a>")), "index lists {api}");
    }
    // Every link of the index leads to a page that exists.
    for link in text.split("href=\"").skip(1).map(|rest| &rest[..rest.find('"').unwrap()]) {
        assert!(out.path().join(link).is_file(), "index links to missing {link}");
    }
    let page = out.path().join("BrokerRegistration-v4.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("79 bytes on the wire") && html.contains("24 bytes on the wire"));
    let history = std::fs::read_to_string(out.path().join("Produce.html")).unwrap();
    // Kafka 4.0 dropped Produce v0-v2 (KIP-896): v3 is the first version 4.4.0 knows.
    assert!(history.contains("v3</a>: first version"), "the Produce page starts at its first version");
    assert!(
        history.contains("v13</a>: removes TopicData.Name; adds TopicData.TopicId (uuid)"),
        "what Produce v13 changed"
    );
    assert!(history.contains("v9</a>: first flexible version"), "Produce v9 is the first flexible one");

    let Some(browser) = chromium() else { return };
    for target in [&index, &page] {
        let (dom, stderr) = browse(&browser, &["--dump-dom"], target);
        no_script_errors(&stderr, &target.display().to_string());
        assert!(dom.contains("data-ready="), "the page's script ran to its end: {}", target.display());
        if target == &page {
            // The script counts the byte cells it wired up: seed 001's 79 request and 24 response bytes.
            assert!(dom.contains("data-ready=\"103\""), "{}", &dom[dom.find("<body").unwrap_or(0)..][..200]);
        }
        let shot = out.path().join("shot.png");
        let shot_arg = format!("--screenshot={}", shot.display());
        let (_, stderr) = browse(&browser, &[&shot_arg, "--window-size=1300,2000"], target);
        no_script_errors(&stderr, &target.display().to_string());
        let png = std::fs::read(&shot).expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "a real screenshot of {}", target.display());
    }
}
