//! The engine's layers (docs/design.md §9): shared basics live in the leaf `basics.rs`; the
//! network (`net`), the applications (`world`), the TCP and CoAP endpoints and the simulator
//! core never import the entry point (`testbed`), which only wires them into a run.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_layer_imports_the_entry_point() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 20,
        "found {} files under {src:?}",
        files.len()
    );
    let offenders: Vec<_> = files
        .iter()
        .filter(|p| !p.ends_with("testbed.rs") && !p.ends_with("lib.rs"))
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("crate::testbed")
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "import the entry point: {offenders:?}"
    );
}

#[test]
fn the_basics_module_is_a_leaf() {
    let basics = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/basics.rs");
    let text = std::fs::read_to_string(basics).unwrap();
    assert!(
        !text.contains("crate::"),
        "basics.rs imports from the engine"
    );
}
