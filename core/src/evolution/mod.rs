//! Data evolution: row-id ranges, blob bunches and the blob fallback across sequence layers.

pub mod blob_fallback;
pub mod read;
pub mod row_range;
