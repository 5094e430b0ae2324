//! Whether this engine was built with profile-guided optimisation (scripts/build-pgo.sh):
//! `hetsched reproduce` says which build it timed, and suggests the faster one.
fn main() {
    // Cargo hands a build script the compiler flags of the build, separated by 0x1f; a
    // profile-guided build carries `-Cprofile-use=FILE` (or `-C profile-use=FILE`).
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let guided = flags
        .split('\x1f')
        .any(|f| f.trim_start_matches("-C").starts_with("profile-use"));
    println!("cargo:rustc-env=HETSCHED_PROFILE_GUIDED={}", u8::from(guided));
    // the flags above are Cargo's own for the build script; what the caller changes is
    // RUSTFLAGS (build-pgo.sh also builds into target directories of its own)
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-changed=build.rs");
}
