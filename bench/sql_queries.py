"""The SQL benchmark's queries ({t}: the table's name in each engine). Deterministic results:
every ORDER BY ends on the primary key `id`."""

QUERIES = {
    # A group-by with a filter: 100 cities, the rows with flag set and qty below 100 (5%).
    "groupby": (
        "SELECT city, count(*) AS n, sum(amount) AS total, max(qty) AS top "
        "FROM {t} WHERE flag AND qty < 100 GROUP BY city ORDER BY city"
    ),
    # A top-k over every row.
    "topk": "SELECT id, name, amount FROM {t} ORDER BY amount DESC, id LIMIT 10",
}
