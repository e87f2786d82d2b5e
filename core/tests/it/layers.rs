//! The layer rule of `core/src/lib.rs`: a module imports only from the layers below it.
//!
//! The layers are read from the numbered list under `## Layers` in `lib.rs`'s docs (so the
//! docs and this test cannot drift apart). The crate's module tree is walked from `lib.rs`
//! (`mod x;`, `#[path]`), leaving out test code: modules and items under `#[cfg(test)]`,
//! which may use any layer to build the tables they test. Every `crate::x` path (and
//! `crate::{x, ..}` group, and `super::` chains that climb to the crate root) in a file of
//! top-level module `m` must name `m` itself or a module of a lower layer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn src_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Top-level module → layer number, from the `## Layers` list of `lib.rs`.
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut in_section = false;
    for line in lib.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            continue;
        };
        let doc = doc.trim();
        if doc.starts_with("## ") {
            in_section = doc == "## Layers";
            continue;
        }
        if !in_section {
            continue;
        }
        let Some((number, rest)) = doc.split_once(". ") else {
            continue;
        };
        let Ok(layer) = number.parse::<usize>() else {
            continue;
        };
        let names = rest.split_once(": ").map_or(rest, |(names, _)| names);
        for (i, part) in names.split('`').enumerate() {
            if i % 2 == 1 {
                let previous = out.insert(part.to_owned(), layer);
                assert!(previous.is_none(), "{part} is listed twice under ## Layers");
            }
        }
    }
    out
}

/// `src` with comments, and string and char literals when `strings`, blanked to spaces
/// (newlines and byte offsets kept).
fn blank(src: &str, strings: bool) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let clear = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|c| *c == b'\n')
                .map_or(b.len(), |p| i + p);
            clear(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            clear(&mut out, i, j);
            i = j;
        } else if b[i] == b'r'
            && (i == 0 || !ident(b[i - 1]) || (b[i - 1] == b'b' && (i < 2 || !ident(b[i - 2]))))
            && matches!(b.get(i + 1), Some(b'"' | b'#'))
        {
            // A raw string: r"..", r#".."#, br"..".
            let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = i + 2 + hashes;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            if strings {
                clear(&mut out, i + 1, end);
            }
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            if strings {
                clear(&mut out, i, end);
            }
            i = end;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}', '"'), else a lifetime.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|c| *c == b'\'')
                    .map(|p| i + 2 + p + 1)
            } else {
                let len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 2 + len)
            };
            match end {
                Some(end) => {
                    if strings {
                        clear(&mut out, i, end);
                    }
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8")
}

/// End of the item starting at `from` in blanked `code`: after its first `;` outside
/// brackets, or after the `}` closing its first outermost `{`.
fn item_end(code: &str, from: usize) -> usize {
    let mut depth = 0i32;
    for (i, c) in code[from..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' => depth -= 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return from + i + 1;
                }
            }
            ';' if depth == 0 => return from + i + 1,
            _ => {}
        }
    }
    code.len()
}

/// The position after the bracket closing the one at `open` in blanked `code`.
fn closing(code: &str, open: usize) -> usize {
    let mut depth = 0i32;
    for (i, c) in code[open..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The position of the `[` opening the `]` that ends `code[..end]`, if it ends with one.
fn opening(code: &str, end: usize) -> Option<usize> {
    if !code[..end].ends_with(']') {
        return None;
    }
    let mut depth = 0i32;
    for (i, c) in code[..end].char_indices().rev() {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Skip whitespace and outer attributes (`#[..]`) from `at`; the attributes' texts (from
/// `with_strings`, the same text with string literals kept) and the position after them.
fn attributes(code: &str, with_strings: &str, mut at: usize) -> (Vec<String>, usize) {
    let mut attrs = Vec::new();
    loop {
        at += code[at..].len() - code[at..].trim_start().len();
        if code[at..].starts_with("#[") {
            let end = closing(code, at + 1);
            attrs.push(with_strings[at..end].split_whitespace().collect::<String>());
            at = end;
        } else {
            return (attrs, at);
        }
    }
}

/// A file of the crate: its path, its module path (`["write", "kv"]`) and the directory its
/// child modules live in.
struct ModFile {
    path: PathBuf,
    module: Vec<String>,
    child_dir: PathBuf,
}

/// The crate's non-test files, from `lib.rs` down.
fn crate_files() -> Vec<ModFile> {
    let root = src_root();
    let mut todo = vec![ModFile {
        path: root.join("lib.rs"),
        module: Vec::new(),
        child_dir: root.clone(),
    }];
    let mut out = Vec::new();
    while let Some(file) = todo.pop() {
        let src = std::fs::read_to_string(&file.path)
            .unwrap_or_else(|e| panic!("{}: {e}", file.path.display()));
        let with_strings = blank(&src, false);
        let code = blank(&src, true);
        let mut at = 0;
        while let Some(p) = code[at..].find("mod ") {
            let start = at + p;
            at = start + 4;
            let before = code[..start].trim_end();
            let token_start =
                start == 0 || !code[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_');
            if !token_start {
                continue;
            }
            let rest = code[at..].trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = rest[name.len()..].trim_start();
            if name.is_empty() || !after.starts_with(';') {
                continue;
            }
            // The attributes right before `[pub(..)] mod name;`.
            let decl = before
                .strip_suffix("pub(crate)")
                .or_else(|| before.strip_suffix("pub(super)"))
                .or_else(|| before.strip_suffix("pub"))
                .unwrap_or(before)
                .trim_end();
            let mut attrs = Vec::new();
            let mut end = decl.len();
            // Outer attributes only: an inner one (`#![..]`) belongs to the file.
            while let Some(open) = opening(&code, end).filter(|o| code[..*o].ends_with('#')) {
                attrs.push(
                    with_strings[open - 1..end]
                        .split_whitespace()
                        .collect::<String>(),
                );
                end = code[..open - 1].trim_end().len();
            }
            if attrs.iter().any(|a| a == "#[cfg(test)]") {
                continue;
            }
            let path_attr = attrs.iter().find_map(|a| {
                a.strip_prefix("#[path=\"")?
                    .strip_suffix("\"]")
                    .map(str::to_owned)
            });
            let path = match path_attr {
                Some(p) => file.path.parent().expect("a directory").join(p),
                None => {
                    let flat = file.child_dir.join(format!("{name}.rs"));
                    if flat.exists() {
                        flat
                    } else {
                        file.child_dir.join(&name).join("mod.rs")
                    }
                }
            };
            assert!(
                path.exists(),
                "{}: no file for `mod {name};`",
                file.path.display()
            );
            let mut module = file.module.clone();
            module.push(name.clone());
            let child_dir = if path.file_name().is_some_and(|f| f == "mod.rs") {
                path.parent().expect("a directory").to_path_buf()
            } else {
                path.with_extension("")
            };
            todo.push(ModFile {
                path,
                module,
                child_dir,
            });
        }
        out.push(file);
    }
    out
}

/// `code` with every item under `#[cfg(test)]` blanked.
fn without_test_items(code: &str, with_strings: &str) -> String {
    let mut out = code.to_owned();
    let mut at = 0;
    while let Some(p) = code[at..].find("#[cfg(test)]") {
        let start = at + p;
        let (_, item) = attributes(code, with_strings, start);
        let end = item_end(code, item);
        out.replace_range(start..end, &" ".repeat(end - start));
        at = end;
    }
    out
}

/// The top-level modules named by `crate::` paths (and `super::` chains reaching the crate
/// root from a file `depth` modules deep) in blanked `code`, with their byte offsets.
fn named_modules(code: &str, depth: usize) -> Vec<(usize, String)> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while let Some(p) = code[at..].find("crate::") {
        let start = at + p;
        at = start + "crate::".len();
        if start > 0
            && (bytes[start - 1].is_ascii_alphanumeric()
                || bytes[start - 1] == b'_'
                || bytes[start - 1] == b'$')
        {
            continue;
        }
        let rest = code[at..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let close = closing(rest, 0) - 1;
            let body = &group[..close - 1];
            let mut level = 0;
            let mut part_start = 0;
            for (i, c) in body.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        out.push((start, ident(&body[part_start..i])));
                        part_start = i + 1;
                    }
                    _ => {}
                }
            }
            out.push((start, ident(&body[part_start..])));
        } else {
            out.push((start, ident(rest)));
        }
    }
    if depth > 0 {
        let climb = "super::".repeat(depth);
        let mut at = 0;
        while let Some(p) = code[at..].find(&climb) {
            let start = at + p;
            at = start + climb.len();
            let starts_token = start == 0
                || !(bytes[start - 1].is_ascii_alphanumeric()
                    || bytes[start - 1] == b'_'
                    || bytes[start - 1] == b':');
            if starts_token && !code[at..].starts_with("super::") {
                out.push((start, ident(&code[at..])));
            }
        }
    }
    out.retain(|(_, m)| !m.is_empty());
    out
}

#[test]
fn a_module_names_only_lower_layers() {
    let root = src_root();
    let lib = std::fs::read_to_string(root.join("lib.rs")).unwrap();
    let layers = layers(&lib);
    assert!(
        layers.len() >= 10,
        "the ## Layers list of lib.rs: {layers:?}"
    );

    let files = crate_files();
    let top: Vec<&String> = files
        .iter()
        .filter(|f| f.module.len() == 1)
        .map(|f| &f.module[0])
        .collect();
    let unlisted: Vec<_> = top.iter().filter(|m| !layers.contains_key(**m)).collect();
    assert!(
        unlisted.is_empty(),
        "modules of lib.rs missing from its ## Layers list: {unlisted:?}"
    );
    let stale: Vec<_> = layers.keys().filter(|m| !top.contains(m)).collect();
    assert!(
        stale.is_empty(),
        "## Layers names modules lib.rs does not declare: {stale:?}"
    );

    let mut violations = Vec::new();
    let mut checked = 0;
    for file in files.iter().filter(|f| !f.module.is_empty()) {
        let own = &file.module[0];
        let own_layer = layers[own];
        let src = std::fs::read_to_string(&file.path).unwrap();
        let with_strings = blank(&src, false);
        let code = without_test_items(&blank(&src, true), &with_strings);
        // A `mod.rs` file is its module; `super` in `x.rs` of module a::x is a.
        for (offset, named) in named_modules(&code, file.module.len()) {
            checked += 1;
            let Some(&layer) = layers.get(&named) else {
                continue; // `crate::Error`, `crate::Result`: the crate root's re-exports.
            };
            if &named != own && layer >= own_layer {
                let line = code[..offset].lines().count();
                violations.push(format!(
                    "{}:{line}: `{own}` (layer {own_layer}) names `{named}` (layer {layer})",
                    file.path.strip_prefix(&root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        checked > 500,
        "only {checked} crate paths found: is the scan broken?"
    );
    assert!(
        violations.is_empty(),
        "imports that break the layer rule of core/src/lib.rs:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_scan_sees_what_it_must() {
    // Strings, chars and comments do not count; test items are left out; groups and
    // `super` chains to the crate root do count.
    let src = r##"
use crate::spec::X; // crate::write
use crate::{Error, format::Y, io::{Io, Machine}};
const S: &str = "crate::compact";
const R: &str = r#"crate::job "quoted""#;
const C: char = '"';
fn f<'a>(x: &'a str) -> super::super::read::Z { crate::merge::m() }
#[cfg(test)]
mod tests { use crate::write::T; }
#[cfg(test)]
use crate::commit::Q;
"##;
    let with_strings = blank(src, false);
    let code = without_test_items(&blank(src, true), &with_strings);
    let named: Vec<String> = named_modules(&code, 2)
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    assert_eq!(named, ["spec", "Error", "format", "io", "merge", "read"]);
    assert_eq!(
        layers(
            "//! ## Layers\n//! 1. [`a`], [`b`](mod@b): x `c`\n//! 2. [`d`]: y\n//! ## Next\n//! 3. [`e`]: z"
        ),
        BTreeMap::from([("a".into(), 1), ("b".into(), 1), ("d".into(), 2)])
    );
}
