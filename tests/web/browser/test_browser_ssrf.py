"""The browser SSRF corpus: a page's every way of reaching an address runvil refuses.

Each case is a page whose markup or scripts try to reach loopback canary listeners (TCP on
``127.0.0.1`` and ``[::1]``, UDP on ``127.0.0.1`` for STUN), ``localhost``, the metadata
address and a private address, either directly or through names that resolve to them or rebind
to them, through one channel: images, scripts, stylesheets, CSS ``url()`` and ``@import``,
fonts, frames, ``fetch``, XHR, beacons, prefetch and preconnect, WebSockets, EventSource, media,
plug-ins, ``<meta http-equiv=refresh>``, ``location``, ``window.open``, a form POST, a
hyperlink ping, a service worker and a WebRTC STUN candidate. In every case the page still
renders, no canary sees a connection or a datagram, and the only address ever dialled is the
site's own public one.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
import pytest_asyncio

from tests.fixtures.internet import FakeInternet
from tests.web.browser.conftest import FetchFactory, SiteFactory, html, typed
from tests.web.browser.pages import STORY_TEXT, shell_with

pytestmark = pytest.mark.asyncio(loop_scope="module")

PUBLIC = ("93.184.216.34", 443)


@dataclass
class Canaries:
    """Loopback listeners nothing may ever reach, and what reached them."""

    tcp4: int = 0
    tcp6: int = 0
    udp: int = 0
    hits: list[str] = field(default_factory=list)


class _Datagrams(asyncio.DatagramProtocol):
    def __init__(self, hits: list[str]) -> None:
        self.hits = hits

    def datagram_received(self, data: bytes, addr: tuple[str | object, ...]) -> None:
        self.hits.append(f"udp from {addr}")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def canaries() -> AsyncIterator[Canaries]:
    found = Canaries()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        found.hits.append(f"tcp from {writer.get_extra_info('peername')}")
        writer.close()

    tcp4 = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    tcp6 = await asyncio.start_server(on_connect, "::1", 0)
    loop = asyncio.get_running_loop()
    udp, _ = await loop.create_datagram_endpoint(
        lambda: _Datagrams(found.hits), local_addr=("127.0.0.1", 0)
    )
    found.tcp4 = tcp4.sockets[0].getsockname()[1]
    found.tcp6 = tcp6.sockets[0].getsockname()[1]
    found.udp = udp.get_extra_info("sockname")[1]
    yield found
    for server in (tcp4, tcp6):
        server.close()
        await server.wait_closed()
    udp.close()


def direct_targets(c: Canaries) -> list[str]:
    """Addresses written into the page: loopback (v4, v6, by name), metadata, private."""
    return [
        f"http://127.0.0.1:{c.tcp4}/canary",
        f"https://127.0.0.1:{c.tcp4}/canary",
        f"http://[::1]:{c.tcp6}/canary",
        f"http://localhost:{c.tcp4}/canary",
        "http://169.254.169.254/latest/meta-data/",
        "https://10.0.0.7/canary",
    ]


#: Names the fake DNS resolves to refused addresses (or rebinds to one).
NAMED_TARGETS = [
    "https://loopback.example.com/canary",
    "https://v6loop.example.com/canary",
    "https://metadata.example.com/latest/meta-data/",
    "https://private.example.com/canary",
    "https://rebind.example.com/canary",
]


def websocket(url: str) -> str:
    return url.replace("https://", "wss://").replace("http://", "ws://")


#: Each channel: markup for one target URL ``{u}`` (``{w}``: the WebSocket form, ``{i}``: the
#: target's index, for ids).
CHANNELS: dict[str, str] = {
    "img": "<img src='{u}'>",
    "img-srcset": "<img srcset='{u} 2x'>",
    "script": "<script src='{u}'></script>",
    "dynamic-import": "<script>import('{u}').catch(() => {{}});</script>",
    "stylesheet": "<link rel='stylesheet' href='{u}'>",
    "css-url": "<div style=\"background: url('{u}')\">x</div>",
    "css-import": "<style>@import url('{u}');</style>",
    "font": "<style>@font-face {{ font-family: f{i}; src: url('{u}'); }}"
            " p {{ font-family: f{i}; }}</style>",
    "iframe": "<iframe src='{u}'></iframe>",
    "fetch": "<script>fetch('{u}').catch(() => {{}});</script>",
    "fetch-post": "<script>fetch('{u}', {{method: 'POST', body: 'x'}}).catch(() => {{}});"
                  "</script>",
    "xhr": "<script>var x{i} = new XMLHttpRequest(); x{i}.open('GET', '{u}'); x{i}.send();"
           "</script>",
    "beacon": "<script>navigator.sendBeacon('{u}', 'data');</script>",
    "prefetch": "<link rel='prefetch' href='{u}'>",
    "preconnect": "<link rel='preconnect' href='{u}'><link rel='dns-prefetch' href='{u}'>",
    "preload": "<link rel='preload' as='fetch' href='{u}' crossorigin>",
    "websocket": "<script>try {{ new WebSocket('{w}'); }} catch (e) {{}}</script>",
    "eventsource": "<script>try {{ new EventSource('{u}'); }} catch (e) {{}}</script>",
    "media": "<video src='{u}' autoplay muted></video><audio src='{u}' autoplay></audio>",
    "plugin": "<object data='{u}'></object><embed src='{u}'>",
    "meta-refresh": "<meta http-equiv='refresh' content='0;url={u}'>",
    # The navigating channels wait for the load event: a navigation while the page still loads
    # stops the rest of it from loading (docs/fetch.md, known limits), which would make the
    # page's own text, not the guard, decide these cases under a loaded machine.
    "location": "<script>addEventListener('load', () => setTimeout(() => {{"
                " location.href = '{u}'; }}, {i}));</script>",
    "window-open": "<script>window.open('{u}');</script>",
    "form-post": "<form id='f{i}' method='post' action='{u}'><input name='a' value='b'></form>"
                 "<script>addEventListener('load', () => setTimeout(() =>"
                 " document.getElementById('f{i}').submit(), {i}));</script>",
    "ping": "<a id='a{i}' href='/elsewhere' ping='{u}'>x</a>"
            "<script>addEventListener('load', () => {{ const a = document.getElementById('a{i}');"
            " a.click(); a.remove(); }});</script>",
}

CASES = [(channel, group) for channel in CHANNELS for group in ("direct", "named")]


@pytest.fixture
def named_dns(internet: FakeInternet) -> None:
    internet.dns["loopback.example.com"] = ["127.0.0.1"]
    internet.dns["v6loop.example.com"] = ["::1"]
    internet.dns["metadata.example.com"] = ["169.254.169.254"]
    internet.dns["private.example.com"] = ["10.0.0.7"]
    answers = itertools.cycle([[PUBLIC[0]], ["127.0.0.1"]])
    internet.dns["rebind.example.com"] = lambda: next(answers)


def page_for(channel: str, targets: list[str]) -> str:
    markup = "".join(
        CHANNELS[channel].format(u=url, w=websocket(url), i=index)
        for index, url in enumerate(targets)
    )
    return shell_with("", markup)


async def expect_nothing_reached(
    fetch_text: str, internet: FakeInternet, canaries: Canaries
) -> None:
    await asyncio.sleep(0.2)  # a datagram or a connection still on its way would land now
    assert canaries.hits == []
    assert set(internet.dials) <= {PUBLIC}  # no refused address was ever dialled
    assert fetch_text == (
        "url: https://example.com/\ntruncated: false\nextraction: readability\n"
        f"rendered: browser\n\n{STORY_TEXT}"
    )


@pytest.mark.parametrize(("channel", "group"), CASES, ids=[f"{c}-{g}" for c, g in CASES])
async def test_a_page_reaches_no_refused_address(
    make_fetch: FetchFactory,
    site: SiteFactory,
    internet: FakeInternet,
    canaries: Canaries,
    named_dns: None,
    channel: str,
    group: str,
) -> None:
    targets = direct_targets(canaries) if group == "direct" else NAMED_TARGETS
    await site({"/": html(page_for(channel, targets)), "/canary": html("rebound")},
               hosts=("example.com", "rebind.example.com"))
    internet.dns["rebind.example.com"] = internet.dns.pop("rebind.example.com")
    text = await make_fetch(browser="always").call({"url": "https://example.com/"})
    await expect_nothing_reached(text, internet, canaries)


async def test_a_service_worker_is_never_registered(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet, canaries: Canaries
) -> None:
    targets = direct_targets(canaries)
    worker = "".join(f"fetch('{url}').catch(() => {{}});" for url in targets)
    script = (  # Playwright's "block" makes register() a no-op: nothing is ever registered
        "const t = document.getElementById('t');"
        "navigator.serviceWorker.register('/sw.js').catch(() => {})"
        " .then(() => navigator.serviceWorker.getRegistrations())"
        " .then(found => { t.textContent = 'workers registered: ' + found.length; });"
    )
    served = await site({
        "/": html(shell_with(script, "<p id='t'></p>")),
        "/sw.js": typed(worker, "application/javascript"),
    })
    text = await make_fetch(browser="always").call(
        {"url": "https://example.com/", "raw": True}
    )
    assert "workers registered: 0" in text
    assert served.request_lines == ["GET /"]
    assert canaries.hits == [] and set(internet.dials) <= {PUBLIC}


@pytest.mark.parametrize("server", ["127.0.0.1", "localhost", "loopback.example.com"])
async def test_a_webrtc_stun_candidate_sends_nothing(
    make_fetch: FetchFactory,
    site: SiteFactory,
    internet: FakeInternet,
    canaries: Canaries,
    named_dns: None,
    server: str,
) -> None:
    ice = json.dumps([{"urls": f"stun:{server}:{canaries.udp}"},
                      {"urls": f"turn:{server}:{canaries.tcp4}?transport=tcp",
                       "username": "u", "credential": "c"}])
    script = (
        f"const pc = new RTCPeerConnection({{iceServers: {ice}}});"
        "pc.createDataChannel('x');"
        "pc.createOffer().then(o => pc.setLocalDescription(o));"
    )
    await site({"/": html(shell_with(script))})
    text = await make_fetch(browser="always").call({"url": "https://example.com/"})
    await asyncio.sleep(1.0)  # ICE gathering runs on after the page settled
    await expect_nothing_reached(text, internet, canaries)


async def test_the_canaries_do_hear_a_connection(canaries: Canaries) -> None:
    """The control: what the corpus asserts never happened is seen when it does."""
    for host, port in (("127.0.0.1", canaries.tcp4), ("::1", canaries.tcp6)):
        _, writer = await asyncio.open_connection(host, port)
        writer.close()
    loop = asyncio.get_running_loop()
    sender, _ = await loop.create_datagram_endpoint(
        asyncio.DatagramProtocol, remote_addr=("127.0.0.1", canaries.udp)
    )
    sender.sendto(b"ping")
    sender.close()
    await asyncio.sleep(0.2)
    assert len(canaries.hits) == 3
    canaries.hits.clear()


async def test_what_escapes_interception_reaches_nothing(canaries: Canaries) -> None:
    """Chromium itself, with no route at all: every address fails at the closed proxy."""
    from runvil.web._fetch.browser.discovery import find_browser
    from runvil.web._fetch.browser.process import process_for

    browser = await process_for(find_browser()).browser()
    context = await browser.new_context()
    try:
        page = await context.new_page()
        errors = []
        for url in (
            f"http://127.0.0.1:{canaries.tcp4}/", f"https://127.0.0.1:{canaries.tcp4}/",
            f"http://localhost:{canaries.tcp4}/", f"http://[::1]:{canaries.tcp6}/",
            "http://169.254.169.254/", "https://example.com/",
        ):
            try:
                await page.goto(url, timeout=10_000)
            except Exception as error:
                errors.append(str(error).splitlines()[0])
        assert [error.split(" at ")[0] for error in errors] == [
            "Page.goto: net::ERR_PROXY_CONNECTION_FAILED"
        ] * 6
    finally:
        await context.close()
    await asyncio.sleep(0.2)
    assert canaries.hits == []


#: The page's own text, built by its script: what is read when a navigation changes nothing.
STORY_READ = "story"


@pytest.mark.parametrize(
    ("target", "read"),
    [
        ("file:///etc/passwd", STORY_READ),
        ("chrome://version/", STORY_READ),
        ("data:text/html,<h1>replaced</h1><p>another page entirely</p>", STORY_READ),
        ("ftp://example.com/", STORY_READ),
        ("view-source:https://example.com/", STORY_READ),
        # A javascript: URL runs in the page, as the page's own script (document.write could do
        # the same): the page rewrote itself, and that is what it shows.
        ("javascript:document.body.innerHTML='<p>replaced</p>'",
         "extraction: raw-html\nrendered: browser\n\nreplaced"),
        # about:blank replaces the document with one runvil never fetched: nothing of the page
        # asked for is left in the browser, so it is read as without one (the shell: empty).
        ("about:blank", "extraction: raw-html\n\n"),
    ],
)
async def test_a_top_level_navigation_to_another_scheme_fetches_nothing(
    make_fetch: FetchFactory,
    site: SiteFactory,
    internet: FakeInternet,
    canaries: Canaries,
    target: str,
    read: str,
) -> None:
    script = (
        f"addEventListener('load', () => {{ try {{ location.href = {json.dumps(target)}; }}"
        " catch (e) {} });"
    )
    served = await site({"/": html(shell_with(script))})
    text = await make_fetch(browser="always").call({"url": "https://example.com/"})
    if read == STORY_READ:
        await expect_nothing_reached(text, internet, canaries)
    else:
        assert text == f"url: https://example.com/\ntruncated: false\n{read}"
        assert canaries.hits == [] and set(internet.dials) <= {PUBLIC}
    assert served.request_lines == ["GET /"]
