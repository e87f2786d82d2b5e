"""paimon_kernel: Apache Paimon tables from Python, over the Rust paimon-kernel.

Read, write, commit, compact and maintain Paimon tables on local disk or object stores
(``s3://``, ``gs://``, ``az://``). Arrow crosses the boundary through the Arrow C
interfaces (no copies); the GIL is released while the kernel works.

    >>> import paimon_kernel as pk
    >>> t = pk.open_table("/warehouse/db.db/orders")           # doctest: +SKIP
    >>> t.scan(columns=["id"], filter="id > 10").to_arrow()     # doctest: +SKIP

Scale-out: ``paimon_kernel.ray`` (``read_paimon``, ``write_paimon``, ``compact``) and
``paimon_kernel.daft`` (``read_paimon``, ``write_paimon``, ``compact``).

SQL: ``paimon_kernel.sql(query, tables={...}, warehouse=...)`` (DataFusion), and a ``Table``
or ``Warehouse`` registers with datafusion-python's ``SessionContext``.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Union

import pyarrow as pa

from . import _native
from ._native import (
    CommitConflict,
    CommitMessage,
    CompactTask,
    CorruptFile,
    InvalidInput,
    IoError,
    NotFound,
    PaimonError,
    Split,
    Unsupported,
    Warehouse,
)

__version__ = _native.__version__

__all__ = [
    "open_table",
    "create_table",
    "Table",
    "Scan",
    "TableWrite",
    "Split",
    "CommitMessage",
    "CompactTask",
    "PaimonError",
    "InvalidInput",
    "Unsupported",
    "CommitConflict",
    "CorruptFile",
    "NotFound",
    "IoError",
    "Warehouse",
    "sql",
]


def _split_from_bytes(data: bytes) -> Split:
    return Split.from_bytes(data)


def _message_from_envelope(data: bytes) -> CommitMessage:
    return CommitMessage._from_envelope(data)


def _task_from_bytes(data: bytes) -> CompactTask:
    return CompactTask.from_bytes(data)


def _to_arrow_input(data: Any) -> Any:
    """Arrow data the kernel can import: objects with ``__arrow_c_stream__`` /
    ``__arrow_c_array__`` pass through; a pandas DataFrame goes through pyarrow; a list of
    record batches or tables becomes one table."""
    if hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__"):
        return data
    try:
        import pandas as pd  # noqa: PLC0415

        if isinstance(data, pd.DataFrame):
            return pa.Table.from_pandas(data, preserve_index=False)
    except ImportError:
        pass
    if isinstance(data, (list, tuple)):
        parts = [pa.table(d) if isinstance(d, dict) else d for d in data]
        if not parts:
            raise InvalidInput("no data: an empty list")
        tables = [
            pa.Table.from_batches([p]) if isinstance(p, pa.RecordBatch) else p for p in parts
        ]
        return pa.concat_tables(tables)
    if isinstance(data, dict):
        return pa.table(data)
    raise InvalidInput(
        "expected Arrow data (pyarrow Table/RecordBatch/RecordBatchReader, polars or DuckDB "
        f"results, a pandas DataFrame), got {type(data).__name__}"
    )


def open_table(uri: str, options: Optional[Dict[str, str]] = None) -> "Table":
    """Open the Paimon table at ``uri``: a local path, ``file://``, ``s3://``, ``gs://``,
    ``az://`` or ``http(s)://`` URL (as the CLI).

    ``options`` are object-store settings over the environment's (object_store's keys, e.g.
    ``{"aws_endpoint": "http://127.0.0.1:9000", "aws_region": "us-east-1",
    "aws_allow_http": "true"}``); credentials come from the environment (``AWS_*``) unless
    given here. Raises ``NotFound`` when there is no table, ``InvalidInput`` for a bad
    location or option."""
    return Table(_native.open_table(uri, options))


def create_table(uri: str, schema: Union[str, Dict[str, Any]], options: Optional[Dict[str, str]] = None) -> "Table":
    """Create a table at ``uri`` from Paimon's schema JSON (a string or a dict:
    ``{"fields": [{"name": "id", "type": "BIGINT NOT NULL"}], "primaryKeys": ["id"],
    "partitionKeys": [], "options": {"bucket": "4"}}``) and open it. Raises ``InvalidInput``
    for a bad schema or when a table exists there."""
    import json  # noqa: PLC0415

    text = schema if isinstance(schema, str) else json.dumps(schema)
    return Table(_native.create_table(uri, text, options))


def _travel(snapshot_id, tag, timestamp_millis):
    given = [(k, v) for k, v in (("snapshot", snapshot_id), ("tag", tag), ("timestamp", timestamp_millis)) if v is not None]
    if len(given) > 1:
        raise InvalidInput("give at most one of snapshot_id, tag, timestamp_millis")
    if not given:
        return None, None
    return given[0][0], str(given[0][1])


class Table:
    """A Paimon table. Open with :func:`open_table`. Cheap; nothing is cached: every call
    reads the table's current metadata.

    Source: Java ``org.apache.paimon.table.FileStoreTable``."""

    __slots__ = ("_native",)

    def __init__(self, native: "_native.Table"):
        self._native = native

    def __reduce__(self):
        return (open_table, (self._native.uri, self._native.store_options or None))

    def __repr__(self) -> str:
        return repr(self._native)

    # -- metadata --------------------------------------------------------------------------
    @property
    def uri(self) -> str:
        """The location as given to :func:`open_table`."""
        return self._native.uri

    @property
    def store_options(self) -> Dict[str, str]:
        """The object-store options given to :func:`open_table`."""
        return self._native.store_options

    @property
    def schema(self) -> pa.Schema:
        """The table's columns (latest schema) as a ``pyarrow.Schema``."""
        return self._native.schema

    @property
    def primary_keys(self) -> List[str]:
        """Primary key columns (empty for append tables)."""
        return self._native.primary_keys

    @property
    def partition_keys(self) -> List[str]:
        """Partition key columns."""
        return self._native.partition_keys

    @property
    def options(self) -> Dict[str, str]:
        """Table options of the latest schema."""
        return self._native.options

    @property
    def branch(self) -> str:
        """The branch read (``main`` for the main branch)."""
        return self._native.branch

    def schema_json(self) -> str:
        """The latest schema in Paimon's JSON form."""
        return self._native.schema_json()

    def snapshots(self) -> List[Dict[str, Any]]:
        """Every snapshot still present (Paimon's snapshot JSON as dicts), by id."""
        return self._native.snapshots()

    def latest_snapshot_id(self) -> Optional[int]:
        """The latest snapshot id, ``None`` for a table without snapshots."""
        return self._native.latest_snapshot_id()

    def tags(self) -> List[Dict[str, Any]]:
        """Every tag (name, snapshot id, creation time, retention) as dicts."""
        return self._native.tags()

    def files(self, snapshot_id: Optional[int] = None) -> List[Dict[str, Any]]:
        """``$files`` rows (one dict per live data file) of the latest snapshot or
        ``snapshot_id``'s."""
        return self._native.files(snapshot_id)

    def with_branch(self, name: str) -> "Table":
        """The same table on branch ``name``."""
        return Table(self._native.with_branch(name))

    # -- reads -----------------------------------------------------------------------------
    def scan(
        self,
        columns: Optional[List[str]] = None,
        filter: Any = None,
        snapshot_id: Optional[int] = None,
        tag: Optional[str] = None,
        timestamp_millis: Optional[int] = None,
        branch: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> "Scan":
        """A scan of the latest snapshot (or ``snapshot_id``, ``tag``, ``timestamp_millis``;
        of ``branch``). ``filter`` is the CLI's ``--where`` text (``"k > 2 AND name IS NOT
        NULL"``: pushed down to partitions, files and rows) or a ``pyarrow.compute``
        expression (applied to the rows read). Nothing is read until a ``to_*`` or ``plan``
        call."""
        table = self.with_branch(branch) if branch else self
        return Scan(table, columns, filter, _travel(snapshot_id, tag, timestamp_millis), limit)

    def read_split(self, split: Split, columns: Optional[List[str]] = None, filter: Optional[str] = None) -> pa.RecordBatchReader:
        """Read one split (from :meth:`Scan.plan`, possibly planned in another process):
        a streaming ``pyarrow.RecordBatchReader``. ``filter`` is text (see :meth:`scan`)."""
        if filter is not None and not isinstance(filter, str):
            raise InvalidInput("read_split takes a text filter")
        return self._native.read_split(split, columns, filter)

    def split_to_java_bytes(self, split: Split) -> bytes:
        """Java ``DataSplit#serialize`` bytes of ``split`` (version 8: what Java Paimon 1.4
        and 2.0 read; paths absolute under the table root, as Java writes them)."""
        return self._native.split_to_java_bytes(split)

    def split_from_java_bytes(self, data: bytes) -> Split:
        """A split from Java ``DataSplit#serialize`` bytes (a Java planner's), read with
        the table's latest schema as Java's ``TableRead`` does. Raises ``CorruptFile`` for
        malformed bytes, ``Unsupported`` for other versions or streaming splits."""
        return self._native.split_from_java_bytes(data)

    def to_arrow(self, **scan_args) -> pa.Table:
        """``self.scan(**scan_args).to_arrow()``."""
        return self.scan(**scan_args).to_arrow()

    def to_pandas(self, **scan_args):
        """``self.scan(**scan_args).to_pandas()``."""
        return self.scan(**scan_args).to_pandas()

    # -- writes ----------------------------------------------------------------------------
    def new_write(self, overwrite: bool = False, static_partition: Optional[Dict[str, str]] = None, commit_user: Optional[str] = None) -> "TableWrite":
        """A writer. With ``overwrite`` (or a ``static_partition`` such as ``{"dt":
        "2024-01-01"}``), committing its messages replaces that partition (or, without one,
        the partitions written: ``dynamic-partition-overwrite``). ``commit_user`` goes into
        the file names of postpone-bucket tables (pass the one you commit with)."""
        return TableWrite(self._native.new_write(overwrite, static_partition, commit_user))

    def commit(self, messages: Iterable[CommitMessage], commit_identifier: Optional[int] = None, commit_user: Optional[str] = None) -> Dict[str, Any]:
        """Commit messages from any number of writers (threads, processes, machines) as one
        commit. With ``commit_identifier`` (and a fixed ``commit_user``) the same commit is
        applied at most once: committing it again is a no-op (``already_committed``).
        Overwrite messages replace their partitions. Returns the outcome (``snapshot_ids``,
        ``already_committed``, ``attempts``). Raises ``CommitConflict`` when the table
        changed in a way the commit cannot go over (nothing is published)."""
        return self._native.commit(list(messages), commit_identifier, commit_user)

    def abort(self, messages: Iterable[CommitMessage]) -> None:
        """Delete the files the messages wrote (they will not be committed)."""
        self._native.abort(list(messages))

    def write_arrow(self, data: Any, overwrite: bool = False, static_partition: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
        """Write ``data`` (Arrow, pandas, ...) and commit it: the commit outcome. On any
        failure the files written are deleted and nothing is visible."""
        write = self.new_write(overwrite=overwrite, static_partition=static_partition)
        try:
            write.write(data)
            messages = write.prepare_commit()
        except BaseException:
            write.abort()
            raise
        try:
            return self.commit(messages)
        except CommitConflict:
            self.abort(messages)
            raise

    write_pandas = write_arrow

    def delete(self, filter: str, commit_user: Optional[str] = None) -> int:
        """Delete the rows matching ``filter`` (text) in one commit (primary-key tables; append
        tables with deletion vectors): the number of rows deleted."""
        return self._native.delete(filter, commit_user)

    def update(self, data: Any, commit_user: Optional[str] = None) -> int:
        """Set columns of existing rows of a data-evolution table by ``_ROW_ID``: ``data`` has
        ``_ROW_ID`` and the columns to set. Returns the rows updated."""
        return self._native.update(_to_arrow_input(data), commit_user)

    def buckets_of(self, data: Any) -> Optional[List[int]]:
        """The bucket of every row of ``data`` (fixed-bucket tables, as Java's
        ``FixedBucketRowKeyExtractor``); ``None`` for other tables."""
        return self._native.buckets_of(_to_arrow_input(data))

    # -- compaction and maintenance --------------------------------------------------------
    def plan_compaction(self, full: bool = False, partitions: Optional[Dict[str, str]] = None, bucket: Optional[int] = None) -> List[CompactTask]:
        """Plan the compaction as picklable tasks (run each with
        :meth:`run_compaction_task`, anywhere; commit all messages once with
        :meth:`commit`). ``partitions``: only the partition matching these values."""
        return self._native.plan_compaction(full, partitions, bucket)

    def run_compaction_task(self, task: CompactTask) -> List[CommitMessage]:
        """Run one compaction task: its commit messages (nothing is committed)."""
        return self._native.run_compaction_task(task)

    def compact(self, full: bool = False, partitions: Optional[Dict[str, str]] = None, bucket: Optional[int] = None, commit_user: Optional[str] = None) -> Dict[str, Any]:
        """Compact in this process: plan, run, one ``COMPACT`` commit. Returns the report."""
        return self._native.compact(full, partitions, bucket, commit_user)

    def expire_snapshots(self, retain_max: Optional[int] = None, retain_min: Optional[int] = None, older_than_millis: Optional[int] = None, max_deletes: Optional[int] = None) -> Dict[str, Any]:
        """Expire snapshots per the table's options, overridden by the arguments."""
        return self._native.expire_snapshots(retain_max, retain_min, older_than_millis, max_deletes)

    def remove_orphan_files(self, older_than: Optional[Any] = None, dry_run: bool = False) -> Dict[str, Any]:
        """Delete files nothing reaches (no snapshot, tag, branch) older than ``older_than``
        (milliseconds, or a ``datetime.timedelta``; default one day)."""
        import datetime  # noqa: PLC0415

        if isinstance(older_than, datetime.timedelta):
            older_than = int(older_than.total_seconds() * 1000)
        return self._native.remove_orphan_files(older_than, dry_run)

    def create_tag(self, name: str, snapshot_id: Optional[int] = None, time_retained_millis: Optional[int] = None) -> Dict[str, Any]:
        """Create tag ``name`` on ``snapshot_id`` (default: the latest)."""
        return self._native.create_tag(name, snapshot_id, time_retained_millis)

    def delete_tag(self, name: str) -> Dict[str, Any]:
        """Delete tag ``name`` (and the files only it kept)."""
        return self._native.delete_tag(name)

    def rollback_to(self, target: Union[int, str]) -> Dict[str, Any]:
        """Roll back to snapshot ``target`` (int) or tag ``target`` (str)."""
        return self._native.rollback_to(target)

    def __datafusion_table_provider__(self, session: Any) -> Any:
        """The table (latest snapshot of its branch) as a datafusion-python 55 table provider
        capsule, so that ``datafusion.SessionContext().register_table("t", table)`` works:
        projection, filters and ``LIMIT`` are pushed into the kernel's scan, and the kernel
        reads the splits (merge-on-read, deletion vectors, data evolution)."""
        return self._native.__datafusion_table_provider__(session)


def sql(
    query: str,
    tables: Optional[Dict[str, Union[str, "Table"]]] = None,
    warehouse: Optional[Union[str, Warehouse]] = None,
) -> pa.Table:
    """Run SQL ``query`` (DataFusion's dialect) over ``tables`` (name -> ``Table`` or URI;
    each also answers ``name$snapshots``, ``name$schemas``, ``name$tags``,
    ``name$manifests`` and ``name$files``) and a filesystem ``warehouse`` (a URI or
    ``Warehouse``: its tables as ``db.table`` and ``paimon.db.table``). Returns a
    ``pyarrow.Table`` (with the result's schema when there are no rows).

    ``INSERT INTO t SELECT ...`` and ``INSERT OVERWRITE`` write through the kernel's writers
    and commit once; the result is the row count. Raises ``InvalidInput`` for bad SQL, an
    unknown table or column and a type mismatch, ``Unsupported`` for what the kernel or
    DataFusion does not support, and the read's own error when a table cannot be read."""
    named = []
    for name, t in (tables or {}).items():
        if isinstance(t, Table):
            named.append((name, t._native))
        elif isinstance(t, str):
            named.append((name, _native.open_table(t, None)))
        else:
            raise TypeError(f"tables[{name!r}]: expected a paimon_kernel.Table or a URI, got {type(t).__name__}")
    if isinstance(warehouse, str):
        warehouse = Warehouse(warehouse)
    return _native._sql(query, named, warehouse)


def _is_expression(f: Any) -> bool:
    try:
        import pyarrow.compute as pc  # noqa: PLC0415

        return isinstance(f, pc.Expression)
    except ImportError:  # pragma: no cover
        return False


class Scan:
    """What to read from a table; made by :meth:`Table.scan`.

    Source: Java ``org.apache.paimon.table.source.ReadBuilder``."""

    __slots__ = ("table", "columns", "filter", "_travel", "limit")

    def __init__(self, table: Table, columns, filter, travel, limit):
        if filter is not None and not isinstance(filter, str) and not _is_expression(filter):
            raise InvalidInput("filter must be text (the CLI's --where) or a pyarrow.compute.Expression")
        self.table = table
        self.columns = list(columns) if columns is not None else None
        self.filter = filter
        self._travel = travel
        self.limit = limit

    def _text_filter(self) -> Optional[str]:
        return self.filter if isinstance(self.filter, str) else None

    def _native_args(self, limit=True):
        kind, value = self._travel
        expr = not isinstance(self.filter, (str, type(None)))
        # A pyarrow expression may name columns outside the projection: read all of them, then
        # filter and project; no limit before the filter.
        columns = None if expr else self.columns
        return (columns, self._text_filter(), kind, value, None if expr or not limit else self.limit)

    def _post(self, table_or_batches):
        """Apply a pyarrow-expression filter, the projection and the limit."""
        t = table_or_batches
        if not isinstance(self.filter, (str, type(None))):
            t = t.filter(self.filter)
            if self.columns is not None:
                t = t.select(self.columns)
            if self.limit is not None:
                t = t.slice(0, self.limit)
        return t

    def to_arrow(self) -> pa.Table:
        """Every row as a ``pyarrow.Table`` (the schema kept when there is none)."""
        return self._post(self.table._native._to_arrow(*self._native_args()))

    def to_reader(self) -> pa.RecordBatchReader:
        """A streaming ``pyarrow.RecordBatchReader`` (batches in split order)."""
        reader = self.table._native._to_reader(*self._native_args())
        if isinstance(self.filter, (str, type(None))):
            return reader
        first = self._post(pa.Table.from_batches([], schema=reader.schema))
        schema = first.schema
        limit = self.limit

        def gen():
            left = limit
            for batch in reader:
                t = pa.Table.from_batches([batch]).filter(self.filter)
                if self.columns is not None:
                    t = t.select(self.columns)
                if left is not None:
                    t = t.slice(0, left)
                    left -= t.num_rows
                for b in t.to_batches():
                    yield b
                if left is not None and left <= 0:
                    return

        return pa.RecordBatchReader.from_batches(schema, gen())

    to_arrow_batch_reader = to_reader

    def to_pandas(self):
        """Every row as a ``pandas.DataFrame``."""
        return self.to_arrow().to_pandas()

    def plan(self, split_target_size: Optional[int] = None) -> List[Split]:
        """The splits to read (picklable; read each with :meth:`Table.read_split`). A
        pyarrow-expression filter is not part of the splits (apply it to what they read);
        a text filter prunes them. ``split_target_size`` (bytes; Java's
        ``source.split.target-size``, default the table's option, 128 MiB) packs data files
        into splits of about that size: smaller gives more splits for more workers (files
        are never cut)."""
        kind, value = self._travel
        if split_target_size is not None and split_target_size <= 0:
            raise InvalidInput(f"split_target_size must be a positive number of bytes, got {split_target_size}")
        return self.table._native._plan(self.columns, self._text_filter(), kind, value, split_target_size)

    splits = plan


class TableWrite:
    """Writes rows; :meth:`prepare_commit` gives the commit messages. Made by
    :meth:`Table.new_write`.

    Source: Java ``org.apache.paimon.table.sink.BatchTableWrite``."""

    __slots__ = ("_native",)

    def __init__(self, native: "_native.TableWrite"):
        self._native = native

    @property
    def input_schema(self) -> pa.Schema:
        """The Arrow schema input rows should have."""
        return self._native.input_schema

    @property
    def rows_written(self) -> int:
        """Rows written so far."""
        return self._native.rows_written

    def write(self, data: Any) -> int:
        """Write Arrow data (pyarrow, polars, DuckDB results, anything with
        ``__arrow_c_stream__``; pandas via pyarrow): the rows written. Columns are matched by
        name; string/large_string and binary/large_binary are cast to the table's types. Rows
        that do not fit (a missing or mistyped column, NULL in a NOT NULL column) raise
        ``InvalidInput`` naming the column, and nothing of that batch is written."""
        return self._native.write(_to_arrow_input(data))

    write_arrow = write
    write_pandas = write

    def prepare_commit(self) -> List[CommitMessage]:
        """Flush and return the commit messages (one per partition and bucket written)."""
        return self._native.prepare_commit()

    def abort(self) -> None:
        """Delete every file this writer wrote; the writer cannot be used afterwards."""
        self._native.abort()

    close = abort
