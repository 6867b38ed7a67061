"""BNMA Studio dashboard: choose the data every page works on.

Run with ``streamlit run app.py``. Sources: a bundled CSV (WBC by default), rows sampled from a
bundled network (ALARM, HEPAR II, ASIA), or your own CSV.
The chosen :class:`bnma_core.data.DiscreteDataset` is stored in ``st.session_state`` (see
``bnma_ui.state``) and every page in ``pages/`` reads it.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from bnma_core.data import DataError, choose_class_column
from bnma_core.viz import class_balance_figure
from bnma_ui import cache
from bnma_ui.state import clear_dataset, persistent, remember, set_dataset
from bnma_ui.widgets import page_links, sidebar_dataset_badge, what_am_i_looking_at

st.set_page_config(page_title="BNMA Studio", page_icon="🧮", layout="wide")

SOURCES = {
    "bundled": "A bundled sample file",
    "network": "Sampled from a known network",
    "upload": "My own CSV file",
}
NETWORKS = {
    "alarm": "ALARM (intensive-care monitoring, 37 variables)",
    "hepar2": "HEPAR II (liver disorders, 70 variables)",
    "asia": "ASIA (chest clinic, 8 variables)",
}
DEFAULT_CLASS = {"alarm": "CATECHOL", "hepar2": "Cirrhosis", "asia": "lung"}
DISCRETIZATIONS = {
    "median": "Two groups, split at the median",
    "quantile": "k groups of equal size",
    "none": "None: use the values as they are",
}
MISSING = {  # the dataset-level policy, same words and default as `bnma cv --missing`
    "keep": "Keep them (the models handle missing values)",
    "drop": "Leave out rows with a missing value",
}
UPLOAD_KEY = "_bnma_upload"  # (file name, bytes) of the last uploaded CSV


def _network_controls() -> tuple[object, str, str]:
    """Widgets for sampling from a bundled network; returns (dataset, label, network name)."""
    name = st.selectbox("Network", list(NETWORKS), format_func=NETWORKS.get,
                        key=persistent("app_network", "alarm", list(NETWORKS)),
                        help="A published Bayesian network whose true structure is known. "
                             "Data drawn from it show how well the methods recover it.")
    bn = cache.network(name)
    c1, c2 = st.columns(2)
    n_rows = c1.number_input("Rows", min_value=50, max_value=50_000, step=250,
                             key=persistent("app_net_rows", 1000),
                             help="How many cases to draw. Fewer rows = sparser data, where "
                                  "model averaging helps most.")
    seed = c2.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1,
                           key=persistent("app_net_seed", 0),
                           help="The same seed always gives the same sample.")
    default = DEFAULT_CLASS.get(name, bn.names[-1])
    default = default if default in bn.names else bn.names[-1]
    target = st.selectbox("Class variable (the outcome to predict)", bn.names,
                          key=persistent(f"app_net_class_{name}", default, bn.names),
                          help="Any variable of the network can serve as the class. Hwang & "
                               "Zhang used CATECHOL and SHUNT from ALARM.")
    ds = cache.sample_network(name, int(n_rows), int(seed), target)
    return ds, f"{name} sample ({int(n_rows)} rows, seed {int(seed)})", name


def _file_controls(source: str) -> tuple[bytes | None, str]:
    """Widgets choosing a bundled or uploaded CSV; returns its bytes (or None) and a label."""
    if source == "bundled":
        files = cache.sample_csv_files()
        name = st.selectbox("Sample file", files,
                            key=persistent("app_sample_file", files[0], files),
                            help="wbc.csv: 699 breast-tissue samples, 9 cell features scored "
                                 "1-10, diagnosis benign or malignant.")
        return cache.sample_csv_bytes(name), f"sample_data/{name}"
    uploaded = st.file_uploader(
        "Upload a CSV file", type=["csv", "txt"], key="app_upload",
        help="Comma-, semicolon- or tab-separated text with a header row. Numbers are "
             "grouped into bins; text values are used as categories; empty cells, '?' and "
             "'NA' count as missing.")
    if uploaded is not None:
        st.session_state[UPLOAD_KEY] = (uploaded.name, uploaded.getvalue())
    stored = st.session_state.get(UPLOAD_KEY)
    if stored is None:
        st.info("Choose a CSV file to upload.")
        return None, ""
    if uploaded is None:
        st.caption(f"Using the file uploaded earlier: **{stored[0]}**")
    return stored[1], f"uploaded {stored[0]}"


def _option_controls(raw: bytes) -> dict:
    """Class column, discretization and missing-value widgets for a CSV."""
    columns = cache.csv_columns(raw)
    default = choose_class_column(columns)
    target = st.selectbox(
        "Class column (the outcome to predict)", columns,
        key=persistent("app_target", default, columns),
        help="The column the classifiers learn to predict, e.g. the diagnosis. Defaults to a "
             "column named class, target, label or diagnosis, else the last column.")
    disc = st.radio(
        "Numeric measurements: group into bins", list(DISCRETIZATIONS),
        format_func=DISCRETIZATIONS.get, key=persistent("app_disc", "median"),
        help="The models work with categories. Numeric columns with many different values "
             "are grouped: at the median (low / high), or into k groups holding equally many "
             "rows. 'None' keeps every distinct value as its own category (at most 64). "
             "Whole-number columns with at most 10 values (like 1-10 scores) are never "
             "grouped.")
    n_bins = 3
    if disc == "quantile":
        n_bins = st.slider("Number of groups k", 2, 10, key=persistent("app_bins", 3),
                           help="Each numeric column is cut into k groups of about the same "
                                "number of rows.")
    missing = st.radio(
        "Rows with missing values", list(MISSING), format_func=MISSING.get,
        key=persistent("app_missing", "keep"),
        help="Keeping them (the default, as in the command line) uses every row: the models "
             "learn each part from the rows where its values are known and sum a missing "
             "value out when predicting. Leaving them out uses complete rows only. Row "
             "numbers always refer to the file (0 = first row after the header).")
    return dict(target=target, discretization=disc, n_bins=int(n_bins), missing=missing)


def _with_file_rows(frame, ds):
    """``frame`` (the dataset's first rows) indexed by the file's row numbers."""
    out = frame.copy()
    out.index = ds.row_ids[: len(out)]
    out.index.name = "row"
    return out


def _show_dataset(ds) -> None:
    n_missing = int((ds.codes < 0).sum())
    c = st.columns(4)
    c[0].metric("Rows", ds.n_rows)
    c[1].metric("Features", ds.n_vars - 1)
    c[2].metric("Classes", len(ds.classes))
    c[3].metric("Missing values", n_missing)
    for note in ds.notices:
        st.info(note)
    preview, summary, balance = st.tabs(["Preview", "Per-column summary", "Class balance"])
    with preview:
        st.caption("The first 20 rows as the models see them (after grouping numeric values). "
                   "Empty cells are missing values. The row number is the row's place in the "
                   "file (0 = first row after the header).")
        st.dataframe(_with_file_rows(ds.to_frame().head(20), ds), width="stretch")
        if ds.raw is not None:
            with st.expander("The same rows as read from the file"):
                st.dataframe(_with_file_rows(ds.raw.head(20), ds), width="stretch")
    with summary:
        st.caption("One row per column: its role, whether it was numeric (and grouped) or "
                   "categorical, how many states it has, how many values are missing, and "
                   "how many rows fall in each state.")
        st.dataframe(ds.summary(), width="stretch", hide_index=True)
    with balance:
        counts = np.bincount(ds.y[ds.y >= 0], minlength=len(ds.classes))
        st.plotly_chart(class_balance_figure(ds.classes, counts, class_name=ds.class_name),
                        width="stretch")
        if counts.min() < 0.2 * counts.sum():
            st.caption("The classes are unbalanced: accuracy alone can look good for a model "
                       "that mostly predicts the larger class; look at AUC too.")


st.title("BNMA Studio")
st.markdown("Bayesian model averaging of Bayesian network classifiers. Choose the data here; "
            "the pages in the sidebar then analyse it.")
what_am_i_looking_at(
    "A **Bayesian network classifier** predicts an outcome (the *class*, e.g. benign or "
    "malignant) from categorical features. Which features depend on which is a *structure*, "
    "and usually the data cannot single out one structure. **Model averaging** lets many "
    "plausible structures vote, each weighted by how well it explains the data.\n\n"
    "This page turns a table into such categorical data: choose the file, the column to "
    "predict, how numbers are grouped, and what to do with missing values. The summary "
    "below shows what the models will see.")

left, right = st.columns([1, 2], gap="large")
ds, label, network, problem = None, "", None, None
with left:
    st.subheader("Data")
    source = st.radio("Where does the data come from?", list(SOURCES),
                      format_func=SOURCES.get, key=persistent("app_source", "bundled"),
                      help="Start with the bundled Wisconsin breast-cancer data (WBC), draw "
                           "cases from a published network, or upload your own table: one row "
                           "per patient or case, one column per measurement, and one column "
                           "with the outcome (class).")
    try:
        if source == "network":
            ds, label, network = _network_controls()
        else:
            raw, label = _file_controls(source)
            if raw is not None:
                options = _option_controls(raw)
                ds = cache.load_csv(raw, **options)
    except DataError as exc:
        problem = str(exc)
    remember("app_source", "app_sample_file", "app_target", "app_disc", "app_bins",
             "app_missing", "app_network", "app_net_rows", "app_net_seed",
             *[f"app_net_class_{n}" for n in NETWORKS])
    st.divider()
    page_links()
with right:
    if problem is not None:
        st.error(problem)
        st.caption("No dataset is active until this is fixed.")
    if ds is not None:
        set_dataset(ds, label, network)
        st.subheader(f"{label}: class `{ds.class_name}`")
        _show_dataset(ds)
    else:
        clear_dataset()

sidebar_dataset_badge()
