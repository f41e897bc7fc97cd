"""The cache of packaged tables' parses (eksmllint.tables.parsed): counted, never stale, never fatal."""

from __future__ import annotations

import os

import pytest

from eksmllint import tables, yamlpos
from eksmllint.core import registry
from eksmllint.yamlpos import load_data

TEXT = "a: {b: [1, 2.5, true, null]}\nc: text\n"
DATA = {"a": {"b": [1, 2.5, True, None]}, "c": "text"}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EKSMLLINT_TABLE_CACHE", str(tmp_path / "tables"))
    return tmp_path / "tables"


@pytest.fixture
def parses(monkeypatch):
    """How many YAML texts eksmllint's loader parses."""
    calls = []
    real = yamlpos.load_yaml_stream
    monkeypatch.setattr(yamlpos, "load_yaml_stream", lambda text: calls.append(text) or real(text))
    return calls


def test_a_warm_cache_loads_the_rule_registry_without_parsing_a_rule_file(cache, parses):
    cold = registry.default_registry.__wrapped__()
    assert len(parses) == len(cold) >= 60  # one parse per rule file
    parses.clear()
    warm = registry.default_registry.__wrapped__()
    assert parses == []
    assert [r.spec for r in warm] == [r.spec for r in cold]  # validated again, to equal models


def test_the_cached_parse_is_plain_data_equal_to_the_parse(cache):
    fresh = tables.parsed(TEXT, load_data)
    assert fresh == DATA and type(fresh) is dict and type(fresh["a"]["b"]) is list
    assert tables.parsed(TEXT, load_data) == fresh
    assert len(list(cache.iterdir())) == 1


def test_a_changed_text_is_parsed_again(cache, parses):
    assert tables.parsed(TEXT, load_data)["c"] == "text"
    assert tables.parsed(TEXT.replace("text", "other"), load_data)["c"] == "other"
    assert len(parses) == 2


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: b"",
        lambda raw: raw[:-3],  # truncated
        lambda raw: raw[:-1] + bytes([raw[-1] ^ 1]),  # one bit flipped
        lambda raw: b"not a cache entry at all" * 3,
    ],
)
def test_a_damaged_entry_is_a_miss_and_is_rewritten(cache, parses, damage):
    tables.parsed(TEXT, load_data)
    (entry,) = cache.iterdir()
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    assert tables.parsed(TEXT, load_data) == DATA
    assert len(parses) == 2
    assert entry.read_bytes() == good


def test_another_texts_entry_under_this_name_is_a_miss(cache, parses):
    other = "c: other\n"
    tables.parsed(TEXT, load_data)
    tables.parsed(other, load_data)
    mine, theirs = sorted(cache.iterdir(), key=lambda p: p.stat().st_mtime_ns)
    mine.write_bytes(theirs.read_bytes())  # intact, but another key's entry
    assert tables.parsed(TEXT, load_data) == DATA
    assert len(parses) == 3


def test_parse_errors_are_raised_and_not_cached(cache):
    with pytest.raises(yamlpos.YAMLLoadError):
        tables.parsed("a: [1\n", load_data)
    assert not cache.exists() or list(cache.iterdir()) == []


def test_an_unwritable_cache_is_no_error(tmp_path, monkeypatch, parses):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("EKSMLLINT_TABLE_CACHE", str(blocker / "tables"))  # under a file: cannot exist
    assert tables.parsed(TEXT, load_data) == tables.parsed(TEXT, load_data) == DATA
    assert len(parses) == 2


def test_an_empty_setting_turns_the_cache_off(monkeypatch, parses):
    monkeypatch.setenv("EKSMLLINT_TABLE_CACHE", "")
    assert tables.cache_dir() is None
    tables.parsed(TEXT, load_data)
    tables.parsed(TEXT, load_data)
    assert len(parses) == 2


def test_another_eksmllint_version_does_not_read_the_entries(cache, parses, monkeypatch):
    import eksmllint

    tables.parsed(TEXT, load_data)
    monkeypatch.setattr(eksmllint, "__version__", eksmllint.__version__ + ".dev1")
    tables._salt.cache_clear()
    try:
        tables.parsed(TEXT, load_data)
    finally:
        tables._salt.cache_clear()
    assert len(parses) == 2
    assert len(os.listdir(cache)) == 2


def test_without_a_home_there_is_no_cache_in_the_working_directory(monkeypatch):
    monkeypatch.delenv("EKSMLLINT_TABLE_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # what it returns when HOME is unknown
    assert tables.cache_dir() is None
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/cache/me")
    assert tables.cache_dir() == tables.Path("/var/cache/me/eksmllint/tables-v1")
