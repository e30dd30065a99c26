"""Two Streamlit replicas behind nginx (deploy/replicas.py): sessions spread over both
replicas, each browser stays on one (its websocket, its media files), a page renders through
the proxy and a download served from the session's replica arrives; a killed replica costs
only its own sessions, and a page playing there resumes its training on the survivor from
the replicas' shared checkpoints (the last test)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import threading
import time
import urllib.request

import pytest

from live.checkpoint_store import _parse
from tests.e2e.conftest import _need, wait_idle
from tests.e2e.test_skeleton_pages import ERRORS, settle

pytestmark = pytest.mark.e2e


def _free_block(n: int) -> int:
    """A port p with p..p+n free on the loopback."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + n < 65535 and all(_free(base + i) for i in range(n + 1)):
            return base
    raise RuntimeError("no free port block")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


@pytest.fixture(scope="module")
def deployment():
    if shutil.which("nginx") is None and not __import__("os").path.exists("/usr/sbin/nginx"):
        _need("nginx", "apt-get install -y nginx")
    from deploy.replicas import Deployment
    deployment = Deployment(_free_block(3), 2).start()
    done = threading.Event()
    watcher = threading.Thread(target=deployment.watch, args=(done.is_set,), daemon=True)
    watcher.start()
    try:
        yield deployment
    finally:
        done.set()
        watcher.join(timeout=5)
        deployment.stop()


@pytest.fixture(scope="module")
def proxy_url(deployment):
    return deployment.url


def _replicas_seen(context, page, url: str) -> set[str]:
    seen: set[str] = set()
    page.on("response", lambda r: seen.add(r.headers.get("x-dlplay-replica", "")))
    page.goto(url)
    page.wait_for_selector("h1", timeout=120_000)
    settle(page)
    seen.discard("")
    return seen


def test_sessions_spread_and_each_browser_stays_on_one_replica(browser, proxy_url):
    """New browsers get a random route: keep opening them until both replicas served one (at
    most 12: all on one replica by chance has probability 2 / 2**12)."""
    per_browser: list[set[str]] = []
    while len(per_browser) < 12 and len(set().union(*per_browser)) < 2:
        context = browser.new_context(viewport={"width": 1200, "height": 800})
        try:
            page = context.new_page()
            per_browser.append(_replicas_seen(context, page, proxy_url))
            assert page.locator(ERRORS).count() == 0
        finally:
            context.close()
    assert all(len(s) == 1 for s in per_browser), per_browser     # sticky
    assert len(set().union(*per_browser)) == 2, per_browser         # both replicas serve


def test_page_and_download_through_the_proxy(browser, proxy_url):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    try:
        page = context.new_page()
        seen = _replicas_seen(context, page, f"{proxy_url}/gradient_descent")
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)   # the websocket works
        assert len(seen) == 1 and page.locator(ERRORS).count() == 0
        page.get_by_text("Export", exact=True).click()
        with page.expect_download(timeout=60_000) as info:
            page.get_by_role("button", name="Download data (CSV)").click()
        path = info.value.path()
        text = open(path, encoding="utf-8").read()
        assert text.startswith("method,step,x1,x2") and text.count("\n") > 100
    finally:
        context.close()


def _get(url: str, route: str) -> tuple[str, str]:
    """(body, replica) of GET `url` from a browser whose route cookie is `route`."""
    req = urllib.request.Request(url, headers={"Cookie": f"dlplay_route={route}"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.read().decode(), r.headers.get("X-Dlplay-Replica", "")


def _answers(url: str) -> bool:
    """Whether `url` answers ok (a restarted replica refuses connections while it starts)."""
    try:
        return _get(url, "x")[0] == "ok"
    except OSError:
        return False


RESUMED = re.compile(r"The server this page was on stopped; training resumed from iteration "
                     r"([\d,]+)")
ITER = re.compile(r"Iteration ([\d,]+)")


def _shown(page, pattern: re.Pattern) -> int:
    m = pattern.search(page.locator('[data-testid="stMain"]').inner_text())
    return int(m.group(1).replace(",", "")) if m else -1


def _play_gan(browser, url: str, route: str):
    """A browser routed by `route` playing the GAN page until its frames come from the route;
    returns (context, page, its dlplay_client cookie)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_cookies([{"name": "dlplay_route", "value": route, "url": url}])
    page = context.new_page()
    page.goto(f"{url}/gan")
    wait_idle(page, timeout_s=120)
    page.get_by_role("button", name="Play").first.click()
    page.wait_for_function("() => +(document.body.dataset.dlplayFrames || 0) >= 3",
                           timeout=60_000)
    client = next(c["value"] for c in context.cookies() if c["name"] == "dlplay_client")
    return context, page, client


MAIN_TEXT = "(document.querySelector('[data-testid=\"stMain\"]')?.innerText ?? '')"


def _wait_resumed(page, timeout_s: float) -> None:
    page.wait_for_function(f"() => /training resumed from iteration/.test({MAIN_TEXT})",
                           timeout=timeout_s * 1000)


def _wait_iteration_above(page, n: int, timeout_s: float) -> None:
    """Until the status line counts past iteration n (it trains, and the page shows it)."""
    page.wait_for_function(f"(n) => {{ const m = {MAIN_TEXT}.match(/Iteration ([\\d,]+)/);"
                           " return m && +m[1].replace(/,/g, '') > n; }",
                           arg=n, timeout=timeout_s * 1000)


def _stored_steps(folder, client: str) -> int:
    """Iterations of the newest checkpoint this browser has in the replicas' store."""
    steps = 0
    for path in folder.glob("*.ckpt"):
        try:
            cp = _parse(path.read_bytes())
        except (OSError, ValueError, KeyError, TypeError):
            continue                             # being replaced right now
        if cp.browser == client:
            steps = max(steps, cp.steps)
    return steps


def test_a_killed_replica_takes_only_its_own_sessions(browser, deployment):
    """SIGKILL one replica: the launcher and nginx stay up, the browsers routed to the dead
    replica are served by the other within 10 s, the survivor's process is untouched, and the
    dead one is restarted and logged. A GAN page playing on the dead replica reconnects to
    the survivor, which finds its trainer in the shared checkpoint folder: the status line
    says the server stopped and from which iteration training resumed (no earlier than the
    checkpoint stored before the kill), and the iterations keep counting from there. When the
    restarted replica answers again it takes this browser's requests back: the page reloads
    there, resumes once more and plays on."""
    from deploy.replicas import Backoff
    url = deployment.url
    dead_port, alive_port = deployment.backends
    routes = {}
    for i in range(64):                          # a route cookie on each replica
        _, replica = _get(f"{url}/_stcore/health", f"r{i}")
        routes.setdefault(replica.rsplit(":", 1)[-1], f"r{i}")
        if len(routes) == 2:
            break
    assert set(routes) == {str(dead_port), str(alive_port)}, routes
    survivor = deployment.replica(alive_port).proc
    victim = deployment.replica(dead_port).proc
    nginx = deployment.units[-1].proc
    playing, live_page, client = _play_gan(browser, url, routes[str(dead_port)])
    loads: list[float] = []
    live_page.on("load", lambda: loads.append(time.time()))
    store = deployment.prefix / "checkpoints"
    start, deadline = _shown(live_page, ITER), time.time() + 60
    while _stored_steps(store, client) < start + 300:    # its worker checkpoints every ~3 s
        assert time.time() < deadline, "no checkpoint of the playing page reached the store"
        time.sleep(0.2)
    # the dead replica comes back 20 s after the kill, not 1 s: the resume watched here is the
    # survivor's (once back, the restarted replica takes this browser again: the page
    # reloads there and resumes once more, live/canvas.js)
    deployment.backoff = Backoff(first=20.0)
    stored, before = _stored_steps(store, client), _shown(live_page, ITER)
    os.kill(victim.pid, signal.SIGKILL)
    killed = time.time()
    while True:                                  # the dead replica's browsers fail over
        try:
            body, replica = _get(f"{url}/", routes[str(dead_port)])
            if replica.endswith(f":{alive_port}") and "<html" in body.lower():
                break
        except OSError:
            pass
        assert time.time() - killed < 10, "no replica answered the dead one's browser in 10 s"
        time.sleep(0.2)
    failover_s = time.time() - killed
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    try:
        context.add_cookies([{"name": "dlplay_route", "value": routes[str(dead_port)],
                              "url": url}])
        page = context.new_page()
        page.goto(f"{url}/gradient_descent")
        page.wait_for_selector("h1", timeout=120_000)      # a new session works
        settle(page)
        assert page.locator(ERRORS).count() == 0
    finally:
        context.close()
    try:
        _wait_resumed(live_page, 90)
        notice_s = time.time() - killed
        resumed = _shown(live_page, RESUMED)
        assert resumed >= stored >= start + 300 > 300, (resumed, stored, start)
        _wait_iteration_above(live_page, resumed, 60)
        assert live_page.get_by_role("button", name="Pause").count() >= 1     # playing again
        deployment.backoff = Backoff()
        assert survivor.poll() is None and deployment.replica(alive_port).proc is survivor
        assert nginx.poll() is None and deployment.units[-1].proc is nginx
        deadline = time.time() + 120                 # restarted after its backoff
        while not _answers(f"http://127.0.0.1:{dead_port}/_stcore/health") or \
                deployment.replica(dead_port).restarts < 1:
            assert time.time() < deadline, "the dead replica was not restarted"
            time.sleep(0.5)
        back = time.time()
        log = (deployment.prefix / "deploy.log").read_text()
        assert f"replica :{dead_port}: pid {victim.pid} exited with code -9" in log
        assert f"replica :{dead_port}: restarted as pid" in log
        # the restarted replica takes this browser's requests back while its websocket is on
        # the survivor: the page reloads there and resumes once more, and plays on
        deadline = time.time() + 90
        while not [t for t in loads if t > back]:
            assert time.time() < deadline, "the page did not follow its browser's replica"
            live_page.wait_for_timeout(250)
        _wait_resumed(live_page, 60)
        again = _shown(live_page, RESUMED)
        _wait_iteration_above(live_page, again, 60)
        assert again >= resumed and live_page.locator(ERRORS).count() == 0
    finally:
        playing.close()
        deployment.backoff = Backoff()
    print(f"failover in {failover_s:.1f} s; the playing page showed iteration {before} at "
          f"the kill, {stored} was stored, it resumed from {resumed} after {notice_s:.1f} s; "
          f"back on the restarted replica {max(loads) - back:.1f} s after it answered, "
          f"resumed from {again}")
