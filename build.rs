//! Links `baton` as a position-dependent executable on Linux (issue 22): a PIE
//! has 46,000 relative relocations for the dynamic loader to apply at every start,
//! on pages that then count as written (a copy each after the watchdog's `fork`).
//! Linking the same position-independent objects with `-no-pie` resolves them once,
//! at link time: a one-state run starts 0.8 ms sooner and takes half the page faults
//! (`docs/decisions.md`, "Performance as a user lives it"). `BATON_PIE=1` at build
//! time keeps the default (a PIE, whose load address is randomised).

fn main() {
    println!("cargo:rerun-if-env-changed=BATON_PIE");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux && std::env::var_os("BATON_PIE").is_none() {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
