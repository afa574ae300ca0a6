"""Converters from public benchmark files to triples (question, context, response, label)."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json

#: Raw HaluEval fields per task: (context, question or None, right answer, hallucinated answer).
HALUEVAL_FIELDS = {
    "qa": ("knowledge", "question", "right_answer", "hallucinated_answer"),
    "dialogue": ("knowledge", "dialogue_history", "right_response", "hallucinated_response"),
    "summarization": ("document", None, "right_summary", "hallucinated_summary"),
}

#: The question used for HaluEval summarization, which has none of its own.
SUMMARIZATION_QUESTION = "Summarize the document."


def convert_halueval(path: str | Path, *, task: str = "qa") -> pd.DataFrame:
    """Read a raw HaluEval JSON Lines file into paired triples.

    Each record gives two rows, its right answer (label 1) and its hallucinated
    answer (label 0), linked by ``pair_id``; ``answer_type`` says which is which.

    Parameters
    ----------
    path : path-like
        ``qa_data.json``, ``dialogue_data.json`` or ``summarization_data.json``.
    task : {"qa", "dialogue", "summarization"}

    Raises
    ------
    SGIInputError
        Unknown task, invalid JSON, or a record missing a field (with its line number).
    """
    if task not in HALUEVAL_FIELDS:
        raise SGIInputError(f"unknown HaluEval task '{task}'", hint=f"Use one of {', '.join(HALUEVAL_FIELDS)}")
    context_key, question_key, right_key, halluc_key = HALUEVAL_FIELDS[task]
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            record = loads_json(line, source=str(path), rows=[number], hint="Each line must be one JSON object")
            if not isinstance(record, dict):
                raise SGIInputError("a JSON Lines record must be an object", source=str(path), rows=[number])
            needed = [k for k in (context_key, question_key, right_key, halluc_key) if k]
            missing = [k for k in needed if k not in record]
            if missing:
                raise SGIInputError(f"record lacks {', '.join(missing)}", source=str(path), rows=[number],
                                    hint=f"Is this the HaluEval {task} file?")
            question = record[question_key] if question_key else SUMMARIZATION_QUESTION
            pair_id = len(rows) // 2
            for answer_type, key, label in (("right", right_key, 1), ("hallucinated", halluc_key, 0)):
                rows.append({
                    "question": question, "context": record[context_key], "response": record[key],
                    "label": label, "id": f"halueval_{task}_{pair_id}_{answer_type}",
                    "pair_id": pair_id, "answer_type": answer_type,
                })
    return pd.DataFrame(rows)


def _split_answers(cell) -> list[str]:
    if not isinstance(cell, str):
        return []
    return [part.strip() for part in cell.split(";") if part.strip()]


def convert_truthfulqa(path: str | Path, *, context: str = "references", max_incorrect: int = 2,
                       seed: int = 0) -> pd.DataFrame:
    """Read the TruthfulQA CSV into triples.

    Rows per question: the best answer (label 1) and up to ``max_incorrect``
    incorrect answers (label 0).

    Parameters
    ----------
    path : path-like
        ``TruthfulQA.csv`` (columns Type, Category, Question, Best Answer,
        Correct Answers, Incorrect Answers, Source).
    context : {"references", "question"}
        ``"references"``: all reference answers of the question, correct and
        incorrect, shuffled with ``seed`` and joined into one passage.
        ``"question"``: the question itself, as the paper's code does; this makes
        SGI ~1 for every row.
    max_incorrect : int
    seed : int
    """
    if context not in ("references", "question"):
        raise SGIInputError(f"unknown TruthfulQA context '{context}'", hint="Use 'references' or 'question'")
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    needed = ["Question", "Best Answer", "Correct Answers", "Incorrect Answers"]
    missing = [c for c in needed if c not in raw.columns]
    if missing:
        raise SGIInputError(f"missing columns {', '.join(missing)}", source=str(path),
                            hint="Is this the TruthfulQA CSV?")
    rng = random.Random(seed)
    rows = []
    for qid, record in raw.iterrows():
        correct, incorrect = _split_answers(record["Correct Answers"]), _split_answers(record["Incorrect Answers"])
        if context == "references":
            references = correct + incorrect
            rng.shuffle(references)
            ctx = " ".join(r if r.endswith((".", "?", "!")) else r + "." for r in references)
        else:
            ctx = record["Question"]
        extra = {"qid": qid, "category": record.get("Category", ""), "type": record.get("Type", "")}
        rows.append({"question": record["Question"], "context": ctx, "response": record["Best Answer"],
                     "label": 1, "id": f"truthfulqa_{qid}_best", **extra})
        for k, answer in enumerate(incorrect[:max_incorrect]):
            rows.append({"question": record["Question"], "context": ctx, "response": answer,
                         "label": 0, "id": f"truthfulqa_{qid}_incorrect{k}", **extra})
    return pd.DataFrame(rows)
