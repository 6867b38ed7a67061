"""Run a grid of independent cells on Dask distributed: a paper's grid, or any list of tasks.

:func:`run_tasks` is the one grid engine: it runs ``fn(*args)`` for each task in this process
or on a Dask cluster, hands each result back as it finishes, polls a stop signal and ships
large shared inputs to the workers once (:class:`Shared`). :func:`run_grid` runs a paper's
cells through it into a :class:`ResultStore`; cross-validation
(:func:`bnma_core.evaluation.cross_validate`) runs its (method × fold) fits through it.

For a paper, the runner submits one task per cell that is not yet in the
:class:`ResultStore` (``client.map`` of :func:`run_cell`), gathers them with
``as_completed`` and stores each as it finishes. Dask does the scheduling, work stealing and
the retries after a lost worker (the scheduler reschedules the tasks of a dead worker;
``allowed-failures`` bounds it): nothing home-made.
``workers=0`` runs the cells in this process (for debugging and the determinism test).

By default a ``LocalCluster(processes=True)`` is started with ``workers`` single-threaded
worker processes; ``scheduler="tcp://host:port"`` uses an existing cluster (same code path;
the cluster's workers need this package installed). The local cluster's scheduler and its
dashboard listen on this machine only (:data:`DASHBOARD_ADDRESS`; on a shared server the
dashboard would otherwise show every run to the network) unless ``dashboard_address`` asks
otherwise.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .papers import load_paper
from .store import ResultStore, code_version, key_id, machine

__all__ = ["run_cell", "run_grid", "run_tasks", "Shared", "write_report", "RunSummary",
           "DASHBOARD_ADDRESS"]

DASHBOARD_ADDRESS = "127.0.0.1:0"
"""Where the local cluster's Dask dashboard listens during a run: loopback, a free port."""


def run_cell(paper: str, key: dict) -> dict[str, Any]:
    """Compute one cell (in a worker): the stored row without the run id. ``seconds`` is its
    wall time, ``cpu_seconds`` the CPU time of the worker process meanwhile (all its threads:
    on a loaded machine wall time grows, CPU time much less)."""
    mod = load_paper(paper)
    t0, c0 = time.perf_counter(), time.process_time()
    result = mod.cell(dict(key))
    return {"key_id": key_id(key), "paper": paper, "key": key, "result": result,
            "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
            "worker": f"{socket.gethostname()}:{os.getpid()}",
            "code_version": code_version(), "machine": machine()}


@dataclass
class RunSummary:
    """What one call of :func:`run_grid` did."""

    run_id: str
    paper: str
    n_cells: int
    n_skipped: int
    n_computed: int = 0
    stopped: bool = False
    wall_seconds: float = 0.0
    workers: int | str = 0
    failures: list[str] = field(default_factory=list)
    record: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Shared:
    """Stands, in a task's arguments, for the ``index``-th of :func:`run_tasks`' ``shared``
    inputs: a large input (a data set, a fold's training rows) that many tasks read is sent to
    each worker once instead of with every task."""

    index: int


def _resolve(args: tuple, shared: Sequence[Any]) -> tuple:
    """``args`` with every :class:`Shared` replaced by its shared input (or its Dask future)."""
    return tuple(shared[a.index] if isinstance(a, Shared) else a for a in args)


def run_tasks(fn: Callable[..., Any], tasks: Sequence[tuple], *,
              on_result: Callable[[int, Any], None], workers: int = 0,
              scheduler: str | None = None, shared: Sequence[Any] = (),
              should_stop: Callable[[], bool] | None = None, failures: list[str] | None = None,
              dashboard_address: str = DASHBOARD_ADDRESS) -> bool:
    """Run ``fn(*args)`` for every ``args`` of ``tasks``, here or on Dask; the grid engine.

    Parameters
    ----------
    fn : a module-level function (workers import it by name), pure in its arguments: seeds
        come from the arguments, never from the worker or the order, so a task gives the same
        result wherever it runs
    tasks : argument tuples; an argument :class:`Shared` ``(i)`` stands for ``shared[i]``
    on_result : called in this process as ``on_result(task index, fn's value)`` when a task
        finishes (in finishing order)
    workers : worker processes of a local cluster; 0 runs the tasks in this process, one
        after another (no Dask at all). Ignored with ``scheduler``.
    scheduler : address of an existing Dask scheduler (``tcp://host:port``)
    shared : inputs scattered to the cluster once (kept as they are in this process)
    should_stop : polled before each task here, at least every half second on Dask; when it
        returns True the tasks not yet finished are cancelled
    failures : a list to append ``"Error: message"`` of each failed task to while the others go
        on; None (default) raises the first failure (the pending tasks are dropped)
    dashboard_address : ``host:port`` of the local cluster's Dask dashboard

    Returns
    -------
    bool : True when stopped by ``should_stop``.
    """
    if workers < 0:
        raise ValueError(f"workers must be >= 0 (got {workers})")
    tasks = [tuple(t) for t in tasks]
    if not tasks:
        return False
    if scheduler is None and workers == 0:
        return _run_local(fn, tasks, shared, on_result, should_stop, failures)
    return _run_dask(fn, tasks, shared, workers, scheduler, on_result, should_stop, failures,
                     dashboard_address)


def run_grid(paper: str, out: str | Path, quick: bool = False, workers: int = 2,
             scheduler: str | None = None, fresh: bool = False,
             progress: bool | Callable[[int, int, dict], None] = False,
             should_stop: Callable[[], bool] | None = None,
             keys: list[dict] | None = None, compact_every: int = 2000,
             dashboard_address: str = DASHBOARD_ADDRESS) -> RunSummary:
    """Run every missing cell of ``paper``'s grid and store it.

    Parameters
    ----------
    paper : str
        A name of :data:`bnma_core.reproduce.papers.PAPERS`.
    out : path
        Store root.
    quick : bool
        The paper's smoke-size grid.
    workers : int
        Worker processes of the local cluster (0 = run in this process); ignored with
        ``scheduler``.
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``).
    fresh : bool
        Remove the stored cells first and recompute everything.
    progress : bool or callable
        True: a terminal progress bar (tqdm); a callable gets ``(done, total, row)`` after each
        stored cell.
    should_stop : callable, optional
        Polled between cells; when it returns True the pending tasks are cancelled (finished
        cells stay stored).
    keys : list of dict, optional
        Cells to run instead of ``grid(quick)`` (tests, benchmarks).
    compact_every : int
        Fold the stored cell files into one part file (:meth:`ResultStore.compact`) after
        this many newly stored cells, and once when the run ends (0 = never), so that a
        grid of thousands of cells stays quick to read.
    dashboard_address : str
        ``host:port`` of the local cluster's Dask dashboard (default: this machine only, a
        free port; ``":0"`` listens on every interface). Ignored with ``scheduler``.
    """
    mod = load_paper(paper)
    if workers < 0:
        raise ValueError(f"workers must be >= 0 (got {workers})")
    store = ResultStore(out, paper)
    if fresh:
        store.clear()
    keys = list(mod.grid(quick)) if keys is None else list(keys)
    done = store.done_ids()
    todo = [k for k in keys if key_id(k) not in done]
    summary, record = _start_run(store, paper, quick, len(keys), len(todo),
                                 scheduler or workers)
    bar = _progress_bar(progress, paper, len(keys), summary.n_skipped)
    t0 = time.perf_counter()
    failures: list[str] = []
    stored = _storer(store, summary, compact_every, bar, progress, len(keys))
    try:
        summary.stopped = run_tasks(run_cell, [(paper, k) for k in todo],
                                    on_result=lambda _i, row: stored(row), workers=workers,
                                    scheduler=scheduler, should_stop=should_stop,
                                    failures=failures, dashboard_address=dashboard_address)
    finally:
        if bar is not None:
            bar.close()
        _finish_run(store, summary, record, compact_every, len(todo), failures, t0)
    return summary


def _start_run(store: ResultStore, paper: str, quick: bool, n_cells: int, n_todo: int,
               workers: int | str) -> tuple[RunSummary, dict]:
    """A new run id, its :class:`RunSummary` and its run record (written as "running")."""
    run_id = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
    summary = RunSummary(run_id, paper, n_cells, n_cells - n_todo, workers=workers)
    record = {"run_id": run_id, "paper": paper, "quick": quick, "workers": workers,
              "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
              "n_cells": n_cells, "n_skipped": summary.n_skipped, "n_computed": 0,
              "status": "running", "code_version": code_version(), "machine": machine()}
    store.write_run(record)
    return summary, record


def _progress_bar(progress: bool | Callable, paper: str, total: int, initial: int):
    """A tqdm bar when ``progress is True``, else None."""
    if progress is not True:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=paper, unit="cell")


def _storer(store: ResultStore, summary: RunSummary, compact_every: int, bar: Any,
            progress: bool | Callable[[int, int, dict], None], n_cells: int
            ) -> Callable[[dict], None]:
    """The callback storing one computed row: stamps the run id, appends it, compacts every
    ``compact_every`` cells and reports progress (bar or callable)."""
    run_id = summary.run_id

    def stored(row: dict) -> None:
        row["run_id"] = run_id
        store.append(row)
        summary.n_computed += 1
        if compact_every and summary.n_computed % compact_every == 0:
            store.compact()
        if bar is not None:
            bar.update(1)
        elif callable(progress):
            progress(summary.n_skipped + summary.n_computed, n_cells, row)

    return stored


def _run_local(fn: Callable[..., Any], tasks: list[tuple], shared: Sequence[Any],
               on_result: Callable[[int, Any], None], should_stop: Callable[[], bool] | None,
               failures: list[str] | None) -> bool:
    """Run the tasks one after another in this process (``workers=0``); True when stopped."""
    for i, args in enumerate(tasks):
        if should_stop is not None and should_stop():
            return True
        try:
            value = fn(*_resolve(args, shared))
        except Exception as e:  # noqa: BLE001 - reported, the other tasks go on
            if failures is None:
                raise
            failures.append(f"{type(e).__name__}: {e}")
            continue
        on_result(i, value)
    return False


def _finish_run(store: ResultStore, summary: RunSummary, record: dict, compact_every: int,
                n_todo: int, failures: list[str], t0: float) -> None:
    """Final compaction, then the summary's and run record's totals and status (record
    written again)."""
    if compact_every and summary.n_computed:
        store.compact()
    summary.wall_seconds = time.perf_counter() - t0
    summary.failures = failures
    record.update(n_computed=summary.n_computed, wall_seconds=summary.wall_seconds,
                  n_failed=len(failures), failures=failures[:20],
                  finished=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                  status="stopped" if summary.stopped else (
                      "complete" if summary.n_computed == n_todo else "failed"))
    store.write_run(record)
    summary.record = record


MAX_RESUBMITS = 3  # per cell, after its result was lost on the way back (not a cell error)


def _collect(fut, stored: Callable[[Any], None], failures: list[str] | None) -> bool:
    """Store a finished future's row; False when the result was lost on the way back (the
    task did not fail: e.g. a worker died while its result was being gathered, which
    distributed reports as an error of the gather) and the cell must be submitted again.
    A failed task is appended to ``failures``, or raised when ``failures`` is None."""
    try:
        row = fut.result()
    except Exception as e:  # noqa: BLE001 - a failing cell is reported, the others go on
        if fut.status != "error":
            return False
        if failures is None:
            raise
        failures.append(f"{type(e).__name__}: {e}")
        return True
    stored(row)
    return True


def _run_dask(fn: Callable[..., Any], tasks: list[tuple], shared: Sequence[Any], workers: int,
              scheduler: str | None, on_result: Callable[[int, Any], None],
              should_stop: Callable[[], bool] | None, failures: list[str] | None,
              dashboard_address: str = DASHBOARD_ADDRESS) -> bool:
    from dask.distributed import Client, LocalCluster, as_completed, wait

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=max(workers, 1), threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=dashboard_address,
                               silence_logs=logging.CRITICAL)
        client = Client(cluster)
    else:
        try:
            client = Client(scheduler, timeout=15)
        except (OSError, TimeoutError) as e:
            raise ConnectionError(f"cannot reach the Dask scheduler at {scheduler} ({e})") from e
    stopped = False
    try:
        # each shared input travels to a worker once, not with every task that reads it
        handles = client.scatter(list(shared), hash=False) if len(shared) else []
        resolved = [_resolve(args, handles) for args in tasks]
        futures = client.map(fn, *[list(col) for col in zip(*resolved, strict=True)],
                             pure=False)
        index_of = dict(zip(futures, range(len(tasks)), strict=True))
        resubmits: dict[int, int] = {}

        def again(fut):
            """A new future for a task whose result was lost, or None after MAX_RESUBMITS."""
            i = index_of.pop(fut)
            n = resubmits[i] = resubmits.get(i, 0) + 1
            if n > MAX_RESUBMITS:
                what = key_id(tasks[i][1]) if fn is run_cell else f"task {i}"
                lost = f"result of cell {what} lost {n} times"
                if failures is None:
                    raise RuntimeError(lost)
                failures.append(lost)
                return None
            new = client.submit(fn, *resolved[i], pure=False)
            index_of[new] = i
            return new

        def collect(fut) -> bool:
            return _collect(fut, lambda value: on_result(index_of[fut], value), failures)

        if should_stop is None:
            ac = as_completed(futures)
            for fut in ac:
                if not collect(fut) and (new := again(fut)) is not None:
                    ac.add(new)
        else:  # wake up at least every half second to look at the stop signal
            pending = set(futures)
            while pending:
                if should_stop():
                    stopped = True
                    client.cancel(list(pending))
                    break
                try:
                    done = wait(list(pending), timeout=0.5, return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    continue
                for fut in done:
                    pending.discard(fut)
                    if not collect(fut) and (new := again(fut)) is not None:
                        pending.add(new)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return stopped


def write_report(paper: str, out: str | Path, quick: bool = False,
                 summary: RunSummary | None = None, keys: list[dict] | None = None) -> Path:
    """Build the paper's HTML report from the stored cells of its grid and write it
    (atomically) to ``<out>/<paper>/report.html`` (and a copy named after the grid,
    ``report_quick.html`` / ``report_full.html``), each recorded in the store's manifest
    (:meth:`ResultStore.write_report`). Raises ``ValueError`` while cells of the grid are
    missing."""
    mod = load_paper(paper)
    store = ResultStore(out, paper)
    keys = list(mod.grid(quick)) if keys is None else keys
    ids = {key_id(k) for k in keys}
    cells = store.cells(ids)
    if len(cells) < len(ids):
        raise ValueError(f"{paper}: {len(ids) - len(cells)} of {len(ids)} cells are not "
                         "finished yet; run the grid to the end first")
    meta: dict[str, Any] = {"config": mod.config(quick), "paper": paper,
                            "grid": "quick" if quick else "full", "cells": len(ids),
                            "cell time, sum (s)": round(float(cells["seconds"].sum()), 1),
                            "cell time, max (s)": round(float(cells["seconds"].max()), 2),
                            "cell CPU time, sum (s)": round(float(np.nansum(
                                cells["cpu_seconds"].to_numpy(dtype=float))), 1),
                            "code version(s)": ", ".join(sorted(cells["code_version"].unique())),
                            "machine(s)": ", ".join(sorted(cells["machine"].unique())),
                            "runs": ", ".join(sorted(cells["run_id"].unique()))}
    if summary is not None:
        meta.update({"last run": summary.run_id, "last run wall time (s)":
                     round(summary.wall_seconds, 1), "workers": summary.workers,
                     "cells computed / reused": f"{summary.n_computed} / {summary.n_skipped}"})
    html = mod.report(cells, meta)
    data = html.encode("utf-8")
    run_id = summary.run_id if summary is not None else None
    store.write_report(store.report_path.name, data, run_id)
    store.write_report(f"report_{'quick' if quick else 'full'}.html", data, run_id)
    return store.report_path
