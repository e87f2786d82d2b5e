//! Flushing the writers of a [`TableWrite`]: closing append files, and a primary-key
//! bucket's write buffer sorted, merged and written as level-0 files (data files, and
//! changelog files with `changelog-producer = input`) a chunk at a time, rolling at
//! `target-file-size`.
//!
//! Source: Java `org.apache.paimon.mergetree.MergeTreeWriter#flushWriteBuffer`,
//! `org.apache.paimon.io.RollingFileWriterImpl`.

use super::*;

/// A flush of the write buffers in progress: the buckets still to flush, and the one being
/// flushed.
pub(super) struct Flush {
    pub(super) keys: std::collections::VecDeque<(Vec<u8>, i32)>,
    pub(super) bucket: Option<BucketFlush>,
}

impl std::fmt::Debug for Flush {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flush")
            .field("buckets_left", &self.keys.len())
            .field(
                "bucket",
                &self
                    .bucket
                    .as_ref()
                    .map(|b| (&b.key, b.next, b.chunks.len())),
            )
            .finish()
    }
}

/// The flush of one primary-key bucket's buffer in progress: its sorted rows, their chunks
/// and the next one, and the open level-0 data and changelog files.
pub(super) struct BucketFlush {
    pub(super) key: (Vec<u8>, i32),
    pub(super) sorted: SortedBuffer,
    pub(super) chunks: Vec<(usize, usize)>,
    pub(super) next: usize,
    pub(super) data: RollingKv,
    pub(super) log: Option<RollingKv>,
}

impl TableWrite {
    /// Flush everything now: a flush in progress, then every buffer and open file.
    pub(super) fn flush_all(&mut self) -> Result<()> {
        self.finish_flush()?;
        self.start_flush();
        self.finish_flush()
    }

    /// Start a flush of every bucket writer (no work done yet).
    pub(super) fn start_flush(&mut self) {
        if self.flush.is_some() {
            return;
        }
        self.flush = Some(Flush {
            keys: self.writers.keys().cloned().collect(),
            bucket: None,
        });
        self.buffered_bytes = 0;
    }

    /// Drive the flush in progress, if any, to its end.
    pub(super) fn finish_flush(&mut self) -> Result<()> {
        while self.flush.is_some() {
            self.continue_flush()?;
        }
        Ok(())
    }

    /// Close the open file of append bucket `key`, if any.
    pub(super) fn close_append(&mut self, key: &(Vec<u8>, i32)) -> Result<()> {
        let schema_id = self.schema.id;
        let time_millis = self.time_millis;
        if let Some(w) = self.writers.get_mut(key) {
            // The rolling writer ends here: its record count restarts.
            w.append_records = 0;
        }
        if let Some(w) = self.writers.get_mut(key)
            && w.open.is_some()
        {
            let f = close_append_file(w, self.blob.as_ref(), schema_id, time_millis)?;
            self.done.extend(f);
        }
        Ok(())
    }

    /// Start the flush of a bucket's buffer: sort it by key and sequence; the steps
    /// ([`Self::flush_kv_step`]) merge each key's records with the merge engine and write the
    /// result as level-0 files rolling at `target-file-size`. Postpone-bucket files (not
    /// sorted) are written here at once. `None` when nothing is left to do.
    ///
    /// The buffer is never copied whole: its batches (each sorted as it was buffered)
    /// merge into (batch, row) positions, and the output is gathered, merged and encoded in
    /// chunks of about [`FLUSH_CHUNK_ROWS`] input rows, so a flush holds the buffer, and for
    /// the bucket it flushes: the positions (16 bytes per row), while they are made the sort
    /// keys and merge entries (about 60 bytes per row, plus the keys' sort bytes when they
    /// are longer than 16 bytes or of variable length), one chunk, and the open files'
    /// encoders.
    pub(super) fn start_kv_flush(&mut self, key: &(Vec<u8>, i32)) -> Result<Option<BucketFlush>> {
        let Some(kv) = self.kv.clone() else {
            return Ok(None);
        };
        let Some(w) = self.writers.get_mut(key) else {
            return Ok(None);
        };
        if w.buffer.is_empty() && w.sorted.is_empty() {
            return Ok(None);
        }
        let batches = std::mem::take(&mut w.buffer);
        let sorted = std::mem::take(&mut w.sorted);
        if let Some(p) = &self.postpone {
            let spec = KvFileSpec {
                format: p.format.clone(),
                compression: p.options.file_compression().to_owned(),
            };
            let mut rolling = RollingKv::new(spec, false, p.options.clone());
            for batch in &kv.postpone_records(batches)? {
                self.write_kv_chunk(key, &mut rolling, batch)?;
            }
            self.close_kv_file(key, &mut rolling)?;
            return Ok(None);
        }
        let sorted = kv.sort_buffer(sorted)?;
        let data_spec = KvFileSpec {
            format: self.format.clone(),
            compression: self.options.file_compression().to_owned(),
        };
        let data = RollingKv::new(data_spec, false, self.options.clone());
        let log = match kv.changelog_input {
            true => Some(RollingKv::new(
                KvFileSpec::changelog(&self.options)?,
                true,
                self.options.clone(),
            )),
            false => None,
        };
        let chunks = sorted.chunks(FLUSH_CHUNK_ROWS);
        Ok(Some(BucketFlush {
            key: key.clone(),
            sorted,
            chunks,
            next: 0,
            data,
            log,
        }))
    }

    /// Write the next chunk of a bucket's flush; `false` when no chunk was left.
    pub(super) fn flush_kv_step(&mut self, b: &mut BucketFlush) -> Result<bool> {
        let Some(kv) = self.kv.clone() else {
            return Ok(false);
        };
        let Some(&(first, last)) = b.chunks.get(b.next) else {
            return Ok(false);
        };
        b.next += 1;
        // Java opens the changelog file first (it sees the first record before the merge
        // emits anything), so a changelog file takes the lower counter value.
        let rows = match &mut b.log {
            Some(log) => {
                let (s, e) = (b.sorted.groups[first].0, b.sorted.groups[last - 1].1);
                let rows = b.sorted.gather(&kv.file_schema, &b.sorted.order[s..e])?;
                self.write_kv_chunk(&b.key, log, &rows)?;
                Some(rows)
            }
            None => None,
        };
        let merged = kv.merge_chunk(&b.sorted, first..last, rows.as_ref())?;
        self.write_kv_chunk(&b.key, &mut b.data, &merged)?;
        Ok(true)
    }

    /// Close a bucket flush's open files (the changelog file first).
    pub(super) fn finish_kv_flush(&mut self, b: BucketFlush) -> Result<()> {
        let BucketFlush {
            key,
            sorted,
            mut data,
            mut log,
            ..
        } = b;
        drop(sorted);
        if let Some(log) = &mut log {
            self.close_kv_file(&key, log)?;
        }
        self.close_kv_file(&key, &mut data)
    }

    /// Write a sorted chunk of bucket `key` to `rolling`'s open level-0 file (a data or a
    /// changelog file), opening one first when none is open, and
    /// closing it when, at a check every [`ROLL_CHECK_RECORDS`] records, the encoder's
    /// estimate has reached `target-file-size`.
    pub(super) fn write_kv_chunk(
        &mut self,
        key: &(Vec<u8>, i32),
        rolling: &mut RollingKv,
        batch: &RecordBatch,
    ) -> Result<()> {
        // Java checks the size every 1,000 records of the rolling writer: cut the chunk
        // there, unless even twice the chunk's in-memory size cannot bring the open file to
        // the target (then no check inside the chunk can roll, and one write is cheaper).
        let open_size = rolling
            .open
            .as_ref()
            .map_or(0, |f| f.estimated_size_bytes());
        let bound = 2 * batch.get_array_memory_size() as u64 + (64 << 10);
        if open_size.saturating_add(bound) < self.target_file_size {
            rolling.records += batch.num_rows() as u64;
            return self.write_kv_piece(key, rolling, batch, false);
        }
        let mut start = 0;
        while start < batch.num_rows() {
            let to_check = ROLL_CHECK_RECORDS - rolling.records % ROLL_CHECK_RECORDS;
            let len = (batch.num_rows() - start).min(to_check as usize);
            rolling.records += len as u64;
            let check = rolling.records.is_multiple_of(ROLL_CHECK_RECORDS);
            self.write_kv_piece(key, rolling, &batch.slice(start, len), check)?;
            start += len;
        }
        Ok(())
    }

    /// [`Self::write_kv_chunk`] of one piece; with `check`, the file is closed once the
    /// encoder's estimate reaches `target-file-size`.
    pub(super) fn write_kv_piece(
        &mut self,
        key: &(Vec<u8>, i32),
        rolling: &mut RollingKv,
        batch: &RecordBatch,
        check: bool,
    ) -> Result<()> {
        let changelog = rolling.changelog;
        let Some(kv) = &self.kv else {
            return Ok(());
        };
        let Some(w) = self.writers.get_mut(key) else {
            return Ok(());
        };
        let file = match &mut rolling.open {
            Some(f) => f,
            None => {
                let name = if changelog {
                    w.next_changelog_name(
                        &self.options,
                        &rolling.spec,
                        &self.format,
                        &mut self.names,
                    )
                } else {
                    w.next_file_name()
                };
                let managed = match (&self.managed, changelog) {
                    (Some(m), false) => Some(m.file_positions(kv.key.len())),
                    _ => None,
                };
                rolling.open.insert(KvFileBuilder::try_new(
                    name,
                    &kv.file_fields,
                    &kv.plain_key_fields,
                    &rolling.spec,
                    &rolling.options,
                    0,
                    changelog,
                    managed,
                )?)
            }
        };
        file.write(batch)?;
        let name = file.name.clone();
        let managed = file.has_refs();
        let part = file.next_part(self.part_bytes, || {
            if managed {
                // A file with a sidecar stays next to it, in the bucket directory.
                (format!("{}/{name}", w.bucket_dir), None)
            } else {
                w.placer.place(&name)
            }
        })?;
        self.done.extend(part);
        if check && file.estimated_size_bytes() >= self.target_file_size {
            self.close_kv_file(key, rolling)?;
        }
        Ok(())
    }

    /// Finish `rolling`'s open level-0 file of bucket `key`, if any: its bytes (and managed
    /// BLOB tables' sidecar) to put, its metadata in the bucket's new files or (changelog
    /// files) changelog files.
    pub(super) fn close_kv_file(
        &mut self,
        key: &(Vec<u8>, i32),
        rolling: &mut RollingKv,
    ) -> Result<()> {
        let changelog = rolling.changelog;
        let Some(file) = rolling.open.take() else {
            return Ok(());
        };
        let Some(w) = self.writers.get_mut(key) else {
            return Ok(());
        };
        let FinishedKvFile {
            mut meta,
            tail,
            refs,
            parts,
        } = file.finish(0, FileSource::Append, self.schema.id, self.time_millis)?;
        if let Some(refs) = refs {
            let (sidecar, name) = refs.finish(&w.bucket_dir, &meta.file_name)?;
            meta.extra_files.push(name);
            let (put, _) = parts.finish(tail, || {
                (format!("{}/{}", w.bucket_dir, meta.file_name), None)
            });
            self.done.push(put);
            self.done.push(sidecar);
        } else {
            let (put, external) = parts.finish(tail, || w.placer.place(&meta.file_name));
            meta.external_path = external;
            self.done.push(put);
        }
        if changelog {
            w.changelog_files.push(meta);
        } else {
            w.new_files.push(meta);
        }
        Ok(())
    }
}

/// The level-0 files of one kind (data or changelog) a flush writes: their format and
/// compression, the options their encoder and statistics take, the open one, and the records
/// written so far (Java `RollingFileWriterImpl#recordCount`, never reset on a roll).
pub(super) struct RollingKv {
    pub(super) spec: KvFileSpec,
    pub(super) changelog: bool,
    pub(super) options: CoreOptions,
    pub(super) open: Option<KvFileBuilder>,
    pub(super) records: u64,
}

impl RollingKv {
    pub(super) fn new(spec: KvFileSpec, changelog: bool, options: CoreOptions) -> Self {
        RollingKv {
            spec,
            changelog,
            options,
            open: None,
            records: 0,
        }
    }
}

/// A rolling writer compares its open file's size with `target-file-size` every this many
/// records (Java `RollingFileWriter.CHECK_ROLLING_RECORD_CNT`).
pub(super) const ROLL_CHECK_RECORDS: u64 = 1_000;
