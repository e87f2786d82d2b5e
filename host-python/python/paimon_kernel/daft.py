"""Daft integration: Paimon tables as Daft DataFrames through Daft's Python connector API
(``daft.io.source.DataSource`` / ``daft.io.sink.DataSink``), on Daft's native runner and on
its Ray runner.

Switching from Daft's built-in connector (``daft.read_paimon(pypaimon_table)``) or
pypaimon's (``pypaimon.daft.read_paimon``) is one import::

    from paimon_kernel.daft import read_paimon, write_paimon
    df = read_paimon("/warehouse/db.db/orders")
    write_paimon(df, "/warehouse/db.db/orders_copy")

Reads: one Daft task per split; Daft's column pushdown goes into every split's read, its
filters and limits are applied by Daft on the rows read. Writes: every Daft write task
writes with its own writer and returns commit messages; ``finalize`` commits them once on
the driver (a failure before publishes nothing). Primary-key and fixed-bucket tables are
written as one partition (one writer per bucket, as Java requires).
"""

from __future__ import annotations

import os
import uuid
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional

import pyarrow as pa

import paimon_kernel as pk
from paimon_kernel._plan import splits_for_workers

__all__ = ["read_paimon", "write_paimon", "compact", "PaimonDataSource", "PaimonDataSink"]


def _require_daft():
    try:
        import daft  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover
        raise ImportError("paimon_kernel.daft needs Daft: pip install daft") from e
    return daft


_daft = _require_daft()
from daft.io.sink import DataSink, WriteResult  # noqa: E402
from daft.io.source import DataSource, DataSourceTask  # noqa: E402
from daft.recordbatch import MicroPartition, RecordBatch  # noqa: E402
from daft.schema import Schema  # noqa: E402


#: Rows a read task gathers before handing them to Daft as one record batch.
_BATCH_ROWS = 256 * 1024


def _daft_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type Daft reads for ``t``: ``time32`` (Paimon TIME) as ``time64[us]``; nested
    types element by element."""
    if pa.types.is_time32(t):
        return pa.time64("us")
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = _daft_type(t.value_type)
        return t if inner == t.value_type else pa.list_(pa.field(t.value_field.name, inner, t.value_field.nullable))
    if pa.types.is_struct(t):
        fields = [pa.field(f.name, _daft_type(f.type), f.nullable) for f in t]
        return pa.struct(fields)
    if pa.types.is_map(t):
        return pa.map_(_daft_type(t.key_type), _daft_type(t.item_type))
    return t


def _daft_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, _daft_type(f.type), f.nullable) for f in schema])


class _SplitTask(DataSourceTask):
    """Reads one split (its bytes; the table is opened in the worker)."""

    def __init__(self, uri: str, store_options: Dict[str, str], split: bytes, columns: Optional[List[str]], schema: pa.Schema, limit: Optional[int]):
        self._uri = uri
        self._store_options = store_options
        self._split = split
        self._columns = columns
        self._arrow_schema = schema
        self._limit = limit

    @property
    def schema(self) -> Schema:
        return Schema.from_pyarrow_schema(self._arrow_schema)

    async def read(self) -> AsyncIterator[RecordBatch]:
        table = pk.open_table(self._uri, self._store_options or None)
        reader = table.read_split(pk.Split.from_bytes(self._split), self._columns)
        left = self._limit
        pending: List[pa.RecordBatch] = []
        rows = 0
        for batch in reader:
            if left is not None:
                if left <= 0:
                    break
                batch = batch.slice(0, left)
                left -= batch.num_rows
            if batch.schema != self._arrow_schema:
                batch = batch.cast(self._arrow_schema)
            pending.append(batch)
            rows += batch.num_rows
            # Daft's per-batch cost is fixed: hand it a few large batches, not one per read
            # batch (no copy: Daft keeps the record batches as chunks).
            if rows >= _BATCH_ROWS:
                yield RecordBatch.from_arrow_record_batches(pending, self._arrow_schema)
                pending, rows = [], 0
        if pending:
            yield RecordBatch.from_arrow_record_batches(pending, self._arrow_schema)


class PaimonDataSource(DataSource):
    """A Daft ``DataSource`` over a Paimon scan (one task per split)."""

    def __init__(self, table: pk.Table, snapshot_id: Optional[int] = None, tag: Optional[str] = None, timestamp_millis: Optional[int] = None):
        self._table = table
        self._travel = dict(snapshot_id=snapshot_id, tag=tag, timestamp_millis=timestamp_millis)
        self._arrow_schema = _daft_schema(table.schema)

    @property
    def name(self) -> str:
        return "PaimonDataSource"

    @property
    def schema(self) -> Schema:
        return Schema.from_pyarrow_schema(self._arrow_schema)

    async def get_tasks(self, pushdowns) -> AsyncIterator[DataSourceTask]:
        columns = list(pushdowns.columns) if pushdowns.columns is not None else None
        schema = self._arrow_schema if columns is None else pa.schema([self._arrow_schema.field(c) for c in columns])
        scan = self._table.scan(columns=columns, **self._travel)
        # At least one task per core when the table's files allow it (Daft runs a source's
        # tasks concurrently; a table whose files fit in one 128 MiB split would read on one).
        splits = splits_for_workers(scan, scan.plan(), os.cpu_count() or 1)
        for s in splits:
            yield _SplitTask(self._table.uri, self._table.store_options, s.to_bytes(), columns, schema, pushdowns.limit)


def read_paimon(uri: str, snapshot_id: Optional[int] = None, tag: Optional[str] = None, timestamp_millis: Optional[int] = None, options: Optional[Dict[str, str]] = None):
    """A lazy ``daft.DataFrame`` of the Paimon table at ``uri`` (``options``: object-store
    options, see :func:`paimon_kernel.open_table`)."""
    return PaimonDataSource(pk.open_table(uri, options), snapshot_id, tag, timestamp_millis).read()


class PaimonDataSink(DataSink):
    """A Daft ``DataSink``: tasks write and return commit messages; ``finalize`` commits."""

    def __init__(self, table: pk.Table, mode: str = "append", static_partition: Optional[Dict[str, str]] = None, commit_user: Optional[str] = None):
        if mode not in ("append", "overwrite"):
            raise pk.InvalidInput(f"mode must be 'append' or 'overwrite', got {mode!r}")
        self._uri = table.uri
        self._store_options = table.store_options
        self._mode = mode
        self._static_partition = static_partition
        self._commit_user = commit_user or str(uuid.uuid4())
        self._one_writer = bool(table.primary_keys) or int(table.options.get("bucket", "-1")) > 0

    def name(self) -> str:
        return "PaimonDataSink"

    def schema(self) -> Schema:
        return Schema.from_pyarrow_schema(pa.schema([("operation", pa.string()), ("rows", pa.int64()), ("file_count", pa.int64()), ("snapshot_id", pa.int64())]))

    def write(self, micropartitions: Iterator[MicroPartition]) -> Iterator[WriteResult[List[bytes]]]:
        table = pk.open_table(self._uri, self._store_options or None)
        write = table.new_write(overwrite=self._mode == "overwrite", static_partition=self._static_partition, commit_user=self._commit_user)
        rows = nbytes = 0
        try:
            for mp in micropartitions:
                t = mp.to_arrow()
                if t.num_rows:
                    write.write(t)
                    rows += t.num_rows
                    nbytes += t.nbytes
            messages = write.prepare_commit()
        except BaseException:
            write.abort()
            raise
        yield WriteResult(result=messages, bytes_written=nbytes, rows_written=rows)

    def finalize(self, write_results: List[WriteResult]) -> MicroPartition:
        messages = [m for wr in write_results for m in wr.result]
        table = pk.open_table(self._uri, self._store_options or None)
        writers = sum(1 for wr in write_results if any(not m.is_empty() for m in wr.result))
        if self._one_writer and writers > 1:
            table.abort(messages)
            raise pk.InvalidInput(
                f"{writers} Daft tasks wrote a primary-key or fixed-bucket table: write it as one "
                "partition (write_paimon does)"
            )
        snapshot = None
        if messages:
            try:
                outcome = table.commit(messages, commit_user=self._commit_user)
            except pk.CommitConflict:
                table.abort(messages)
                raise
            ids = outcome.get("snapshot_ids") or []
            snapshot = ids[-1] if ids else None
        return MicroPartition.from_pydict(
            {
                "operation": pa.array(["OVERWRITE" if self._mode == "overwrite" else "ADD"], pa.string()),
                "rows": pa.array([sum(m.row_count for m in messages)], pa.int64()),
                "file_count": pa.array([sum(len(m.new_files) for m in messages)], pa.int64()),
                "snapshot_id": pa.array([snapshot], pa.int64()),
            }
        )


def write_paimon(df, uri: str, mode: str = "append", static_partition: Optional[Dict[str, str]] = None, options: Optional[Dict[str, str]] = None, commit_user: Optional[str] = None):
    """Write a ``daft.DataFrame`` to the Paimon table at ``uri`` in one commit; returns
    Daft's summary DataFrame (operation, rows, file_count, snapshot_id)."""
    table = pk.open_table(uri, options)
    sink = PaimonDataSink(table, mode, static_partition, commit_user)
    if sink._one_writer:
        df = _one_partition(df)
    return df.write_sink(sink)


def _one_partition(df, n: int = 1):
    """``df.into_partitions(n)``: a no-op on the native runner (one writer already), silenced."""
    import warnings  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return df.into_partitions(n)


def compact(uri: str, full: bool = False, partitions: Optional[Dict[str, str]] = None, options: Optional[Dict[str, str]] = None, commit_user: Optional[str] = None) -> Dict[str, Any]:
    """Compact the table at ``uri`` with Daft: one Daft row per compaction task (its bytes),
    each run by a Daft UDF (Daft's native or Ray runner), one commit of every result on the
    driver. Returns ``{"tasks": n, "commit": outcome}``."""
    table = pk.open_table(uri, options)
    tasks = table.plan_compaction(full=full, partitions=partitions)
    if not tasks:
        return {"tasks": 0, "commit": None}
    store = table.store_options

    @_daft.func(return_dtype=_daft.DataType.list(_daft.DataType.binary()))
    def run(task: bytes) -> List[bytes]:
        t = pk.open_table(uri, store or None)
        return [m._envelope() for m in t.run_compaction_task(pk.CompactTask.from_bytes(task))]

    df = _one_partition(_daft.from_pydict({"task": [t.to_bytes() for t in tasks]}), len(tasks))
    out = df.select(run(df["task"]).alias("messages")).to_pydict()["messages"]
    messages = [pk.CommitMessage._from_envelope(b) for ms in out for b in ms]
    try:
        outcome = table.commit(messages, commit_user=commit_user)
    except pk.CommitConflict:
        table.abort(messages)
        raise
    return {"tasks": len(tasks), "commit": outcome}
