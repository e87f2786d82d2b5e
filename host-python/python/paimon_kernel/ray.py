"""Ray integration: read, write and compact Paimon tables with Ray Data / Ray tasks.

* :func:`read_paimon` — a ``ray.data.Datasource`` whose read tasks are the plan's splits
  (grouped by estimated size); each task's closure holds split bytes, never the table.
* :func:`write_paimon` — a ``ray.data.Datasink``: every write task writes its blocks with
  its own writer and returns commit messages; the driver commits them once
  (``on_write_complete``). Fixed-bucket tables are shuffled so that one task owns each
  (partition, bucket) (the bucket computed by the kernel, as Java's channel computer);
  dynamic-bucket, cross-partition and postpone-bucket primary-key tables are written by one
  task. A failed job publishes nothing; its completed tasks' files are orphans that
  :meth:`~paimon_kernel.Table.remove_orphan_files` removes. A retried task does not double
  rows: only the messages of the attempt that returned are committed.
  With ``commit_interval_seconds`` the driver commits as blocks are written (periodic
  commits for long jobs).
* :func:`compact` — plan on the driver, one Ray task per compaction task, one commit.

Mirrors ``pypaimon.ray`` (2.1.0) where it has the same function.
"""

from __future__ import annotations

import pickle
import time
import uuid
from typing import Any, Dict, Iterable, List, Optional

import pyarrow as pa

import paimon_kernel as pk
from paimon_kernel._plan import splits_for_workers

__all__ = ["read_paimon", "write_paimon", "compact", "PaimonDatasource", "PaimonDatasink"]

#: Rows per output block a read task gathers before yielding (Arrow tables of record batches,
#: no copy).
_BLOCK_ROWS = 256 * 1024


def _require_ray():
    try:
        import ray  # noqa: F401, PLC0415
        import ray.data  # noqa: F401, PLC0415
    except ImportError as e:  # pragma: no cover
        raise ImportError("paimon_kernel.ray needs Ray Data: pip install 'ray[data]'") from e
    return ray


def _projected_schema(schema: pa.Schema, columns: Optional[List[str]]) -> pa.Schema:
    if columns is None:
        return schema
    extra = {
        "_ROW_ID": pa.field("_ROW_ID", pa.int64()),
        "_SEQUENCE_NUMBER": pa.field("_SEQUENCE_NUMBER", pa.int64()),
    }
    return pa.schema([schema.field(c) if c in schema.names else extra.get(c, pa.field(c, pa.null())) for c in columns])


def _group_splits(splits: List[pk.Split], groups: int) -> List[List[pk.Split]]:
    """Greedy bin packing by estimated size (file bytes, then rows), largest first, into at
    most ``groups`` groups; each group keeps the plan's split order."""
    if not splits:
        return []
    groups = max(1, min(groups, len(splits)))
    order = sorted(range(len(splits)), key=lambda i: (splits[i].file_size, splits[i].row_count), reverse=True)
    bins: List[List[int]] = [[] for _ in range(groups)]
    load = [0] * groups
    for i in order:
        b = min(range(groups), key=lambda k: load[k])
        bins[b].append(i)
        load[b] += max(1, splits[i].file_size)
    return [[splits[i] for i in sorted(b)] for b in bins if b]


def _read_blocks(uri, store_options, split_bytes, columns, text_filter, expr_filter, limit):
    """Runs in a Ray worker: read the splits, yield Arrow tables of up to _BLOCK_ROWS."""
    table = pk.open_table(uri, store_options or None)
    pending: List[pa.RecordBatch] = []
    rows = 0
    left = limit
    read_columns = None if expr_filter is not None else columns
    for raw in split_bytes:
        reader = table.read_split(pk.Split.from_bytes(raw), read_columns, text_filter)
        for batch in reader:
            if expr_filter is not None:
                t = pa.Table.from_batches([batch]).filter(expr_filter)
                if columns is not None:
                    t = t.select(columns)
                parts = t.to_batches()
            else:
                parts = [batch]
            for b in parts:
                if left is not None:
                    if left <= 0:
                        break
                    b = b.slice(0, left)
                    left -= b.num_rows
                pending.append(b)
                rows += b.num_rows
            if rows >= _BLOCK_ROWS:
                yield pa.Table.from_batches(pending)
                pending, rows = [], 0
            if left is not None and left <= 0:
                break
        if left is not None and left <= 0:
            break
    if pending:
        yield pa.Table.from_batches(pending)


def _make_datasource_cls():
    _require_ray()
    from ray.data import Datasource, ReadTask  # noqa: PLC0415
    from ray.data.block import BlockMetadata  # noqa: PLC0415

    class PaimonDatasource(Datasource):
        """A ``ray.data.Datasource`` over a Paimon scan: read tasks are groups of splits."""

        def __init__(self, table: pk.Table, columns, filter, snapshot_id=None, tag=None, timestamp_millis=None, limit=None):
            super().__init__()
            self._uri = table.uri
            self._store_options = table.store_options
            self._columns = columns
            self._text_filter = filter if isinstance(filter, str) else None
            self._expr_filter = None if filter is None or isinstance(filter, str) else filter
            self._limit = limit
            self._scan = table.scan(columns=columns, filter=self._text_filter, snapshot_id=snapshot_id, tag=tag, timestamp_millis=timestamp_millis)
            self._splits = self._scan.plan()
            self._schema = _projected_schema(table.schema, columns)

        def get_name(self) -> str:
            return "Paimon"

        def estimate_inmemory_data_size(self) -> Optional[int]:
            # Decoded columns are larger than compressed files; a factor of 3 is what the
            # benchmark tables show for Parquet/zstd.
            return sum(s.file_size for s in self._splits) * 3

        def get_read_tasks(self, parallelism: int, per_task_row_limit: Optional[int] = None, data_context=None, **_ignored) -> List[Any]:
            limit = self._limit
            if per_task_row_limit is not None:
                limit = per_task_row_limit if limit is None else min(limit, per_task_row_limit)
            splits = splits_for_workers(self._scan, self._splits, parallelism)
            tasks = []
            for group in _group_splits(splits, parallelism):
                payload = [s.to_bytes() for s in group]
                meta = BlockMetadata(
                    num_rows=None,
                    size_bytes=sum(s.file_size for s in group) * 3,
                    input_files=[p for s in group for p in s.file_paths],
                    exec_stats=None,
                )
                uri, opts, cols, tf, ef = self._uri, self._store_options, self._columns, self._text_filter, self._expr_filter

                def read_fn(payload=payload, uri=uri, opts=opts, cols=cols, tf=tf, ef=ef, limit=limit):
                    return _read_blocks(uri, opts, payload, cols, tf, ef, limit)

                tasks.append(ReadTask(read_fn, meta, schema=self._schema))
            return tasks

    return PaimonDatasource


def read_paimon(
    uri: str,
    columns: Optional[List[str]] = None,
    filter: Any = None,
    snapshot_id: Optional[int] = None,
    tag: Optional[str] = None,
    timestamp_millis: Optional[int] = None,
    limit: Optional[int] = None,
    options: Optional[Dict[str, str]] = None,
    concurrency: Optional[int] = None,
    ray_remote_args: Optional[Dict[str, Any]] = None,
    override_num_blocks: Optional[int] = None,
    **read_args,
):
    """Read a Paimon table into a ``ray.data.Dataset``.

    ``filter`` is the CLI's ``--where`` text (pushed into every split's read) or a
    ``pyarrow.compute`` expression (applied in the read tasks). ``options``: object-store
    options (see :func:`paimon_kernel.open_table`). An empty read keeps the table's schema."""
    ray = _require_ray()
    table = pk.open_table(uri, options)
    source = _make_datasource_cls()(table, columns, filter, snapshot_id, tag, timestamp_millis, limit)
    if not source._splits:
        schema = source._schema
        return ray.data.from_arrow(pa.Table.from_batches([], schema=schema))
    ds = ray.data.read_datasource(
        source,
        ray_remote_args=ray_remote_args,
        concurrency=concurrency,
        override_num_blocks=override_num_blocks,
        **read_args,
    )
    if limit is not None:
        ds = ds.limit(limit)
    return ds


def _write_blocks(uri, store_options, blocks: Iterable[Any], overwrite, static_partition, commit_user, drop_columns):
    """Write blocks with one writer: the commit messages (files deleted on failure)."""
    table = pk.open_table(uri, store_options or None)
    write = table.new_write(overwrite=overwrite, static_partition=static_partition, commit_user=commit_user)
    try:
        for block in blocks:
            if not isinstance(block, pa.Table):
                block = pa.Table.from_pandas(block, preserve_index=False)
            if drop_columns:
                block = block.drop_columns([c for c in drop_columns if c in block.column_names])
            if block.num_rows:
                write.write(block)
        return write.prepare_commit()
    except BaseException:
        write.abort()
        raise


def _make_datasink_cls():
    _require_ray()
    from ray.data import Datasink  # noqa: PLC0415

    class PaimonDatasink(Datasink):
        """A ``ray.data.Datasink``: tasks return commit messages, the driver commits once."""

        def __init__(self, table: pk.Table, overwrite=False, static_partition=None, commit_user=None, drop_columns=()):
            self._uri = table.uri
            self._store_options = table.store_options
            self._overwrite = overwrite
            self._static_partition = static_partition
            self._commit_user = commit_user or str(uuid.uuid4())
            self._drop = list(drop_columns)
            self._messages: List[pk.CommitMessage] = []
            self.outcome: Optional[Dict[str, Any]] = None

        def get_name(self) -> str:
            return "Paimon"

        @property
        def supports_distributed_writes(self) -> bool:
            return True

        def write(self, blocks, ctx) -> List[pk.CommitMessage]:
            return _write_blocks(self._uri, self._store_options, blocks, self._overwrite, self._static_partition, self._commit_user, self._drop)

        def on_write_complete(self, write_result) -> None:
            returns = write_result.write_returns if hasattr(write_result, "write_returns") else write_result
            messages = [m for ms in returns for m in (ms or [])]
            self._messages = messages
            table = pk.open_table(self._uri, self._store_options or None)
            if not messages:
                self.outcome = {"snapshot_ids": []}
                return
            self.outcome = table.commit(messages, commit_user=self._commit_user)
            self._messages = []

        def on_write_failed(self, error: Exception) -> None:
            # Completed tasks' files are not visible (no commit); the messages we hold (a failed
            # commit) are aborted. Files of tasks whose messages never reached the driver are
            # orphans for remove_orphan_files.
            if self._messages:
                try:
                    pk.open_table(self._uri, self._store_options or None).abort(self._messages)
                finally:
                    self._messages = []

    return PaimonDatasink


def _bucket_column(names: List[str]) -> str:
    name = "__paimon_bucket__"
    while name in names:
        name = "_" + name + "_"
    return name


def write_paimon(
    ds,
    uri: str,
    mode: str = "append",
    static_partition: Optional[Dict[str, str]] = None,
    options: Optional[Dict[str, str]] = None,
    commit_user: Optional[str] = None,
    concurrency: Optional[int] = None,
    ray_remote_args: Optional[Dict[str, Any]] = None,
    commit_interval_seconds: Optional[float] = None,
) -> Dict[str, Any]:
    """Write a ``ray.data.Dataset`` to the Paimon table at ``uri`` in one commit.

    ``mode``: ``"append"`` or ``"overwrite"`` (with ``static_partition``: that partition;
    without: the partitions written, per ``dynamic-partition-overwrite``). Returns the commit
    outcome (``snapshot_ids``...). Rows that do not fit the table fail the job naming the
    column; nothing is committed then.

    ``commit_interval_seconds``: periodic commits for long jobs (``mode="append"`` only).
    Each write task returns its commit messages as soon as its block is written, and the
    driver commits what has arrived whenever that many seconds have passed since the last
    commit (``0``: after every block), then the rest at the end. A later failure leaves the
    earlier commits visible and aborts the messages not yet committed. This is not a
    checkpoint: running the job again writes every row again (an append table then holds
    the committed rows twice; a primary-key table upserts the same keys). Returns
    ``{"snapshot_ids": [...], "commits": n}``."""
    _require_ray()
    if mode not in ("append", "overwrite"):
        raise pk.InvalidInput(f"mode must be 'append' or 'overwrite', got {mode!r}")
    if commit_interval_seconds is not None:
        if mode != "append":
            raise pk.InvalidInput("commit_interval_seconds: periodic commits append; an overwrite commits once")
        if commit_interval_seconds < 0:
            raise pk.InvalidInput(f"commit_interval_seconds must be >= 0, got {commit_interval_seconds}")
    table = pk.open_table(uri, options)
    opts = table.options
    bucket = int(opts.get("bucket", "-1" if table.primary_keys else "-1"))
    drop: List[str] = []
    if bucket > 0:
        # One task per (partition, bucket): the bucket from the kernel, rows hashed on it.
        col = _bucket_column(table.schema.names)
        drop = [col]
        store = table.store_options

        def add_bucket(batch: pa.Table, uri=uri, store=store, col=col) -> pa.Table:
            t = pk.open_table(uri, store or None)
            return batch.append_column(col, pa.array(t.buckets_of(batch), pa.int32()))

        keys = [col] + [k for k in table.partition_keys]
        ds = ds.map_batches(add_bucket, batch_format="pyarrow")
        ds = ds.repartition(_num_write_blocks(bucket), keys=keys)
    elif table.primary_keys:
        # Dynamic-bucket, cross-partition and postpone-bucket tables: one writer assigns the
        # buckets (independent writers would assign overlapping buckets or sequence numbers).
        ds = ds.repartition(1)
    if commit_interval_seconds is not None:
        return _write_periodic(ds, table, static_partition, commit_user, drop, concurrency, ray_remote_args, commit_interval_seconds)
    sink = _make_datasink_cls()(table, overwrite=(mode == "overwrite"), static_partition=static_partition, commit_user=commit_user, drop_columns=drop)
    ds.write_datasink(sink, ray_remote_args=ray_remote_args or {}, concurrency=concurrency)
    return sink.outcome or {"snapshot_ids": []}


_MESSAGES = "__paimon_commit_messages__"


def _write_periodic(ds, table: pk.Table, static_partition, commit_user, drop, concurrency, ray_remote_args, interval: float) -> Dict[str, Any]:
    """``write_paimon`` with periodic commits: one writer per block (a ``map_batches`` task)
    returning its pickled commit messages as rows; the driver commits them as they stream in,
    each commit with the next identifier of one commit user (so a commit retried after a
    lost answer is not doubled)."""
    uri, store = table.uri, table.store_options
    user = commit_user or str(uuid.uuid4())

    def write_block(block: pa.Table) -> pa.Table:
        messages = _write_blocks(uri, store, [block], False, static_partition, user, drop)
        return pa.table({_MESSAGES: pa.array([pickle.dumps(m) for m in messages], pa.binary())})

    kwargs: Dict[str, Any] = dict(ray_remote_args or {})
    if concurrency is not None:
        kwargs["concurrency"] = concurrency
    out = ds.map_batches(write_block, batch_format="pyarrow", batch_size=None, **kwargs)
    pending: List[pk.CommitMessage] = []
    snapshot_ids: List[int] = []
    commits = 0
    last = time.monotonic()

    def commit_pending() -> None:
        nonlocal pending, commits, last
        if pending:
            outcome = table.commit(pending, commit_identifier=commits, commit_user=user)
            snapshot_ids.extend(outcome.get("snapshot_ids", []))
            commits += 1
        pending = []
        last = time.monotonic()

    try:
        for batch in out.iter_batches(batch_format="pyarrow", batch_size=None):
            pending.extend(pickle.loads(b) for b in batch.column(_MESSAGES).to_pylist())
            if time.monotonic() - last >= interval:
                commit_pending()
        commit_pending()
    except BaseException:
        if pending:
            table.abort(pending)
        raise
    return {"snapshot_ids": snapshot_ids, "commits": commits}


def _num_write_blocks(buckets: int) -> int:
    ray = _require_ray()
    try:
        cpus = int(ray.cluster_resources().get("CPU", 2))
    except Exception:  # pragma: no cover - not initialized
        cpus = 2
    return max(1, min(buckets, 2 * cpus))


def _run_task(uri, store_options, task_bytes):
    table = pk.open_table(uri, store_options or None)
    return table.run_compaction_task(pk.CompactTask.from_bytes(task_bytes))


def compact(
    uri: str,
    full: bool = False,
    partitions: Optional[Dict[str, str]] = None,
    options: Optional[Dict[str, str]] = None,
    commit_user: Optional[str] = None,
    ray_remote_args: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """Compact the table at ``uri`` on Ray: plan on the driver, one Ray task per compaction
    task, one ``COMPACT`` commit of every result. Returns ``{"tasks": n, "commit": outcome}``
    (``commit`` is ``None`` when there was nothing to compact). A commit conflict (a
    concurrent compaction or overwrite removed an input) raises ``CommitConflict`` and deletes
    the outputs."""
    ray = _require_ray()
    table = pk.open_table(uri, options)
    tasks = table.plan_compaction(full=full, partitions=partitions)
    if not tasks:
        return {"tasks": 0, "commit": None}
    remote = ray.remote(_run_task)
    if ray_remote_args:
        remote = remote.options(**ray_remote_args)
    refs = [remote.remote(uri, table.store_options, t.to_bytes()) for t in tasks]
    messages: List[pk.CommitMessage] = []
    failure = None
    for r in refs:
        try:
            messages.extend(ray.get(r))
        except Exception as e:  # noqa: BLE001
            failure = failure or e
    if failure is not None:
        if messages:
            table.abort(messages)
        raise failure
    try:
        outcome = table.commit(messages, commit_user=commit_user)
    except pk.CommitConflict:
        table.abort(messages)
        raise
    return {"tasks": len(tasks), "commit": outcome}


def __getattr__(name: str):
    if name == "PaimonDatasource":
        return _make_datasource_cls()
    if name == "PaimonDatasink":
        return _make_datasink_cls()
    raise AttributeError(name)
