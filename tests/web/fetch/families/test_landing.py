"""Service and landing pages of the common page builders: the main sections (hero, features,
pricing, the call to action's text) come back; the site's header, footer, cookie banner and
newsletter box do not."""

from __future__ import annotations

import pytest

from ._family import PROSE, Family, check, page, params

HERO = "Bookkeeping for small teams"
LEDE = "Close your books in an afternoon, not a week, with a ledger that keeps itself."
FEATURES = [("Bank feeds", PROSE[17]), ("Invoices", PROSE[18]), ("Payroll", PROSE[19])]
PLANS = [("Starter", "$12 per month"), ("Team", "$29 per month"), ("Firm", "$79 per month")]
COOKIE = "We use cookies to improve your experience and to measure traffic"
MUST = [HERO, LEDE, *(x for pair in FEATURES for x in pair), *(x for p in PLANS for x in p)]


def webflow() -> Family:
    features = "".join(
        f"<div class='feature-card'><img class='feature-icon' src='/i/{n}.svg' alt=''>"
        f"<h3 class='heading-3'>{name}</h3><p class='paragraph-2'>{text}</p></div>"
        for n, (name, text) in enumerate(FEATURES)
    )
    plans = "".join(
        f"<div class='pricing-card w-col w-col-4'><h3 class='pricing-title'>{name}</h3><div "
        f"class='pricing-price'>{price}</div><ul role='list' class='pricing-list w-list-"
        "unstyled'><li>Unlimited invoices</li><li>Email support</li></ul><a href='/signup' "
        "class='button w-button'>Choose plan</a></div>"
        for name, price in PLANS
    )
    html = page(
        "<div data-collapse='medium' data-animation='default' class='navbar w-nav'><div "
        "class='container w-container'><a href='/' class='brand w-nav-brand'>Ledgerly</a>"
        "<nav role='navigation' class='nav-menu w-nav-menu'><a href='/features' class='nav-"
        "link w-nav-link'>Features</a><a href='/pricing' class='nav-link w-nav-link'>Pricing"
        "</a><a href='/blog' class='nav-link w-nav-link'>Blog</a><a href='/login' class="
        "'nav-link w-nav-link'>Log in</a></nav></div></div>"
        "<div class='section hero wf-section'><div class='container w-container'><h1 "
        f"class='hero-heading'>{HERO}</h1><p class='hero-paragraph'>{LEDE}</p><a href="
        "'/signup' class='button w-button'>Start free trial</a></div></div>"
        "<div class='section features wf-section'><div class='container w-container'><h2 "
        "class='section-heading'>Everything in one ledger</h2><div class='w-layout-grid "
        f"features-grid'>{features}</div></div></div>"
        "<div class='section testimonials wf-section'><div class='container w-container'>"
        "<blockquote class='testimonial'>The first tool our accountant did not complain "
        "about.</blockquote><div class='testimonial-author'>Owner, a bakery</div></div></div>"
        "<div class='section pricing wf-section'><div class='container w-container'><h2 "
        f"class='section-heading'>Pricing</h2><div class='w-row'>{plans}</div></div></div>"
        "<div class='section cta wf-section'><div class='container w-container'><h2>Ready "
        "to close the month early?</h2><a href='/signup' class='button w-button'>Get started"
        "</a></div></div>"
        "<div class='footer wf-section'><div class='container w-container'><div class='footer-"
        "links'><a href='/privacy' class='footer-link'>Privacy policy</a><a href='/terms' "
        "class='footer-link'>Terms of service</a><a href='/careers' class='footer-link'>"
        "Careers</a></div><div class='footer-copyright'>© 2024 Ledgerly Inc. All rights "
        "reserved.</div></div></div>"
        f"<div class='cookie-banner'><p>{COOKIE}.</p><a class='button'>Accept all</a></div>"
    )
    return Family(
        "webflow",
        html,
        "https://www.example.com/",
        must=MUST,
        must_not=[
            "Log in",
            "Privacy policy",
            "Careers",
            "All rights reserved",
            COOKIE,
            "Accept all",
        ],
    )


def _el_widget(kind: str, inner: str) -> str:
    return (
        f"<div class='elementor-element elementor-element-{len(inner) % 9999:04x} "
        f"elementor-widget elementor-widget-{kind}' data-element_type='widget' "
        f"data-widget_type='{kind}.default'><div class='elementor-widget-container'>{inner}"
        "</div></div>"
    )


def _el_section(columns: list[str], extra: str = "") -> str:
    cols = "".join(
        f"<div class='elementor-column elementor-col-{100 // len(columns)} elementor-top-"
        "column elementor-element' data-element_type='column'><div class='elementor-widget-"
        f"wrap elementor-element-populated'>{column}</div></div>"
        for column in columns
    )
    return (
        f"<section class='elementor-section elementor-top-section elementor-element "
        f"elementor-section-boxed elementor-section-height-default {extra}' data-element_type="
        f"'section'><div class='elementor-container elementor-column-gap-default'>{cols}</div>"
        "</section>"
    )


def elementor() -> Family:
    header = (
        "<div data-elementor-type='header' data-elementor-id='20' class='elementor "
        "elementor-20 elementor-location-header'>"
        + _el_section(
            [
                _el_widget("image", "<a href='/'><img src='/logo.png' alt='Ledgerly'></a>"),
                _el_widget(
                    "nav-menu",
                    "<nav class='elementor-nav-menu--main elementor-nav-menu__container'>"
                    "<ul class='elementor-nav-menu'><li class='menu-item'><a href='/features' "
                    "class='elementor-item'>Features</a></li><li class='menu-item'><a "
                    "href='/login' class='elementor-item'>Log in</a></li></ul></nav>",
                ),
            ]
        )
        + "</div>"
    )
    body = (
        "<div data-elementor-type='wp-page' data-elementor-id='12' class='elementor "
        "elementor-12'>"
        + _el_section(
            [
                _el_widget(
                    "heading",
                    f"<h1 class='elementor-heading-title elementor-size-default'>{HERO}</h1>",
                )
                + _el_widget("text-editor", f"<p>{LEDE}</p>")
                + _el_widget(
                    "button",
                    "<div class='elementor-button-wrapper'><a href='/signup'"
                    " class='elementor-button-link elementor-button'><span class="
                    "'elementor-button-text'>Start free trial</span></a></div>",
                )
            ],
            "hero",
        )
        + _el_section(
            [
                _el_widget(
                    "icon-box",
                    "<div class='elementor-icon-box-wrapper'><div class='elementor-icon-box-"
                    f"content'><h3 class='elementor-icon-box-title'><span>{name}</span></h3>"
                    f"<p class='elementor-icon-box-description'>{text}</p></div></div>",
                )
                for name, text in FEATURES
            ]
        )
        + _el_section(
            [
                _el_widget(
                    "price-table",
                    "<div class='elementor-price-table'><div class='elementor-price-table__"
                    f"header'><h3 class='elementor-price-table__heading'>{name}</h3></div>"
                    f"<div class='elementor-price-table__price'>{price}</div><ul "
                    "class='elementor-price-table__features-list'><li>Unlimited invoices</li>"
                    "</ul><div class='elementor-price-table__footer'><a class='elementor-"
                    "price-table__button elementor-button'>Choose plan</a></div></div>",
                )
                for name, price in PLANS
            ]
        )
        + "</div>"
    )
    footer = (
        "<div data-elementor-type='footer' data-elementor-id='30' class='elementor "
        "elementor-30 elementor-location-footer'>"
        + _el_section(
            [
                _el_widget("text-editor", "<p>© 2024 Ledgerly Inc. All rights reserved.</p>"),
                _el_widget(
                    "icon-list",
                    "<ul class='elementor-icon-list-items'><li><a "
                    "href='/privacy'>Privacy policy</a></li><li><a href='/careers'>"
                    "Careers</a></li></ul>",
                ),
            ]
        )
        + "</div>"
    )
    html = page(
        "<div id='page' class='site'>"
        + header
        + "<div id='content' class='site-content'><div class='page-content'>"
        + body
        + "</div></div>"
        + footer
        + "</div>"
        + f"<div id='cookie-notice' role='dialog' class='cookie-notice-container'><span "
        f"id='cn-notice-text'>{COOKIE}.</span><a class='cn-set-cookie'>Accept all</a></div>",
    )
    return Family(
        "elementor",
        html,
        "https://www.example.com/bookkeeping/",
        must=MUST,
        must_not=[
            "Log in",
            "Privacy policy",
            "Careers",
            "All rights reserved",
            COOKIE,
            "Accept all",
        ],
    )


def _sqs_block(inner: str) -> str:
    return (
        "<div class='row sqs-row'><div class='col sqs-col-12 span-12'><div class='sqs-block "
        "html-block sqs-block-html' data-block-type='2'><div class='sqs-block-content'><div "
        f"class='sqs-html-content'>{inner}</div></div></div></div></div>"
    )


def _sqs_section(inner: str) -> str:
    return (
        "<section class='page-section layout-engine-section background-width--full-bleed "
        "section-height--medium content-width--wide horizontal-alignment--center vertical-"
        "alignment--middle' data-section-theme='white'><div class='section-background'></div>"
        "<div class='content-wrapper'><div class='content'><div class='sqs-layout sqs-grid-12 "
        f"columns-12' data-type='page-section'>{inner}</div></div></div></section>"
    )


def squarespace() -> Family:
    sections = (
        _sqs_section(_sqs_block(f"<h1>{HERO}</h1><p class='sqsrte-large'>{LEDE}</p>"))
        + _sqs_section(
            "".join(_sqs_block(f"<h3>{name}</h3><p>{text}</p>") for name, text in FEATURES)
        )
        + _sqs_section(
            "".join(_sqs_block(f"<h3>{name}</h3><p>{price}</p>") for name, price in PLANS)
        )
    )
    html = page(
        "<header id='header' class='header theme-col--primary' data-section-theme="
        "'white'><div class='header-announcement-bar-wrapper'><div class='header-inner "
        "container--fluid'><div class='header-title'><a href='/'>Ledgerly</a></div><div "
        "class='header-nav'><nav class='header-nav-list'><div class='header-nav-item'><a "
        "href='/features'>Features</a></div><div class='header-nav-item'><a href='/login'>"
        "Log in</a></div></nav></div></div></div></header>"
        f"<main id='page' class='container' role='main'><article class='sections' "
        f"id='sections' data-page-sections='abc'>{sections}</article></main>"
        "<footer class='sections' id='footer-sections' data-footer-sections>"
        + _sqs_section(
            _sqs_block(
                "<p>© 2024 Ledgerly Inc. All rights reserved.</p><p><a "
                "href='/privacy'>Privacy policy</a> · <a href='/careers'>"
                "Careers</a></p>"
            )
        )
        + "</footer>"
        + f"<div class='sqs-cookie-banner-v2' role='region'><p>{COOKIE}.</p><button>Accept "
        "all</button></div>"
    )
    return Family(
        "squarespace",
        html,
        "https://www.example.com/services",
        must=MUST,
        must_not=[
            "Log in",
            "Privacy policy",
            "Careers",
            "All rights reserved",
            COOKIE,
            "Accept all",
        ],
    )


FAMILIES = [webflow(), elementor(), squarespace()]

FAILING: frozenset[str] = frozenset()


@pytest.mark.parametrize("family", params(FAMILIES, FAILING))
def test_a_landing_page_comes_back_as_its_sections(family: Family) -> None:
    check(family)
