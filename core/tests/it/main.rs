//! Integration tests of paimon-kernel (one binary).

#![allow(clippy::unwrap_used)]

mod canonical;
mod data_files;
