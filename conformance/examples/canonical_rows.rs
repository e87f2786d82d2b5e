//! Prints the rows of an Arrow IPC stream as canonical JSON lines (`paimon_kernel::canonical`,
//! one object per row, as the tests compare them), e.g. for the rows our reader reads:
//!
//! ```sh
//! paimon-kernel scan TABLE --format arrow | cargo run -p paimon-conformance --example canonical_rows
//! ```
//!
//! `conformance/java-check/validate.py corpus` compares these lines with Java 2.0.0's.

use std::io::{BufWriter, Read, Write};

use arrow_ipc::reader::StreamReader;
use paimon_kernel::canonical;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    for batch in StreamReader::try_new(std::io::Cursor::new(input), None)? {
        for row in canonical::rows(&batch?)? {
            writeln!(out, "{row}")?;
        }
    }
    out.flush()?;
    Ok(())
}
