#!/usr/bin/env python3
"""One SQL query over a bench table by a peer engine; prints the result as CSV (sorted rows are
compared by sql_bench.py before anything is timed).

usage: sql_peer.py ENGINE WAREHOUSE TABLE QUERY_NAME [PARQUET_DIR]

ENGINE:
  pyrust     pypaimon-rust 0.4.0's DataFusion (pypaimon_rust.datafusion.SQLContext over the
             filesystem warehouse; run with ~/.cache/paimon-kernel/venv-rust's python)
  duckdb     pypaimon 2.1.0 to_arrow(), then DuckDB over the Arrow table
  kernelpy   paimon_kernel.sql from Python (the host-python package, a release wheel), over the
             warehouse: our provider, reached the way a Python user reaches it
  dfparquet  datafusion-python (PyPI datafusion 55) over PARQUET_DIR: the same rows as plain
             Parquet files (append_2m: the table's own data files; pk_dedup_1m: its merged rows
             written once by sql_bench.py)
"""
import sys

from sql_queries import QUERIES


def emit(table):
    """Print a pyarrow Table as CSV (header, then rows)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    # DataFusion returns string views, which older pyarrow CSV writers cannot print.
    fields = [pa.field(f.name, pa.string()) if str(f.type) == "string_view" else f
              for f in table.schema]
    table = table.cast(pa.schema(fields))
    sink = sys.stdout.buffer
    pcsv.write_csv(table, sink)


def main():
    engine, wh, name, query_name = sys.argv[1:5]
    query = QUERIES[query_name]
    if engine == "pyrust":
        import pyarrow as pa
        from pypaimon_rust.datafusion import SQLContext
        ctx = SQLContext()
        ctx.register_catalog("paimon", {"warehouse": wh}, default_database="bench")
        batches = ctx.sql(query.format(t="paimon.bench." + name))
        emit(pa.Table.from_batches(batches))
    elif engine == "kernelpy":
        import paimon_kernel as pk
        emit(pk.sql(query.format(t="bench." + name), warehouse=wh))
    elif engine == "duckdb":
        import duckdb
        from pypaimon import CatalogFactory
        catalog = CatalogFactory.create({"warehouse": wh})
        table = catalog.get_table("bench." + name)
        rb = table.new_read_builder()
        arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        con = duckdb.connect()
        con.register("t", arrow)
        emit(con.execute(query.format(t="t")).to_arrow_table())
    elif engine == "dfparquet":
        import datafusion
        ctx = datafusion.SessionContext()
        ctx.register_parquet("t", sys.argv[5])
        emit(ctx.sql(query.format(t="t")).to_arrow_table())
    else:
        sys.exit("unknown engine " + engine)


if __name__ == "__main__":
    main()
