"""The EKS release dates table: validated, with sources, read by version."""

from __future__ import annotations

from datetime import date

import pytest
from pydantic import ValidationError

from eksmllint.platform import eks_releases as table


def test_release_dates_from_the_aws_calendar():
    assert table.eks_release((1, 33)).eks_release == date(2025, 5, 29)
    assert table.eks_release((1, 31)).eks_release == date(2024, 9, 26)
    assert table.eks_release((1, 35)).confidence == "third_party"
    assert table.eks_release((1, 20)) is None
    dates = [r.eks_release for _, r in sorted(table.eks_releases().items())]
    assert dates == sorted(dates)  # later versions reached EKS later


def test_a_release_citing_an_unlisted_source_is_refused():
    with pytest.raises(ValidationError, match="not listed"):
        table._Table.model_validate(
            {"sources": {}, "releases": {"1.33": {"eks_release": "2025-05-29", "source": "nowhere"}}}
        )
