"""The ``auto`` rule: which static pages look like empty app shells."""

from __future__ import annotations

import pytest

from runvil.web._fetch.browser.shell import looks_like_app_shell

ARTICLE_TEXT = "The survey boats left at dawn and mapped four new channels. " * 5


@pytest.mark.parametrize(
    ("markup", "rendered"),
    [
        ("<div id='root'></div><script src='/main.js'></script>", ""),
        ('<div id="app"></div><script type="module" src="/src/main.ts"></script>', ""),
        ("<app-root></app-root><script src='runtime.js'></script>", "Loading..."),
        ("<div id=__next></div><script src='/_next/chunk.js'></script>", "Menu"),
        ("<div id='q-app'></div><script>boot()</script>", ""),
        ("<body><noscript>You need to enable JavaScript to run this app.</noscript></body>", ""),
        ("<noscript>This site requires JavaScript.</noscript>", "Home | About"),
        ("<noscript><p>JavaScript is disabled in your browser.</p></noscript>", ""),
    ],
)
def test_an_app_shell_goes_to_the_browser(markup: str, rendered: str) -> None:
    assert looks_like_app_shell(markup.encode(), rendered)


@pytest.mark.parametrize(
    ("markup", "rendered"),
    [
        # The static rendering has the text: scripts and a mount point do not matter.
        ("<div id='root'><article>...</article></div><script>x()</script>", ARTICLE_TEXT),
        ("<noscript>Please enable JavaScript.</noscript>", ARTICLE_TEXT),
        # A short page with no sign of a framework is short, not unrendered.
        ("<p>Not found</p>", "Not found"),
        ("<div id='root'></div>", ""),  # a mount point, but no script
        ("<script>track()</script><p>Hi</p>", "Hi"),  # a script, but no mount point
        ("<noscript><img src='/pixel.gif'></noscript><script>t()</script>", ""),
    ],
)
def test_a_page_that_is_not_a_shell_stays_static(markup: str, rendered: str) -> None:
    assert not looks_like_app_shell(markup.encode(), rendered)
