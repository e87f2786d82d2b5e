//! Pure codecs of Paimon's file formats: bytes in, values or Arrow arrays out (and back).

pub mod avro_data;
pub mod avro_map_order;
pub mod blob;
pub mod blob_descriptor;
pub mod blob_ref;
pub mod data_file;
pub mod deletion_vector;
pub mod hash_index;
pub mod orc;
pub mod parquet;
pub(crate) mod reading;
pub mod shared_map;
pub mod variant;
