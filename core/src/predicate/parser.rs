//! Lexer and recursive-descent parser of the `--where` string form (grammar on
//! [`Predicate::parse`](super::Predicate::parse)).

use std::fmt;

use super::coerce::{parse_date, parse_time_nanos, parse_timestamp};
use super::{CmpOp, Leaf, LeafOp, Literal, Predicate};

/// A syntax error in a filter string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based character position of the offending token (length + 1 at the end of input).
    pub position: usize,
    /// What the parser expected there (`"a literal"`, `"')'"`, ...).
    pub expected: String,
    /// What it found (`"end of input"`, `"'AND'"`, `"number 12"`, ...).
    pub found: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at position {}: expected {}, found {}",
            self.position, self.expected, self.found
        )
    }
}

impl std::error::Error for ParseError {}

const KEYWORDS: &[&str] = &[
    "AND",
    "OR",
    "NOT",
    "IS",
    "NULL",
    "IN",
    "BETWEEN",
    "TRUE",
    "FALSE",
    "DATE",
    "TIME",
    "TIMESTAMP",
];

/// Whether `word` is a reserved keyword (and must be quoted to be a column name).
pub(crate) fn is_keyword(word: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A bare word (keyword or column).
    Word(String),
    /// A backtick- or double-quoted column name.
    Quoted(String),
    Str(String),
    Hex(Vec<u8>),
    Num(String),
    Op(CmpOp),
    LParen,
    RParen,
    Comma,
    Minus,
    Plus,
    Eof,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// Byte offset in the input.
    start: usize,
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Word(w) if is_keyword(w) => format!("'{}'", w.to_ascii_uppercase()),
        Tok::Word(w) => format!("identifier {w}"),
        Tok::Quoted(w) => format!("identifier `{w}`"),
        Tok::Str(s) => format!("string '{s}'"),
        Tok::Hex(_) => "binary literal".to_string(),
        Tok::Num(n) => format!("number {n}"),
        Tok::Op(op) => format!("'{}'", op.symbol()),
        Tok::LParen => "'('".to_string(),
        Tok::RParen => "')'".to_string(),
        Tok::Comma => "','".to_string(),
        Tok::Minus => "'-'".to_string(),
        Tok::Plus => "'+'".to_string(),
        Tok::Eof => "end of input".to_string(),
    }
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl Lexer<'_> {
    fn err(&self, at: usize, expected: &str, found: impl Into<String>) -> ParseError {
        ParseError {
            position: char_position(self.text, at),
            expected: expected.to_string(),
            found: found.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.text.get(self.pos..).and_then(|s| s.chars().next())
    }

    fn peek2(&self) -> Option<char> {
        self.text.get(self.pos..).and_then(|s| s.chars().nth(1))
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Reads a quoted run after the opening `quote` (already consumed); a doubled quote is one
    /// quote character.
    fn quoted(&mut self, quote: char, start: usize, what: &str) -> Result<String, ParseError> {
        let mut out = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(self.err(
                        start,
                        &format!("a closing {quote} for the {what} starting here"),
                        "end of input",
                    ));
                }
                Some(c) if c == quote => {
                    if self.peek() == Some(quote) {
                        self.bump();
                        out.push(quote);
                    } else {
                        return Ok(out);
                    }
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let mut n = 0;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
            n += 1;
        }
        n
    }

    fn next(&mut self) -> Result<Token, ParseError> {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
        let start = self.pos;
        let Some(c) = self.peek() else {
            return Ok(Token {
                tok: Tok::Eof,
                start,
            });
        };
        let tok = match c {
            '(' | ')' | ',' | '-' | '+' | '=' => {
                self.bump();
                match c {
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    ',' => Tok::Comma,
                    '-' => Tok::Minus,
                    '+' => Tok::Plus,
                    _ => {
                        if self.peek() == Some('=') {
                            self.bump();
                        }
                        Tok::Op(CmpOp::Eq)
                    }
                }
            }
            '<' => {
                self.bump();
                match self.peek() {
                    Some('=') => {
                        self.bump();
                        Tok::Op(CmpOp::LtEq)
                    }
                    Some('>') => {
                        self.bump();
                        Tok::Op(CmpOp::NotEq)
                    }
                    _ => Tok::Op(CmpOp::Lt),
                }
            }
            '>' => {
                self.bump();
                if self.peek() == Some('=') {
                    self.bump();
                    Tok::Op(CmpOp::GtEq)
                } else {
                    Tok::Op(CmpOp::Gt)
                }
            }
            '!' => {
                self.bump();
                if self.peek() == Some('=') {
                    self.bump();
                    Tok::Op(CmpOp::NotEq)
                } else {
                    return Err(self.err(start, "'!='", "'!'"));
                }
            }
            '\'' => {
                self.bump();
                Tok::Str(self.quoted('\'', start, "string")?)
            }
            '`' | '"' => {
                self.bump();
                let name = self.quoted(c, start, "quoted identifier")?;
                if name.is_empty() {
                    return Err(self.err(start, "a column name", "an empty quoted identifier"));
                }
                Tok::Quoted(name)
            }
            'x' | 'X' if self.peek2() == Some('\'') => {
                self.bump();
                self.bump();
                let hex = self.quoted('\'', start, "binary literal")?;
                match crate::util::unhex(&hex) {
                    Some(b) => Tok::Hex(b),
                    None => {
                        return Err(self.err(
                            start,
                            "an even number of hex digits in X'...'",
                            format!("X'{hex}'"),
                        ));
                    }
                }
            }
            c if c.is_ascii_digit()
                || (c == '.' && self.peek2().is_some_and(|d| d.is_ascii_digit())) =>
            {
                let int_digits = self.digits();
                if self.peek() == Some('.') {
                    self.bump();
                    let frac = self.digits();
                    if int_digits + frac == 0 {
                        return Err(self.err(start, "a number", "'.'"));
                    }
                }
                if matches!(self.peek(), Some('e' | 'E')) {
                    let save = self.pos;
                    self.bump();
                    if matches!(self.peek(), Some('+' | '-')) {
                        self.bump();
                    }
                    if self.digits() == 0 {
                        self.pos = save;
                        return Err(self.err(
                            save,
                            "exponent digits after 'e'",
                            self.text
                                .get(save..)
                                .unwrap_or_default()
                                .chars()
                                .take(8)
                                .collect::<String>(),
                        ));
                    }
                }
                if self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    let at = self.pos;
                    return Err(self.err(
                        at,
                        "an operator or separator after the number",
                        format!("'{}'", self.peek().unwrap_or(' ')),
                    ));
                }
                Tok::Num(
                    self.text
                        .get(start..self.pos)
                        .unwrap_or_default()
                        .to_string(),
                )
            }
            c if c.is_alphabetic() || c == '_' => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
                {
                    self.bump();
                }
                Tok::Word(
                    self.text
                        .get(start..self.pos)
                        .unwrap_or_default()
                        .to_string(),
                )
            }
            other => {
                return Err(self.err(
                    start,
                    "a column, literal, operator or parenthesis",
                    format!("'{other}'"),
                ));
            }
        };
        Ok(Token { tok, start })
    }
}

fn char_position(text: &str, byte: usize) -> usize {
    text.get(..byte).map_or(0, |s| s.chars().count()) + 1
}

/// Parses a filter string. See [`Predicate::parse`](super::Predicate::parse) for the grammar.
pub(crate) fn parse(text: &str) -> Result<Predicate, ParseError> {
    let mut lexer = Lexer { text, pos: 0 };
    let mut tokens = Vec::new();
    loop {
        let t = lexer.next()?;
        let eof = t.tok == Tok::Eof;
        tokens.push(t);
        if eof {
            break;
        }
    }
    let mut p = Parser {
        text,
        tokens,
        i: 0,
        depth: 0,
    };
    let pred = p.or()?;
    let t = p.peek();
    if t.tok != Tok::Eof {
        let what = if t.tok == Tok::RParen {
            "end of input (unbalanced ')')"
        } else {
            "AND, OR or end of input"
        };
        return Err(p.err_here(what));
    }
    Ok(pred)
}

/// Nesting limit (parentheses and NOT) so that a hostile string cannot overflow the stack.
const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    i: usize,
    depth: usize,
}

enum Operand {
    Column(String, usize),
    Literal(Literal),
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        // The token list always ends with Eof and `i` never moves past it.
        &self.tokens[self.i.min(self.tokens.len() - 1)]
    }

    fn advance(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::Eof {
            self.i += 1;
        }
        t
    }

    fn position(&self, t: &Token) -> usize {
        char_position(self.text, t.start)
    }

    fn err_at(&self, t: &Token, expected: &str) -> ParseError {
        ParseError {
            position: self.position(t),
            expected: expected.to_string(),
            found: describe(&t.tok),
        }
    }

    fn err_here(&self, expected: &str) -> ParseError {
        self.err_at(self.peek(), expected)
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Word(w) if w.eq_ignore_ascii_case(kw))
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect_kw(&mut self, kw: &str, expected: &str) -> Result<(), ParseError> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.err_here(expected))
        }
    }

    fn or(&mut self) -> Result<Predicate, ParseError> {
        let first = self.and()?;
        let mut children = vec![first];
        while self.eat_kw("OR") {
            children.push(self.and()?);
        }
        Ok(if children.len() == 1 {
            children.remove(0)
        } else {
            Predicate::Or(children)
        })
    }

    fn and(&mut self) -> Result<Predicate, ParseError> {
        let first = self.not()?;
        let mut children = vec![first];
        while self.eat_kw("AND") {
            children.push(self.not()?);
        }
        Ok(if children.len() == 1 {
            children.remove(0)
        } else {
            Predicate::And(children)
        })
    }

    fn not(&mut self) -> Result<Predicate, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err_here(&format!("at most {MAX_DEPTH} nested NOTs or parentheses")));
        }
        let out = if self.eat_kw("NOT") {
            self.not().map(|p| Predicate::Not(Box::new(p)))
        } else if self.peek().tok == Tok::LParen {
            self.advance();
            let inner = self.or()?;
            if self.peek().tok != Tok::RParen {
                return Err(self.err_here("')' or AND/OR"));
            }
            self.advance();
            Ok(inner)
        } else {
            self.predicate()
        };
        self.depth -= 1;
        out
    }

    fn predicate(&mut self) -> Result<Predicate, ParseError> {
        let start = self.peek().clone();
        if self.is_kw("TRUE") || self.is_kw("FALSE") {
            // A bare boolean constant, unless it is the left side of a comparison.
            let next = self.tokens.get(self.i + 1).map(|t| &t.tok);
            if !matches!(next, Some(Tok::Op(_))) {
                let value = self.is_kw("TRUE");
                self.advance();
                return Ok(if value {
                    Predicate::And(Vec::new())
                } else {
                    Predicate::Or(Vec::new())
                });
            }
        }
        let left = self.operand("a column, literal, NOT or '('")?;
        match left {
            Operand::Column(column, position) => self.after_column(column, position),
            Operand::Literal(lit) => {
                let op_tok = self.peek().clone();
                let Tok::Op(op) = op_tok.tok else {
                    return Err(self.err_here(
                        "a comparison operator (=, <>, <, <=, >, >=) after the literal",
                    ));
                };
                self.advance();
                match self.operand("a column")? {
                    Operand::Column(column, position) => Ok(Predicate::Leaf(Leaf {
                        column,
                        op: LeafOp::Compare(op.flip(), lit),
                        position,
                    })),
                    Operand::Literal(_) => Err(ParseError {
                        position: self.position(&start),
                        expected: "a column on one side of the comparison".to_string(),
                        found: "a comparison of two literals".to_string(),
                    }),
                }
            }
        }
    }

    fn after_column(&mut self, column: String, position: usize) -> Result<Predicate, ParseError> {
        let leaf = |op| {
            Predicate::Leaf(Leaf {
                column: column.clone(),
                op,
                position,
            })
        };
        let t = self.peek().clone();
        match &t.tok {
            Tok::Op(op) => {
                let op = *op;
                self.advance();
                let lit_tok = self.peek().clone();
                match self.operand("a literal after the operator")? {
                    Operand::Literal(lit) => Ok(leaf(LeafOp::Compare(op, lit))),
                    Operand::Column(..) => Err(ParseError {
                        position: self.position(&lit_tok),
                        expected: "a literal (comparing two columns is not supported)".to_string(),
                        found: describe(&lit_tok.tok),
                    }),
                }
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("IS") => {
                self.advance();
                let negated = self.eat_kw("NOT");
                self.expect_kw("NULL", if negated { "NULL" } else { "NULL or NOT NULL" })?;
                Ok(leaf(if negated {
                    LeafOp::IsNotNull
                } else {
                    LeafOp::IsNull
                }))
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("IN") => {
                self.advance();
                Ok(leaf(LeafOp::In(self.list()?)))
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("BETWEEN") => {
                self.advance();
                self.between(column, position, false)
            }
            Tok::Word(w)
                if w.eq_ignore_ascii_case("NOT")
                    && matches!(self.tokens.get(self.i + 1).map(|t| &t.tok), Some(Tok::Word(n)) if n.eq_ignore_ascii_case("BETWEEN")) =>
            {
                self.advance();
                self.advance();
                self.between(column, position, true)
            }
            Tok::Word(w)
                if w.eq_ignore_ascii_case("NOT")
                    && matches!(self.tokens.get(self.i + 1).map(|t| &t.tok), Some(Tok::Word(n)) if n.eq_ignore_ascii_case("IN")) =>
            {
                self.advance();
                self.advance();
                Ok(leaf(LeafOp::NotIn(self.list()?)))
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("AND") || w.eq_ignore_ascii_case("OR") => {
                Ok(leaf(LeafOp::Compare(CmpOp::Eq, Literal::Boolean(true))))
            }
            Tok::RParen | Tok::Eof => Ok(leaf(LeafOp::Compare(CmpOp::Eq, Literal::Boolean(true)))),
            _ => Err(self.err_here(
                "a comparison operator (=, <>, <, <=, >, >=), IS [NOT] NULL, [NOT] IN or [NOT] BETWEEN",
            )),
        }
    }

    /// `column [NOT] BETWEEN low AND high` (after `BETWEEN`): `low <= column AND column <= high`.
    fn between(
        &mut self,
        column: String,
        position: usize,
        negated: bool,
    ) -> Result<Predicate, ParseError> {
        let bound = |p: &mut Self, what: &str| -> Result<Literal, ParseError> {
            let t = p.peek().clone();
            match p.operand(what)? {
                Operand::Literal(l) => Ok(l),
                Operand::Column(..) => Err(p.err_at(&t, what)),
            }
        };
        let low = bound(self, "a literal after BETWEEN")?;
        self.expect_kw("AND", "AND between the BETWEEN bounds")?;
        let high = bound(self, "a literal after BETWEEN ... AND")?;
        let leaf = |op, lit| {
            Predicate::Leaf(Leaf {
                column: column.clone(),
                op: LeafOp::Compare(op, lit),
                position,
            })
        };
        let range = Predicate::And(vec![leaf(CmpOp::GtEq, low), leaf(CmpOp::LtEq, high)]);
        Ok(if negated {
            Predicate::Not(Box::new(range))
        } else {
            range
        })
    }

    fn list(&mut self) -> Result<Vec<Literal>, ParseError> {
        if self.peek().tok != Tok::LParen {
            return Err(self.err_here("'(' after IN"));
        }
        self.advance();
        let mut out = Vec::new();
        loop {
            let t = self.peek().clone();
            match self.operand("a literal in the IN list")? {
                Operand::Literal(l) => out.push(l),
                Operand::Column(..) => {
                    return Err(self.err_at(&t, "a literal in the IN list"));
                }
            }
            match self.peek().tok {
                Tok::Comma => {
                    self.advance();
                }
                Tok::RParen => {
                    self.advance();
                    return Ok(out);
                }
                _ => return Err(self.err_here("',' or ')' in the IN list")),
            }
        }
    }

    fn string_after(&mut self, kw: &str) -> Result<(String, Token), ParseError> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Str(s) => {
                let s = s.clone();
                self.advance();
                Ok((s, t))
            }
            _ => Err(self.err_here(&format!("a quoted string after {kw}"))),
        }
    }

    fn operand(&mut self, expected: &str) -> Result<Operand, ParseError> {
        let t = self.peek().clone();
        let lit = match &t.tok {
            Tok::Quoted(name) => {
                self.advance();
                return Ok(Operand::Column(name.clone(), self.position(&t)));
            }
            Tok::Word(w) => {
                let upper = w.to_ascii_uppercase();
                match upper.as_str() {
                    "NULL" => {
                        self.advance();
                        Literal::Null
                    }
                    "TRUE" | "FALSE" => {
                        self.advance();
                        Literal::Boolean(upper == "TRUE")
                    }
                    "DATE" => {
                        self.advance();
                        let (s, st) = self.string_after("DATE")?;
                        let days = parse_date(&s).map_err(|why| {
                            self.err_at(&st, &format!("a date 'yyyy-mm-dd' ({why})"))
                        })?;
                        Literal::Date(days)
                    }
                    "TIME" => {
                        self.advance();
                        let (s, st) = self.string_after("TIME")?;
                        let nanos = parse_time_nanos(&s).map_err(|why| {
                            self.err_at(&st, &format!("a time 'hh:mm:ss[.fffffffff]' ({why})"))
                        })?;
                        Literal::Time(nanos)
                    }
                    "TIMESTAMP" => {
                        self.advance();
                        let (s, st) = self.string_after("TIMESTAMP")?;
                        let ts = parse_timestamp(&s).map_err(|why| {
                            self.err_at(
                                &st,
                                &format!("a timestamp 'yyyy-mm-dd hh:mm:ss[.fffffffff]' ({why})"),
                            )
                        })?;
                        Literal::Timestamp(ts)
                    }
                    _ if is_keyword(w) => return Err(self.err_here(expected)),
                    _ => {
                        self.advance();
                        return Ok(Operand::Column(w.clone(), self.position(&t)));
                    }
                }
            }
            Tok::Str(s) => {
                self.advance();
                Literal::String(s.clone())
            }
            Tok::Hex(b) => {
                self.advance();
                Literal::Binary(b.clone())
            }
            Tok::Num(n) => {
                self.advance();
                Literal::Number(n.clone())
            }
            Tok::Minus | Tok::Plus => {
                let negative = t.tok == Tok::Minus;
                self.advance();
                let n = self.peek().clone();
                let Tok::Num(digits) = &n.tok else {
                    return Err(self.err_here(&format!(
                        "a number after '{}'",
                        if negative { '-' } else { '+' }
                    )));
                };
                self.advance();
                Literal::Number(if negative {
                    format!("-{digits}")
                } else {
                    digits.clone()
                })
            }
            _ => return Err(self.err_here(expected)),
        };
        Ok(Operand::Literal(lit))
    }
}
