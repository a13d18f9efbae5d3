"""How fast the gradebook's one writer records a class, fed as fast as it takes verdicts.

    python benchmarks/bench_writer.py [--students 200] [--repeats 2] [--batch 1 64]
        [--per-student] [--db-url URL] [--before TREE]

Builds a class of ``--students`` submissions of ``basics`` (the released notebook, a late
one among them), registers the assignment, then hands :class:`.grading._record.Recorder`
every student's verdicts at once (a fake but valid result: every test cell judged, a note
on some) and times until :meth:`~.grading._record.Recorder.finish` returns with every score
read back. Each ``--batch`` size (students per gradebook transaction; 1 is a commit per
nbgrader step, as stock) is run ``--repeats`` times, alternately, each in a fresh process,
on fresh copies of the class: the ratios are side by side. New submissions are written in
bulk (``grading/_bulk.py``); ``--per-student`` adds the same 64-student batches written by
nbgrader's autograde once a student (the recorder's ``bulk=False``), and ``--before`` an
earlier revision's source tree (``git archive REV gather_course``). Prints one Markdown table:
students a second (wall), CPU seconds per student (this process: the writer's thread does
all the work), and the SQLite file's size. ``--db-url`` writes a database server's gradebook
instead (a PostgreSQL URL: each run gets a new database of its own on that server, as
nbgrader's assignment and student rows are shared by every course of a database: in one
database, every run after the first would grade the same students again). docs/benchmarks.md records runs.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gather_course.benchmark import machine  # noqa: E402  (after the path is set)

DUE = datetime.datetime(2026, 3, 1, 12, 0, 0)


def _class(root: Path, students: int, db_url: str | None, course_id: str) -> Path:
    """The course and its submissions (the released notebook each), the assignment known."""
    from gather_course.course._course import nbgrader_api
    from gather_course.grading._gradebook import register

    root.mkdir(parents=True)
    for folder in ("solutions", "exercises"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copy2(ROOT / "nbgrader_config.py", root)
    if db_url:
        with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
            f.write(f"\nc.CourseDirectory.db_url = {db_url!r}\n")
            f.write(f"c.CourseDirectory.course_id = {course_id!r}\n")
    released = root / "exercises" / "basics" / "basics.ipynb"
    for k in range(students):
        folder = root / "submitted" / f"s{k:05d}" / "basics"
        folder.mkdir(parents=True)
        stamp = DUE + datetime.timedelta(hours=30 if k % 10 == 3 else -2)  # some late
        (folder / "timestamp.txt").write_text(stamp.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
        shutil.copy2(released, folder / "basics.ipynb")
    with nbgrader_api(root) as api:
        register(api, root, "basics")
        with api.gradebook as gb:
            gb.update_or_create_assignment("basics", duedate=DUE)
    return root


def _results(students: int) -> list[dict]:
    """One valid result per student, as ``judge_student`` gives it."""
    from gather_course.grading._submission import graded_cells

    released = nbformat.read(ROOT / "exercises" / "basics" / "basics.ipynb", 4)
    gids = [gid for gid, _qid, _points in graded_cells(released)]
    return [
        {
            "student": f"s{k:05d}",
            "verdicts": {
                gid: {"passed": (k + n) % 3 != 0, "message": f"verdict {n}"}
                for n, gid in enumerate(gids)
            },
            "notes": ["the cell after the answer prints"] if k % 7 == 0 else [],
            "problem": "",
        }
        for k in range(students)
    ]


def _run(root: Path, results: list[dict], batch: int, bulk: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one Recorder run over ``results``; every score checked."""
    from gather_course.grading import _record
    from gather_course.grading._receipts import submission_times

    students = [r["student"] for r in results]
    times = submission_times(root, "basics", students, [])
    wall, cpu = time.perf_counter(), time.process_time()
    options = {"batch": batch} if batch else {}
    if not bulk:  # (a tree from before the bulk writer has no such option)
        options["bulk"] = False
    recorder = _record.Recorder(root, "basics", times, **options)
    try:
        for result in results:
            recorder.add(result)
        found, problems = recorder.finish(students)
    finally:
        recorder.close()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if problems or sorted(found) != students or not all(s.max_score > 0 for s in found.values()):
        raise SystemExit(f"batch {batch}: not every student recorded: {problems}")
    in_bulk = len(getattr(recorder, "in_bulk", ()))
    if bulk and hasattr(recorder, "in_bulk") and in_bulk != len(students):
        raise SystemExit(f"batch {batch}: {in_bulk} of {len(students)} students written in bulk")
    return wall, cpu


def _child(tree: str, batch: int, bulk: bool, root: str, students: int) -> None:
    """One run in a fresh process, with ``tree``'s package (this one, or ``--before``'s)."""
    sys.path.insert(0, tree)
    for name in [m for m in sys.modules if m.startswith("gather_course")]:
        del sys.modules[name]
    for module in ("nbgrader.converters", "nbgrader.preprocessors"):  # (as grading does,
        importlib.import_module(module)  # while the workers warm up: not timed)

    wall, cpu = _run(Path(root), _results(students), batch, bulk)
    sys.stdout.write(json.dumps([wall, cpu]) + "\n")


def _configs(args: argparse.Namespace) -> list[tuple[str, str, int, bool]]:
    """(label, package tree, batch, bulk) of every configuration timed."""
    configs = [("before", args.before, 0, True)] if args.before else []
    if args.per_student:
        configs.append(("autograde per student, batch 64", str(ROOT), 64, False))
    return configs + [(f"bulk, batch {b}", str(ROOT), b, True) for b in args.batch]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--db-url", default=None)
    parser.add_argument("--before", default=None, help="an earlier revision's source tree")
    parser.add_argument("--per-student", action="store_true", help="nbgrader's autograde too")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        tree, batch, bulk, root = args.child
        return _child(tree, int(batch), bulk == "1", root, args.students)
    runs: dict[str, list[tuple[float, float]]] = {c[0]: [] for c in _configs(args)}
    with tempfile.TemporaryDirectory(prefix="bench-writer-") as tmp:
        for r in range(args.repeats):
            for n, (label, tree, batch, bulk) in enumerate(_configs(args)):
                url = _database(args.db_url, f"bench_writer_{r}_{n}") if args.db_url else None
                root = _class(Path(tmp, f"c{r}-{n}"), args.students, url, f"w{r}-{n}")
                child = [sys.executable, __file__, "--students", str(args.students)]
                done = subprocess.run(
                    [*child, "--child", tree, str(batch), str(int(bulk)), str(root)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                runs[label].append(tuple(json.loads(done.stdout.splitlines()[-1])))
                shutil.rmtree(root)
    _table(args, runs)


def _database(url: str, name: str) -> str:
    """A new, empty database ``name`` on ``url``'s server (dropped first if there): its URL."""
    from sqlalchemy import create_engine, make_url, text

    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as db:
            db.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
            db.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def _table(args: argparse.Namespace, runs: dict[str, list[tuple[float, float]]]) -> None:
    db = "SQLite" if not args.db_url else args.db_url.split(":")[0]
    sys.stdout.write(
        f"machine: {machine()}; {args.students} students of basics, fed at once; "
        f"{db}; {args.repeats} runs each, alternately\n\n"
        "| writer | students/s (median) | runs (students/s) "
        "| CPU s per student (median) |\n|---|---:|---|---:|\n"
    )
    for label, done in runs.items():
        rates = [args.students / w for w, _ in done]
        cpu = statistics.median(c / args.students for _, c in done)
        each = ", ".join(f"{x:.1f}" for x in rates)
        sys.stdout.write(f"| {label} | {statistics.median(rates):.1f} | {each} | {cpu:.4f} |\n")


if __name__ == "__main__":
    main()
