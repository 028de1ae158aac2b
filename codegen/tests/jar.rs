//! Schemas read straight from a jar (feature `jar`): the same code as from a folder, entries
//! named in diagnostics, a folder inside the jar chosen with `!/`, and what is not a jar or
//! decompresses to far more than a schema refused before it is read.

use std::io::Write as _;
use std::path::Path;

use kwire_codegen::Config;
use kwire_test_support::alloc::{peak_during, Counting};
use zip::write::SimpleFileOptions;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const PING_REQUEST: &str = r#"{ "apiKey": 500, "type": "request", "name": "PingRequest", "validVersions": "0-1",
  "flexibleVersions": "1+", "fields": [ { "name": "Nonce", "type": "int64", "versions": "0+" } ] }"#;
const PING_RESPONSE: &str = r#"{ "apiKey": 500, "type": "response", "name": "PingResponse", "validVersions": "0-1",
  "flexibleVersions": "1+", "fields": [ { "name": "Nonce", "type": "int64", "versions": "0+" } ] }"#;
const BAD_REQUEST: &str = r#"{ "apiKey": 501, "type": "request", "name": "BadRequest", "validVersions": "0",
  "flexibleVersions": "none", "fields": [ { "name": "X", "type": "int99", "versions": "0+" } ] }"#;
const BAD_RESPONSE: &str = r#"{ "apiKey": 501, "type": "response", "name": "BadResponse", "validVersions": "0",
  "flexibleVersions": "none", "fields": [] }"#;

/// A jar holding `entries` (deflated, as a jar's are).
fn jar(dir: &Path, name: &str, entries: &[(&str, &[u8])]) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    for (entry, bytes) in entries {
        zip.start_file(*entry, SimpleFileOptions::default()).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    path
}

fn folder(dir: &Path, entries: &[(&str, &str)]) -> std::path::PathBuf {
    let path = dir.join("folder");
    std::fs::create_dir_all(&path).unwrap();
    for (name, text) in entries {
        std::fs::write(path.join(name), text).unwrap();
    }
    path
}

#[test]
fn a_jar_generates_what_its_folder_does() {
    let dir = tempfile::tempdir().unwrap();
    let jar = jar(
        dir.path(),
        "kafka-clients-9.9.9.jar",
        &[
            ("META-INF/MANIFEST.MF", b"Manifest-Version: 1.0\n"),
            ("org/apache/kafka/common/message/PingRequestData.class", b"\xca\xfe\xba\xbe"),
            ("common/message/PingRequest.json", PING_REQUEST.as_bytes()),
            ("common/message/PingResponse.json", PING_RESPONSE.as_bytes()),
            ("kafka/kafka-version.properties", b"version=9.9.9\n"),
        ],
    );
    let folder = folder(dir.path(), &[("PingRequest.json", PING_REQUEST), ("PingResponse.json", PING_RESPONSE)]);
    let from_jar = Config::new().schema_dir(&jar).generate().unwrap();
    let from_folder = Config::new().schema_dir(&folder).generate().unwrap();
    assert_eq!(from_jar.files, from_folder.files);
    assert_eq!((from_jar.messages, from_jar.apis), (2, 1));
    // The files name the schema, not the jar entry.
    assert!(from_jar.files["ping_request.rs"].contains("from PingRequest.json"));
}

#[test]
fn diagnostics_name_the_jar_entry() {
    let dir = tempfile::tempdir().unwrap();
    let jar = jar(
        dir.path(),
        "broken.jar",
        &[
            ("common/message/BadRequest.json", BAD_REQUEST.as_bytes()),
            ("common/message/BadResponse.json", BAD_RESPONSE.as_bytes()),
        ],
    );
    let err = Config::new().schema_dir(&jar).generate().unwrap_err().to_string();
    let entry = format!("{}!/common/message/BadRequest.json: $.fields[0] (X)", jar.display());
    assert!(err.contains(&entry), "{err}");
    assert!(err.contains("rule 17"), "{err}");
}

#[test]
fn a_folder_inside_the_jar_is_chosen_with_a_bang() {
    let dir = tempfile::tempdir().unwrap();
    let jar = jar(
        dir.path(),
        "two.jar",
        &[
            ("common/message/PingRequest.json", PING_REQUEST.as_bytes()),
            ("common/message/PingResponse.json", PING_RESPONSE.as_bytes()),
            ("common/other/BadRequest.json", BAD_REQUEST.as_bytes()),
            ("common/other/BadResponse.json", BAD_RESPONSE.as_bytes()),
        ],
    );
    // Every schema under common/ by default: the broken ones too.
    assert!(Config::new().schema_dir(&jar).generate().is_err());
    let inner = format!("{}!/common/message", jar.display());
    let generated = Config::new().schema_dir(&inner).generate().unwrap();
    assert_eq!(generated.messages, 2);
    let empty = format!("{}!/common/nothing", jar.display());
    let err = Config::new().schema_dir(&empty).generate().unwrap_err().to_string();
    assert_eq!(err, format!("no schemas found in {empty}"));
}

#[test]
fn what_is_not_a_jar_or_not_there_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.jar");
    std::fs::write(&fake, b"this is not a zip file at all").unwrap();
    let err = Config::new().schema_dir(&fake).generate().unwrap_err().to_string();
    assert!(err.starts_with(&format!("{} is not a readable jar", fake.display())), "{err}");
    let missing = dir.path().join("missing.jar");
    let err = Config::new().schema_dir(&missing).generate().unwrap_err().to_string();
    assert_eq!(err, format!("no such file: {}", missing.display()));
}

#[test]
fn a_decompression_bomb_is_refused_without_reading_it() {
    // 256 MiB of spaces deflate to a few hundred KiB; the entry claims to be a schema.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.jar");
    {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        zip.start_file("common/message/PingRequest.json", SimpleFileOptions::default().large_file(true)).unwrap();
        let block = vec![b' '; 1 << 20];
        for _ in 0..256 {
            zip.write_all(&block).unwrap();
        }
        zip.finish().unwrap();
    }
    assert!(std::fs::metadata(&path).unwrap().len() < 4 << 20, "the bomb is small on disk");
    let (result, peak) = peak_during(|| Config::new().schema_dir(&path).generate());
    let err = result.unwrap_err().to_string();
    assert!(err.contains("bomb.jar!/common/message/PingRequest.json decompresses to more than 4194304 bytes"), "{err}");
    // At most the 4 MiB limit (doubling as the buffer grows) and the inflater's state.
    assert!(peak < 24 << 20, "peak {peak} bytes while refusing the bomb");
}
