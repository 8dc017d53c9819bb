//! Builds the static library, compiles the C test (`tests/c/test_vectors.c`) and the C example
//! (`examples/c/retransmit.c`) with the system C compiler, runs them, and compares the C
//! program's replay of every algorithm with `coaplab_cc`'s own replay.

use std::path::{Path, PathBuf};
use std::process::Command;

use coaplab_cc::registry::Registry;
use coaplab_cc::replay::{replay, ScriptedExchange};
use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{AnyAlgorithm, Config, Duration, Instant, SampleKind};

/// The registry's algorithms the C API offers: those with their own `AnyAlgorithm` variant
/// (caller-owned plain data); boxed entries (`Custom`, e.g. the `@californium` variants) are
/// not offered.
fn offered() -> Vec<&'static str> {
    let registry = Registry::builtin();
    let names: Vec<&'static str> = registry.names().collect();
    names
        .into_iter()
        .filter(|n| {
            let alg = registry.build(n, &Config::default()).unwrap();
            !matches!(alg, AnyAlgorithm::Custom(_))
        })
        .collect()
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cargo build` of this crate's library (static archive included) into a target directory of
/// its own, so that it does not wait for the lock of the `cargo test` that runs this test.
fn static_library() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ffi-build");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--offline", "-q", "-p", "coaplab-cc-ffi", "--lib"])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(manifest_dir())
        .status()
        .expect("cannot run cargo");
    assert!(status.success(), "cargo build of the static library failed");
    let lib = target.join("debug").join("libcoaplab_cc_ffi.a");
    assert!(lib.exists(), "{} missing", lib.display());
    lib
}

/// System libraries a Rust static library needs (`rustc --print native-static-libs`).
fn native_libs() -> &'static [&'static str] {
    if cfg!(target_os = "macos") {
        &["-lSystem", "-lc", "-lm"]
    } else {
        &[
            "-lgcc_s",
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
            "-lc",
        ]
    }
}

fn compile_and_run(source: &str, lib: &Path, name: &str, args: &[&str]) -> (String, String) {
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg("-I")
        .arg(manifest_dir().join("include"))
        .arg(manifest_dir().join(source))
        .arg(lib)
        .args(native_libs())
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler '{cc}': {e}"));
    assert!(
        out.status.success(),
        "compiling {source} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).args(args).output().unwrap();
    let stdout = String::from_utf8(run.stdout).unwrap();
    let stderr = String::from_utf8(run.stderr).unwrap();
    assert!(run.status.success(), "{name} failed:\n{stderr}\n{stdout}");
    (stdout, stderr)
}

/// The lines `dump_all` of the C test prints, computed here through `coaplab_cc` directly:
/// the same script, MAX_RETRANSMIT 5, dithering from xoshiro256++ seeded with 7.
fn rust_dump() -> String {
    let s = |x: f64| Duration::from_secs_f64(x);
    let steps = [
        (0.0, 0, 0.8),
        (10.0, 1, 1.2),
        (40.0, 3, 0.9),
        (120.0, 0, 2.5),
        (200.0, 6, 0.7),
    ];
    let script: Vec<ScriptedExchange> = steps
        .iter()
        .map(|&(start, lost, rtt)| ScriptedExchange {
            start: Instant::from_nanos(s(start).nanos()),
            lost,
            rtt: s(rtt),
        })
        .collect();
    let config = Config {
        max_retransmit: 5,
        ..Config::default()
    };
    let mut out = String::new();
    let registry = Registry::builtin();
    for name in offered() {
        let mut alg = registry.build(name, &config).unwrap();
        let mut rng = Xoshiro256pp::seed_from_u64(7);
        for (i, r) in replay(&mut alg, &script, &mut rng)
            .unwrap()
            .iter()
            .enumerate()
        {
            let kind = match r.sample.kind {
                SampleKind::Strong => 0,
                SampleKind::Weak => 1,
                SampleKind::Ambiguous => 2,
                SampleKind::None => 3,
            };
            out += &format!(
                "{name} {i} {} {} {} {kind} {} {} :",
                r.end.nanos(),
                r.retransmissions,
                u32::from(r.failed),
                r.sample.rtt.map_or(0, |d| d.nanos()),
                r.rto_after.nanos()
            );
            for t in &r.timers {
                out += &format!(" {}", t.nanos());
            }
            out += "\n";
        }
    }
    out
}

#[test]
fn c_programs_build_run_and_match_rust() {
    let lib = static_library();
    let (stdout, stderr) = compile_and_run("tests/c/test_vectors.c", &lib, "test_vectors", &[]);
    assert!(stderr.contains("all C checks passed"), "{stderr}");
    assert_eq!(stdout.lines().count(), offered().len() * 5);
    assert_eq!(stdout, rust_dump());

    // The example, with CoCoA: random word 0x9e37…7c15 ≈ 0.618·2⁶⁴ dithers T_0 in [2, 3] s to
    // ≈ 2.618 s; transmissions 0 and 1 are lost (timers 2.618, ×2 = 5.236, ×1.5 = 7.854 s), the
    // third is answered 0.4 s later: k = 2, a weak sample (kind 1) from the original.
    let (stdout, _) = compile_and_run("examples/c/retransmit.c", &lib, "retransmit", &["cocoa"]);
    assert!(
        stdout.contains("response after 2 retransmission(s); sample kind 1"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("send CON").count(), 3, "{stdout}");
}
