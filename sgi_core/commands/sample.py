"""``python -m sgi_core sample RUN [--baseline BASE] --n N --design uniform|active``: the keys to label.

Writes one row per run and drawn key (:func:`sgi_core.runs.design_labels.sample_table`):
the texts, an empty ``label`` and the design's columns. Filled in (1 grounded, 0
hallucinated), the file is a ``--labels`` file of ``compare`` and ``gate --baseline``,
which re-compute the design from its seed and the runs and weigh the labels by it. Prints
the plan: the keys each design needs for ``--half-width`` with this predictor.
"""

from __future__ import annotations

import sys
from pathlib import Path


def _positive(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0; got {text!r}")
    return value


def add_parser(subparsers) -> None:
    """Register ``sample`` on the CLI's subparsers."""
    p = subparsers.add_parser("sample", help="choose the keys to label (uniform or active design) for valid intervals")
    p.add_argument("run", type=Path, help="the run to sample (the new run when --baseline is given)")
    p.add_argument("--baseline", type=Path, default=None, metavar="BASE",
                   help="the baseline run: sample keys of both runs for their paired difference")
    p.add_argument("--key", default=None, help="column matching the rows of the two runs (default as in compare)")
    p.add_argument("--n", type=_positive, required=True, metavar="N", help="how many keys to label, on average")
    p.add_argument("--design", choices=["uniform", "active"], required=True,
                   help="uniform: every key alike; active: more labels where the predictor is unsure")
    p.add_argument("--predictor", default=None, metavar="COLUMN",
                   help="an oriented score column (higher = grounded) holding a probability, e.g. a grounding "
                        "model's or a judge's; another score needs --policy")
    p.add_argument("--policy", type=Path, default=None, metavar="P",
                   help="a policy (from `gate --write-policy`) whose held-out calibrator maps its score column to a "
                        "probability: the predictor")
    p.add_argument("--hallucinated-high", action="append", default=[], metavar="COLUMN",
                   help="a numeric column where high values mean hallucinated (named neg_COLUMN; repeatable)")
    p.add_argument("--seed", type=int, default=0, help="the draw's seed (default 0); the same seed draws the same keys")
    p.add_argument("--half-width", type=_positive, default=0.05, metavar="W",
                   help="the plan's target: keys each design needs for +/- W (default 0.05)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="SAMPLE.csv")
    p.set_defaults(func=run)


def _read(path, args):
    from sgi_core.io.reading import read_table, source_name
    from sgi_core.runs.reading import read_run

    name = source_name(path)
    # The design reads the predictor column only: no embedding model is loaded.
    return read_run(read_table(path, name=name), source=name, scorer=lambda table: table.frame, key=args.key,
                    hallucinated_high=args.hallucinated_high)


def run(args) -> int:
    from sgi_core.errors import SGIInputError
    from sgi_core.io.export import atomic_output
    from sgi_core.runs.design_labels import pair_design, run_design, run_units, sample_table
    from sgi_core.runs.sampling_design import plan_labels

    if args.seed < 0:
        raise SGIInputError(f"--seed must be >= 0; got {args.seed}")
    policy = None
    if args.policy is not None:
        from sgi_core.policy.file import load_policy

        policy = load_policy(args.policy)
        if args.predictor not in (None, policy.score_column):
            raise SGIInputError(f"--predictor {args.predictor} is not the policy's score column "
                                f"{policy.score_column}", hint="Leave --predictor out with --policy")
    predictor = policy.score_column if policy is not None else (args.predictor or "")
    options = dict(design=args.design, budget=args.n, seed=args.seed, predictor=predictor, policy=policy)
    if args.baseline is not None:
        from sgi_core.runs.pairing import pair_runs
        from sgi_core.runs.trace_ids import default_run_key

        if args.key is None:
            args.key, note = default_run_key(args.baseline, args.run)
            if note:
                print(f"note: {note}", file=sys.stderr)
        pair = pair_runs(_read(args.baseline, args), _read(args.run, args), key=args.key)
        design = pair_design(pair, **options)
        runs = [(Path(pair.base.source).name, pair.base.frame, pair.matched.first_row_base),
                (Path(pair.new.source).name, pair.new.frame, pair.matched.first_row_new)]
        target = "the rate difference"
    else:
        one = _read(args.run, args)
        design = run_design(one.frame, **options, source=one.source)
        runs = [(Path(one.source).name, one.frame, run_units(one.frame)[1])]
        target = "the hallucination rate"
    table = sample_table(design, runs)
    with atomic_output(args.output) as handle:
        handle.write(table.to_csv(index=False).encode("utf-8"))
    print(f"{args.design} design, seed {args.seed}{f', predictor {predictor}' if predictor else ''}: "
          f"{design.n_drawn} of {len(design.keys)} keys drawn ({args.n:g} expected); wrote {args.output} "
          f"({len(table)} rows to label: 1 grounded, 0 hallucinated)")
    if predictor:
        plan = plan_labels(design, args.half_width)
        print(f"plan: with this predictor, {_keys(plan.keys_uniform, plan.n_units)} for +/-{args.half_width:g} on "
              f"{target} with uniform sampling, {_keys(plan.keys_active, plan.n_units)} with active sampling; "
              f"this sample plans +/-{plan.planned_half_width:.3f} (the predictor taken as calibrated)")
    return 0


def _keys(value: float, n_units: int) -> str:
    return f"not even all {n_units} keys" if value == float("inf") else f"about {value:.0f} keys"
