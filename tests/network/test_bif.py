"""BIF (bnlearn / pgmpy and JavaBayes dialects) and XMLBIF: reading what users bring, round trips.

The dialect fixtures follow the shapes of the BIF texts in pgmpy's reader tests and of files
written by JavaBayes (the classic dog problem of Charniak 1991) and Weka (XMLBIF 0.3).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from bnma_core.network import (
    BUNDLED_NETWORKS,
    DiscreteBN,
    bif_text,
    load_network,
    read_bif,
    read_xmlbif,
    write_bif,
    write_xmlbif,
    xmlbif_text,
)

SHARED_DATA = Path("/work/shared/data")
MAX_ROUND_TRIP_NODES = 223


def assert_same_network(a: DiscreteBN, b: DiscreteBN, atol: float = 1e-12) -> None:
    assert a.names == b.names and a.states == b.states
    assert all(np.array_equal(p, q) for p, q in zip(a.parents, b.parents))
    for x, y in zip(a.cpts, b.cpts):
        np.testing.assert_allclose(x, y, atol=atol, rtol=0)


def cpt_of(bn: DiscreteBN, child: str, **parents: str) -> np.ndarray:
    """The CPT row of ``child`` for the named parent states (layout-independent lookup)."""
    i = bn.index(child)
    j, stride = 0, 1
    for p in bn.parents[i]:
        j += bn.state_index(p, parents[bn.names[p].replace("-", "_")]) * stride
        stride *= int(bn.arities[p])
    return bn.cpts[i][j]


# ------------------------------------------------------------------------------ JavaBayes
DOG_JAVABAYES = """
// Bayesian Network in the Interchange Format
// Produced by BayesianNetworks package in JavaBayes
// Output created Sun Nov 02 17:49:49 GMT+00:00 1997
// Bayesian network
network "Dog-Problem" { //5 variables and 5 probability distributions
        property "credal-set constant-density-bounded 1.1" ;
}
variable  "light-on" { //2 values
        type discrete[2] {  "true"  "false" };
        property "position = (218, 195)" ;
}
variable  "bowel-problem" { //2 values
        type discrete[2] {  "true"  "false" };
        property "position = (335, 99)" ;
}
variable  "dog-out" { //2 values
        type discrete[2] {  "true"  "false" };
        property "position = (300, 195)" ;
}
variable  "hear-bark" { //2 values
        type discrete[2] {  "true"  "false" };
        property "position = (296, 268)" ;
}
variable  "family-out" { //2 values
        type discrete[2] {  "true"  "false" };
        property "position = (257, 99)" ;
}
probability (  "light-on"  "family-out" ) { //2 variable(s) and 4 values
        (true) 0.6 0.4 ;
        (false) 0.05 0.95 ;
}
probability (  "bowel-problem" ) { //1 variable(s) and 2 values
        table 0.01 0.99 ;
}
probability (  "dog-out"  "bowel-problem"  "family-out" ) { //3 variable(s) and 8 values
        table 0.99 0.97 0.9 0.3 0.01 0.03 0.1 0.7 ;
}
probability (  "hear-bark"  "dog-out" ) { //2 variable(s) and 4 values
        table 0.7 0.01 0.3 0.99 ;
}
probability (  "family-out" ) { //1 variable(s) and 2 values
        table 0.15 0.85 ;
}
"""


def check_dog(bn: DiscreteBN) -> None:
    """The dog problem's numbers (Charniak 1991): P(dog-out | bowel-problem, family-out)."""
    assert bn.names == ["light-on", "bowel-problem", "dog-out", "hear-bark", "family-out"]
    assert all(s == ["true", "false"] for s in bn.states)
    d = bn.index("dog-out")
    assert [bn.names[p] for p in bn.parents[d]] == ["bowel-problem", "family-out"]
    expect = {("true", "true"): 0.99, ("true", "false"): 0.97, ("false", "true"): 0.9,
              ("false", "false"): 0.3}
    for (bp, fo), p in expect.items():
        row = cpt_of(bn, "dog-out", bowel_problem=bp, family_out=fo)
        np.testing.assert_allclose(row, [p, 1 - p], atol=1e-12)
    np.testing.assert_allclose(cpt_of(bn, "hear-bark", dog_out="true"), [0.7, 0.3])
    np.testing.assert_allclose(cpt_of(bn, "hear-bark", dog_out="false"), [0.01, 0.99])
    np.testing.assert_allclose(cpt_of(bn, "light-on", family_out="false"), [0.05, 0.95])
    np.testing.assert_allclose(bn.cpts[bn.index("family-out")][0], [0.15, 0.85])


def test_javabayes_dog_problem():
    bn = read_bif(DOG_JAVABAYES)
    assert bn.name == "Dog-Problem"
    check_dog(bn)


def test_javabayes_default_entries_equal_table():
    """pgmpy's test: ``default`` with a whole table's values reads as that table."""
    text = DOG_JAVABAYES.replace("table", "default")
    assert_same_network(read_bif(text), read_bif(DOG_JAVABAYES))


def test_default_row_fills_unlisted_configurations():
    text = DOG_JAVABAYES.replace(
        "table 0.99 0.97 0.9 0.3 0.01 0.03 0.1 0.7 ;",
        "default 0.3 0.7; (true, true) 0.99, 0.01; (\"true\" \"false\") 0.97 0.03;"
        " (false true) 0.9 0.1;")
    check_dog(read_bif(text))


def test_rows_override_table():
    text = DOG_JAVABAYES.replace("table 0.7 0.01 0.3 0.99 ;",
                                 "table 0.5 0.5 0.5 0.5 ; (true) 0.7 0.3; (false) 0.01 0.99;")
    check_dog(read_bif(text))


ASIA_JAVABAYES = """
/* ASIA (Lauritzen & Spiegelhalter 1988) written in the JavaBayes dialect:
   quoted names, space-separated states and parents, whole tables. */
network "asia" { property "source = hand-written" ; }
property "top-level properties are skipped" ;
variable "asia" { type discrete[2] { "yes" "no" }; }
variable "tub" { property "position = (1, 2)" ; type discrete[2] { "yes", "no" }; }
variable "smoke" { type discrete [ 2 ] { yes no }; }
variable "lung" { type discrete[2] { "yes" "no" }; }
variable bronc { type discrete[2] { yes, no } ; }
variable "either" { type discrete[2] { "yes" "no" }; }
variable "xray" { type discrete[2] { "yes" "no" }; }
variable "dysp" { type discrete[2] { "yes" "no" }; }
probability ( "asia" ) { table 0.01 0.99 ; }
probability ( "tub" "asia" ) { table 0.05 0.01 0.95 0.99 ; }
probability ( "smoke" ) { property "a property inside a probability block" ; table .5 .5 ; }
probability ( "lung" | "smoke" ) { table 0.1 0.01 0.9 0.99 ; }
probability ( bronc , smoke ) { (yes) 0.6 0.4 ; ("no") 0.3, 0.7 ; }
probability ( "either" | "lung", "tub" ) { table 1 1 1 0 0 0 0 1 ; }
probability ( "xray" "either" ) { table 0.98 0.05 0.02 0.95 ; // comment at the end
}
probability ( "dysp" "bronc" "either" ) { table 0.9 0.8 0.7 0.1 0.1 0.2 0.3 0.9 ; }
"""


def test_javabayes_asia_equals_bundled_asia():
    bn = read_bif(ASIA_JAVABAYES)
    assert bn.name == "asia"
    assert_same_network(bn, load_network("asia"))


# ------------------------------------------------------------------------------ pgmpy shapes
CANCER = """
network unknown {
}
variable Pollution {
  type discrete [ 2 ] { low, high };
}
variable Smoker {
  type discrete [ 2 ] { True, False };
}
variable Cancer {
  type discrete [ 2 ] { True, False };
}
probability ( Pollution ) {
  table 0.9, 0.1;
}
probability ( Smoker ) {
  table 0.3, 0.7;
}
probability ( Cancer | Pollution, Smoker ) {
  (low, True) 0.03, 0.97;
  (low, False) 0.001, 0.999;
  (high, True) 0.05, 0.95;
  (high, False) 0.02, 0.98;
}"""


def test_rows_in_any_order():
    rows = ["  (low, True) 0.03, 0.97;\n", "  (low, False) 0.001, 0.999;\n",
            "  (high, True) 0.05, 0.95;\n", "  (high, False) 0.02, 0.98;\n"]
    shuffled = CANCER.replace("".join(rows), "".join(rows[::-1]))
    assert shuffled != CANCER
    a, b = read_bif(CANCER), read_bif(shuffled)
    assert_same_network(a, b)
    np.testing.assert_allclose(cpt_of(a, "Cancer", Pollution="high", Smoker="False"),
                               [0.02, 0.98])


PGMPY_WRITER_OUTPUT = """network unknown {
}
variable bowel-problem {
    type discrete [ 2 ] { 0, 1 };
    property position = (335, 99) ;
}
variable dog-out {
    type discrete [ 2 ] { 0, 1 };
    property position = (300, 195) ;
}
variable family-out {
    type discrete [ 2 ] { 0, 1 };
    property position = (257, 99) ;
}
variable hear-bark {
    type discrete [ 2 ] { 0, 1 };
    property position = (296, 268) ;
}
probability ( bowel-problem ) {
    table 0.01, 0.99 ;
}
probability ( dog-out | bowel-problem, family-out ) {
    ( 0, 0 ) 0.99, 0.01;
    ( 0, 1 ) 0.9, 0.1;
    ( 1, 0 ) 0.97, 0.03;
    ( 1, 1 ) 0.3, 0.7;

}
probability ( family-out ) {
    table 0.15, 0.85 ;
}
probability ( hear-bark | dog-out ) {
    ( 0 ) 0.7, 0.3;
    ( 1 ) 0.01, 0.99;

}
"""


def test_pgmpy_writer_output_with_unquoted_properties():
    bn = read_bif(PGMPY_WRITER_OUTPUT)
    assert bn.names == ["bowel-problem", "dog-out", "family-out", "hear-bark"]
    np.testing.assert_allclose(cpt_of(bn, "dog-out", bowel_problem="0", family_out="1"),
                               [0.9, 0.1])


CPP_COMMENTS = r"""
// BIF file example: Causal graph for lung cancer diagnosis
network "Cancer_Research" {
    // 1. This contains a URL that may cause parsing errors.
    property "version" = "1.0";
    property "source" = "http://health-data.org/lung-cancer";
    /* If // is simply treated as the start of a comment,
    the http:// part above will be truncated, resulting in an error.
    */
}

variable "Smoking" {
    type discrete [ 2 ] { "True", "False" };
    property "position = (100, 100)";
    property "description = "Patient's smoking status"";
}
variable "Cancer" {
    type discrete [ 2 ] { "True", "False" };
}
variable "Cough" {
    type discrete [ 2 ] { "True", "False" };
}
probability ( "Cancer" ) { table 0.1 0.9 ; }
"""


def test_comments_urls_and_nested_quotes_then_missing_blocks_are_named():
    with pytest.raises(ValueError, match="2 variables have no probability block: "
                                         "'Smoking', 'Cough'"):
        read_bif(CPP_COMMENTS)
    bn = read_bif(CPP_COMMENTS + 'probability ( "Smoking" ) { table 0.2 0.8 ; }\n'
                  'probability ( Cough | Smoking, Cancer ) { default 0.5 0.5; }\n')
    assert bn.name == "Cancer_Research" and bn.n_vars == 3
    np.testing.assert_allclose(bn.cpts[2], 0.5)


def test_names_matched_case_insensitively_when_unique():
    text = CANCER.replace("probability ( Cancer | Pollution, Smoker )",
                          "probability ( CANCER | pollution, SMOKER )")
    assert_same_network(read_bif(text), read_bif(CANCER))


@pytest.mark.parametrize("old, new, message", [
    ("table 0.01 0.99 ;", "table 0.01 0.99 0.3 ;", "has 3 values; expected 2"),
    ("table 0.99 0.97 0.9 0.3 0.01 0.03 0.1 0.7 ;", "table 0.99 0.97 ;", "expected 8"),
    ('probability (  "family-out" )', 'probability (  "cat-out" )', "'cat-out', which is not"),
    ('"dog-out"  "bowel-problem"  "family-out"', '"dog-out"  "bowel-problem"  "cat"',
     "parent 'cat' is not a declared variable"),
    ("(true) 0.6 0.4 ;", "(maybe) 0.6 0.4 ;", "'maybe' is not a state of parent"),
])
def test_bad_javabayes_raises(old, new, message):
    assert old in DOG_JAVABAYES
    with pytest.raises(ValueError, match=message):
        read_bif(DOG_JAVABAYES.replace(old, new))


# ------------------------------------------------------------------------------ XMLBIF
DOG_XMLBIF = """<?xml version="1.0"?>
<!--
    Bayesian network in XMLBIF v0.3 (BayesNet Interchange Format)
    Produced by JavaBayes (http://www.cs.cmu.edu/~javabayes/
-->
<!DOCTYPE BIF [
    <!ELEMENT BIF ( NETWORK )*>
          <!ATTLIST BIF VERSION CDATA #REQUIRED>
    <!ELEMENT NETWORK ( NAME, ( PROPERTY | VARIABLE | DEFINITION )* )>
    <!ELEMENT NAME (#PCDATA)>
    <!ELEMENT VARIABLE ( NAME, ( OUTCOME |  PROPERTY )* ) >
          <!ATTLIST VARIABLE TYPE (nature|decision|utility) "nature">
    <!ELEMENT OUTCOME (#PCDATA)>
    <!ELEMENT DEFINITION ( FOR | GIVEN | TABLE | PROPERTY )* >
    <!ELEMENT FOR (#PCDATA)>
    <!ELEMENT GIVEN (#PCDATA)>
    <!ELEMENT TABLE (#PCDATA)>
    <!ELEMENT PROPERTY (#PCDATA)>
]>
<BIF VERSION="0.3">
<NETWORK>
<NAME>Dog-Problem</NAME>
<VARIABLE TYPE="nature"><NAME>light-on</NAME><OUTCOME>true</OUTCOME><OUTCOME>false</OUTCOME>
    <PROPERTY>position = (73, 165)</PROPERTY></VARIABLE>
<VARIABLE TYPE="nature"><NAME>bowel-problem</NAME><OUTCOME>true</OUTCOME><OUTCOME>false</OUTCOME>
</VARIABLE>
<VARIABLE TYPE="nature"><NAME>dog-out</NAME><OUTCOME>true</OUTCOME><OUTCOME>false</OUTCOME>
</VARIABLE>
<VARIABLE TYPE="nature"><NAME>hear-bark</NAME><OUTCOME>true</OUTCOME><OUTCOME>false</OUTCOME>
</VARIABLE>
<VARIABLE TYPE="nature"><NAME>family-out</NAME><OUTCOME>true</OUTCOME><OUTCOME>false</OUTCOME>
</VARIABLE>
<!-- Probability distributions -->
<DEFINITION><FOR>light-on</FOR><GIVEN>family-out</GIVEN><TABLE>0.6 0.4 0.05 0.95 </TABLE>
</DEFINITION>
<DEFINITION><FOR>bowel-problem</FOR><TABLE>0.01 0.99 </TABLE></DEFINITION>
<DEFINITION>
    <FOR>dog-out</FOR>
    <GIVEN>bowel-problem</GIVEN>
    <GIVEN>family-out</GIVEN>
    <TABLE>
0.99 0.01
0.97 0.03
0.9 0.1
0.3 0.7
</TABLE>
</DEFINITION>
<DEFINITION><FOR>hear-bark</FOR><GIVEN>dog-out</GIVEN><TABLE>0.7 0.3 0.01 0.99 </TABLE>
</DEFINITION>
<DEFINITION><FOR>family-out</FOR><TABLE>0.15 0.85 </TABLE></DEFINITION>
</NETWORK>
</BIF>
"""


def test_xmlbif_dog_problem_and_equal_to_bif():
    bn = read_xmlbif(DOG_XMLBIF)
    assert bn.name == "Dog-Problem"
    check_dog(bn)
    assert_same_network(bn, read_bif(DOG_JAVABAYES))


def test_xmlbif_lowercase_tags_and_bytes():
    low = DOG_XMLBIF.split("<BIF VERSION")[1]
    for tag in ("NETWORK", "NAME", "VARIABLE", "OUTCOME", "DEFINITION", "FOR", "GIVEN",
                "TABLE", "PROPERTY", "BIF"):
        low = low.replace(f"<{tag}", f"<{tag.lower()}").replace(f"</{tag}>",
                                                                f"</{tag.lower()}>")
    check_dog(read_xmlbif(("<bif version" + low).encode("utf-8")))


@pytest.mark.parametrize("old, new, message", [
    ("<TABLE>0.01 0.99 </TABLE>", "<TABLE>0.01 0.99 0.5 </TABLE>", "has 3 values"),
    ("<DEFINITION><FOR>family-out</FOR><TABLE>0.15 0.85 </TABLE></DEFINITION>", "",
     "variable 'family-out' has no <DEFINITION>"),
    ("<GIVEN>dog-out</GIVEN>", "<GIVEN>cat</GIVEN>", "parent 'cat' is not a declared"),
    ("</NETWORK>", "", "not well-formed"),
    ("<TABLE>0.15 0.85 </TABLE>", "<TABLE>0.15 x </TABLE>", "non-number"),
    ('<VARIABLE TYPE="nature"><NAME>light-on', '<VARIABLE TYPE="decision"><NAME>light-on',
     "only chance"),
])
def test_bad_xmlbif_raises(old, new, message):
    assert old in DOG_XMLBIF
    with pytest.raises(ValueError, match=message):
        read_xmlbif(DOG_XMLBIF.replace(old, new))


def test_load_network_reads_xmlbif_paths(tmp_path):
    asia = load_network("asia")
    for name in ("a.xml", "a.xmlbif", "a.xml.gz", "no_suffix"):
        write_xmlbif(asia, tmp_path / name)
        assert_same_network(load_network(tmp_path / name), asia, atol=0)
    assert (tmp_path / "a.xml.gz").read_bytes()[:2] == b"\x1f\x8b"


def test_xml_given_to_the_bif_reader_and_a_bom(tmp_path):
    with pytest.raises(ValueError, match="read_xmlbif"):
        read_bif(DOG_XMLBIF)
    path = tmp_path / "dog.net"
    path.write_bytes(b"\xef\xbb\xbf" + DOG_XMLBIF.encode("utf-8"))
    check_dog(load_network(path))
    path.write_text(DOG_JAVABAYES)
    check_dog(load_network(path))


def test_writer_quotes_names_that_need_it(tmp_path):
    bn = read_bif(DOG_JAVABAYES)
    spaced = DiscreteBN([n.replace("-", " ") for n in bn.names],
                        [["is true", "is, false"] for _ in bn.names], bn.parents, bn.cpts,
                        name="dog problem")
    back = read_bif(bif_text(spaced))
    assert back.name == "dog problem"
    assert_same_network(back, spaced, atol=0)
    assert_same_network(read_xmlbif(xmlbif_text(spaced)), spaced, atol=0)
    bad = DiscreteBN(['say "hi"'], [["a", "b"]], [[]], [[0.5, 0.5]])
    with pytest.raises(ValueError, match="cannot be written to BIF"):
        write_bif(bad, tmp_path / "bad.bif")


# ------------------------------------------------------------------------------ round trips
def round_trip_sources() -> list:
    params = [pytest.param(f"bundled:{n}", id=f"bundled-{n}") for n in BUNDLED_NETWORKS]
    if SHARED_DATA.is_dir():
        for p in sorted(SHARED_DATA.glob("*.bif.gz")):
            params.append(pytest.param(str(p), id=f"shared-{p.name[:-7]}"))
    return params


def _load(source: str) -> DiscreteBN:
    if source.startswith("bundled:"):
        return load_network(source.split(":", 1)[1])
    head = gzip.decompress(Path(source).read_bytes()).decode("utf-8", "replace")
    if head.count("\nvariable ") + head.startswith("variable ") > MAX_ROUND_TRIP_NODES:
        pytest.skip(f"more than {MAX_ROUND_TRIP_NODES} nodes")
    return read_bif(source)


@pytest.mark.parametrize("source", round_trip_sources())
def test_round_trips_bif_and_xmlbif(source, tmp_path):
    bn = _load(source)
    back_bif = read_bif(bif_text(bn))
    assert_same_network(back_bif, bn)
    assert back_bif.name == bn.name
    write_xmlbif(bn, tmp_path / "n.xml")
    back_xml = read_xmlbif(tmp_path / "n.xml")
    assert_same_network(back_xml, bn)
    assert back_xml.name == bn.name
