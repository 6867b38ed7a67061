"""``bnma explain --report``: the Patient page's one-page case report from the command line
(issue 33 item 3), with the identifier and notes escaped."""

from __future__ import annotations

import re

from bnma_core.cli import main


def test_explain_report_writes_the_case_report_with_escaped_fields(tmp_path, capsys):
    out = tmp_path / "case.html"
    code = main(["explain", "--data", "wbc", "--row", "23", "--method", "nb", "--report",
                 str(out), "--identifier", "<script>alert(1)</script>", "--notes",
                 "a & b </textarea><b>x</b>"])
    assert code == 0 and "case report of row 23 written" in capsys.readouterr().out
    page = out.read_text()
    for heading in ("Case report", "Prediction", "How likely, and how sure",
                    "What each finding contributes"):
        assert f">{heading}</h" in page
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "a &amp; b &lt;/textarea&gt;&lt;b&gt;x&lt;/b&gt;" in page
    assert re.search(r"<th>data</th>\s*<td>wbc</td>", page)
    assert re.search(r"<th>method code</th>\s*<td>nb</td>", page)
    assert page.count("<svg class=\"main-svg\"") >= 2 or "plotly" in page  # drawn figures


def test_explain_report_refuses_a_missing_folder_before_fitting(tmp_path, capsys):
    code = main(["explain", "--data", "wbc", "--row", "0", "--report",
                 str(tmp_path / "nowhere" / "case.html")])
    assert code == 2
    assert "does not exist" in capsys.readouterr().err
