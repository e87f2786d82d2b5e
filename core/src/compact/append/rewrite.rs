//! Rewriting the rows a compaction task read into new data files: [`CompactRewriter`] and
//! the machines that drive it.
//!
//! Source: the rewriters of Java `BaseAppendFileStoreWrite#compactRewrite` (append) and
//! `DataEvolutionNormalCompactTask#doCompact`.

use super::*;

/// Writes the rows a compaction task read into new data files of one (partition, bucket):
/// the table's writer ([`TableWrite`]) over the latest schema, whose files are then described
/// by [`AppendCompactTask::finish`] or
/// [`DataEvolutionCompactTask::finish`](crate::compact::data_evolution::DataEvolutionCompactTask::finish).
///
/// Driving order: [`CompactRewriter::write`] each batch the task's read emits, `Put` (create
/// new) the files of [`CompactRewriter::take_files`] after each call, then
/// [`CompactRewriter::finish`] and `Put` the last [`CompactRewriter::take_files`].
///
/// Source: the rewriters of Java `BaseAppendFileStoreWrite#compactRewrite` (append) and
/// `DataEvolutionNormalCompactTask#doCompact` (one output file).
#[derive(Debug)]
pub struct CompactRewriter {
    write: TableWrite,
    partition: BinaryRow,
    bucket: i32,
    /// Row-tracking rewrites ([`CompactRewriter::try_new_row_tracking`]).
    tracking: Option<TrackedRows>,
}

/// What a row-tracking rewrite remembers to describe its outputs: the write columns and the
/// `_SEQUENCE_NUMBER` of every row written so far, run-length encoded as (value, rows) in
/// write order (rows of one input file share their value, so the runs stay few).
#[derive(Debug)]
struct TrackedRows {
    write_cols: Vec<String>,
    sequences: std::collections::VecDeque<(i64, u64)>,
}

impl TrackedRows {
    fn push(&mut self, batch: &arrow_array::RecordBatch) -> Result<()> {
        use arrow_array::Array;
        let column = batch
            .column_by_name(SEQUENCE_NUMBER)
            .and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>())
            .ok_or_else(|| {
                Error::invalid("a row-tracking compaction read rows without _SEQUENCE_NUMBER")
            })?;
        if column.null_count() > 0 {
            return Err(Error::invalid(
                "a row-tracking compaction read rows with a null _SEQUENCE_NUMBER",
            ));
        }
        for v in column.values().iter().copied() {
            match self.sequences.back_mut() {
                Some((last, n)) if *last == v => *n += 1,
                _ => self.sequences.push_back((v, 1)),
            }
        }
        Ok(())
    }

    /// The (min, max) `_SEQUENCE_NUMBER` of the next `rows` rows, which it consumes.
    fn take(&mut self, rows: u64, file: &str) -> Result<(i64, i64)> {
        let mut left = rows;
        let (mut min, mut max) = (i64::MAX, i64::MIN);
        while left > 0 {
            let Some((v, n)) = self.sequences.front_mut() else {
                return Err(Error::invalid(format!(
                    "compaction output {file} holds more rows than were written"
                )));
            };
            min = min.min(*v);
            max = max.max(*v);
            let used = left.min(*n);
            *n -= used;
            left -= used;
            if *n == 0 {
                self.sequences.pop_front();
            }
        }
        Ok(if rows == 0 { (0, 0) } else { (min, max) })
    }
}

impl CompactRewriter {
    /// A rewriter for files of `partition` and `bucket` of a table whose latest schema is
    /// `schema`. `single_file`: never roll (data-evolution tasks write exactly one file, as
    /// Java forces with `target-file-size` = 99999 G). `total_buckets`: the bucket count of the
    /// inputs (fixed-bucket tables; the writer refuses a table whose `bucket` changed since).
    ///
    /// # Errors
    /// As [`TableWrite::try_new`] (e.g. `Unsupported` for layouts the writer cannot write).
    pub fn try_new(
        mut schema: TableSchema,
        partition: BinaryRow,
        bucket: i32,
        total_buckets: Option<i32>,
        single_file: bool,
        options: WriteOptions,
    ) -> Result<Self> {
        if single_file {
            let huge = (i64::MAX / 4).to_string();
            schema
                .options
                .insert("target-file-size".into(), huge.clone());
            schema.options.insert("blob.target-file-size".into(), huge);
        }
        let restore = WriteRestore {
            total_buckets,
            ..WriteRestore::default()
        };
        Ok(CompactRewriter {
            write: TableWrite::try_new(schema, restore, options)?.without_blob_references(),
            partition,
            bucket,
            tracking: None,
        })
    }

    /// A rewriter for a row-tracking append table (without data evolution) whose latest
    /// schema is `schema`: its files hold the table's columns followed by `_ROW_ID` and
    /// `_SEQUENCE_NUMBER` (the input batches must carry both, as the read materialises them),
    /// so every row keeps its row id and sequence number. [`CompactRewriter::finish`] gives
    /// each file `write_cols` = those columns, no `first_row_id`, and the smallest and largest
    /// `_SEQUENCE_NUMBER` of its rows as its sequence range.
    ///
    /// Source: Java's append compactors on row-tracking tables
    /// (`write.withWriteType(SpecialFields.rowTypeWithRowTracking(rowType))` before
    /// `BaseAppendFileStoreWrite#compactRewrite`; `RowDataFileSequenceNumberTracker` in
    /// release-2.0.0; `RowDataFileWriter#result` leaves `firstRowId` null).
    ///
    /// # Errors
    /// [`Error::Invalid`] when the table has a column named `_ROW_ID` or `_SEQUENCE_NUMBER`;
    /// else as [`CompactRewriter::try_new`].
    pub fn try_new_row_tracking(
        mut schema: TableSchema,
        partition: BinaryRow,
        bucket: i32,
        total_buckets: Option<i32>,
        options: WriteOptions,
    ) -> Result<Self> {
        for f in row_tracking_fields() {
            if schema.fields.iter().any(|c| c.name == f.name) {
                return Err(Error::invalid(format!(
                    "column {} of a row-tracking table conflicts with the row-tracking column",
                    f.name
                )));
            }
            schema.fields.push(f);
        }
        let write_cols = schema.fields.iter().map(|f| f.name.clone()).collect();
        let mut rewriter = Self::try_new(schema, partition, bucket, total_buckets, false, options)?;
        rewriter.tracking = Some(TrackedRows {
            write_cols,
            sequences: Default::default(),
        });
        Ok(rewriter)
    }

    /// Columns the input batches must have (by name).
    pub fn input_schema(&self) -> arrow_schema::SchemaRef {
        self.write.input_schema()
    }

    /// Write rows read from the task's files.
    ///
    /// # Errors
    /// As [`TableWrite::write`]; a row-tracking rewrite also wants a `_SEQUENCE_NUMBER`
    /// column without nulls ([`Error::Invalid`]).
    pub fn write(&mut self, batch: &arrow_array::RecordBatch) -> Result<()> {
        if let Some(t) = &mut self.tracking {
            t.push(batch)?;
        }
        self.write.write(batch)
    }

    /// Files completed so far, to `Put` (create-new) now.
    pub fn take_files(&mut self) -> Vec<FileToPut> {
        self.write.take_files()
    }

    /// Close the open file and return the written files' metadata in write order.
    ///
    /// # Errors
    /// Encoding errors; [`Error::Invalid`] when rows landed in another partition or bucket
    /// than the task's (rows of a fixed bucket always hash back to it while the bucket count
    /// is unchanged).
    pub fn finish(&mut self) -> Result<Vec<DataFileMeta>> {
        let mut out = Vec::new();
        for m in self.write.prepare_commit()? {
            if m.partition != self.partition || m.bucket != self.bucket {
                return Err(Error::invalid(format!(
                    "compaction of bucket {} rewrote rows into bucket {} of another partition \
                     or bucket",
                    self.bucket, m.bucket
                )));
            }
            out.extend(m.data_increment.new_files);
        }
        if let Some(t) = &mut self.tracking {
            for f in &mut out {
                let rows = u64::try_from(f.row_count).map_err(|_| {
                    Error::invalid(format!(
                        "compaction output {} has row count {}",
                        f.file_name, f.row_count
                    ))
                })?;
                let (min, max) = t.take(rows, &f.file_name)?;
                f.min_sequence_number = min;
                f.max_sequence_number = max;
                f.first_row_id = None;
                f.write_cols = Some(t.write_cols.clone());
            }
        }
        Ok(out)
    }
}

/// The files one compaction rewrite wrote (see [`rewrite_machine`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewriteOutput {
    /// Metadata of the new files, in write order (before [`AppendCompactTask::finish`] or
    /// [`DataEvolutionCompactTask::finish`](crate::compact::data_evolution::DataEvolutionCompactTask::finish)).
    pub files: Vec<DataFileMeta>,
    /// Paths `Put`, relative to the table root (or full external paths, see
    /// [`crate::write::external`]).
    pub paths: Vec<String>,
}

/// A machine running one compaction rewrite: it reads `split` with `ctx` (the read side's
/// [`read_split`] machine, whose rounds become this machine's rounds unchanged), writes the
/// rows through `rewriter` and `Put`s (create-new) each file as it completes, then emits one
/// [`RewriteOutput`].
///
/// Rounds: the read's rounds (footers, column chunks...), interleaved with one round of one
/// `Put` per completed file. On any failure it deletes the files it already `Put` (one round
/// of `Delete`s, failures of which are ignored) and fails with the first error.
pub fn rewrite_machine(
    ctx: Arc<ReadContext>,
    split: DataSplit,
    rewriter: CompactRewriter,
) -> Machine<RewriteOutput> {
    Machine::once("CompactRewrite", move |io: Io<RewriteOutput>| async move {
        rewrite_split(&io, ctx, split, rewriter).await
    })
}

/// [`rewrite_machine`]'s work within an operation that has its own [`Io`]: the same rounds,
/// the same cleanup on failure.
///
/// # Errors
/// As [`rewrite_machine`].
pub async fn rewrite_split<T>(
    io: &Io<T>,
    ctx: Arc<ReadContext>,
    split: DataSplit,
    mut rewriter: CompactRewriter,
) -> Result<RewriteOutput> {
    let mut paths: Vec<String> = Vec::new();
    match rewrite(io, ctx, split, &mut rewriter, &mut paths).await {
        Ok(files) => Ok(RewriteOutput { files, paths }),
        Err(e) => {
            let _ = join_all(paths.iter().map(|p| io.delete(p))).await;
            let open = rewriter.write.open_uploads();
            let _ = join_all(open.iter().map(|p| io.put_abort(p))).await;
            Err(e)
        }
    }
}

async fn rewrite<T>(
    io: &Io<T>,
    ctx: Arc<ReadContext>,
    split: DataSplit,
    rewriter: &mut CompactRewriter,
    paths: &mut Vec<String>,
) -> Result<Vec<DataFileMeta>> {
    let mut read = read_split(ctx, split);
    loop {
        match read.step()? {
            Step::NeedIo(requests) => {
                let answers = join_all(requests.into_iter().map(|r| async move {
                    let answer = io.call(r.op).await;
                    (r.id, answer)
                }))
                .await;
                for (id, answer) in answers {
                    read.provide(id, answer)?;
                }
            }
            Step::Emit(batch) => {
                if batch.num_rows() > 0 {
                    rewriter.write(&batch)?;
                    put_all(io, rewriter.take_files(), paths).await?;
                }
            }
            // The nested read runs with parallelism 1: its work runs inline.
            Step::Work(items) => items.into_iter().for_each(Work::run),
            Step::Wait => {}
            Step::Done => break,
        }
    }
    let files = rewriter.finish()?;
    put_all(io, rewriter.take_files(), paths).await?;
    Ok(files)
}
