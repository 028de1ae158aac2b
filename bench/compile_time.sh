#!/usr/bin/env bash
# Clean release build time of the root package `kafka-wire` vs the crate `kafka-protocol` 0.18
# with its `messages_enums` feature (plus its default features: client, broker, gzip, zstd,
# snappy, lz4 — the lz4 and zstd features build C libraries), on the same machine in the
# same run. Each side is built with a fresh target dir, `cargo build --release -j $JOBS`,
# alternating sides, $RUNS times. Two numbers per build:
#   total — wall time of the whole clean build (dependencies, build scripts, the crate);
#   crate — wall time to rebuild only the final crate after `cargo clean -p <crate> --release`
#           (for kafka-wire that includes compiling and running its build script, which
#           generates every message, then compiling the generated code).
# Prints every sample, the medians and the ratios kafka-wire / kafka-protocol.
#
# The kafka-wire side is a snapshot of this checkout (root package, runtime, codegen) copied to
# a temp dir at start and built with `cargo build --release -p kafka-wire`.
#
# Usage: bench/compile_time.sh            (from anywhere; RUNS=3 JOBS=2 by default)
# Needs network access to crates.io on the first run (or a warm ~/.cargo registry).
set -euo pipefail

RUNS=${RUNS:-3}
JOBS=${JOBS:-2}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d -t kafka-wire-compile-time.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Snapshot of the root package and the workspace crates it needs (runtime, codegen; generated
# only because the root package names it as a dev-dependency), with the workspace's lock file,
# so that edits in the shared checkout during the run cannot change what is measured.
OURS="$WORK/kafka-wire"
mkdir -p "$OURS"
for item in Cargo.toml Cargo.lock build.rs rustfmt.toml src runtime codegen generated; do
    if [ -e "$ROOT/$item" ]; then cp -r "$ROOT/$item" "$OURS/"; fi
done
rm -rf "$OURS"/*/target
sed -i -e 's/^members = .*/members = ["codegen", "runtime", "generated"]/' \
    -e 's/^default-members = .*/default-members = ["."]/' "$OURS/Cargo.toml"
# The checkout finds Kafka's schemas relative to the workspace root; the snapshot is elsewhere.
export KAFKA_SCHEMAS_DIR=${KAFKA_SCHEMAS_DIR:-$(cd "$ROOT/../shared/kafka-schemas/message" && pwd)}

# Throwaway project depending on kafka-protocol; its lock file is resolved once, untimed.
PEER="$WORK/peer"
mkdir -p "$PEER/src"
cat >"$PEER/Cargo.toml" <<'EOF'
[package]
name = "kafka-protocol-compile-time"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
kafka-protocol = { version = "0.18", features = ["messages_enums"] }

[workspace]
EOF
echo 'pub use kafka_protocol;' >"$PEER/src/lib.rs"
(cd "$PEER" && cargo generate-lockfile -q && cargo fetch -q)
(cd "$OURS" && cargo fetch -q)

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# build_and_time <dir> <crate> <extra cargo args...>: prints "total crate" seconds.
build_and_time() {
    local dir=$1 crate=$2
    shift 2
    local target="$WORK/target-$crate"
    rm -rf "$target"
    local t0 t1 t2 t3
    t0=$(now)
    (cd "$dir" && CARGO_TARGET_DIR="$target" cargo build --release -j "$JOBS" -q "$@")
    t1=$(now)
    (cd "$dir" && CARGO_TARGET_DIR="$target" cargo clean -q --release -p "$crate")
    t2=$(now)
    (cd "$dir" && CARGO_TARGET_DIR="$target" cargo build --release -j "$JOBS" -q "$@")
    t3=$(now)
    rm -rf "$target"
    echo "$(elapsed "$t0" "$t1") $(elapsed "$t2" "$t3")"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

ours_total=() ours_crate=() peer_total=() peer_crate=()
echo "rustc: $(rustc --version); cores: $(nproc); jobs: $JOBS; runs: $RUNS"
for run in $(seq 1 "$RUNS"); do
    read -r total crate < <(build_and_time "$OURS" kafka-wire -p kafka-wire)
    ours_total+=("$total") ours_crate+=("$crate")
    echo "run $run kafka-wire:     total ${total}s  crate ${crate}s  (load $(cut -d' ' -f1-3 /proc/loadavg))"
    read -r total crate < <(build_and_time "$PEER" kafka-protocol)
    peer_total+=("$total") peer_crate+=("$crate")
    echo "run $run kafka-protocol: total ${total}s  crate ${crate}s  (load $(cut -d' ' -f1-3 /proc/loadavg))"
done

mot=$(median "${ours_total[@]}") moc=$(median "${ours_crate[@]}")
mpt=$(median "${peer_total[@]}") mpc=$(median "${peer_crate[@]}")
echo
echo "median clean release build, whole:       kafka-wire ${mot}s  kafka-protocol[messages_enums] ${mpt}s  ratio $(awk -v a="$mot" -v b="$mpt" 'BEGIN { printf "%.2f", a / b }')"
echo "median release rebuild of final crate:   kafka-wire ${moc}s  kafka-protocol[messages_enums] ${mpc}s  ratio $(awk -v a="$moc" -v b="$mpc" 'BEGIN { printf "%.2f", a / b }')"
