"""Model files (issue 35 items 1-2, DESIGN §17): every registered method round-trips exactly,
and a model file is treated as untrusted input."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import warnings
import zipfile

import numpy as np
import pytest

from bnma_core import load_model, save_model
from bnma_core.classifiers.registry import METHODS, fit_method
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.model_io import (
    FORMAT_VERSION,
    MAX_ARRAY_BYTES,
    ModelFileError,
    model_bytes,
    read_model,
    unsaveable_reason,
)


@pytest.fixture(scope="module")
def small():
    ds = load_dataset(bundled_path("wbc.csv"))
    return ds.select_features(ds.feature_names[:5]).subset(np.arange(0, 699, 6))


def _fit(name, ds):
    spec = METHODS[name]
    kw = dict(spec.test_params)
    if spec.randomized:
        kw["random_state"] = 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_method(name, ds, **kw)


@pytest.mark.parametrize("name", list(METHODS))
def test_every_registered_method_round_trips_to_1e12(name, small, tmp_path):
    """load_model(save_model(m)) predicts identically, incomplete rows included."""
    model = _fit(name, small)
    assert unsaveable_reason(model) == ""
    path = save_model(model, tmp_path / f"{name}.bnma", dataset=small, method=name)
    again = load_model(path)
    X = small.X.copy()
    X[::5, 1] = -1
    X[::7, 3] = -1
    np.testing.assert_allclose(again.predict_proba(X), model.predict_proba(X), rtol=0,
                               atol=1e-12)
    assert again.model_info_["method"] == name
    assert again.model_info_["n_rows"] == small.n_rows
    assert again.model_info_["data_fingerprint"] == small.fingerprint()


@pytest.fixture(scope="module")
def nb_file(small):
    return model_bytes(_fit("nb", small), dataset=small, method="nb")


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _zip(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    return buf.getvalue()


def _rehash(members: dict[str, bytes]) -> dict[str, bytes]:
    """The members with a manifest whose checksums match them (a consistent forgery)."""
    from bnma_core.model_io import _content_hash

    manifest = json.loads(members["manifest.json"])
    listing = [{"name": n, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
               for n, b in members.items() if n != "manifest.json"]
    manifest.update(members=listing, content_sha256=_content_hash(listing))
    return {**members, "manifest.json": json.dumps(manifest).encode()}


class _Boom:
    def __reduce__(self):
        return (exec, ("open(__import__('os').environ['BNMA_PICKLE_MARK'], 'w').write('ran')",))


def test_a_pickle_payload_is_refused_and_never_runs(tmp_path, monkeypatch):
    mark = tmp_path / "ran"
    monkeypatch.setenv("BNMA_PICKLE_MARK", str(mark))
    payload = pickle.dumps(_Boom())
    with pytest.raises(ModelFileError, match="pickle"):
        read_model(payload)
    (tmp_path / "model.bnma").write_bytes(payload)
    with pytest.raises(ModelFileError, match="pickle"):
        load_model(tmp_path / "model.bnma")
    assert not mark.exists()
    pickle.loads(payload)  # the payload is live: unpickling it does run
    assert mark.exists()


def test_a_pickled_array_inside_the_archive_is_refused(nb_file, tmp_path, monkeypatch):
    mark = tmp_path / "ran"
    monkeypatch.setenv("BNMA_PICKLE_MARK", str(mark))
    members = _members(nb_file)
    buf = io.BytesIO()
    np.save(buf, np.array([_Boom()], dtype=object), allow_pickle=True)
    members["arrays/000000.npy"] = buf.getvalue()
    with pytest.raises(ModelFileError, match="object"):
        read_model(_zip(_rehash(members)))
    assert not mark.exists()


def test_a_newer_format_version_is_refused(nb_file):
    members = _members(nb_file)
    manifest = json.loads(members["manifest.json"])
    manifest["format_version"] = FORMAT_VERSION + 1
    members["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(ModelFileError, match="newer than this library reads"):
        read_model(_zip(members))


def test_a_tampered_file_is_refused(nb_file):
    members = _members(nb_file)
    info = json.loads(members["info.json"])
    info["method"] = "stack"  # a changed provenance
    members["info.json"] = json.dumps(info).encode()
    with pytest.raises(ModelFileError, match="checksum of info.json does not match"):
        read_model(_zip(members))


def test_an_inconsistent_state_with_matching_checksums_fails_the_self_check(nb_file):
    """A forged file whose checksums match (they detect change, not authorship) but whose
    class prior was changed no longer reproduces the predictions saved with it."""
    import base64

    members = _members(nb_file)
    state = json.loads(members["state.json"])
    attrs = state["estimator"]["$obj"][1]
    for key, value in (("class_prior_", [0.01, 0.99]), ("_log_prior", np.log([0.01, 0.99]))):
        attrs[key]["$nd"][2] = base64.b64encode(np.asarray(value).tobytes()).decode()
    members["state.json"] = json.dumps(state).encode()
    with pytest.raises(ModelFileError, match="does not reproduce the predictions"):
        read_model(_zip(_rehash(members)))


def test_an_array_larger_than_the_limits_is_refused_before_it_is_read(nb_file):
    members = _members(nb_file)
    n = MAX_ARRAY_BYTES // 8 + 1
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (n,)})
    members["arrays/000000.npy"] = header.getvalue() + b"\0" * 64  # declares 200 MB, holds 64 B
    with pytest.raises(ModelFileError, match="declares an array of 191 MB"):
        read_model(_zip(_rehash(members)))


def test_a_zip_bomb_is_refused_from_its_declared_sizes(nb_file, monkeypatch):
    """Checked on the archive's directory before a byte is inflated (limits scaled down
    100-fold so that the test builds a 3 MB bomb instead of a 300 MB one)."""
    from bnma_core import model_io

    monkeypatch.setattr(model_io, "MAX_ARRAY_BYTES", 2 * 2**20)
    monkeypatch.setattr(model_io, "MAX_RATIO", 10)
    members = _members(nb_file)
    members["arrays/000000.npy"] = b"\0" * (3 * 2**20)  # 3 MB of zeros, ~3 kB packed
    data = _zip(members)
    assert len(data) < 2**16
    with pytest.raises(ModelFileError, match="declares 3 MB, more than the 2 MB"):
        read_model(data)
    members["arrays/000000.npy"] = b"\0" * (3 * 2**19)  # under the array limit
    with pytest.raises(ModelFileError, match="would expand \\d+ times .more than 10.: a "
                                             "compression bomb"):
        read_model(_zip(members))


@pytest.mark.parametrize("name", ["../evil.json", "/etc/passwd", "arrays/../../x.npy",
                                  "C:\\win.npy", "state.json/../info.json", "extra.txt"])
def test_path_names_inside_the_archive_are_refused(nb_file, name):
    members = _members(nb_file)
    members[name] = b"{}"
    with pytest.raises(ModelFileError, match="holds the path"):
        read_model(_zip(members))


def test_not_a_model_file_is_one_sentence(tmp_path):
    with pytest.raises(ModelFileError, match="not a ZIP archive"):
        read_model(b"name,age\nx,1\n")
    with pytest.raises(ModelFileError, match="No model file"):
        read_model(tmp_path / "absent.bnma")
    with pytest.raises(ModelFileError, match="no manifest.json"):
        read_model(_zip({"state.json": b"{}"}))


def test_a_class_outside_the_allow_list_is_refused(nb_file):
    members = _members(nb_file)
    state = json.loads(members["state.json"])
    state["encoder"] = {"$obj": ["os:system", {}]}
    members["state.json"] = json.dumps(state).encode()
    with pytest.raises(ModelFileError, match="refers to the class 'os:system'"):
        read_model(_zip(_rehash(members)))


def test_a_model_that_cannot_be_saved_says_so_in_one_sentence(small):
    from sklearn.naive_bayes import CategoricalNB

    foreign = CategoricalNB().fit(small.X.clip(0), small.y)
    assert unsaveable_reason(foreign) == ("CategoricalNB cannot be saved: model files hold "
                                          "the registered methods only.")
    model = _fit("nb", small)
    model.random_thing_ = lambda: 0
    msg = unsaveable_reason(model)
    assert msg.startswith("nb cannot be saved: it holds a builtins.function")
