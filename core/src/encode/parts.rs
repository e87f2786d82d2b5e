//! The streamed write of one output file while it is written ([`FileParts`]): once the
//! laid-out bytes of a data file, `.blob` file or managed pack reach a part, they go out as
//! [`FilePart`]s, so a large file is never held whole.

use crate::error::Result;
use crate::io::{FileContent, FilePart, FileToPut};

/// The streamed write of one file while it is written (a data file while it is encoded, a
/// `.blob` file or managed pack while its records are added): once its laid-out bytes reach a
/// part, they go out as [`FilePart`]s, and the file is placed (its path fixed) then. A file
/// that never reaches a part stays one whole `Put`, exactly as without streaming.
#[derive(Debug, Default)]
pub(crate) struct FileParts {
    /// Path to put and `_EXTERNAL_PATH` to record, fixed by the first part.
    placed: Option<(String, Option<String>)>,
    /// Parts sent.
    parts: u32,
    /// Bytes sent in them.
    bytes: u64,
}

impl FileParts {
    /// After a write to `encoder`: its laid-out bytes as the next part when they reach
    /// `part_bytes`, placing the file with `place` at the first part.
    ///
    /// # Errors
    /// A failure flushing the encoder.
    pub(crate) fn next_part(
        &mut self,
        encoder: &mut crate::encode::DataFileEncoder,
        part_bytes: usize,
        place: impl FnOnce() -> (String, Option<String>),
    ) -> Result<Option<FileToPut>> {
        if encoder.laid_out_bytes() < part_bytes.max(1) {
            return Ok(None);
        }
        let bytes = encoder.take_laid_out()?;
        Ok(Some(self.push(bytes, place)))
    }

    /// `bytes` (the next bytes of the file) as its next part, placing the file with `place`
    /// at the first part.
    pub(crate) fn push(
        &mut self,
        bytes: Vec<u8>,
        place: impl FnOnce() -> (String, Option<String>),
    ) -> FileToPut {
        let (path, _) = self.placed.get_or_insert_with(place);
        let part = FileToPut::part(path.clone(), self.parts, bytes, false);
        self.parts += 1;
        self.bytes += part.len();
        part
    }

    /// The end of a file whose remaining content is `rest` (whole bytes or a streamed file
    /// with copies): the whole file placed with `place` when no part went out, else the
    /// last part or the streamed rest. Returns it with the `_EXTERNAL_PATH` to record and the
    /// size of the whole file.
    pub(crate) fn finish_content(
        self,
        rest: FileContent,
        place: impl FnOnce() -> (String, Option<String>),
    ) -> (FileToPut, Option<String>, u64) {
        let size = self.bytes + rest.len();
        match self.placed {
            None => {
                let (path, external) = place();
                (
                    FileToPut {
                        path,
                        content: rest,
                    },
                    external,
                    size,
                )
            }
            Some((path, external)) => {
                let content = match rest {
                    FileContent::Bytes(b) => FileContent::Part(FilePart {
                        part: self.parts,
                        bytes: b,
                        last: true,
                    }),
                    FileContent::Streamed(file) => FileContent::StreamedRest {
                        first_part: self.parts,
                        file,
                    },
                    // Not produced by the writers: their parts are taken here.
                    other => other,
                };
                (FileToPut { path, content }, external, size)
            }
        }
    }

    /// The path of the file once a part went out.
    pub(crate) fn path(&self) -> Option<&str> {
        self.placed.as_ref().map(|(p, _)| p.as_str())
    }

    /// Size of the file whose remaining bytes are `tail` (what the encoder's `finish` gave).
    pub(crate) fn file_size(&self, tail: &[u8]) -> u64 {
        self.bytes + tail.len() as u64
    }

    /// The file's end: `tail` as one whole `Put` when no part went out (placed with `place`
    /// now), else as the last part. Returns it with the `_EXTERNAL_PATH` to record.
    pub(crate) fn finish(
        self,
        tail: Vec<u8>,
        place: impl FnOnce() -> (String, Option<String>),
    ) -> (FileToPut, Option<String>) {
        match self.placed {
            None => {
                let (path, external) = place();
                (FileToPut::whole(path, tail), external)
            }
            Some((path, external)) => (FileToPut::part(path, self.parts, tail, true), external),
        }
    }
}
