//! Build script of `paimon-native`: links the `paimon-kernel` CLI as a position-dependent
//! executable (`-no-pie`) on Linux with glibc.
//!
//! A position-independent executable of this size carries ~243,000 relative relocations
//! (`.rela.dyn`, 5.8 MB) that the loader reads and applies to `.data.rel.ro` (4.1 MB of pages
//! made private) before `main`, on every run: a short command such as `info` peaked at
//! 24-25 MiB, 16-18 MiB without them (bench/results/2026-12-06c.md). The library, the Python
//! module and every other target keep the default. Set `PAIMON_KERNEL_PIE=1` at build time to
//! link the CLI as a PIE again (address-space randomisation of the executable itself).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PAIMON_KERNEL_PIE");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && std::env::var_os("PAIMON_KERNEL_PIE").is_none()
    {
        println!("cargo:rustc-link-arg-bin=paimon-kernel=-no-pie");
    }
}
