"""Teach: three guided lessons on order MCMC and model averaging, each with its settings filled
in and a printable handout."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Teach · BNMA Studio", page_icon=":material/school:",
                   layout="wide")

import numpy as np
import pandas as pd

from bnma_core import handouts, viz
from bnma_core.structure.teaching import (
    LESSON_DATA,
    STEP_BATCH,
    exact_convergence,
    lesson_dataset,
    step_frames,
    step_sampler,
)
from bnma_core.viz.step_player import step_player_html
from bnma_ui import background, cache
from bnma_ui.state import persistent, remember
from bnma_ui.widgets import (
    chart,
    equations,
    md_escape,
    method_label,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

STEP_KEY = "teach_step"  # this session's settings and where its player's batch starts
EXACT_RUN = "teach_exact"
EXACT_STATE = "teach_exact_state"
CURVE_RUN = "teach_curve"
CURVE_STATE = "teach_curve_state"
LESSONS = {
    "moves": "1 · ASIA: what a move is, what convergence looks like",
    "exact": "2 · WBC: the exact answer against MCMC",
    "averaging": "3 · ASIA and ALARM: averaging against a single network",
}
STEP_ITERATIONS = [1_000, 2_000, 5_000, 20_000]
EXACT_ITERATIONS = [5_000, 20_000, 60_000]

TEXT_MOVES = (
    "**The idea.** Order MCMC wanders through the orders of the variables. An order says who "
    "may be a parent of whom (parents come earlier). Each iteration proposes a **move**: "
    "swap two variables in the order. The new order's score (how well the networks it allows "
    "explain the data) is compared with the current one: a better order is always accepted, "
    "a worse one with probability P(new) / P(current). A uniform random number u decides: "
    "accept when u < that probability.\n\n"
    "**What to do.** Advance the chain by 1 and look at the move: which two variables swap, "
    "the scores before and after, the acceptance probability and the draw u. Then advance "
    "by 10 and 100: the log score climbs, then wanders around a plateau. The best network "
    "of the current order changes with it; orange arcs are new.\n\n"
    "**Convergence.** One chain can get stuck. Four chains from different random starts "
    "should end up sampling the same orders. The rank-normalised R-hat compares them (at "
    "most 1.01 when they agree); the effective sample size (ESS) says how many independent "
    "draws they are worth (at least 400). Short chains fail these checks: try 1,000 "
    "iterations, then 20,000.")
TEXT_EXACT = (
    "**The idea.** For up to about 20 variables the edge posteriors that order MCMC "
    "estimates can be computed exactly, by summing over all orders with dynamic "
    "programming over subsets of variables (Koivisto & Sood 2004). So we can watch the "
    "estimate approach the truth.\n\n"
    "**What to do.** Press Run. The curve shows the largest error of any edge, |estimate − "
    "exact|, as the 4 chains run. It falls roughly like 1 / √(draws) once the chains mix, "
    "and it can stall while they are stuck. With Hwang & Zhang's structure prior the "
    "WBC chains mix slowly: the error stays larger for the same number of iterations.\n\n"
    "**Take away.** MCMC is an estimate with an error that shrinks as it runs; the exact "
    "answer exists only for small networks.")
TEXT_AVERAGING = (
    "**The idea.** With few rows many networks explain the data about equally well. A single "
    "best network bets on one of them; averaging (BMA) lets all plausible ones vote. With "
    "many rows one network dominates and the two agree.\n\n"
    "**What to do.** Compare the held-out log-loss (lower is better) of the single best "
    "network and of order-MCMC averaging, each drawn as its excess over the true network, for "
    "training samples of growing size. ASIA's class *smoke* shows the gain clearly up to 100 "
    "rows; on ALARM (class VENTLUNG) it is a very-small-sample effect, gone from 50 rows on. "
    "Accuracy hides most of it: log-loss also counts how sure a wrong answer was.")
# training sizes and repetitions per case: ASIA fits take ~0.1 s, ALARM ~1.5 s (measured)
CURVE_PLAN = {"asia": ((25, 50, 100, 200, 500, 1000), 5), "alarm": ((25, 50, 1000), 3)}

sidebar_dataset_badge()
st.title("Teach: guided lessons")
what_am_i_looking_at(
    "Three short lessons for a class, each on its own data (the dataset chosen on the Data "
    "page is not used here). Each has a short text, its settings filled in, and a printable "
    "handout (HTML) with the text and the figures of what you ran.\n\n"
    "- **Lesson 1** steps one order-MCMC chain on data sampled from the ASIA network, then "
    "runs four chains and judges their convergence with ArviZ's diagnostics.\n"
    "- **Lesson 2** puts the exact edge posteriors of the WBC data beside the MCMC estimate.\n"
    "- **Lesson 3** compares averaging with one network on samples of ASIA and ALARM of "
    "growing size.")
equations(
    "Order posterior (uniform prior over orders): $P(\\prec \\mid D) \\propto \\prod_i "
    "\\sum_{Z \\subseteq \\mathrm{pred}_\\prec(i), |Z| \\le 3} e^{S(X_i; Z)}$. A swap move "
    "proposes $\\prec'$ and is accepted when $u < \\min\\{1, P(\\prec' \\mid D) / "
    "P(\\prec \\mid D)\\}$, $u \\sim U(0, 1)$ (Hwang & Zhang 2005, eq. 12).\n\n"
    "Edge posterior: $P(u \\to v \\mid D) = \\sum_\\prec P(\\prec \\mid D)\\, P(u \\to v "
    "\\mid \\prec, D)$, exactly by sums over subsets (Koivisto & Sood 2004), estimated by "
    "MCMC as $\\frac{1}{T} \\sum_t P(u \\to v \\mid \\prec_t, D)$.\n\n"
    "Rank-normalised split $\\hat R$ (Vehtari et al. 2021): the split-chain $\\hat R$ of the "
    "rank-normalised draws (and of their folded version); converged when $\\hat R \\le "
    "1.01$ and bulk and tail ESS $\\ge 400$.")

cache.start_warmup()
lesson = st.radio("Lesson", list(LESSONS), format_func=LESSONS.get, horizontal=True,
                  key=persistent("teach_lesson", "moves", list(LESSONS)))
remember("teach_lesson")


def handout(title: str, text: str, settings: dict, sections: list) -> None:
    """A download button for the lesson's printable handout (built on click)."""
    st.download_button(
        "Handout (HTML)",
        lambda: handouts.lesson_handout(title, text, settings, sections),
        f"handout_{title.split(':')[0].lower().replace(' ', '_')}.html", "text/html",
        on_click="ignore", icon=":material/print:",
        help="A self-contained page to print (A4) or share: the lesson's text, its settings "
             "and the figures of what was run so far.")


# --------------------------------------------------------------------------------------------
# Lesson 1: moves and convergence (ASIA)
# --------------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64)
def cached_player(n_iter: int, seed: int, start: int) -> tuple[str, dict]:
    """The step player of the moves ``start + 1 .. start + STEP_BATCH`` of chain 0 and the
    moves themselves: computed once per server for every session with these settings (a
    class that follows one seed shares them)."""
    frames = step_frames(cache_lesson_dataset("asia"), n_iter=n_iter, random_state=seed,
                         start=start, count=STEP_BATCH)
    last = start + len(frames["moves"]["iteration"])
    note = (f"These were the moves up to iteration {last:,}: press “Next {STEP_BATCH:,} "
            "moves” below the player to go on.")
    return step_player_html(frames, note), frames


@st.cache_resource(show_spinner=False, max_entries=8)
def cached_diagnostics(n_iter: int, seed: int):
    """The 4 chains run to the end and their diagnostics (shared by the sessions with these
    settings; read-only)."""
    ds = cache_lesson_dataset("asia")
    sampler = step_sampler(ds, n_iter=n_iter, burn_in=n_iter // 4, random_state=seed)
    sampler.run()
    c = sampler.chains[0]
    trace = pd.DataFrame({"chain": 0, "iteration": np.arange(0, c.t + 1),
                          "log_score": np.r_[c.initial_log_score, c.trace_score[: c.t]]})
    return sampler.diagnostics(list(ds.names), n_least=3), trace


def move_figure(names: list[str], frames: dict, k: int = 0):
    """Move ``k`` of a batch drawn on the order (the handout's example move)."""
    m = frames["moves"]
    order = frames["order"]  # the order before move k: the last accepted proposal before it
    for q in range(k):
        if m["accepted"][q]:
            order = m["proposed_order"][q]
    return viz.order_move_figure(
        names, order, (m["i"][k], m["j"][k]), m["kind"][k], m["proposed_order"][k],
        m["accepted"][k], title=f"Iteration {m['iteration'][k]:,}: "
        + ("accepted" if m["accepted"][k] else "rejected (the chain stays)"))


def lesson_moves() -> None:
    st.markdown(TEXT_MOVES)
    ds = cache_lesson_dataset("asia")
    names = list(ds.names)
    c1, c2, c3 = st.columns([2, 2, 3])
    n_iter = c1.selectbox("Iterations per chain", STEP_ITERATIONS,
                          key=persistent("teach_iter", 5_000, STEP_ITERATIONS),
                          format_func="{:,}".format,
                          help="The length of each of the 4 chains; the first quarter is "
                               "burn-in.")
    seed = c2.number_input("Seed", 0, 2**31 - 1, step=1, key=persistent("teach_seed", 0),
                           help="Same seed, same chains: the class can follow one chain "
                                "together.")
    remember("teach_iter", "teach_seed")
    settings = {"data": LESSON_DATA["asia"], "iterations per chain": int(n_iter),
                "burn-in": int(n_iter) // 4, "chains": 4, "max parents": 3, "score": "K2",
                "structure prior": "Hwang-Zhang", "move": "swap two positions",
                "seed": int(seed)}
    state = st.session_state.get(STEP_KEY)
    c3.write("")
    restart = c3.button("New chains", help="Start again from iteration 0 with these "
                                           "settings.")
    if state is None or state["settings"] != settings or restart:
        state = {"settings": settings, "start": 0, "diagnosed": False}
        st.session_state[STEP_KEY] = state

    st.subheader("One move at a time (chain 0)")
    st.caption(f"The server computes {STEP_BATCH:,} moves at once and your browser plays "
               "them: +1, +10, +100, Play and the slider cost the server nothing. Every "
               "score is a natural-log order score, ln P(order, data).")
    player, frames = cached_player(int(n_iter), int(seed), state["start"])
    st.iframe(player, height=1010)
    last = state["start"] + len(frames["moves"]["iteration"])
    nb = st.container(horizontal=True)
    if nb.button(f"Next {STEP_BATCH:,} moves", disabled=last >= int(n_iter),
                 help=f"Load chain 0's next {STEP_BATCH:,} moves into the player."):
        state["start"] = last
        st.rerun()
    if state["start"]:
        nb.caption(f"The player holds iterations {state['start'] + 1:,} to {last:,}.")

    st.subheader("Four chains: have they converged?")
    st.markdown(f"Run all 4 chains to the end ({int(n_iter):,} iterations each; chain 0 is "
                "the chain you stepped, continued) and judge them with ArviZ's diagnostics.")
    if st.button("Run the 4 chains and diagnose", type="primary"):
        state["diagnosed"] = True
    sections: list = []
    if frames["moves"]["iteration"]:
        sections.append((f"A move (iteration {frames['moves']['iteration'][0]:,})",
                         move_figure(names, frames)))
    if state["diagnosed"]:
        with st.spinner("Running the chains and computing the diagnostics..."):
            diag, trace = cached_diagnostics(int(n_iter), int(seed))
        sections += draw_diagnostics(diag, trace, int(n_iter) // 4)
    handout("Lesson 1: moves and convergence of order MCMC", TEXT_MOVES, settings, sections)


def draw_diagnostics(diag, trace: pd.DataFrame, burn_in: int) -> list:
    """The verdict, its numbers and figures; returns the handout's sections."""
    st.info(f"All 4 chains have run their {int(trace['iteration'].iloc[-1]):,} iterations.")
    verdict = viz.arrows(diag.verdict)
    (st.success if diag.converged else st.warning)(md_escape(verdict))
    m = st.columns(2)
    m[0].metric("Rank-normalised R-hat (log score)", f"{diag.log_score.rhat:.3f}",
                help=f"Converged chains: at most {diag.rhat_max}.")
    m[1].metric("ESS bulk / tail (log score)",
                f"{diag.log_score.ess_bulk:,.0f} / {diag.log_score.ess_tail:,.0f}",
                help=f"Effective sample size; target at least {diag.ess_min:.0f}.")
    varying = diag.edges[~diag.edges["settled"]]
    m = st.columns(2)
    m[0].metric(f"Edges with R-hat > {diag.rhat_max}",
                f"{int((varying['rhat'] > diag.rhat_max).sum())} of {len(varying)}")
    m[1].metric("Largest two-runs difference", f"{diag.max_concordance_difference:.3f}",
                help="Chains 0-1 against chains 2-3: the largest difference of an edge "
                     "posterior.")
    st.caption("Rank plot: if the chains sample the same distribution, each chain's "
               "draws spread evenly over the pooled ranks (flat lines near the dashed "
               "one). Traces: the edges whose chains disagree most. Scatter: each edge's "
               "posterior from chains 0-1 against chains 2-3; on the diagonal when they "
               "agree.")
    trace_fig = viz.trace_figure(trace, burn_in=burn_in, unit="ln",
                                 title="Chain 0 to the end")
    rank_fig = viz.rank_plot_figure(diag.log_score, "Rank plot of the log score")
    acf_fig = viz.autocorrelation_figure(diag.log_score, "Autocorrelation of the log score")
    traces_fig = viz.edge_traces_figure(diag.least_converged)
    conc_fig = viz.concordance_figure(diag.concordance, labels=("chains 0-1", "chains 2-3"))
    d1, d2 = st.columns(2)
    chart(trace_fig, "teach_chain0", d1)
    chart(rank_fig, "teach_rank_plot", d2)
    d1, d2 = st.columns(2)
    chart(conc_fig, "teach_concordance", d1)
    chart(acf_fig, "teach_autocorrelation", d2)
    if diag.least_converged:
        chart(traces_fig, "teach_least_converged")
    return [("Chain 0", trace_fig), ("Verdict", verdict), ("Rank plot", rank_fig),
            ("Autocorrelation", acf_fig), ("Two-runs concordance", conc_fig),
            ("Least converged edges", traces_fig)]


# --------------------------------------------------------------------------------------------
# Lesson 2: the exact answer against MCMC (WBC)
# --------------------------------------------------------------------------------------------


@st.cache_resource(show_spinner=False, max_entries=2)
def cache_lesson_dataset(name: str):
    """A lesson's data, built once per server (read-only, shared by every session)."""
    return lesson_dataset(name)


def draw_exact_live(r: background.Run) -> None:
    if not r.events:
        st.info("Computing the exact edge posteriors, then running the chains (the first "
                "point appears after the burn-in)...")
        return
    ev = pd.DataFrame(r.events)
    n_total = r.meta["n_iter"]
    done = int(ev["iteration"].iloc[-1])
    st.progress(min(done / n_total, 1.0),
                text=f"{done:,} of {n_total:,} iterations per chain ({r.seconds:.0f} s)")
    st.plotly_chart(viz.exact_error_figure(ev), width="stretch", key="teach_exact_live")


def lesson_exact() -> None:
    st.markdown(TEXT_EXACT)
    ds = cache_lesson_dataset("wbc")
    c1, c2, c3 = st.columns(3)
    n_iter = c1.selectbox("Iterations per chain", EXACT_ITERATIONS, format_func="{:,}".format,
                          key=persistent("teach_exact_iter", 20_000, EXACT_ITERATIONS))
    prior = c2.radio("Structure prior (the same for both)", ["uniform", "hz"],
                     format_func={"uniform": "uniform", "hz": "Hwang-Zhang"}.get,
                     horizontal=True, key=persistent("teach_exact_prior", "uniform"),
                     help="The exact answer is computed under the prior the sampler targets.")
    seed = c3.number_input("Seed", 0, 2**31 - 1, step=1, key=persistent("teach_exact_seed", 0))
    remember("teach_exact_iter", "teach_exact_prior", "teach_exact_seed")
    settings = {"data": LESSON_DATA["wbc"], "iterations per chain": int(n_iter),
                "burn-in": int(n_iter) // 10, "chains": 4, "max parents": 3, "score": "K2",
                "structure prior": prior, "seed": int(seed)}
    key = tuple(sorted(settings.items()))
    last = st.session_state.setdefault(EXACT_STATE, {})
    if st.session_state.pop("teach_exact_stop", False):
        background.stop(EXACT_RUN)
    active = background.current(EXACT_RUN)
    running = active is not None and not active.done
    b = st.container(horizontal=True)
    run = b.button("Run", type="primary", key="teach_exact_run")
    b.button("Stop", key="teach_exact_stop_button", disabled=not running,
             on_click=st.session_state.__setitem__, args=("teach_exact_stop", True))
    if run:
        last.pop("error", None)
        every = max(200, int(n_iter) // 40)

        def work(r: background.Run) -> dict:
            final = None
            for ev in exact_convergence(ds, n_iter=int(n_iter), burn_in=int(n_iter) // 10,
                                        structure_prior=prior, every=every,
                                        random_state=int(seed), should_stop=r.should_stop):
                r.report({k: ev[k] for k in ("iteration", "draws", "max_abs_error",
                                             "mean_abs_error")})
                final = ev
            return {"events": list(r.events), "final": final}

        background.start(EXACT_RUN, work, key=("exact", key), meta={"n_iter": int(n_iter)})
        st.rerun()
    finished = background.finished(EXACT_RUN, last)
    if finished is not None:
        last["entry"] = {"key": finished.key, "settings": settings, **finished.result,
                         "stopped": finished.stopped}
    background.live(EXACT_RUN, draw_exact_live, interval=1.0)
    background.show_error(last)
    entry = last.get("entry")
    sections: list = []
    if entry is not None and entry["final"] is not None:
        final = entry["final"]
        if entry["stopped"]:
            st.warning(f"Stopped after {final['iteration']:,} iterations per chain.")
        names = list(ds.names)
        err_fig = viz.exact_error_figure(pd.DataFrame(entry["events"]))
        scatter = viz.exact_vs_estimate_figure(final["exact"], final["estimate"], names)
        m = st.columns(3)
        m[0].metric("Largest error |estimate − exact|", f"{final['max_abs_error']:.4f}")
        m[1].metric("Mean error over edges", f"{final['mean_abs_error']:.4f}")
        m[2].metric("Orders averaged", f"{final['draws']:,}")
        e1, e2 = st.columns(2)
        chart(err_fig, "teach_exact_error", e1)
        chart(scatter, "teach_exact_scatter", e2)
        ex, es = final["exact"], final["estimate"]
        y, x = np.nonzero(~np.eye(len(names), dtype=bool))
        table = pd.DataFrame({"parent": [names[i] for i in y], "child": [names[i] for i in x],
                              "exact": ex[y, x], "MCMC": es[y, x]})
        table["error"] = (table["MCMC"] - table["exact"]).abs()
        table = table.sort_values("exact", ascending=False).head(15).round(4)
        st.caption("The 15 most probable edges, exactly and by MCMC.")
        st.dataframe(table, hide_index=True, width="stretch")
        sections = [("Error against iterations", err_fig), ("Estimate against exact", scatter),
                    ("Most probable edges", table)]
        settings = entry["settings"]
    handout("Lesson 2: the exact answer against MCMC", TEXT_EXACT, settings, sections)


# --------------------------------------------------------------------------------------------
# Lesson 3: averaging against a single network (bnma_core.learning_curve, DESIGN §16)
# --------------------------------------------------------------------------------------------


def lesson_averaging() -> None:
    from bnma_core.learning_curve import DEFAULT_CASES, learning_curve
    from bnma_core.viz import learning_curve_figure

    st.markdown(TEXT_AVERAGING)
    names = {c.network: c for c in DEFAULT_CASES}
    net = st.radio("Network", list(names), horizontal=True, key="teach_curve_net",
                   format_func=lambda n: f"{n.upper()}, class {names[n].class_variable}")
    case = names[net]
    sizes, reps = CURVE_PLAN.get(case.network, ((25, 50, 100, 1000), 3))
    settings = {"network": case.network.upper(), "class": case.class_variable,
                "training rows": ", ".join(f"{s:,}" for s in sizes), "repetitions": reps,
                "held-out rows": 2000, "method": method_label("bma10"),
                "iterations per fit": "5,000 (burn-in 1,000)"}
    st.caption(md_escape(case.description))
    last = st.session_state.setdefault(CURVE_STATE, {})
    if st.session_state.pop("teach_curve_stop", False):
        background.stop(CURVE_RUN)
    active = background.current(CURVE_RUN)
    running = active is not None and not active.done
    b = st.container(horizontal=True)
    run = b.button("Run", type="primary", key="teach_curve_run")
    b.button("Stop", key="teach_curve_stop_button", disabled=not running,
             on_click=st.session_state.__setitem__, args=("teach_curve_stop", True))
    if run:
        def work(r: background.Run) -> pd.DataFrame:
            for part in learning_curve(case.network, case.class_variable, sizes=sizes,
                                       repetitions=reps, n_test=2000,
                                       method_params={"n_iter": 5000, "burn_in": 1000},
                                       should_stop=r.should_stop):
                r.report(part)
            return pd.concat(r.events, ignore_index=True) if r.events else None

        background.start(CURVE_RUN, work, key=("curve", case.network))
        last.clear()
        st.rerun()
    finished = background.finished(CURVE_RUN, last)
    if finished is not None and finished.result is not None:
        last["entry"] = finished.result

    def live(r: background.Run) -> None:
        if r.events:
            st.plotly_chart(learning_curve_figure(pd.concat(r.events, ignore_index=True),
                                                  sizes=list(sizes), excess=True),
                            width="stretch", key="teach_curve_live")
        else:
            st.info("Sampling, fitting and scoring the first training size...")

    background.live(CURVE_RUN, live, interval=1.0)
    background.show_error(last)
    sections: list = []
    if last.get("entry") is not None:
        fig = learning_curve_figure(last["entry"], sizes=sorted(last["entry"]["size"]
                                                                .unique().tolist()),
                                    excess=True)
        chart(fig, "teach_learning_curve")
        sections = [("Learning curve", fig)]
    handout("Lesson 3: averaging against a single network", TEXT_AVERAGING, settings,
            sections)


{"moves": lesson_moves, "exact": lesson_exact, "averaging": lesson_averaging}[lesson]()
