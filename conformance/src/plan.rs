//! Which cases run: for each schema of a release and each version it defines, the minimal
//! instance, the maximal one and `KAFKA_ORACLE_RANDOM` (default 20) seeded random ones, all
//! written by the IR-driven sample encoder; and the tally of what they found.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use kwire_codegen::ir::Message;
use kwire_inspect::sample::{self, Mode, Rng};

use crate::{Entry, Mismatch, MismatchKind, Oracle, SCHEMAS};

/// Which instance a case is.
#[derive(Debug, Clone, Copy)]
pub enum Instance {
    Minimal,
    Maximal,
    /// Random, from this seed (`sample::Rng::new(seed)`).
    Random(u64),
}

impl Instance {
    fn mode(self) -> Mode {
        match self {
            Instance::Minimal => Mode::Minimal,
            Instance::Maximal => Mode::Maximal,
            Instance::Random(seed) => Mode::Random(Rng::new(seed)),
        }
    }
}

/// What the run is asked to do, from the environment.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Random instances per schema version (`KAFKA_ORACLE_RANDOM`, default 20).
    pub random: u64,
    /// Mixed into every random seed (`KAFKA_ORACLE_SEED`, default 0): another value draws
    /// other instances, the same value the same ones.
    pub seed: u64,
    /// Only the schemas named (`KAFKA_ORACLE_ONLY=FetchRequest,MetadataResponse`).
    pub only: Vec<String>,
}

impl Settings {
    pub fn from_env() -> Settings {
        let number = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("{name}={v}: not a number")))
        };
        let only = std::env::var("KAFKA_ORACLE_ONLY").unwrap_or_default();
        Settings {
            random: number("KAFKA_ORACLE_RANDOM", 20),
            seed: number("KAFKA_ORACLE_SEED", 0),
            only: only.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect(),
        }
    }
}

/// The seed of random instance `index` of `name` at `version` of `release`: stable across runs
/// and machines (FNV-1a over the names), so a failure's seed reproduces it.
pub fn seed_of(settings: &Settings, release: &str, name: &str, version: i16, index: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in release.bytes().chain(name.bytes()).chain(version.to_be_bytes()).chain(index.to_be_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ settings.seed
}

/// Counts of one release's family.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub schemas: usize,
    pub schema_versions: usize,
    pub cases: usize,
    pub by_kind: BTreeMap<MismatchKind, usize>,
}

impl Tally {
    fn count(&self, kind: MismatchKind) -> usize {
        self.by_kind.get(&kind).copied().unwrap_or(0)
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cases ({} schemas, {} schema versions), {} byte mismatches, {} JSON mismatches, {} value mismatches, {} refused by Kafka, {} failures of our own",
            self.cases,
            self.schemas,
            self.schema_versions,
            self.count(MismatchKind::Bytes),
            self.count(MismatchKind::Json),
            self.count(MismatchKind::Value),
            self.count(MismatchKind::Refused),
            self.count(MismatchKind::Ours) + self.count(MismatchKind::Oracle),
        )
    }
}

/// A failed case, with what reproduces it.
#[derive(Debug)]
pub struct Failure {
    pub family: &'static str,
    pub name: &'static str,
    pub version: i16,
    pub instance: Instance,
    pub mismatches: Vec<Mismatch>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let instance = match self.instance {
            Instance::Random(seed) => format!("random instance, seed {seed:#x}"),
            other => format!("{other:?} instance"),
        };
        writeln!(f, "{}/{} v{} ({instance}):", self.family, self.name, self.version)?;
        for m in &self.mismatches {
            writeln!(f, "    {m}")?;
        }
        Ok(())
    }
}

/// What one release's run found.
#[derive(Debug, Default)]
pub struct Report {
    pub families: BTreeMap<&'static str, Tally>,
    pub failures: Vec<Failure>,
}

impl Report {
    pub fn mismatches(&self) -> usize {
        self.families.values().map(|t| t.by_kind.values().sum::<usize>()).sum()
    }

    /// The mismatches grouped by schema, kind and the text before any value (indices folded),
    /// most frequent first: what a failed run has to look at.
    pub fn patterns(&self) -> Vec<(usize, String)> {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for failure in &self.failures {
            for m in &failure.mismatches {
                let text: String = m.detail.split(": ours").next().unwrap_or_default().chars().take(120).collect();
                let folded = fold_indices(&text);
                *counts.entry(format!("{}/{} {:?}: {folded}", failure.family, failure.name, m.kind)).or_default() += 1;
            }
        }
        let mut patterns: Vec<(usize, String)> = counts.into_iter().map(|(text, n)| (n, text)).collect();
        patterns.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        patterns
    }
}

/// `[12]` → `[]`, so that one place in many array elements is counted once.
fn fold_indices(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_index = false;
    for c in text.chars() {
        match c {
            '[' => in_index = true,
            ']' if in_index => {
                out.push_str("[]");
                in_index = false;
                continue;
            }
            c if in_index && c.is_ascii_digit() => continue,
            _ => {}
        }
        if !in_index {
            out.push(c);
        }
    }
    out
}

/// The schemas of `release` in the table, with their IR loaded from the same jar entries.
pub fn entries_of(release: &str) -> Vec<(&'static Entry, Message)> {
    let mut by_source: HashMap<&str, HashMap<String, Message>> = HashMap::new();
    let mut out = Vec::new();
    for entry in SCHEMAS.iter().filter(|e| e.release == release) {
        let messages = by_source.entry(entry.source).or_insert_with(|| {
            let loaded = kwire_codegen::load_schemas(&[Path::new(entry.source)], false)
                .unwrap_or_else(|e| panic!("{}: {e}", entry.source));
            loaded.messages.into_iter().map(|m| (m.name.clone(), m)).collect()
        });
        let msg = messages.get(entry.name).unwrap_or_else(|| panic!("{} not in {}", entry.name, entry.source));
        out.push((entry, msg.clone()));
    }
    out
}

/// Runs every case of `release` through `oracle`.
pub fn run_release(release: &str, oracle: &mut Oracle, settings: &Settings) -> Report {
    let mut report = Report::default();
    for (entry, msg) in entries_of(release) {
        if !settings.only.is_empty() && !settings.only.iter().any(|n| n == entry.name) {
            continue;
        }
        let tally = report.families.entry(entry.family).or_default();
        tally.schemas += 1;
        for version in msg.valid_versions.min..=msg.valid_versions.max {
            tally.schema_versions += 1;
            let randoms =
                (0..settings.random).map(|i| Instance::Random(seed_of(settings, release, entry.name, version, i)));
            for instance in [Instance::Minimal, Instance::Maximal].into_iter().chain(randoms) {
                let bytes = sample::encode(&msg, version, instance.mode());
                tally.cases += 1;
                if let Err(mismatches) = (entry.run)(&bytes, version, &msg, oracle) {
                    for m in &mismatches {
                        *tally.by_kind.entry(m.kind).or_default() += 1;
                    }
                    let fatal = mismatches.iter().any(|m| m.kind == MismatchKind::Oracle);
                    report.failures.push(Failure {
                        family: entry.family,
                        name: entry.name,
                        version,
                        instance,
                        mismatches,
                    });
                    if fatal {
                        return report;
                    }
                }
            }
        }
    }
    report
}
