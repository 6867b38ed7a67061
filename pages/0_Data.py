"""The Data page: where the data every page works on is chosen.

Sources: a bundled CSV (WBC by default), rows sampled from a bundled network (ALARM, HEPAR II,
ASIA), or your own CSV. The widgets build a :class:`bnma_core.data.spec.DatasetSpec` (the
object the CLI's ``--data`` builds too); the dataset it names is stored in
``st.session_state`` (see ``bnma_ui.state``) and every page reads it. The choice is also kept
in the URL's query parameters, so reloading any page or opening a shared link rebuilds the same
dataset (``app.py`` restores it before any page runs; an uploaded file cannot travel in a link:
the page says so).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from bnma_core.data import MAX_INT_CATEGORIES, DataError, choose_class_column, numeric_class_warning
from bnma_core.data.spec import DEFAULT_CLASS, NETWORKS, SAMPLE_TITLES, SOURCES, DatasetSpec
from bnma_core.limits import INPUT_RANGES
from bnma_core.scores import informative_features
from bnma_core.viz import class_balance_figure
from bnma_ui import cache
from bnma_ui.data import (
    DEC_OF,
    LOST_UPLOAD_KEY,
    SEP_OF,
    UPLOAD_KEY,
    URL_PROBLEMS_KEY,
    build_dataset,
    raw_bytes,
)
from bnma_ui.models import method_limits
from bnma_ui.state import clear_dataset, persistent, remember, set_dataset
from bnma_ui.widgets import (
    chart,
    data_rows,
    file_rows,
    glossary_help,
    md_code,
    md_escape,
    method_label,
    page_links,
    sidebar_dataset_badge,
    what_am_i_looking_at,
)

DASHBOARD_SOURCES = {k: SOURCES[k] for k in ("bundled", "network", "upload")}
DISCRETIZATIONS = {
    "median": "Two groups, split at the median",
    "quantile": "k groups of equal size",
    "none": "None: use the values as they are",
}
MISSING = {  # the dataset-level policy, same words and default as `bnma cv --missing`
    "keep": "Keep them (the models handle missing values)",
    "drop": "Leave out rows with a missing value",
}
SEP_CHOICES = {"auto": "Detect", "comma": "Comma ,", "semicolon": "Semicolon ;", "tab": "Tab"}
DEC_CHOICES = {"auto": "Detect", "point": "Point: 3.5", "comma": "Comma: 3,5"}
KEEP_FOR_KEY = "_bnma_keep_for"  # (class, features) the kept-feature widgets belong to
DEFAULT_KEEP = 20  # features kept by default when the user reduces a wide dataset


# --------------------------------------------------------------------------------------------
# The Data page's widgets
# --------------------------------------------------------------------------------------------


def _network_controls() -> dict:
    """Widgets for sampling from a bundled network; returns the spec."""
    name = st.selectbox("Network", list(NETWORKS), format_func=NETWORKS.get,
                        key=persistent("app_network", "alarm", list(NETWORKS)),
                        help="A published Bayesian network whose true structure is known. "
                             "Data drawn from it show how well the methods recover it.")
    bn = cache.network(name)
    c1, c2 = st.columns(2)
    rows, seeds = INPUT_RANGES["rows"], INPUT_RANGES["seed"]
    n_rows = c1.number_input("Rows", min_value=rows.low, max_value=rows.high, step=250,
                             key=persistent("app_net_rows", rows.default),
                             help="How many cases to draw. Fewer rows = sparser data, where "
                                  "model averaging helps most.")
    seed = c2.number_input("Seed", min_value=seeds.low, max_value=seeds.high, step=1,
                           key=persistent("app_net_seed", seeds.default),
                           help="The same seed always gives the same sample.")
    default = DEFAULT_CLASS.get(name, bn.names[-1])
    default = default if default in bn.names else bn.names[-1]
    target = st.selectbox("Class variable (the outcome to predict)", bn.names,
                          key=persistent(f"app_net_class_{name}", default, bn.names),
                          help="Any variable of the network can serve as the class. Hwang & "
                               "Zhang used CATECHOL and SHUNT from ALARM.")
    return DatasetSpec(source="network", net=name, rows=int(n_rows), seed=int(seed),
                       target=target)


def _file_controls(source: str) -> str | None:
    """Widgets choosing a bundled or uploaded CSV; returns the bundled file's name, the
    uploaded file's name, or None when nothing is uploaded yet."""
    if source == "bundled":
        files = cache.sample_csv_files()
        return st.selectbox("Sample file", files,
                            format_func=lambda f: SAMPLE_TITLES.get(f, f),
                            key=persistent("app_sample_file", files[0], files),
                            help="wbc.csv: 699 breast-tissue samples, 9 cell features scored "
                                 "1-10, diagnosis benign or malignant.")
    uploaded = st.file_uploader(
        "Upload a CSV file", type=["csv", "txt"], key="app_upload",
        help="Comma-, semicolon- or tab-separated text with a header row (a decimal comma "
             "as in 3,5 is recognised). Numbers are grouped into bins; text values are used "
             "as categories; empty cells, '?' and 'NA' count as missing.")
    if uploaded is not None:
        stored = st.session_state.get(UPLOAD_KEY)
        file_id = getattr(uploaded, "file_id", None)
        if stored is None or file_id is None or stored[3] != file_id:  # hashed once per file
            raw = uploaded.getvalue()
            st.session_state[UPLOAD_KEY] = (uploaded.name, raw, cache.content_hash(raw), file_id)
        st.session_state.pop(LOST_UPLOAD_KEY, None)
    stored = st.session_state.get(UPLOAD_KEY)
    if stored is None:
        st.info("Choose a CSV file to upload.")
        return None
    if uploaded is None:
        st.caption(f"Using the file uploaded earlier: **{md_escape(stored[0])}**")
    return stored[0]


def _reading_controls(raw: bytes, digest: str) -> tuple[dict, pd.DataFrame]:
    """Separator, decimal mark and columns to leave out; returns the spec part and the table
    as read (text values)."""
    with st.expander("How the file is read (separator, decimal mark, columns to leave out)"):
        c1, c2 = st.columns(2)
        sep = c1.selectbox("Column separator", list(SEP_CHOICES), format_func=SEP_CHOICES.get,
                           key=persistent("app_sep", "auto", list(SEP_CHOICES)),
                           help="European spreadsheets often save with semicolons.")
        dec = c2.selectbox("Decimal mark", list(DEC_CHOICES), format_func=DEC_CHOICES.get,
                           key=persistent("app_dec", "auto", list(DEC_CHOICES)),
                           help="'Detect' reads 3,5 as 3.5 when the columns are not "
                                "separated by commas.")
        table = cache.csv_table(raw, SEP_OF[sep], DEC_OF[dec], digest)
        columns = [str(c) for c in table.columns]
        persistent("app_drop", [])
        st.session_state["app_drop"] = [c for c in st.session_state["app_drop"] if c in columns]
        drop = st.multiselect(
            "Columns to leave out", columns, key="app_drop",
            help="For example a patient number or a column you do not want the models to "
                 "use. Identifiers (text that never repeats, whole numbers that count the "
                 "rows or sit in a column named like an id) and columns with one value in "
                 "every row are left out automatically.")
    return dict(sep=SEP_OF[sep], decimal=DEC_OF[dec], drop=tuple(drop)), table


def _option_controls(raw: bytes, digest: str) -> dict:
    """Reading, class column, discretization and missing-value widgets for a CSV (spec
    fields)."""
    reading, table = _reading_controls(raw, digest)
    columns = [c for c in map(str, table.columns) if c not in reading["drop"]]
    if len(columns) < 2 and reading["drop"]:
        raise DataError("Fewer than two columns are left; leave out fewer columns.")
    default = choose_class_column(columns)
    target = st.selectbox(
        "Class column (the outcome to predict)", columns,
        key=persistent("app_target", default, columns),
        help="The column the classifiers learn to predict, e.g. the diagnosis. Defaults to a "
             "column named class, target, label or diagnosis, else the last column.")
    cbins = 0
    col = pd.to_numeric(table[target], errors="coerce")
    n_values = table[target].dropna().nunique()
    if col.notna().sum() == table[target].notna().sum() and n_values > MAX_INT_CATEGORIES:
        st.warning(f"{md_code(target)} holds numbers with {n_values} different values: as it is, "
                   "every value would be a class of its own. Group it into a few classes, "
                   "or choose another class column above.")
        group = st.toggle("Group the class into bins", key=persistent("app_cbins_on", True),
                          help="Cuts the numbers into groups holding about equally many "
                               "rows, e.g. ≤ 40, 40–60, > 60.")
        if group:
            r = INPUT_RANGES["cbins"]
            cbins = st.slider("Number of classes", r.low, r.high,
                              key=persistent("app_cbins", r.default))
    disc = st.radio(
        "Numeric measurements: group into bins", list(DISCRETIZATIONS),
        format_func=DISCRETIZATIONS.get, key=persistent("app_disc", "median"),
        help="The models work with categories. Numeric columns with many different values "
             "are grouped: at the median (low / high), or into k groups holding equally many "
             "rows. 'None' keeps every distinct value as its own category (at most 64). "
             "Whole-number columns with at most 10 values (like 1-10 scores) are never "
             "grouped.")
    r = INPUT_RANGES["bins"]
    n_bins = r.default
    if disc == "quantile":
        n_bins = st.slider("Number of groups k", r.low, r.high,
                           key=persistent("app_bins", r.default),
                           help="Each numeric column is cut into k groups of about the same "
                                "number of rows.")
    missing = st.radio(
        "Rows with missing values", list(MISSING), format_func=MISSING.get,
        key=persistent("app_missing", "keep"),
        help=glossary_help(
            "Keeping them (the default, as in the command line) uses every row: the models "
            "learn each part from the rows where its values are known and sum a missing "
            "value out when predicting. Leaving them out uses complete rows only. Row "
            "numbers always refer to the file (0 = first row after the header).",
            "Missing value"))
    return dict(reading, target=target, discretization=disc, bins=int(n_bins), missing=missing,
                class_bins=int(cbins))


def _top_k_changed(ranking: list[str]) -> None:
    st.session_state["app_keep"] = ranking[: int(st.session_state["app_keep_k"])]


def _feature_controls(ds) -> list[str]:
    """The remedy for a dataset too wide for some methods: keep the k features most
    informative about the class (mutual information, shown and editable). Returns the kept
    features ([] = all)."""
    limits = method_limits(ds)
    too_wide = {m: why for m, why in limits.items() if "variables" in why}
    with st.expander("Use fewer features" + (f" ({len(too_wide)} methods cannot take "
                                             f"{ds.n_vars} variables)" if too_wide else ""),
                     expanded=bool(too_wide)):
        if limits:
            st.caption("Methods that cannot run on this dataset as it is:")
            st.dataframe(pd.DataFrame({"Method": [method_label(m) for m in limits],
                                       "Why it cannot run": list(limits.values())}),
                         hide_index=True, width="stretch")
        else:
            st.caption("Every method can run on this dataset; fewer features still make the "
                       "order methods faster.")
        ranking = informative_features(ds)
        names = ranking["feature"].tolist()
        signature = (ds.class_name, tuple(sorted(names)))
        if st.session_state.get(KEEP_FOR_KEY, signature) != signature:  # another dataset
            st.session_state["app_keep_k"] = min(DEFAULT_KEEP, len(names))
            st.session_state["app_keep"] = names[:st.session_state["app_keep_k"]]
            st.session_state["app_keep_on"] = False  # a new dataset starts with every feature
        st.session_state[KEEP_FOR_KEY] = signature
        st.toggle("Use only the features chosen below", key=persistent("app_keep_on", False),
                  help="Every page then works on these features and the class.")
        k = st.number_input("Keep the k most informative features", 1, len(names), step=1,
                            key=persistent("app_keep_k", min(DEFAULT_KEEP, len(names))),
                            on_change=_top_k_changed, args=(names,),
                            help=glossary_help(
                                "Ranked by mutual information with the class: how much "
                                "knowing the feature tells about the class (in bits).",
                                "Mutual information (MI, CMI)"))
        persistent("app_keep", names[: int(k)])
        kept = [n for n in st.session_state["app_keep"] if n in names]
        st.session_state["app_keep"] = kept or names[: int(k)]  # another dataset: top k
        kept = st.multiselect("Features kept (edit freely)", names, key="app_keep")
        st.dataframe(ranking.assign(kept=ranking["feature"].isin(kept)).round(4)
                     .rename(columns={"feature": "Feature", "states": "States",
                                      "kept": "Kept"}),
                     hide_index=True, width="stretch", height=240)
        remember("app_keep_on", "app_keep_k", "app_keep")
        if not st.session_state["app_keep_on"]:
            return []
        if not kept:
            st.warning("No feature is chosen: all features are used.")
            return []
        return [n for n in ds.feature_names if n in kept]


def _show_dataset(ds) -> None:
    n_missing = int((ds.codes < 0).sum())
    c = st.columns(4)
    c[0].metric("Rows", ds.n_rows)
    c[1].metric("Features", ds.n_vars - 1)
    c[2].metric("Classes", len(ds.classes))
    c[3].metric("Missing values", n_missing)
    warning = numeric_class_warning(ds)
    if warning:
        st.warning(md_escape(warning))
    for note in ds.notices:
        st.info(md_escape(note))
    preview, summary, balance = st.tabs(["Preview", "Per-column summary", "Class balance"])
    with preview:
        st.caption("The first 20 rows as the models see them (after grouping numeric values). "
                   "'missing' marks a missing value. The row number is the row's place in "
                   "the file (0 = first row after the header).")
        data_rows(file_rows(ds.to_frame().head(20), ds.row_ids[:20]), "coded")
        if ds.raw is not None:
            with st.expander("The same rows as read from the file"):
                data_rows(file_rows(ds.raw.head(20), ds.row_ids[:20]), "raw")
    with summary:
        st.caption("One row per column: its role, whether it was numeric (and grouped) or "
                   "categorical, how many states it has, how many values are missing, and "
                   "how many rows fall in each state.")
        st.dataframe(ds.summary(), width="stretch", hide_index=True, column_config={
            "variable": "Column", "role": "Role", "kind": "Kind", "states": "States",
            "missing": "Missing values", "counts": "Rows per state"})
    with balance:
        counts = np.bincount(ds.y[ds.y >= 0], minlength=len(ds.classes))
        chart(class_balance_figure(ds.classes, counts, class_name=ds.class_name),
              "class_balance")
        if counts.min() < 0.2 * counts.sum():
            st.caption("The classes are unbalanced: accuracy alone can look good for a model "
                       "that mostly predicts the larger class; look at AUC too.")


def data_page() -> None:
    """The Data page: choose the source, how it is read, and the features to keep."""
    st.title("BNMA Studio")
    st.markdown("Bayesian model averaging of Bayesian network classifiers. Choose the data "
                "here; the pages in the sidebar then analyse it.")
    what_am_i_looking_at(
        "A **Bayesian network classifier** predicts an outcome (the *class*, e.g. benign or "
        "malignant) from categorical features. Which features depend on which is a "
        "*structure*, and usually the data cannot single out one structure. **Model "
        "averaging** lets many plausible structures vote, each weighted by how well it "
        "explains the data.\n\n"
        "This page turns a table into such categorical data: choose the file, the column to "
        "predict, how numbers are grouped, and what to do with missing values. The summary "
        "below shows what the models will see. The page's address (URL) keeps these "
        "choices: reloading it or sharing the link gives the same data.")
    left, right = st.columns([1, 2], gap="large")
    shown, reduce_box = right.container(), right.container()  # the summary, then "fewer features"
    ds, label, network, problem, spec, origin = None, "", None, None, None, None
    with left:
        st.subheader("Data")
        source = st.radio("Where does the data come from?", list(DASHBOARD_SOURCES),
                          format_func=DASHBOARD_SOURCES.get,
                          key=persistent("app_source", "bundled"),
                          help="Start with the bundled Wisconsin breast-cancer data (WBC), "
                               "draw cases from a published network, or upload your own "
                               "table: one row per patient or case, one column per "
                               "measurement, and one column with the outcome (class).")
        lost = st.session_state.get(LOST_UPLOAD_KEY)
        for problem in st.session_state.get(URL_PROBLEMS_KEY, []):
            st.warning(md_escape(problem))
        if source == "upload" and lost:
            st.warning(f"The link named an uploaded file ({md_escape(lost)}). A file you "
                       "upload stays in "
                       "your browser session and cannot be restored from a link: please "
                       "upload it again. The other settings were restored.")
        try:
            if source == "network":
                spec = _network_controls()
            else:
                name = _file_controls(source)
                if name is not None:
                    raw, digest = raw_bytes(DatasetSpec(source=source, file=name))
                    spec = DatasetSpec(source=source, file=name,
                                       **_option_controls(raw, digest))
            if spec is not None:
                ds, label, network, origin = build_dataset(spec)
                if ds is not None:
                    with reduce_box:
                        keep = _feature_controls(ds)
                    if keep:
                        spec = spec.replace(keep=tuple(keep))
                        ds, label, network, origin = build_dataset(spec)
        except DataError as exc:
            problem = str(exc)
        remember("app_source", "app_sample_file", "app_target", "app_disc", "app_bins",
                 "app_missing", "app_network", "app_net_rows", "app_net_seed", "app_sep",
                 "app_dec", "app_drop", "app_cbins", "app_cbins_on",
                 *[f"app_net_class_{n}" for n in NETWORKS])
        st.divider()
        st.page_link("pages/3_Patient.py", label="Explain one patient",
                     icon=":material/stethoscope:",
                     help="One patient's prediction, with how sure the averaged models are.")
        page_links()
    with shown:
        if problem is not None:
            st.error(md_escape(problem))
            st.caption("No dataset is active until this is fixed.")
        if ds is not None:
            set_dataset(ds, label, network, spec, origin)
            st.subheader(f"{md_escape(label)} — outcome: {md_code(ds.class_name)}")
            _show_dataset(ds)
        else:
            clear_dataset()
    sidebar_dataset_badge()


data_page()
