"""The built image as a class reaches it: deploy/build_image.sh runs a container serving two
replicas behind the image's own nginx and points DLPLAY_IMAGE_URL at it. Through that one
address: sessions spread over both replicas and each stays on one, a page and a download
arrive, and a live GAN frame comes back. Without DLPLAY_IMAGE_URL (no image was built) these
tests are skipped; tests/e2e/test_replicas.py runs the same checks on replicas started here."""
from __future__ import annotations

import os

import pytest

from tests.e2e.test_replicas import (
    _play_gan,
    test_page_and_download_through_the_proxy,
    test_sessions_spread_and_each_browser_stays_on_one_replica,
)

pytestmark = pytest.mark.e2e

__all__ = ["test_page_and_download_through_the_proxy",
           "test_sessions_spread_and_each_browser_stays_on_one_replica"]


@pytest.fixture(scope="module")
def proxy_url() -> str:
    url = os.environ.get("DLPLAY_IMAGE_URL")
    if not url:
        pytest.skip("no image is served: deploy/build_image.sh builds one and sets DLPLAY_IMAGE_URL")
    return url.rstrip("/")


def test_a_live_frame_comes_through_the_image_nginx(browser, proxy_url):
    context, page, client = _play_gan(browser, proxy_url, "a")
    try:
        frames = page.evaluate("() => +(document.body.dataset.dlplayFrames || 0)")
        assert frames >= 3 and client
    finally:
        context.close()
