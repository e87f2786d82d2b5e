//! Schema changes: creating a table (its first schema file, `schema/schema-0`) and altering it
//! (the next schema file, `schema/schema-<id+1>`). A schema change writes no rows; the schema
//! files themselves are [`crate::spec::schema`].
//!
//! * [`create`]: Paimon's schema JSON normalized and validated into schema 0.
//! * [`alter`]: [`alter::SchemaChange`]s applied to the latest schema, validated as Java does.
//!
//! Source: Java `org.apache.paimon.schema.SchemaManager` (`createTable`, `commitChanges`),
//! `org.apache.paimon.schema.Schema`, `SchemaChange`, `SchemaValidation`.

pub mod alter;
pub mod create;
