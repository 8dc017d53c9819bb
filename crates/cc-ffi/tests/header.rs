//! `include/coaplab_cc.h` is what cbindgen generates from `src/lib.rs` today. After changing the
//! C API, regenerate it with `COAPLAB_BLESS_HEADER=1 cargo test -p coaplab-cc-ffi --test header`.

use std::path::Path;

#[test]
fn header_is_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen could not parse src/lib.rs")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let path = dir.join("include/coaplab_cc.h");
    if std::env::var_os("COAPLAB_BLESS_HEADER").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale; regenerate it with COAPLAB_BLESS_HEADER=1 cargo test -p coaplab-cc-ffi --test header",
        path.display()
    );
}
