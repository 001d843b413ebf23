"""The commands of issue 15 through nginx (the test stack), and the 2012
app's answers unchanged beside them."""
from __future__ import annotations

import pytest

from e2e import OURS
from reactions import reactions_flow

pytestmark = [pytest.mark.usefixtures("fresh_db"),
              pytest.mark.skipif(not OURS, reason="the PHP original has no such commands")]


def test_reactions_through_nginx(base_url, upload_dir):
    reactions_flow(base_url, upload_dir, "nginx")
