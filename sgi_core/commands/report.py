"""``python -m sgi_core report IN``: the paper's tables, baselines, confounds and detectors on a labelled file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sgi_core.commands.label_option import add_labels_option, labelled_table
from sgi_core.commands.options import (
    add_embedding_run_options,
    add_label_map_option,
    add_model_options,
    label_map_option,
    model_load_options,
    non_negative_int,
)
from sgi_core.commands.resource_options import add_resource_options, given_resources
from sgi_core.detectors.registry import FAMILIES
from sgi_core.embedding import DEFAULT_MODEL
from sgi_core.errors import SGIInputError


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("report", help="paper tables, baselines and confounds of SGI on a labelled file")
    p.add_argument("input", type=Path)
    p.add_argument("--models", default=DEFAULT_MODEL, help=f"comma-separated model names (default {DEFAULT_MODEL})")
    p.add_argument("--json", type=Path, default=None, help="also write the full report as JSON here")
    p.add_argument("--html", type=Path, default=None, metavar="OUT",
                   help="also write a self-contained HTML report (the first model's, as the Overview shows it) here")
    p.add_argument("--n-boot", type=non_negative_int, default=1000,
                   help="bootstrap resamples for the 95%% intervals (0: no intervals)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--label-positive", choices=["grounded", "hallucinated"], default=None,
                   help="what 1/true/yes means in the label column (default: from its name)")
    add_label_map_option(p)
    p.add_argument("--detector", action="append", default=[], metavar="COLUMN[:hallucinated]",
                   help="a numeric column to compare with SGI (repeatable); add ':hallucinated' when high values "
                        "mean hallucinated")
    families = "; ".join(f"'{name}': {family.explanation} ({family.fitting})" for name, family in FAMILIES.items())
    p.add_argument("--detectors", default="", metavar=",".join(FAMILIES),
                   help=f"also compute and judge these detector families per model ({families}); adds a combined "
                        "detector, out of fold")
    p.add_argument("--grounded-threshold", type=float, default=1.0,
                   help="SGI from which a response counts as grounded in the retrieval diagnosis (default 1.0)")
    add_resource_options(p)
    add_labels_option(p)
    add_model_options(p)
    add_embedding_run_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    import warnings

    from sgi_core.detectors.report import check_kinds
    from sgi_core.io.export import write_text_output
    from sgi_core.io.output_paths import check_output_file
    from sgi_core.io.triples import load_triples
    from sgi_core.pipelines.model_comparison import compare_models
    from sgi_core.progress import EmbeddingProgress
    from sgi_core.render.report import comparison_text, detector_comparison_text, retrieval_text
    from sgi_core.results import UndefinedStatisticWarning

    for path, what in ((args.json, "report JSON"), (args.html, "HTML report")):
        if path:  # before any work: a path that cannot be written costs nothing
            check_output_file(path, inputs=[args.input], what=what)
    table = labelled_table(args, load_triples(args.input, label_positive=args.label_positive,
                                              label_map=label_map_option(args)))
    for warning in table.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    declared = _check_detector_columns(args.detector, table)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    kinds = check_kinds(k.strip() for k in (args.detectors or "").split(",") if k.strip())  # before models load
    resources = given_resources(args)
    kinds = (*kinds, *(name for name, family in FAMILIES.items()  # a family whose resource is given is computed
                       if family.resource is not None and family.resource.field in resources and name not in kinds))
    with warnings.catch_warnings():
        # Each report keeps its caveats as notes, printed at the end of the text.
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        comparison, scored = compare_models(
            table, models, n_boot=args.n_boot, seed=args.seed, batch_size=args.batch_size,
            use_cache=not args.no_cache, progress_for=EmbeddingProgress, detector_kinds=kinds,
            load_options=model_load_options(args), context_strategy=args.context_strategy,
            resources=resources, declared=declared,
        )
    print(comparison_text(comparison))
    report_json = comparison.to_report_json()
    frame = scored[models[0]]
    extras = _retrieval_and_detectors(args, table, frame, comparison.reports[models[0]], declared)
    text_of = {"retrieval": retrieval_text, "detectors": detector_comparison_text}
    for key, result in extras.items():
        print(f"\n{text_of[key](result)}")
        report_json[key] = result.to_dict()
    if args.json:
        write_text_output(json.dumps(report_json, indent=2), args.json, inputs=[args.input], what="report JSON")
        print(f"wrote {args.json}", file=sys.stderr)
    if args.html:
        write_text_output(_html(args, table, comparison, scored[models[0]], models[0]), args.html,
                          inputs=[args.input], what="HTML report")
        print(f"wrote {args.html}", file=sys.stderr)
    return 0


def _html(args, table, comparison, frame, model: str) -> str:
    """The first model's report as one HTML file, drawn as the Overview draws it."""
    # The dashboard's drawing layer (figures, no Streamlit state): the one place figures are made.
    from sgi_core.render.html_report import file_report
    from sgi_core.render.provenance import file_fingerprint, provenance

    rep = comparison.reports[model]
    labels = ", ".join(path.name for path in args.labels) if args.labels else "the file's label column"
    facts = provenance(file=table.source, fingerprint=file_fingerprint(args.input), rows=table.n_rows, model=model,
                       backend=comparison.backends[model], precision=args.precision, labels=labels)
    return file_report(rep, comparison.verdicts[model], frame, {rep.score_col: rep.length_matched}, facts)


def _check_detector_columns(specs, table) -> tuple:
    """Before any model loads: the specs of the ``--detector`` columns, each in the file and neither the label in
    disguise nor an id."""
    from sgi_core.evaluation.label_leaks import screen_columns
    from sgi_core.scores.selection import declared_spec

    declared = tuple(declared_spec(spec) for spec in specs)
    columns = [spec.name for spec in declared]
    for column in columns:
        if column not in table.frame.columns:
            raise SGIInputError(f"detector column '{column}' is not in the file", source=table.source,
                                hint=f"Columns present: {', '.join(map(str, table.frame.columns))}")
    offered = [column for column in columns if column in table.unmapped_columns]
    screen = screen_columns(table.frame, table.frame["label"].to_numpy(), offered)
    for column in columns:
        why = (screen.refused_as_score(column) if column in offered
               else f"'{column}' is the label, a row number or a mapped text column")
        if why:
            raise SGIInputError(f"{why}, so it cannot be a detector score", source=table.source, column=column,
                                hint="Give the column of another detector's score per row")
    return declared


def _retrieval_and_detectors(args, table, frame, report, declared) -> dict:
    """The optional parts of ``report``: retrieval metrics when the file has id lists, declared detectors."""
    from sgi_core.detectors.folds import question_groups
    from sgi_core.evaluation.detectors import compare_detectors
    from sgi_core.evaluation.retrieval_report import retrieval_report
    from sgi_core.scores.baselines import response_length

    extras = {}
    rag = retrieval_report(frame, grounded_threshold=args.grounded_threshold, source=table.source)
    if rag is not None:
        extras["retrieval"] = rag
    if declared:
        # The report judged each declared column once, keyed by its registry name; the comparison reads it there.
        scores = {report.score_col: frame[report.score_col].to_numpy(),
                  **{spec.oriented_name: spec.oriented(frame[spec.name], source=table.source) for spec in declared}}
        extras["detectors"] = compare_detectors(scores, frame["label"].to_numpy(), n_boot=args.n_boot,
                                                seed=args.seed, lengths=response_length(frame["response"]),
                                                groups=question_groups(frame),
                                                judgements={name: report.judgements[name] for name in scores})
    return extras
