"""Command line: ``bnma`` / ``python -m bnma_core``.

Sub-commands::

    bnma cv --data FILE|wbc [--target COL] --methods nb,tan,kdb --folds 10 --seed 1
            [--missing keep|drop] [--discretization median|quantile] [--n-bins 3]
            [--workers 1 | --scheduler tcp://HOST:PORT] [--out results.csv]
            [--predictions oof.csv] [--set brai.max_order=4 ...]
    bnma report --data FILE|wbc [--target COL] --methods nb,bma10 --out report.html
            [--positive CLASS] [--folds 10] [--seed 1] [--workers 1 | --scheduler ADDR]
    bnma methods
    bnma sample --network alarm --rows 1000 --seed 0 --out alarm.csv
    bnma explain --data FILE|wbc --row N [--target COL] [--missing keep|drop] [--k 2]
            [--pairs 5] [--method bma10] [--interval] [--level 0.9] [--draws 400] [--seed 0]
            [--shapley] [--next-test] [--threshold 0.5] [--json]
    bnma fit --data FILE|wbc --method stack --seed 1 --out model.bnma [--cv-folds 10]
    bnma predict --model model.bnma --data new.csv [--interval] [--shapley]
            [--out scored.csv|scored.parquet]
    bnma export --model model.bnma --format bif|xmlbif --out DIR

Every command that writes files checks all its output paths before it starts
(:func:`check_outputs`): an existing file is kept unless ``--force`` is given, a symbolic
link, an empty name, the same file named twice or a missing folder is refused.

``--data`` takes a CSV path or the name of a bundled dataset (``wbc``). ``--missing`` is the
dataset-level policy for rows with a missing value, with the dashboard's default: ``keep``
(the methods learn from available cases and marginalize at prediction) or ``drop``. Row
numbers always refer to the file (0 = first data row after the header).

Bad input (unreadable data, unknown method, bad numbers) prints one line ``bnma: error: ...``
on stderr and exits with status 2; never a traceback. Output piped into a reader that closes
early (``bnma methods | head -1``) ends quietly.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from .data import MISSING_POLICIES, DataError
from .limits import INPUT_RANGES

EXIT_USAGE = 2


class CLIError(Exception):
    """A user error reported as one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def _positive_int(minimum: int):
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum} (got {value})")
        return value
    return convert


def _seed(text: str) -> int:
    """A seed within :data:`bnma_core.limits.INPUT_RANGES` (the dashboard's range)."""
    from .limits import INPUT_RANGES

    problem = INPUT_RANGES["seed"].problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return int(text)


def _n_jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value == 0 or value < -1:
        raise argparse.ArgumentTypeError("use a positive number of workers, or -1 for all cores")
    return value


def resolve_data(text: str) -> str:
    """A CSV path as given, or the path of the bundled dataset named ``text`` (``wbc`` or
    ``wbc.csv``) when no such file exists (:meth:`DatasetSpec.from_data_argument`)."""
    from .data.spec import DatasetSpec

    return str(DatasetSpec.from_data_argument(text).path())


def _add_data_arguments(p: argparse.ArgumentParser, help_data: str) -> None:
    p.add_argument("--data", required=True, help=help_data)
    p.add_argument("--target", default=None, help="name of the class column")
    p.add_argument("--missing", choices=list(MISSING_POLICIES), default="keep",
                   help="rows with a missing value: keep them (default, as the dashboard; "
                        "methods learn from available cases and marginalize at prediction) "
                        "or drop them")
    p.add_argument("--drop", action="append", default=[], metavar="COLUMN[,COLUMN...]",
                   help="columns to leave out (repeatable), e.g. an identifier or a column "
                        "with too many categories")
    p.add_argument("--sep", default=None,
                   help="column separator, if the detected one is wrong (e.g. ';' or '\\t')")
    p.add_argument("--decimal", default=None, choices=[".", ","],
                   help="decimal mark, if the detected one is wrong")


def _add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--workers`` / ``--scheduler``: where the fits run (the grid engine of ``bnma
    reproduce``), and ``--n-jobs``, the former name of ``--workers``."""
    p.add_argument("--workers", type=_positive_int(1), default=None,
                   help="worker processes: 1 (default) fits in this process, more on a local "
                        "Dask cluster (the engine of `bnma reproduce`); same results")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="run the fits on this existing Dask cluster instead")
    p.add_argument("--n-jobs", type=_n_jobs, default=None, help=argparse.SUPPRESS)


def _engine_options(args: argparse.Namespace) -> dict:
    """``workers`` / ``scheduler`` keywords of :func:`bnma_core.evaluation.cross_validate`
    (``--n-jobs`` read as ``--workers``, with a note)."""
    workers = args.workers
    if args.n_jobs is not None:
        print("bnma: note: --n-jobs is renamed --workers; it will be removed.", file=sys.stderr)
        if workers is None:
            workers = (os.cpu_count() or 1) if args.n_jobs == -1 else args.n_jobs
    return {"workers": workers or 1, "scheduler": args.scheduler}


def _write_predictions(pred, path: str) -> None:
    """The out-of-fold table as CSV (formula cells neutralised) or Parquet."""
    try:
        if path.lower().endswith(".parquet"):
            pred.to_parquet(path)
        else:
            from .export import table_csv

            Path(path).write_bytes(table_csv(pred.table(), index=False))
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror or exc}") from None


def check_outputs(outputs: Sequence[tuple[str, str | None]], force: bool = False,
                  folders: Sequence[str] = ()) -> list[Path]:
    """Check every output path of a command before it runs (nothing is computed first).

    Parameters
    ----------
    outputs : sequence of (option, path or None)
        E.g. ``[("--out", args.out), ("--predictions", args.predictions)]``; None = not asked.
    force : bool
        Overwrite existing files (``--force``).
    folders : sequence of str
        Options whose path is a folder to write files into (created if absent; an existing,
        non-empty folder needs ``force``).

    Returns
    -------
    list of Path
        The paths asked for, in order.

    Raises
    ------
    CLIError
        One sentence: an empty name, a symbolic link (never followed), the same file named
        twice, a missing parent folder, a folder where a file is expected, or an existing
        file (or non-empty folder) without ``--force``.
    """
    seen: dict[Path, str] = {}
    out = []
    for option, text in outputs:
        if text is None:
            continue
        if not str(text).strip():
            raise CLIError(f"{option} is an empty file name; give a file name")
        path = Path(text)
        if path.is_symlink():
            raise CLIError(f"{option} {text} is a symbolic link; name the file itself "
                           "(links are not followed)")
        key = path.resolve()
        if key in seen:
            raise CLIError(f"{seen[key]} and {option} name the same file {text}; give two "
                           "different files")
        seen[key] = option
        parent = path.resolve().parent
        if not parent.is_dir():
            raise CLIError(f"cannot write {text}: the folder {path.parent} does not exist")
        if option in folders:
            if path.exists() and not path.is_dir():
                raise CLIError(f"{option} {text} is a file; name a folder")
            if path.is_dir() and any(path.iterdir()) and not force:
                raise CLIError(f"the folder {text} is not empty; use --force to write into it")
        elif path.is_dir():
            raise CLIError(f"{option} {text} is a folder; name a file")
        elif path.exists() and not force:
            raise CLIError(f"{text} exists; use --force to overwrite it")
        out.append(path)
    return out


def _add_force(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true",
                   help="overwrite existing output files")


def _separator(args: argparse.Namespace) -> str | None:
    """``--sep`` as the character it names (``'\\t'`` -> tab), None when not given."""
    return args.sep.encode().decode("unicode_escape") if args.sep else None


def data_spec(args: argparse.Namespace, **settings):
    """The dataset the data arguments name (``--data`` a CSV path or a bundled name such as
    ``wbc``, ``--target --missing --drop --sep --decimal``, and ``settings``): the same
    :class:`~bnma_core.data.spec.DatasetSpec` the dashboard's Data page builds, so both read
    the data the same way."""
    from .data.spec import DatasetSpec

    drop = [c.strip() for item in args.drop for c in item.split(",") if c.strip()]
    sep = _separator(args)
    return DatasetSpec.from_data_argument(args.data, target=args.target, missing=args.missing,
                                          drop=tuple(drop), sep=sep, decimal=args.decimal,
                                          **settings)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bnma", description="BNMA Studio: Bayesian network classifiers and "
                     "Bayesian model averaging from the command line.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    from .reproduce import cli as reproduce_cli

    reproduce_cli.add_parser(sub)  # bnma reproduce PAPER

    cv = sub.add_parser("cv", help="stratified k-fold cross-validation of several methods",
                        description="Cross-validate methods on a CSV file; prints a summary "
                        "table (accuracy mean ± sd over folds, AUC, log loss, fit time).")
    _add_data_arguments(cv, "CSV file or bundled dataset name (wbc); class column: --target, "
                        "else a column named class/target/label/diagnosis, else the last")
    from .classifiers.registry import DEFAULT_METHOD

    cv.add_argument("--methods", default=",".join(dict.fromkeys([DEFAULT_METHOD, "nb", "tan"])),
                    help="comma-separated method names (see `bnma methods`; default: the "
                         f"recommended method {DEFAULT_METHOD} beside naive Bayes and TAN)")
    cv.add_argument("--folds", type=_positive_int(2), default=10)
    cv.add_argument("--seed", type=_positive_int(0), default=1)
    cv.add_argument("--discretization", choices=["median", "quantile"], default="median",
                    help="how continuous columns are binned (fitted on each training fold)")
    cv.add_argument("--n-bins", type=_positive_int(2), default=3,
                    help="bins for --discretization quantile")
    _add_engine_arguments(cv)
    cv.add_argument("--out", default=None, help="write the per-fold results to this CSV")
    cv.add_argument("--predictions", default=None, metavar="FILE",
                    help="write every row's out-of-fold class probabilities (columns row, "
                         "fold, method, true_class, one P(class) per class) to this CSV, or "
                         "Parquet when FILE ends in .parquet (with the seed and the cut "
                         "points per fold)")
    _add_force(cv)
    cv.add_argument("--no-progress", action="store_true", help="no progress bar")
    cv.add_argument("--set", action="append", default=[], metavar="METHOD.PARAM=VALUE",
                    help="a parameter of one method, repeatable (e.g. --set brai.max_order=4 "
                         "--set brai.max_ci_tests=None); values are Python literals")

    _add_report_parser(sub, DEFAULT_METHOD)

    sub.add_parser("methods", help="list the available methods",
                   description="List the registered classification methods.")

    sm = sub.add_parser("sample", help="sample rows from a bundled Bayesian network",
                        description="Forward-sample a bundled network (e.g. alarm) to CSV.")
    sm.add_argument("--network", default="alarm", help="bundled network name or a .bif file")
    sm.add_argument("--rows", type=_positive_int(1), default=1000)
    sm.add_argument("--seed", type=_positive_int(0), default=0)
    sm.add_argument("--out", required=True, help="output CSV file")
    sm.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_force(sm)
    _add_explain_parser(sub)
    _add_model_parsers(sub)
    return parser


# --- commands ------------------------------------------------------------------------------------

def _check_methods(text: str) -> list[str]:
    from .classifiers.registry import available_methods, is_method

    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise CLIError("no methods given; e.g. --methods nb,tan,kdb")
    unknown = [m for m in names if not is_method(m)]
    if unknown:
        raise CLIError(f"unknown method(s) {', '.join(unknown)}; available: "
                       + ", ".join(available_methods()))
    return list(dict.fromkeys(names))


def _method_params(items: list[str], methods: list[str]) -> dict[str, dict]:
    """``--set METHOD.PARAM=VALUE`` options as ``method_params`` of
    :func:`bnma_core.evaluation.cross_validate` (values: Python literals, else strings)."""
    import ast

    from .classifiers.registry import make_classifier

    out: dict[str, dict] = {}
    for item in items:
        head, eq, text = item.partition("=")
        method, dot, param = head.strip().partition(".")
        if not (eq and dot and method and param):
            raise CLIError(f"--set {item!r}: write METHOD.PARAM=VALUE, e.g. --set "
                           "brai.max_order=4")
        if method not in methods:
            raise CLIError(f"--set {item!r}: {method} is not among --methods "
                           f"({', '.join(methods)})")
        known = make_classifier(method).get_params()
        if param not in known:
            raise CLIError(f"--set {item!r}: {method} has no parameter {param}; its "
                           f"parameters: {', '.join(sorted(known))}")
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            value = text.strip()
        out.setdefault(method, {})[param] = value
    return out


def format_summary(summary) -> str:
    """Plain-text table of :func:`bnma_core.evaluation.summarize` output."""
    head = f"{'method':<10} {'folds':>5} {'accuracy':>17} {'AUC':>7} {'log loss':>9} " \
           f"{'fit s/fold':>10}"
    lines = [head, "-" * len(head)]
    for r in summary.itertuples(index=False):
        acc = f"{r.accuracy_mean:.4f} ± {r.accuracy_std:.4f}"
        lines.append(f"{r.method:<10} {r.folds:>5} {acc:>17} {r.auc_mean:>7.4f} "
                     f"{r.log_loss_mean:>9.4f} {r.fit_time_s_mean:>10.4f}")
    return "\n".join(lines)


def _print_notices(ds) -> None:
    """How the file was read (separator, decimal comma, identifier columns removed, columns
    binned ...), on stderr before any result: the same notices the dashboard shows."""
    for notice in ds.notices:
        print(f"bnma: note: {notice}", file=sys.stderr)


def _fold_progress(args: argparse.Namespace, n_methods: int):
    """A tqdm bar over the (method × fold) fits on stderr (none with ``--no-progress``) and the
    ``progress(done, total, method, fold)`` callback of cross-validation that advances it."""
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=n_methods * args.folds, file=sys.stderr, delay=1.0,
                   unit="fold", desc="cross-validation", leave=False)

    def progress(done: int, total: int, method: str, fold: int) -> None:
        if bar is not None:
            bar.set_postfix_str(f"{method} fold {fold + 1}", refresh=False)
            bar.update(1)

    return bar, progress


def _cmd_cv(args: argparse.Namespace) -> int:
    from .data import check_discretization
    from .evaluation import cross_validate, summarize

    methods = _check_methods(args.methods)
    params = _method_params(args.set, methods)
    check_discretization(args.discretization, args.n_bins)
    check_outputs([("--out", args.out), ("--predictions", args.predictions)], args.force)
    ds = data_spec(args, discretization=args.discretization, bins=args.n_bins).build()
    _print_notices(ds)
    bar, progress = _fold_progress(args, len(methods))
    t0 = time.perf_counter()
    try:
        results, pred = cross_validate(ds, methods, folds=args.folds, seed=args.seed,
                                       progress=progress, missing=args.missing,
                                       method_params=params, return_proba=True,
                                       **_engine_options(args))
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    print(format_summary(summarize(results)))
    n_rows = int(results["n_test"].sum()) // max(1, len(methods))
    print(f"\n{args.folds}-fold stratified CV, seed {args.seed}, {n_rows} "
          f"rows (missing values: {args.missing}); wall time {wall:.1f} s")
    dropped = results.groupby("method", sort=False)["n_train_dropped"].sum()
    for method, n in dropped.items():
        if n:
            print(f"{method} cannot learn from rows with missing values: "
                  f"{int(n) // args.folds} incomplete training rows per fold left out")
    if args.out is not None:
        try:
            from .export import table_csv

            Path(args.out).write_bytes(table_csv(results, index=False))
        except OSError as exc:
            raise CLIError(f"cannot write {args.out}: {exc.strerror or exc}") from None
        print(f"per-fold results written to {args.out}")
    if args.predictions is not None:
        _write_predictions(pred, args.predictions)
        print(f"out-of-fold probabilities written to {args.predictions}")
    return 0


def _add_report_parser(sub, default_method: str) -> None:
    rp = sub.add_parser("report", help="cross-validate and write a model report (HTML)",
                        description="Cross-validate methods on a CSV file and write one "
                        "self-contained, printable HTML report in the order of the TRIPOD+AI "
                        "items: data, outcome, predictors and their cut points per fold, "
                        "missing values, methods and settings, discrimination and calibration "
                        "with intervals, decision curve, structure appendix.")
    _add_data_arguments(rp, "CSV file or bundled dataset name (wbc)")
    rp.add_argument("--methods", default=default_method,
                    help=f"comma-separated method names (default: {default_method})")
    rp.add_argument("--out", required=True, help="the HTML file to write")
    rp.add_argument("--positive", default=None,
                    help="the positive class (default: the second class in sorted order)")
    rp.add_argument("--folds", type=_positive_int(2), default=10)
    rp.add_argument("--seed", type=_positive_int(0), default=1)
    rp.add_argument("--discretization", choices=["median", "quantile"], default="median",
                    help="how continuous columns are binned (fitted on each training fold)")
    rp.add_argument("--n-bins", type=_positive_int(2), default=3,
                    help="bins for --discretization quantile")
    rp.add_argument("--bootstrap", type=_positive_int(1), default=None, metavar="N",
                    help="bootstrap replicates of the intervals (default 2000)")
    rp.add_argument("--no-structures", action="store_true",
                    help="leave out the structure appendix (no fit on all rows)")
    _add_engine_arguments(rp)
    rp.add_argument("--set", action="append", default=[], metavar="METHOD.PARAM=VALUE",
                    help="a parameter of one method, repeatable (as in bnma cv)")
    rp.add_argument("--no-progress", action="store_true", help="no progress bar")
    rp.add_argument("--model", default=None, metavar="MODEL.bnma",
                    help="external validation of this saved model on --data (its cases with "
                         "their outcome) instead of cross-validating --methods")
    _add_force(rp)


def _cmd_report(args: argparse.Namespace) -> int:
    from .data import check_discretization
    from .report import model_report

    if args.model is not None:
        return _cmd_validation_report(args)

    methods = _check_methods(args.methods)
    params = _method_params(args.set, methods)
    check_discretization(args.discretization, args.n_bins)
    (out,) = check_outputs([("--out", args.out)], args.force)
    ds = data_spec(args, discretization=args.discretization, bins=args.n_bins).build()
    _print_notices(ds)
    bar, progress = _fold_progress(args, len(methods))
    try:
        page = model_report(ds, methods, positive=args.positive, folds=args.folds,
                            seed=args.seed, discretization=args.discretization,
                            n_bins=args.n_bins, missing=args.missing, method_params=params,
                            source=args.data, structures=not args.no_structures,
                            n_bootstrap=args.bootstrap, progress=progress,
                            **_engine_options(args))
    finally:
        if bar is not None:
            bar.close()
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"model report of {', '.join(methods)} on {args.data} written to {args.out}")
    return 0


def _cmd_methods(args: argparse.Namespace) -> int:
    from .classifiers.registry import ALIASES, METHODS, RENAMED, alias_meaning

    width = max(len(n) for n in [*METHODS, *ALIASES, *RENAMED])
    for name, spec in METHODS.items():
        print(f"{name:<{width}}  {spec.display_name}")
        print(f"{'':<{width}}  {spec.description}")
    if ALIASES:
        print("\nAliases (short codes):")
        for name in ALIASES:
            print(f"{name:<{width}}  {alias_meaning(name)}")
    if RENAMED:
        print("\nFormer codes (still accepted with a warning until the next release):")
        for name in RENAMED:
            print(f"{name:<{width}}  now {RENAMED[name]}")
    return 0


def _cmd_sample(args: argparse.Namespace) -> int:
    try:
        from .network import load_network
    except ImportError:
        raise CLIError("network support (bnma_core.network) is not installed") from None
    from .network.sampling import labels_frame, sample_chunks

    check_outputs([("--out", args.out)], args.force)
    net = load_network(args.network)
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=args.rows, file=sys.stderr, delay=1.0, unit="row", unit_scale=True,
                   desc="sampling", leave=False)
    try:  # streamed: the rows of one draw with this seed, written block by block
        with open(args.out, "w", newline="") as f:
            for i, codes in enumerate(sample_chunks(net, args.rows, args.seed)):
                labels_frame(net, codes).to_csv(f, index=False, header=i == 0)
                if bar is not None:
                    bar.update(len(codes))
    except OSError as exc:
        raise CLIError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    finally:
        if bar is not None:
            bar.close()
    print(f"{args.rows} rows x {net.n_vars} columns sampled from {args.network} "
          f"(seed {args.seed}) -> {args.out}")
    return 0


# --- explain (one row: UKDB's two networks, or any method's prediction with its uncertainty) ---

def _unit_interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, e.g. 0.9 (got {value})")
    return value


def _in_range(name: str):
    """An argument checked against ``bnma_core.limits.INPUT_RANGES[name]`` (the page's
    limit), refused with its one sentence."""
    def convert(text: str) -> int:
        problem = INPUT_RANGES[name].problem(text)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return int(text)
    return convert


def _add_explain_parser(sub) -> None:
    ex = sub.add_parser(
        "explain", help="explain one row: probability, how sure, why, which test next",
        description="Train on every other row of the file and explain the chosen row. Without "
        "--method and the options below: UKDB's explanation (the general and the per-row "
        "network, and the value pairs whose local dependence differs most). With --method (or "
        "--interval, --shapley, --next-test, --json): the averaged probability with the "
        "interval over the averaged models, the contribution of each finding (Shapley "
        "values) and the value of each unknown finding (DESIGN §15).")
    _add_data_arguments(ex, "CSV file or bundled dataset name (wbc)")
    ex.add_argument("--row", type=_positive_int(0), required=True,
                    help="row of the file to explain (0 = first data row after the header)")
    ex.add_argument("--k", type=_positive_int(0), default=2, help="UKDB's k (default 2)")
    ex.add_argument("--pairs", type=_positive_int(1), default=5,
                    help="how many differing attribute-value pairs to list")
    ex.add_argument("--method", default=None,
                    help="method to explain with (default with the options below: the "
                         "recommended one; see `bnma methods`)")
    ex.add_argument("--interval", action="store_true",
                    help="add the interval with parameter uncertainty (Dirichlet draws)")
    ex.add_argument("--level", type=_unit_interval, default=0.9,
                    help="probability of the intervals (default 0.9)")
    ex.add_argument("--draws", type=_in_range("draws"), default=400,
                    help="parameter draws of --interval (default 400; at most "
                         f"{INPUT_RANGES['draws'].high:,}, and fewer when the explanation "
                         "budget, BNMA_EXPLAIN_BUDGET_CPU_S, needs it)")
    ex.add_argument("--seed", type=_seed, default=0,
                    help="seed of every random step: the fit of a randomized method (its "
                         "random_state) and the parameter draws (default 0); the same command "
                         "with the same seed prints the same numbers")
    ex.add_argument("--shapley", action="store_true",
                    help="contribution of each finding (Shapley values of the log-odds)")
    ex.add_argument("--next-test", action="store_true",
                    help="rank the unknown findings by value of information")
    ex.add_argument("--threshold", type=_unit_interval, default=0.5,
                    help="decision threshold of --next-test (default 0.5)")
    ex.add_argument("--json", action="store_true",
                    help="print one JSON object with everything above (probability, both "
                         "intervals, contributions keyed by column name, next-test ranking)")
    ex.add_argument("--report", metavar="FILE", default=None,
                    help="write the one-page case report (HTML that prints on one A4 page), "
                         "the same as the Patient page's button")
    ex.add_argument("--identifier", default="",
                    help="patient identifier printed on --report's page (editable there)")
    ex.add_argument("--notes", default="", help="notes printed on --report's page")


def explain_row(est, ds, pos: int, train_rows, level: float = 0.9, n_draws: int = 400,
                seed: int = 0, threshold: float = 0.5) -> dict:
    """Everything ``bnma explain --json`` prints for row position ``pos``: the prediction
    with both intervals, the findings' contributions, the next-test ranking and how unusual
    the case is (``bnma_core.explain``; a part a method cannot give holds
    ``{"unavailable": reason}``). The Patient page computes the same with the same
    defaults."""
    from . import explain
    from .viz.patient import MISSING, verdict

    x = ds.X[pos]
    train = ds.subset(train_rows)
    out: dict = {}
    # sized against the explanation budget before anything runs (DESIGN §15, Budget)
    plan = explain.plan_explanation(est, x, n_draws=n_draws, train=train, codes=True)
    out["budget"] = plan.to_dict()
    if plan.sentences:
        out["budget_notes"] = plan.sentences
    n_draws = plan.options("draws").get("n_draws", 0) if n_draws else 0
    try:
        pred = explain.predict_with_uncertainty(est, x, level, n_draws, train, seed, codes=True)
    except ValueError as exc:
        pred = explain.predict_with_uncertainty(est, x, level, codes=True)
        out["parameter_interval_unavailable"] = str(exc)
    v = verdict(pred)
    out.update(prediction=pred.to_dict(0), sentence=v["sentence"], uncertain=v["uncertain"],
               findings={f: (MISSING if c < 0 else str(ds.feature_states[j][c]))
                         for j, (f, c) in enumerate(zip(ds.feature_names, x))})
    target = int(pred.predicted[0])
    for key, compute in (
            ("shapley", lambda: explain.shapley_values(est, x, seed=seed, codes=True,
                                                       **plan.options("shapley"))
             .to_dict(pred.classes)),
            ("next_test", lambda: _next_test_ranking(explain.next_test(
                est, x, threshold=threshold, target=target, codes=True), out)),
            ("unusual", lambda: explain.unusual_case(est, x, codes=True,
                                                     **plan.options("unusual")).to_dict())):
        if plan.refused(key):
            out[key] = {"unavailable": plan.refused(key)}
            continue
        try:
            out[key] = compute()
        except ValueError as exc:
            out[key] = {"unavailable": str(exc)}
    return out


def _explain_case(args: argparse.Namespace) -> tuple[Any, int, Any, str]:
    """The data set of ``bnma explain``, the position of ``--row`` in it, the positions of
    the other rows (the training rows) and the row's true class (or "missing").

    Raises
    ------
    CLIError
        ``--row`` past the end of the data or not a row id of it.
    """
    import numpy as np

    ds = data_spec(args).build()
    _print_notices(ds)
    last = int(ds.row_ids[-1])
    if args.row > last:
        raise CLIError(f"--row {args.row} is past the end of the data (the last row is {last}; "
                       "the first is 0)")
    try:
        pos = ds.position_of_row(args.row)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    train = np.delete(np.arange(ds.n_rows), pos)
    truth = ds.classes[ds.y[pos]] if ds.y[pos] >= 0 else "missing"
    return ds, pos, train, truth


def _print_shapley(res: dict) -> None:
    """Print the per-finding contributions to the log-odds of :func:`explain_row`'s result
    (or why they are unavailable)."""
    sh = res["shapley"]
    if "unavailable" in sh:
        print(f"Contributions unavailable: {sh['unavailable']}")
        return
    print(f"Contributions to the log-odds of {sh['target']} (from "
          f"{sh['log_odds_no_findings']:+.2f} with no finding known to "
          f"{sh['log_odds']:+.2f}):")
    for name, d in sh["contributions"].items():
        spread = f"  (spread across models ± {d['model_sd']:.2f})" if "model_sd" in d \
            else ""
        print(f"  {name} = {res['findings'][name]}: {d['value']:+.3f}{spread}")


def _next_test_ranking(nt: Any, out: dict) -> list[dict]:
    """The ranking of a :class:`bnma_core.explain.findings.NextTest`, its note (what the
    ranking is computed under, when that differs from the prediction shown) kept in ``out``
    as ``next_test_note``."""
    if nt.note:
        out["next_test_note"] = nt.note
    return nt.ranked()


def _print_next_test(nt: Any, note: str = "") -> None:
    """Print the next-test ranking of :func:`explain_row`'s result (or why there is none) and
    its note."""
    if isinstance(nt, dict):
        print(f"Next test unavailable: {nt['unavailable']}")
    elif not nt:
        print("Next test: every finding is known.")
    else:
        print("Next test (value of information in nats; chance it changes the decision):")
        for d in nt:
            print(f"  {d['finding']}: {d['voi']:.4f}; {100 * d['flip_probability']:.0f} %")
        if note:
            print(f"  ({note})")


def _print_explanation(args: argparse.Namespace, res: dict, header: str) -> None:
    """Print ``bnma explain``'s text output: ``header``, the sentence, the notes, and the
    contributions and next test when asked for."""
    print(header)
    print(("UNCERTAIN: " if res["uncertain"] else "") + res["sentence"])
    for note in res.get("budget_notes", []):
        print(f"  ({note})")
    if "parameter_interval_unavailable" in res and args.interval:
        print(f"  (no parameter interval: {res['parameter_interval_unavailable']})")
    if args.shapley:
        _print_shapley(res)
    if args.next_test:
        _print_next_test(res["next_test"], res.get("next_test_note", ""))


def _cmd_explain(args: argparse.Namespace) -> int:
    from .classifiers.registry import DEFAULT_METHOD, display_name, fit_method, get_spec

    ds, pos, train, truth = _explain_case(args)
    modern = args.method is not None or args.interval or args.shapley or args.next_test or \
        args.json or args.report
    report_path = _report_path(args.report) if args.report else None
    if not modern:
        model = fit_method("ukdb", ds, train, k=args.k)
        expl = model.explain(ds.X[pos])
        print(f"Row {args.row} of {args.data} ({ds.class_name} = {truth}); UKDB "
              f"(k = {args.k}) trained on the other {len(train)} rows")
        print(expl.summary(n_pairs=args.pairs))
        return 0
    method = args.method or DEFAULT_METHOD
    try:
        get_spec(method)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    randomized = get_spec(method).randomized
    model = fit_method(method, ds, train, random_state=args.seed)  # dropped if not randomized
    if report_path is not None:
        _write_case_report(model, ds, pos, train, args, report_path, method)
        if not (args.json or args.interval or args.shapley or args.next_test):
            return 0
    res = explain_row(model, ds, pos, train, args.level,
                      args.draws if (args.interval or args.json) else 0, args.seed,
                      args.threshold)
    if args.json:
        import json

        print(json.dumps({"data": str(args.data), "row": args.row, "true_class": str(truth),
                          "method": method, "method_name": display_name(method),
                          "trained_on": len(train), "level": args.level,
                          "n_draws": args.draws, "seed": args.seed,
                          "seeds": {"fit": args.seed if randomized else None,
                                    "draws": args.seed}, **res}, indent=1))
        return 0
    _print_explanation(args, res, f"Row {args.row} of {args.data} ({ds.class_name} = {truth}); "
                       f"{display_name(method)} trained on the other {len(train)} rows "
                       f"(seed {args.seed})")
    return 0


def _report_path(text: str) -> Path:
    """``--report``'s file, checked before the fit: its folder exists."""
    path = Path(text)
    if not text.strip() or not path.parent.exists():
        raise CLIError(f"cannot write {text!r}: the folder {path.parent} does not exist")
    return path


def _write_case_report(est, ds, pos: int, train, args: argparse.Namespace, path: Path,
                       method: str) -> None:
    """``bnma explain --report``: the Patient page's case report
    (:func:`bnma_core.viz.patient.case_report`) of row position ``pos``, with the same
    parameter draws, seed and threshold as the page."""
    from . import __version__, explain
    from .classifiers.registry import display_name
    from .viz.patient import case_report

    x, train_ds = ds.X[pos], ds.subset(train)
    try:
        pred = explain.predict_with_uncertainty(est, x, args.level, args.draws, train_ds,
                                                args.seed, codes=True)
    except ValueError:
        pred = explain.predict_with_uncertainty(est, x, args.level, codes=True)
    parts = {}
    for key, compute in (
            ("shapley", lambda: explain.shapley_values(est, x, seed=args.seed, codes=True)),
            ("unusual", lambda: explain.unusual_case(est, x, train=train_ds, codes=True)),
            ("next", lambda: explain.next_test(est, x, threshold=args.threshold,
                                               target=int(pred.predicted[0]), codes=True))):
        try:
            parts[key] = compute()
        except ValueError:
            parts[key] = None
    settings = {"data": str(args.data), "method": display_name(method), "method code": method,
                "case": f"row {args.row} of the file", "trained on": f"{len(train):,} cases",
                "seed": args.seed,
                "parameter draws": args.draws if pred.parameter_interval is not None else 0,
                "BNMA Studio version": __version__}
    findings = {f: (None if c < 0 else str(ds.feature_states[j][c]))
                for j, (f, c) in enumerate(zip(ds.feature_names, x))}
    page = case_report(pred, findings, settings, parts["shapley"], parts["unusual"],
                       parts["next"], identifier=args.identifier, notes=args.notes)
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"case report of row {args.row} written to {path}")


# --- model files: fit, predict, export (DESIGN §17) ---------------------------------------------

def _add_model_parsers(sub) -> None:
    """Register ``fit``, ``predict`` and ``export`` (model files, DESIGN §17)."""
    from .classifiers.registry import DEFAULT_METHOD

    ft = sub.add_parser("fit", help="fit one method on a CSV file and save it as a model file",
                        description="Fit one method on all rows of a CSV file and save the "
                        "fitted model, its data encoder and its provenance (method, seed, "
                        "data fingerprint and size, library version) as a pickle-free model "
                        "file (DESIGN §17).")
    _add_data_arguments(ft, "CSV file or bundled dataset name (wbc)")
    ft.add_argument("--method", default=DEFAULT_METHOD,
                    help=f"method to fit (default: the recommended {DEFAULT_METHOD}; see "
                         "`bnma methods`)")
    ft.add_argument("--seed", type=_positive_int(0), default=1,
                    help="seed of a randomized method (default 1)")
    ft.add_argument("--discretization", choices=["median", "quantile"], default="median",
                    help="how continuous columns are binned")
    ft.add_argument("--n-bins", type=_positive_int(2), default=3,
                    help="bins for --discretization quantile")
    ft.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE",
                    help="a parameter of the method, repeatable (values are Python literals)")
    ft.add_argument("--cv-folds", type=_positive_int(0), default=0, metavar="K",
                    help="also cross-validate the method with K folds and save the "
                         "out-of-fold summary (the development figures of `bnma report "
                         "--model`); 0 = no (default)")
    ft.add_argument("--out", required=True, help="the model file to write (.bnma)")
    _add_force(ft)

    pr = sub.add_parser("predict", help="score a CSV file of new cases with a saved model",
                        description="One row per case: the probability of each class, the "
                        "predicted class or 'uncertain' (the Patient page's rule), the "
                        "structure interval and, with --interval, the interval with parameter "
                        "uncertainty. Columns are matched by name.")
    pr.add_argument("--model", required=True, help="a model file written by `bnma fit`")
    pr.add_argument("--data", required=True, help="CSV file of the cases to score")
    pr.add_argument("--sep", default=None, help="column separator, if the detected one is "
                                                "wrong")
    pr.add_argument("--decimal", default=None, choices=[".", ","],
                    help="decimal mark, if the detected one is wrong")
    pr.add_argument("--interval", action="store_true",
                    help="add the interval with parameter uncertainty (Dirichlet draws)")
    pr.add_argument("--level", type=_unit_interval, default=0.9,
                    help="probability of the intervals (default 0.9)")
    pr.add_argument("--draws", type=_in_range("draws"), default=200,
                    help="parameter draws of --interval (default 200)")
    pr.add_argument("--seed", type=_positive_int(0), default=0,
                    help="seed of the draws (default 0)")
    pr.add_argument("--shapley", action="store_true",
                    help="add each case's three largest contributions (Shapley values)")
    pr.add_argument("--out", default=None,
                    help="write the scores to this CSV (formula-safe) or Parquet file "
                         "(default: CSV on standard output)")
    pr.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_force(pr)

    xp = sub.add_parser("export", help="write a saved model's member networks as BIF / XMLBIF",
                        description="Write each member network of a saved model as a BIF or "
                        "XMLBIF file (readable by pgmpy, pyAgrum, GeNIe, bnlearn) and "
                        "weights.json: each file's weight and how the members combine (for a "
                        "stack, per component).")
    xp.add_argument("--model", required=True, help="a model file written by `bnma fit`")
    xp.add_argument("--format", choices=["bif", "xmlbif"], default="bif")
    xp.add_argument("--out", required=True, help="the folder to write into (created if absent)")
    _add_force(xp)


def _read_model(path: str):
    from .model_io import read_model

    return read_model(path)


def _fit_params(items: list[str], method: str) -> dict:
    return _method_params([f"{method}.{item}" for item in items], [method])


def _cmd_fit(args: argparse.Namespace) -> int:
    """``bnma fit``."""
    from dataclasses import asdict

    from .classifiers.registry import fit_method, get_spec, resolve_name
    from .data import check_discretization
    from .model_io import save_model

    (out,) = check_outputs([("--out", args.out)], args.force)
    try:
        method = resolve_name(args.method)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    params = _fit_params(args.set, method).get(method, {})
    check_discretization(args.discretization, args.n_bins)
    spec = data_spec(args, discretization=args.discretization, bins=args.n_bins)
    ds = spec.build()
    _print_notices(ds)
    development = None
    if args.cv_folds:
        from .validation import development_predictions

        development = development_predictions(ds, method, folds=args.cv_folds, seed=args.seed,
                                              missing=args.missing, params=params)
    t0 = time.process_time()
    if get_spec(method).randomized:
        params.setdefault("random_state", args.seed)
    model = fit_method(method, ds, **params)
    cpu = time.process_time() - t0
    settings = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(spec).items()}
    save_model(model, out, dataset=ds, method=method, settings=settings,
               development=development)
    print(f"{method} fitted on {ds.n_rows} rows of {args.data} in {cpu:.1f} CPU s; model "
          f"written to {out} ({out.stat().st_size / 1024:.0f} KB)")
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    """``bnma predict``."""
    from .data import read_table
    from .scoring import case_codes, score

    outs = check_outputs([("--out", args.out)], args.force)
    mf = _read_model(args.model)
    frame = read_table(args.data, sep=_separator(args), decimal=args.decimal)
    from .classifiers.base import UnseenValueWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnseenValueWarning)
        codes, extra = case_codes(mf, frame)
    for w in caught:
        print(f"bnma: note: {w.message}", file=sys.stderr)
    if extra:
        print(f"bnma: note: columns not used by the model (ignored): {', '.join(extra)}",
              file=sys.stderr)
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=len(codes), file=sys.stderr, delay=1.0, unit="row", unit_scale=True,
                   desc="scoring", leave=False)
    notes: list[str] = []
    try:
        table = score(mf, codes, interval=args.interval, level=args.level, n_draws=args.draws,
                      seed=args.seed, shapley=3 if args.shapley else 0, notes=notes,
                      progress=None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()
    for note in notes:
        print(f"bnma: note: {note}", file=sys.stderr)
    from .export import table_csv

    if not outs:
        sys.stdout.write(table_csv(table, index=False).decode("utf-8"))
        return 0
    out = outs[0]
    try:
        if out.suffix.lower() == ".parquet":
            table.to_parquet(out, index=False)
        else:
            out.write_bytes(table_csv(table, index=False))
    except OSError as exc:
        raise CLIError(f"cannot write {out}: {exc.strerror or exc}") from None
    info = mf.info
    print(f"{len(table)} cases scored with {info.get('method')} (fitted on "
          f"{info.get('n_rows', '?')} rows, data {str(info.get('data_fingerprint', '?'))[:12]}, "
          f"seed {info.get('seed')}) -> {out}")
    return 0




def _cmd_export(args: argparse.Namespace) -> int:
    """``bnma export``."""
    from .interop import export_members

    (out,) = check_outputs([("--out", args.out)], args.force, folders=("--out",))
    mf = _read_model(args.model)
    method = str(mf.info.get("method") or "model")
    try:
        weights = export_members(mf.estimator, out, args.format, method)
    except ValueError as exc:
        raise CLIError(f"{method} cannot be exported: {exc}") from None
    n = len(weights.get("members", {})) + sum(len(c["members"]) for c in
                                              weights.get("components", {}).values())
    print(f"{n} member network(s) of {method} written to {out} as {args.format}, with "
          "weights.json")
    return 0


def _cmd_validation_report(args: argparse.Namespace) -> int:
    """``bnma report --model``: external validation (:mod:`bnma_core.validation`)."""
    from .data import read_table
    from .validation import external_validation_report

    (out,) = check_outputs([("--out", args.out)], args.force)
    mf = _read_model(args.model)
    frame = read_table(resolve_data(args.data), sep=_separator(args), decimal=args.decimal)
    page = external_validation_report(mf, frame, positive=args.positive,
                                      n_bootstrap=args.bootstrap, seed=args.seed,
                                      source=str(args.data))
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"external validation of {mf.info.get('method')} on {args.data} written to {out}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduce import cli as reproduce_cli

    return reproduce_cli.run(args)


COMMANDS = {"cv": _cmd_cv, "report": _cmd_report, "methods": _cmd_methods,
            "sample": _cmd_sample,
            "explain": _cmd_explain, "reproduce": _cmd_reproduce,
            "fit": _cmd_fit, "predict": _cmd_predict, "export": _cmd_export}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``bnma``; returns the exit status (0 ok, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = COMMANDS[args.command](args)
        sys.stdout.flush()  # a closed reader shows up here, not at interpreter exit
        return status
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except (CLIError, DataError, ValueError, FileNotFoundError, ConnectionError, KeyError) as exc:
        msg = " ".join(str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)
                       .split())
        print(f"bnma: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:  # a guard missed a size: still one line, never a traceback
        print(f"bnma {args.command}: error: not enough memory for this request; use fewer rows "
              "or variables, or a method setting that needs less (see `bnma methods`).",
              file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("bnma: interrupted", file=sys.stderr)
        return 130


def _silence_stdout() -> None:
    """The reader of stdout went away (``bnma ... | head``): point stdout at /dev/null so
    that Python's final flush does not raise again (Python docs, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
