//! `alter`: change a table's schema (columns, types, options) as one new schema.
//!
//! The flags may repeat and mix; they apply in command-line order and make **one** new
//! schema, so `--rename-column a=b --alter-type 'b BIGINT'` works.

use clap::{Arg, ArgAction, ArgMatches, Command};
use paimon_kernel::schema::alter::{ColumnMove, SchemaChange};
use paimon_kernel::spec::DataType;
use paimon_native::Table;

use super::error_chain;

/// The change flags of `alter`, in the order of [`AlterArgs::augment`].
const FLAGS: [(&str, &str, &str); 6] = [
    (
        "add-column",
        "'NAME TYPE [FIRST|AFTER COL]'",
        "Add a nullable column with a new field id (last, or FIRST, or AFTER an existing \
         column), e.g. 'price DECIMAL(10, 2) AFTER qty'",
    ),
    (
        "drop-column",
        "NAME",
        "Drop a column (not a partition or primary key column)",
    ),
    (
        "rename-column",
        "OLD=NEW",
        "Rename a column; its field id, and the keys and options naming it, follow",
    ),
    (
        "alter-type",
        "'NAME TYPE'",
        "Change a column's type (a cast Paimon allows, e.g. INT to BIGINT or STRING); the \
         column takes TYPE's nullability",
    ),
    ("set", "KEY=VALUE", "Set a table option"),
    (
        "reset",
        "KEY",
        "Remove a table option (back to its default)",
    ),
];

/// `paimon-kernel alter TABLE --add-column 'NAME TYPE' | --drop-column NAME |
/// --rename-column OLD=NEW | --alter-type 'NAME TYPE' | --set KEY=VALUE | --reset KEY ...`.
#[derive(Debug)]
pub(crate) struct AlterArgs {
    table: String,
    /// `(flag, value)` in command-line order.
    changes: Vec<(&'static str, String)>,
}

impl AlterArgs {
    fn augment(cmd: Command) -> Command {
        let cmd = cmd.arg(
            Arg::new("table")
                .required(true)
                .value_name("TABLE")
                .help("Table directory or URL"),
        );
        FLAGS.iter().fold(cmd, |cmd, (name, value, help)| {
            cmd.arg(
                Arg::new(*name)
                    .long(*name)
                    .value_name(*value)
                    .action(ArgAction::Append)
                    .help(*help),
            )
        })
    }
}

impl clap::FromArgMatches for AlterArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let table = m
            .get_one::<String>("table")
            .cloned()
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::MissingRequiredArgument))?;
        let mut indexed: Vec<(usize, &'static str, String)> = Vec::new();
        for (name, _, _) in FLAGS {
            if let (Some(indices), Some(values)) = (m.indices_of(name), m.get_many::<String>(name))
            {
                indexed.extend(indices.zip(values).map(|(i, v)| (i, name, v.clone())));
            }
        }
        indexed.sort_by_key(|(i, _, _)| *i);
        Ok(AlterArgs {
            table,
            changes: indexed.into_iter().map(|(_, f, v)| (f, v)).collect(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for AlterArgs {
    fn augment_args(cmd: Command) -> Command {
        Self::augment(cmd)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment(cmd)
    }
}

/// A column name at the start of `spec` (plain, or in backquotes with `` `` `` for a
/// backquote) and the rest, trimmed.
fn split_name<'a>(spec: &'a str, flag: &str) -> Result<(String, &'a str), String> {
    let spec = spec.trim();
    if let Some(quoted) = spec.strip_prefix('`') {
        let mut name = String::new();
        let mut chars = quoted.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                if chars.peek().map(|(_, c)| *c) == Some('`') {
                    chars.next();
                    name.push('`');
                    continue;
                }
                return Ok((name, quoted[i + 1..].trim()));
            }
            name.push(c);
        }
        return Err(format!("--{flag} '{spec}': unclosed backquote"));
    }
    match spec.split_once(char::is_whitespace) {
        Some((name, rest)) => Ok((name.to_owned(), rest.trim())),
        None => Ok((spec.to_owned(), "")),
    }
}

fn parse_type(text: &str, spec: &str, flag: &str) -> Result<DataType, String> {
    if text.is_empty() {
        return Err(format!("--{flag} '{spec}': expected 'NAME TYPE'"));
    }
    DataType::parse_sql(text).map_err(|e| format!("--{flag} '{spec}': {e}"))
}

fn key_value<'a>(spec: &'a str, flag: &str, what: &str) -> Result<(&'a str, &'a str), String> {
    match spec.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim(), v)),
        _ => Err(format!("--{flag} '{spec}': expected {what}")),
    }
}

/// One command-line flag as a schema change.
fn parse_change(flag: &str, spec: &str) -> Result<SchemaChange, String> {
    Ok(match flag {
        "add-column" => {
            let (name, rest) = split_name(spec, flag)?;
            let words: Vec<&str> = rest.split_whitespace().collect();
            let (type_text, position) = match words.as_slice() {
                [.., last] if last.eq_ignore_ascii_case("FIRST") => (
                    rest[..rest.len() - last.len()].trim(),
                    Some(ColumnMove::First),
                ),
                [.., after, column] if after.eq_ignore_ascii_case("AFTER") => {
                    let cut = rest.len() - column.len();
                    let type_text = rest[..cut].trim_end();
                    (
                        type_text[..type_text.len() - after.len()].trim(),
                        Some(ColumnMove::After(column.trim_matches('`').to_owned())),
                    )
                }
                _ => (rest, None),
            };
            SchemaChange::AddColumn {
                name,
                data_type: parse_type(type_text, spec, flag)?,
                description: None,
                position,
            }
        }
        "drop-column" => SchemaChange::drop_column(split_name(spec, flag)?.0),
        "rename-column" => {
            let (old, new) = key_value(spec, flag, "OLD=NEW")?;
            SchemaChange::rename_column(old, new.trim())
        }
        "alter-type" => {
            let (name, rest) = split_name(spec, flag)?;
            SchemaChange::update_column_type(name, parse_type(rest, spec, flag)?)
        }
        "set" => {
            let (k, v) = key_value(spec, flag, "KEY=VALUE")?;
            SchemaChange::set_option(k, v)
        }
        "reset" => SchemaChange::remove_option(spec.trim()),
        other => return Err(format!("unknown alter flag --{other}")),
    })
}

/// Run `alter`.
pub(crate) async fn run(a: AlterArgs, json: bool) -> Result<(), String> {
    if a.changes.is_empty() {
        return Err(
            "alter: give at least one of --add-column, --drop-column, --rename-column, \
             --alter-type, --set, --reset"
                .to_owned(),
        );
    }
    let changes = a
        .changes
        .iter()
        .map(|(flag, spec)| parse_change(flag, spec))
        .collect::<Result<Vec<_>, _>>()?;
    let table = Table::open(&a.table).await.map_err(|e| error_chain(&e))?;
    let schema = table.alter(changes).await.map_err(|e| error_chain(&e))?;
    if json {
        super::print(
            &serde_json::json!({"location": table.location(), "schemaId": schema.id}).to_string(),
        );
    } else {
        super::print(&format!(
            "altered table {}: schema {} ({} columns: {})",
            table.location(),
            schema.id,
            schema.fields.len(),
            schema
                .fields
                .iter()
                .map(|f| format!("{} {}", f.name, f.data_type))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_changes() {
        let ty = |s: &str| DataType::parse_sql(s).unwrap();
        assert_eq!(
            parse_change("add-column", "c DECIMAL(10, 2)").unwrap(),
            SchemaChange::add_column("c", ty("DECIMAL(10, 2)"))
        );
        assert_eq!(
            parse_change("add-column", "`my col` ROW<first INT> after k").unwrap(),
            SchemaChange::AddColumn {
                name: "my col".into(),
                data_type: ty("ROW<first INT>"),
                description: None,
                position: Some(ColumnMove::After("k".into())),
            }
        );
        assert_eq!(
            parse_change("add-column", "c INT FIRST").unwrap(),
            SchemaChange::AddColumn {
                name: "c".into(),
                data_type: ty("INT"),
                description: None,
                position: Some(ColumnMove::First),
            }
        );
        assert_eq!(
            parse_change("rename-column", "a=b").unwrap(),
            SchemaChange::rename_column("a", "b")
        );
        assert_eq!(
            parse_change("alter-type", "v BIGINT NOT NULL").unwrap(),
            SchemaChange::update_column_type("v", ty("BIGINT NOT NULL"))
        );
        assert_eq!(
            parse_change("set", "snapshot.num-retained.max=5").unwrap(),
            SchemaChange::set_option("snapshot.num-retained.max", "5")
        );
        for (flag, spec, want) in [
            ("add-column", "c", "expected 'NAME TYPE'"),
            ("add-column", "c NOPE", "NOPE"),
            ("rename-column", "a", "OLD=NEW"),
            ("set", "=1", "KEY=VALUE"),
            ("alter-type", "`x INT", "backquote"),
        ] {
            let e = parse_change(flag, spec).unwrap_err();
            assert!(e.contains(want) && e.contains(&format!("--{flag}")), "{e}");
        }
    }
}
