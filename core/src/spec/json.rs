//! JSON helpers shared by the metadata codecs: Java's (Jackson's) default pretty printer,
//! so that files we write look like the ones Java writes.
//!
//! Jackson's `DefaultPrettyPrinter`: objects put each entry on its own line, indented by two
//! spaces per object nesting level, with `" : "` between key and value, and print `{ }` when
//! empty; arrays stay on one line as `[ a, b ]` (`[ ]` when empty) and do not add a nesting
//! level, so the objects of `fields` print as `[ {` ... `}, {` ... `} ]`.

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;

/// Serialize `value` with Jackson's default pretty printer (no trailing newline).
pub(crate) fn to_jackson_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, JacksonPretty::default());
    value.serialize(&mut ser)?;
    Ok(out)
}

/// A `serde_json` formatter reproducing Jackson's `DefaultPrettyPrinter`.
#[derive(Debug, Default)]
pub(crate) struct JacksonPretty {
    /// Object nesting level.
    nesting: usize,
    /// Per open container: whether it got a value yet.
    has_value: Vec<bool>,
}

impl JacksonPretty {
    fn newline_indent<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.nesting {
            w.write_all(b"  ")?;
        }
        Ok(())
    }
}

impl Formatter for JacksonPretty {
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.has_value.push(false);
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.has_value.pop();
        w.write_all(b" ]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if let Some(h) = self.has_value.last_mut() {
            *h = true;
        }
        w.write_all(if first { b" " } else { b", " })
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.nesting += 1;
        self.has_value.push(false);
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.nesting = self.nesting.saturating_sub(1);
        if self.has_value.pop().unwrap_or(false) {
            self.newline_indent(w)?;
            w.write_all(b"}")
        } else {
            w.write_all(b" }")
        }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if let Some(h) = self.has_value.last_mut() {
            *h = true;
        }
        if !first {
            w.write_all(b",")?;
        }
        self.newline_indent(w)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b" : ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }
}

/// A short description of a serde_json error position, for `Corrupt` reasons.
pub(crate) fn describe(e: &serde_json::Error) -> String {
    if e.is_eof() {
        format!("truncated JSON: {e}")
    } else {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn jackson_layout() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"a":1,"f":[{"id":0,"t":{"type":"ARRAY","element":"INT"}},{"id":1}],"e":[],"o":{},"s":["x","y"]}"#,
        )
        .unwrap();
        let s = String::from_utf8(super::to_jackson_pretty(&v).unwrap()).unwrap();
        assert_eq!(
            s,
            "{\n  \"a\" : 1,\n  \"f\" : [ {\n    \"id\" : 0,\n    \"t\" : {\n      \"type\" : \"ARRAY\",\n      \"element\" : \"INT\"\n    }\n  }, {\n    \"id\" : 1\n  } ],\n  \"e\" : [ ],\n  \"o\" : { },\n  \"s\" : [ \"x\", \"y\" ]\n}"
        );
    }
}
