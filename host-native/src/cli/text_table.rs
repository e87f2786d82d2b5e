//! A small aligned-table printer for the CLI's human output.

/// Rows of text under a header, printed with aligned columns (numbers right-aligned).
#[derive(Debug, Default)]
pub(crate) struct TextTable {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    pub(crate) fn new<I, S>(headers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        TextTable {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn push<I, S>(&mut self, row: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rows.push(row.into_iter().map(Into::into).collect());
    }

    pub(crate) fn render(&self) -> String {
        let ncols = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.headers.len()])
            .max()
            .unwrap_or(0);
        let cell = |row: &[String], i: usize| row.get(i).map_or("", String::as_str).to_string();
        let mut widths = vec![0usize; ncols];
        let mut numeric = vec![true; ncols];
        for (i, w) in widths.iter_mut().enumerate() {
            *w = cell(&self.headers, i).chars().count();
        }
        for row in &self.rows {
            for i in 0..ncols {
                let c = cell(row, i);
                widths[i] = widths[i].max(c.chars().count());
                if !c.is_empty() && c.parse::<f64>().is_err() {
                    numeric[i] = false;
                }
            }
        }
        let line = |row: &[String], header: bool| {
            let mut s = String::new();
            for i in 0..ncols {
                let c = cell(row, i);
                let pad = widths[i] - c.chars().count();
                if i > 0 {
                    s.push_str("  ");
                }
                if numeric[i] && !header {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(&c);
                } else {
                    s.push_str(&c);
                    if i + 1 < ncols {
                        s.push_str(&" ".repeat(pad));
                    }
                }
            }
            s.trim_end().to_string()
        };
        let mut out = String::new();
        out.push_str(&line(&self.headers, true));
        out.push('\n');
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&line(&rule, true));
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row, false));
            out.push('\n');
        }
        out
    }
}

/// Print `key: value` lines with aligned values.
pub(crate) fn render_pairs(pairs: &[(&str, String)]) -> String {
    let width = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    pairs
        .iter()
        .map(|(k, v)| format!("{k:<width$}  {v}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_numbers_go_right() {
        let mut t = TextTable::new(["id", "kind"]);
        t.push(["1", "APPEND"]);
        t.push(["12", "COMPACT"]);
        assert_eq!(
            t.render(),
            "id  kind\n--  -------\n 1  APPEND\n12  COMPACT\n"
        );
    }
}
