"""One registry of suppression methods (issue 13): the Python API, the command line, job
files and the suppression stage all read the same names and the same default."""

from __future__ import annotations

import inspect

import pytest

import tablesafe
from tablesafe.adjust.methods import ADJUST_METHODS
from tablesafe.errors import InputError
from tablesafe.methods import ALL_METHODS, check_any_method
from tablesafe.suppress import dispatch
from tablesafe.suppress.methods import DEFAULT_METHOD, METHODS, REGISTRY, check_method, method_info


def test_the_registry_lists_every_method_once_with_one_default():
    assert METHODS == ("auto", "optimal", "modular", "fast", "none")
    assert len(set(METHODS)) == len(METHODS) == len(REGISTRY)
    assert DEFAULT_METHOD == "auto" and DEFAULT_METHOD in METHODS
    assert [m.name for m in REGISTRY if not m.safe] == ["none"]
    assert method_info("none").safe is False and method_info("modular").safe is True


def test_every_entry_reads_the_registry():
    from tablesafe.cli.main import Method

    assert dispatch.METHODS is METHODS
    assert tablesafe.suppress.METHODS is METHODS
    assert tuple(m.value for m in Method) == ALL_METHODS
    assert ALL_METHODS[: len(METHODS)] == METHODS and set(ADJUST_METHODS) <= set(ALL_METHODS)
    for fn in (tablesafe.protect, tablesafe.protect_problem):
        assert inspect.signature(fn).parameters["method"].default == DEFAULT_METHOD


def test_an_unknown_method_is_refused_with_the_known_ones():
    with pytest.raises(InputError, match="unknown method 'clever'; choose one of auto, optimal, modular"):
        check_method("clever")
    with pytest.raises(InputError, match="unknown method 'clever'; choose one of auto, .*, cta, round"):
        check_any_method("clever")
    with pytest.raises(InputError, match="unknown method"):
        tablesafe.protect("no-such-file.csv", ["a"], "v", ["p(15)"], method="clever")


def test_a_job_file_with_an_unknown_method_is_refused_on_reading(tmp_path):
    from tablesafe.io.jobfile import read_job

    job = tmp_path / "job.toml"
    job.write_text('data = "x.csv"\ndims = ["a"]\nresponse = "v"\nrules = ["p(15)"]\nmethod = "clever"\n')
    with pytest.raises(InputError, match="unknown method 'clever'") as err:
        read_job(job)
    assert err.value.file == str(job)
