"""Scoring many shards of triples on a Ray cluster with Ray Data.

:func:`score_with_ray` reads a file, a folder or a glob of CSV and Parquet shards
with ``ray.data.read_csv`` / ``ray.data.read_parquet``, numbers every row by its
order key before anything can reorder it, validates and scores blocks in a pool of
actors that each load the encoder once (one actor per GPU, or one per CPU), and
writes a Parquet dataset (a folder of files) that keeps every input row.

Order key: ``input_shard`` (0-based position of the shard in the sorted list of
input files, also named in ``input_file``) and ``input_row`` (1-based data row in
that shard, as ``input_row`` of the single-process ``score``). Sorting the output
by ``(input_shard, input_row)`` gives the input order. Each shard is read whole, in
order, by one read task, which numbers its rows as it reads them; the row numbers
are checked after the write (every shard must hold rows 1..n exactly once, a
Parquet shard as many as its footer counts; :mod:`sgi_core.pipelines.ray_rows`). Input
columns named like the order key, or ``path``, keep their values.

The dataset is written to a new folder of a unique name beside the output
(:func:`tempfile.mkdtemp`) and renamed onto it once checked. A Ray started here
binds its services to the loopback address (docs/SCALING.md).

Scores equal those of the local engine on the same rows: each actor
(:class:`~sgi_core.pipelines.ray_scorer.Scorer`) validates its rows with
:func:`sgi_core.io.triples.validate_triples` (unscorable rows are kept with
``sgi_status = "not scored: <reason>"``) and scores them with
:func:`sgi_core.pipelines.local_engine.score_chunk`, which encodes each distinct text of the
batch once and adds the columns of the detector families asked for (claims, grounding models
checked on the driver: :mod:`sgi_core.pipelines.ray_models`).

CSV shards are read as UTF-8, comma-separated, every column as text; other
encodings and separators are for the single-process ``score`` (or convert the
shards to Parquet first).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from sgi_core.columns import DEFAULT_CONTEXT_STRATEGY
from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.io.decoding import decodes
from sgi_core.io.shards import find_shards as find_shards  # part of this engine's interface
from sgi_core.io.shards import shard_format
from sgi_core.io.triples import validate_triples
from sgi_core.models.device import check_precision
from sgi_core.pipelines.ray_models import checked_models
from sgi_core.pipelines.ray_rows import NumberRows, check_output
from sgi_core.pipelines.ray_scorer import Scorer, actor_pool
from sgi_core.scoring import ScoreSummary

#: Rows handed to an actor at a time; texts repeated within them are encoded once.
DEFAULT_BATCH_ROWS = 10_000

#: Size of the blocks read from the shards: small beside a batch, so that the batches
#: gathered from them are even and one big shard feeds every actor.
_BLOCK_BYTES = 256 * 1024

#: The address a Ray started by :func:`score_with_ray` binds its services to.
LOOPBACK = "127.0.0.1"

_REMOTE_INPUT_ERROR = re.compile(r"^sgi_core\.errors\.SGIInputError: (.*)$", re.MULTILINE)
_CSV_READ_ERROR = re.compile(r"Failed to read CSV file: (.+?)\. Please check")


def _shard_columns(shards: list[Path]) -> list[str]:
    """The columns every shard has, checked by :func:`validate_triples` before any row is read.

    Raises
    ------
    SGIInputError
        An unreadable CSV header or Parquet footer, a shard lacking a question,
        context or response column, or shards whose columns differ.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    columns: list[str] | None = None
    for shard in shards:
        try:
            if shard_format(shard) == "csv":
                with pcsv.open_csv(shard, parse_options=pcsv.ParseOptions(newlines_in_values=True)) as reader:
                    names = reader.schema.names
            else:
                names = pq.read_schema(shard).names
        except (pa.ArrowException, UnicodeDecodeError, OSError) as err:
            raise SGIInputError(f"cannot read the shard's header: {err}", source=str(shard),
                                hint="Ray reads UTF-8 comma-separated CSV and Parquet; convert other files to "
                                     "Parquet") from None
        validate_triples(pd.DataFrame(columns=names), source=str(shard), whole_file=False)
        if columns is None:
            columns = names
        elif sorted(names) != sorted(columns):
            raise SGIInputError(f"the shard's columns differ from those of '{shards[0]}'", source=str(shard),
                                hint=f"Give every shard the columns {', '.join(columns)}")
    return columns


def _read(shards: list[Path], columns: list[str]):
    """One Ray dataset of every shard's rows with their order key.

    Rows are numbered by a map fused into each read task (``batch_size=None``: block by
    block, in the task that reads the shard), before any operator can reorder them; a
    union stops fusion, so each reader gets its own numbering map.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import ray.data

    # Ray names each row's file in a column "path", which replaces an input column of that name:
    # shards that have one are read one per dataset, each numbered with its own path.
    paths_from_ray = "path" not in columns
    groups = ([[p for p in shards if shard_format(p) == kind] for kind in ("csv", "parquet")] if paths_from_ray
              else [[p] for p in shards])
    shard_index = {str(p): i for i, p in enumerate(shards)}
    parts = []
    for group in filter(None, groups):
        paths = [str(p) for p in group]
        options = {"include_paths": paths_from_ray, "override_num_blocks": len(paths), "num_cpus": 0}
        if shard_format(group[0]) == "csv":
            part = ray.data.read_csv(
                paths, parse_options=pcsv.ParseOptions(newlines_in_values=True),
                # Every CSV cell as text, as the single-process reader reads it.
                convert_options=pcsv.ConvertOptions(column_types={name: pa.string() for name in columns}), **options,
            )
        else:
            part = ray.data.read_parquet(paths, **options)
        number = NumberRows(shard_index, path=None if paths_from_ray else paths[0])
        parts.append(part.map_batches(number, batch_format="pandas", batch_size=None, num_cpus=0))
    return parts[0].union(*parts[1:]) if len(parts) > 1 else parts[0]


def _input_error(err: BaseException, ray) -> SGIInputError | None:
    """The input error a Ray task failed with, as one line, or ``None`` for any other failure.

    An actor's :class:`SGIInputError` reaches the driver only as text in Ray's error; a
    CSV shard that Arrow cannot read is named in it, and is then checked here for the
    usual cause, text that is not UTF-8.
    """
    if not isinstance(err, ray.exceptions.RayError):
        return None
    remote = _REMOTE_INPUT_ERROR.search(str(err))
    if remote:
        return SGIInputError(remote.group(1))
    unreadable = _CSV_READ_ERROR.search(str(err))
    if unreadable is None:
        return None
    shard = Path(unreadable.group(1))
    if shard.is_file() and not decodes(shard, "utf-8"):
        return SGIInputError("the CSV shard is not UTF-8 text, which is all Ray's CSV reader reads", source=str(shard),
                             hint="Save the shards as UTF-8 or convert them to Parquet, or score the file without "
                                  "--engine ray, which reads other encodings")
    return SGIInputError("Ray's CSV reader cannot read the shard", source=str(shard),
                         hint="Check that it is comma-separated with one header row, or convert it to Parquet")


def score_with_ray(
    input_path: str | os.PathLike,
    output: str | os.PathLike,
    *,
    model: str = "minilm",
    address: str | None = None,
    concurrency: int | None = None,
    device: str | None = None,
    precision: str = "fp32",
    batch_rows: int = DEFAULT_BATCH_ROWS,
    batch_size: int = 64,
    use_cache: bool = True,
    label_positive: str | None = None,
    trust_model_code: bool = False,
    backend: str = "auto",
    context_strategy: str = DEFAULT_CONTEXT_STRATEGY,
    cpus_per_actor: int | None = None,
    families: tuple[str, ...] = (),
    resources: Mapping[str, tuple] | None = None,
) -> ScoreSummary:
    """Score CSV / Parquet shards on Ray and write a Parquet dataset with every row.

    Each output row carries the input columns, ``question``, ``context``,
    ``response``, ``label``, ``theta_qc``, ``theta_rq``, ``theta_rc`` (radians),
    ``sgi = theta_rq / (theta_rc + 1e-8)`` (high = grounded), ``sgi_status`` and its
    order key ``input_shard``, ``input_row`` (with ``input_file``), and the columns of
    ``families``, with the values of the local engine; rows are in no particular order
    across files: sort by the order key for the input order. Every file records what
    scored it, as the local engine's Parquet output does (:func:`sgi_core.io.scored.scored_with`).

    Parameters
    ----------
    input_path : path-like
        A CSV or Parquet file, a folder of them, or a glob.
    output : path-like
        Folder to create for the Parquet dataset; it must not exist or be empty.
        On a cluster of several machines, a path every machine shares.
    model : str
        Model name as in :func:`sgi_core.embedding.load_encoder`; each actor loads it.
    address : str, optional
        Ray cluster to join (``auto``, ``ray://host:10001``); default: the running
        one, else a local Ray started for this call and stopped after it.
    concurrency : int, optional
        Actors; default one per GPU of the cluster (each asks for one GPU and
        ``cpus_per_actor`` CPUs), else as many as the cluster's CPUs hold
        (:func:`~sgi_core.pipelines.ray_scorer.actor_pool`).
    cpus_per_actor : int, optional
        CPUs each actor asks for, and the threads its models run (default 1).
    device : str, optional
        Device inside each actor, as in ``load_encoder`` (default ``auto``);
        ``cpu`` makes CPU actors on a cluster with GPUs.
    precision : {"fp32", "fp16", "bf16"}
        Float type of the model inside each actor, as in ``load_encoder``.
    batch_rows : int
        Rows per actor call; each distinct text among them is encoded once.
    batch_size : int
        Texts per encoder batch.
    use_cache : bool
        Read and write each machine's embedding cache.
    label_positive : {"grounded", "hallucinated"}, optional
        As in :func:`sgi_core.io.triples.validate_triples`.
    trust_model_code, backend
        As in :func:`sgi_core.embedding.load_encoder`.
    context_strategy : {"joined", "mean", "nearest"}, default "joined"
        As in :func:`sgi_core.scoring.score_table`. List contexts are scored as passages;
        the output keeps them joined in ``context`` (and in the input's own column).
    families : tuple of str, default ()
        Per-row detector families added to every row, as in
        :func:`~sgi_core.pipelines.local_engine.score_to_file` (``("claims",)``, ``("grounding",)``).
    resources : mapping of str -> tuple, optional
        The families' resources loaded and checked here, on the driver (the grounding
        models: folder copy, trust check, fingerprint, self-test); each actor loads them
        again and refuses a folder whose fingerprint changed
        (:mod:`sgi_core.pipelines.ray_models`).

    Returns
    -------
    ScoreSummary

    Raises
    ------
    SGIInputError
        Ray not installed, no input files, an unreadable header, shards with other
        columns, an output that is not an empty folder, a model that does not load,
        bad parameters, a family that is not fitted per row or whose columns the input
        has, a resource actors cannot load, or rows that ``validate_triples`` refuses.
    """
    try:
        import ray
        import ray.data
        import ray.exceptions
    except ImportError:
        raise SGIInputError("--engine ray needs Ray Data, which is not installed",
                            hint="pip install -r requirements-ray.txt (or pip install '.[ray]')") from None
    start = time.perf_counter()
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 1:
        raise SGIInputError("The 'batch_rows' parameter of score_with_ray must be an int >= 1. "
                            f"Got {batch_rows!r} instead.")
    shards = find_shards(input_path)
    columns = _shard_columns(shards)
    output = Path(output).expanduser().resolve()
    if not output.parent.is_dir():
        raise SGIInputError(f"the folder '{output.parent}' for the output does not exist", source=str(output),
                            hint="Create the folder first, or write somewhere else")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise SGIInputError("the output exists and is not an empty folder", source=str(output),
                            hint="Give a new folder name: the Parquet dataset is written as a folder of files")
    # The model is loaded here once so that a bad name or precision fails now, not as dying actors
    # (in fp32 on the CPU: the actors' device may run a precision this machine's CPU cannot).
    check_precision(precision)
    load_encoder(model, device="cpu", trust_model_code=trust_model_code, backend=backend)
    checked = checked_models(resources or {}, backend=backend, trust_model_code=trust_model_code)
    if families:  # a family the engine cannot add fails here, before Ray starts
        from sgi_core.detectors.registry import per_row_family

        clash = [c for name in families for c in per_row_family(name).columns if c in columns]
        if clash:
            raise SGIInputError(f"the shards already have columns named {', '.join(clash)}, which the detector "
                                "scores would overwrite", source=str(shards[0]), column=clash[0],
                                hint="Rename or drop those columns, or score without those detectors")
    started_here = not ray.is_initialized()
    if started_here:
        # A Ray started here listens on this machine's loopback address only (docs/SCALING.md).
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 **({"_node_ip_address": LOOPBACK} if address is None else {}))
    context = ray.data.DataContext.get_current()
    saved = context.target_max_block_size, context.use_datasource_v2
    # Blocks small enough that one big shard feeds every actor (each actor call gathers batch_rows
    # rows), and the Parquet reader that reads a file in one task asking for no CPU: the newer one
    # lists files in a task that needs a CPU, which the actors may all hold.
    context.target_max_block_size, context.use_datasource_v2 = _BLOCK_BYTES, False
    try:
        size, per_actor = actor_pool(concurrency, cpus_per_actor, device)
        options = {"device": device, "precision": precision, "trust_model_code": trust_model_code, "backend": backend}
        dataset = _read(shards, columns).map_batches(
            Scorer, fn_constructor_args=(model, options),
            fn_constructor_kwargs={"use_cache": use_cache, "label_positive": label_positive, "batch_size": batch_size,
                                   "context_strategy": context_strategy, "families": tuple(families),
                                   "checked": checked},
            batch_format="pandas", batch_size=batch_rows, **per_actor,
            # One call at a time per actor: a call queued behind a busy actor would leave another idle.
            compute=ray.data.ActorPoolStrategy(size=size, max_tasks_in_flight_per_actor=1),
        )
        # A new folder of a unique name for this run only: a fixed name would be shared by two
        # runs, and deleting what was there before (or a link planted there) is not ours to do.
        partial = Path(tempfile.mkdtemp(prefix=f".{output.name}.", suffix=".partial", dir=output.parent))
        try:
            dataset.write_parquet(str(partial), ray_remote_args={"num_cpus": 0})
            rows, scored = check_output(partial, shards)
        except BaseException as err:
            shutil.rmtree(partial, ignore_errors=True)
            input_error = _input_error(err, ray)
            if input_error is not None:
                raise input_error from None
            raise
        if output.exists():
            output.rmdir()
        os.replace(partial, output)
    finally:
        context.target_max_block_size, context.use_datasource_v2 = saved
        if started_here:
            ray.shutdown()
    return ScoreSummary(engine="ray", rows=rows, scored=scored, shards=len(shards), actors=size,
                           seconds=time.perf_counter() - start)
