"""The status page's `?openmetrics`, read and checked with PyPI's
prometheus-client OpenMetrics parser (the format's reference
implementation in Python): a page it refuses fails the test."""
from __future__ import annotations

import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"


def status_url(base_url: str) -> str:
    """The status page next to an API base (`http://HOST:PORT/iReporter/`)."""
    return base_url.split("/iReporter/")[0] + "/ireporter-status?openmetrics"


def scrape(base_url: str) -> dict:
    """{family name: family} of the page, parsed (and so checked) whole."""
    with urllib.request.urlopen(status_url(base_url), timeout=10) as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == CONTENT_TYPE, r.headers["Content-Type"]
        text = r.read().decode("utf-8")
    return {family.name: family for family in text_string_to_metric_families(text)}


def value(families: dict, sample_name: str, **labels) -> float:
    """The sample's value with exactly these labels (the `le` one too), 0 when absent."""
    family = next((f for f in families.values() if any(s.name == sample_name for s in f.samples)), None)
    if family is None:
        return 0
    return next((s.value for s in family.samples if s.name == sample_name and s.labels == labels), 0)
