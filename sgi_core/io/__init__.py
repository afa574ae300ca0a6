"""Files in and out: reading tables whole or in chunks, and writing them safely.

:mod:`~sgi_core.io.table_formats` holds what every reader and writer agrees on;
:mod:`~sgi_core.io.decoding` turns bytes into text; :mod:`~sgi_core.io.reading`
reads a whole file (Parquet through :mod:`~sgi_core.io.parquet`);
:mod:`~sgi_core.io.chunks` reads a file chunk by chunk; :mod:`~sgi_core.io.shards`
finds the shards of a dataset; :mod:`~sgi_core.io.export` writes CSV (escaped) and
Parquet files atomically. Validating and scoring what they read is the engines'
(:mod:`sgi_core.pipelines.local_engine`, :mod:`sgi_core.pipelines.ray_engine`).
"""
