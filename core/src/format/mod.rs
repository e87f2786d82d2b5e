//! Pure codecs of Paimon's file formats: bytes in, values or Arrow arrays out (and back).

pub mod blob;
pub mod blob_descriptor;
