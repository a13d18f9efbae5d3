"""The question bank's texts for Babel: the extractor ``babel.cfg`` names.

The bank's titles, tasks, hints, constraint wordings and test-case labels are plain strings in its
declarations, and a class variant's from its family's template, words and notes
(``questions/_variants.py``), so no ``_()`` marker can reach them. :func:`extract_bank` lists them all for ``pybabel extract`` (see
docs/translating.md); at run time :mod:`gather_course._i18n` translates them where they are
shown. Course tooling: nothing a learner's code or the grader runs imports this module.

>>> any(where.endswith(": task note") for _text, where in bank_messages())
True
"""

from __future__ import annotations

from ..questions import exercise, exercise_ids


def bank_messages() -> list[tuple[str, str]]:
    """Every text of the question bank a learner can see, with where it is used.

    Titles, tasks, hints, constraint wordings and test-case labels of every question, and the
    titles, task templates, words and notes of every class variant:
    ``[(text, "basics.pick_per_row: hint 2"), ...]``. The bank's texts are plain strings in
    its declarations, so Babel's extractor for them is :func:`extract_bank`, and ``_()``
    translates them where they are shown.
    """
    found: list[tuple[str, str]] = []
    for qid in exercise_ids():
        q = exercise(qid)
        found += [(q.title, f"{qid}: title")]
        found += [(q.task, f"{qid}: task")] * (q.family is None)
        found += [(h, f"{qid}: hint {i}") for i, h in enumerate(q.hints, 1)]
        found += [(t, f"{qid}: constraint") for t in [*q.forbid.values(), *q.require.values()]]
        found += [(q.no_variant_why, f"{qid}: why no variant")] * bool(q.no_variant_why)
        sizes = [*q.sizes, *q.large_sizes]
        found += [(s["label"], f"{qid}: test case") for s in sizes if "label" in s]
        for params in q.family.every() if q.family else []:
            v, where = q.family.build(params), f"{qid} (class variants)"
            found += [(v.title, f"{where}: title")] * bool(v.title)
            found += [(v.template, f"{where}: task")]
            found += [(w, f"{where}: task word") for w in v.words.values()]
            found += [(n, f"{where}: task note") for n in v.notes]
    return found


def extract_bank(fileobj, keywords, comment_tags, options):
    """Babel extraction method for the bank's texts (see ``babel.cfg``)."""
    seen: dict[str, list[str]] = {}
    for text, where in bank_messages():
        seen.setdefault(text, []).append(where)
    for text, wheres in seen.items():
        yield 0, None, text, wheres
