"""Planning helpers shared by the Ray and Daft connectors (no table logic: they only choose
the split target size the native planner is asked for)."""

from __future__ import annotations

from typing import List

import paimon_kernel as pk

#: The smallest split target a distributed read asks for when it plans finer splits for more
#: workers (bytes).
MIN_SPLIT_BYTES = 1 << 20


def splits_for_workers(scan: "pk.Scan", splits: List[pk.Split], parallelism: int) -> List[pk.Split]:
    """``splits``, or when they are fewer than ``parallelism`` and one holds several data
    files, the scan planned again with a split target size of its bytes over
    ``parallelism`` (at least 1 MiB) at the same snapshot: a table of few large splits still
    uses every worker. Files are never cut, so the plan's rows are the same."""
    if len(splits) >= parallelism or all(len(s.files) <= 1 for s in splits):
        return splits
    total = sum(max(0, s.file_size) for s in splits)
    # The same snapshot as the first plan, whatever was committed since.
    pinned = scan.table.scan(columns=scan.columns, filter=scan.filter, snapshot_id=splits[0].snapshot_id)
    return pinned.plan(split_target_size=max(total // max(1, parallelism), MIN_SPLIT_BYTES))
