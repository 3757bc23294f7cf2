"""Documentation pages of the common generators: the document body with its code blocks and
tables comes back; sidebars, tables of contents, breadcrumbs, previous/next links, "edit
this page" and permalink marks do not."""

from __future__ import annotations

import pytest

from ._family import PROSE, Family, check, page, params

BODY = [PROSE[13], PROSE[14], PROSE[15]]
CODE = "runvil fetch --timeout 20 https://example.com/"
ROW = "| timeout | 30 |"
SIDEBAR = ["Installation guide", "Command reference", "Changelog and history"]


def _table(cls: str = "") -> str:
    return (
        f"<table class='{cls}'><thead><tr><th>Option</th><th>Default</th></tr></thead><tbody>"
        "<tr><td>timeout</td><td>30</td></tr><tr><td>retries</td><td>2</td></tr></tbody>"
        "</table>"
    )


def _side_links(item: str, link: str) -> str:
    return "".join(
        f"<li class='{item}'><a class='{link}' href='/{n}/'>{name}</a></li>"
        for n, name in enumerate(SIDEBAR)
    )


def sphinx() -> Family:
    html = page(
        "<div class='wy-grid-for-nav'><nav data-toggle='wy-nav-shift' class='wy-nav-side'>"
        "<div class='wy-side-scroll'><div class='wy-side-nav-search'><a href='index.html' "
        "class='icon icon-home'>Tooldocs</a><div role='search'><form id='rtd-search-form' "
        "class='wy-form'><input type='text' name='q' placeholder='Search docs'></form></div>"
        "</div><div class='wy-menu wy-menu-vertical' data-spy='affix' role='navigation' "
        "aria-label='Navigation menu'><p class='caption' role='heading'><span class='caption-"
        f"text'>Contents:</span></p><ul class='current'>{_side_links('toctree-l1', 'internal')}"
        "</ul></div></div></nav><section data-toggle='wy-nav-shift' class='wy-nav-content-"
        "wrap'><nav class='wy-nav-top' aria-label='Mobile navigation menu'><i class='fa "
        "fa-bars'></i><a href='index.html'>Tooldocs</a></nav><div class='wy-nav-content'>"
        "<div class='rst-content'><div role='navigation' aria-label='Page navigation'><ul "
        "class='wy-breadcrumbs'><li><a href='index.html' class='icon icon-home' aria-label="
        "'Home'></a></li><li class='breadcrumb-item active'>Configuration</li><li "
        "class='wy-breadcrumbs-aside'><a href='_sources/config.rst.txt' rel='nofollow'>View "
        "page source</a></li></ul><hr></div><div role='main' class='document' itemscope="
        "'itemscope' itemtype='http://schema.org/Article'><div itemprop='articleBody'>"
        "<section id='configuration'><h1>Configuration<a class='headerlink' "
        "href='#configuration' title='Permalink to this heading'>¶</a></h1>"
        f"<p>{BODY[0]}</p><p>{BODY[1]}</p><div class='highlight-console notranslate'><div "
        f"class='highlight'><pre><span></span><span class='gp'>$ </span>{CODE}</pre></div></div>"
        "<section id='options'><h2>Options<a class='headerlink' href='#options' title="
        "'Permalink to this heading'>¶</a></h2>"
        f"<p>{BODY[2]}</p>{_table('docutils align-default')}</section></section></div></div>"
        "<footer><div class='rst-footer-buttons' role='navigation' aria-label='Footer'><a "
        "href='install.html' class='btn btn-neutral float-left' title='Installation guide' "
        "accesskey='p' rel='prev'><span class='fa fa-arrow-circle-left' aria-hidden='true'>"
        "</span> Previous</a><a href='usage.html' class='btn btn-neutral float-right' "
        "title='Command reference' accesskey='n' rel='next'>Next <span class='fa fa-arrow-"
        "circle-right' aria-hidden='true'></span></a></div><hr><div role='contentinfo'>"
        "<p>© Copyright 2024, The Tooldocs Authors.</p></div>Built with <a href='https://"
        "www.sphinx-doc.org/'>Sphinx</a> using a <a href='https://github.com/'>theme</a> "
        "provided by <a href='https://readthedocs.org'>Read the Docs</a>.</footer></div>"
        "</div></section></div>"
    )
    return Family(
        "sphinx",
        html,
        "https://tooldocs.example.org/en/latest/config.html",
        must=["Configuration", BODY[0], BODY[1], CODE, BODY[2], ROW],
        must_not=[
            *SIDEBAR,
            "Search docs",
            "Contents:",
            "View page source",
            "Previous",
            "Next",
            "Built with",
            "¶",
            "Copyright",
        ],
    )


def mkdocs_material() -> Family:
    toc = "".join(
        f"<li class='md-nav__item'><a href='#{slug}' class='md-nav__link'><span "
        f"class='md-ellipsis'>{name}</span></a></li>"
        for slug, name in [("install", "Install the plugin"), ("options", "Plugin options")]
    )
    html = page(
        "<header class='md-header md-header--shadow' data-md-component='header'><nav "
        "class='md-header__inner md-grid' aria-label='Header'><a class='md-header__button "
        "md-logo'>Tooldocs</a><div class='md-search' data-md-component='search' role="
        "'dialog'><input class='md-search__input' placeholder='Search'></div></nav></header>"
        "<div class='md-container' data-md-component='container'><nav class='md-tabs' "
        "aria-label='Tabs' data-md-component='tabs'><ul class='md-tabs__list'><li "
        "class='md-tabs__item'><a class='md-tabs__link'>Home</a></li><li class='md-tabs__"
        "item'><a class='md-tabs__link'>Guides</a></li></ul></nav>"
        "<main class='md-main' data-md-component='main'><div class='md-main__inner md-grid'>"
        "<div class='md-sidebar md-sidebar--primary' data-md-component='sidebar' data-md-"
        "type='navigation'><div class='md-sidebar__scrollwrap'><div class='md-sidebar__"
        "inner'><nav class='md-nav md-nav--primary' aria-label='Navigation' data-md-level="
        "'0'><label class='md-nav__title' for='__drawer'>Tooldocs</label><ul class='md-nav__"
        f"list' data-md-scrollfix>{_side_links('md-nav__item', 'md-nav__link')}</ul></nav>"
        "</div></div></div><div class='md-sidebar md-sidebar--secondary' data-md-component="
        "'sidebar' data-md-type='toc'><div class='md-sidebar__scrollwrap'><div class='md-"
        "sidebar__inner'><nav class='md-nav md-nav--secondary' aria-label='Table of "
        "contents'><label class='md-nav__title' for='__toc'>Table of contents</label><ul "
        f"class='md-nav__list' data-md-component='toc' data-md-scrollfix>{toc}</ul></nav>"
        "</div></div></div><div class='md-content' data-md-component='content'><article "
        "class='md-content__inner md-typeset'><a href='https://git.example.org/edit/docs/"
        "plugins.md' title='Edit this page' class='md-content__button md-icon'>Edit this "
        "page</a><h1 id='plugins'>Plugins</h1>"
        f"<p>{BODY[0]}</p><h2 id='install'>Install<a class='headerlink' href='#install' "
        "title='Permanent link'>¶</a></h2>"
        f"<p>{BODY[1]}</p><div class='language-console highlight'><pre><span></span><code>"
        f"<span class='gp'>$ </span>{CODE}</code></pre></div>"
        "<div class='admonition note'><p class='admonition-title'>Note</p>"
        f"<p>{BODY[2]}</p></div><h2 id='options'>Options<a class='headerlink' href="
        f"'#options' title='Permanent link'>¶</a></h2>{_table()}"
        "<hr><div class='md-source-file'><small>Last update: <span class='git-revision-date-"
        "localized-plugin git-revision-date-localized-plugin-date'>May 14, 2024</span>"
        "</small></div></article></div></div><button type='button' class='md-top md-icon' "
        "data-md-component='top' hidden>Back to top</button></main>"
        "<footer class='md-footer'><nav class='md-footer__inner md-grid' aria-label='Footer'>"
        "<a href='../install/' class='md-footer__link md-footer__link--prev' aria-label="
        "'Previous: Installation guide'><div class='md-footer__button md-icon'></div><div "
        "class='md-footer__title'><span class='md-footer__direction'>Previous</span><div "
        "class='md-ellipsis'>Installation guide</div></div></a><a href='../reference/' "
        "class='md-footer__link md-footer__link--next' aria-label='Next: Command reference'>"
        "<div class='md-footer__title'><span class='md-footer__direction'>Next</span><div "
        "class='md-ellipsis'>Command reference</div></div></a></nav><div class='md-footer-"
        "meta md-typeset'><div class='md-footer-meta__inner md-grid'><div class='md-"
        "copyright'>Made with <a href='https://squidfunk.github.io/mkdocs-material/'>"
        "Material for MkDocs</a></div></div></div></footer></div>",
        head="<meta name='generator' content='mkdocs-1.5.3, mkdocs-material-9.5.2'>",
    )
    return Family(
        "mkdocs-material",
        html,
        "https://tooldocs.example.org/plugins/",
        must=["Plugins", BODY[0], BODY[1], CODE, BODY[2], ROW],
        must_not=[
            *SIDEBAR,
            "Table of contents",
            "Install the plugin",
            "Edit this page",
            "Previous",
            "Made with",
            "¶",
            "Back to top",
            "Last update",
        ],
    )


def docusaurus() -> Family:
    toc = "".join(
        f"<li><a href='#{slug}' class='table-of-contents__link toc-highlight'>{name}</a></li>"
        for slug, name in [("build", "Build the site"), ("options", "Deploy options")]
    )
    html = page(
        "<div id='__docusaurus'><div role='region' aria-label='Skip to main content'><a "
        "class='skipToContent_fXgn' href='#__docusaurus_skipToContent_fallback'>Skip to main "
        "content</a></div><nav aria-label='Main' class='navbar navbar--fixed-top'><div "
        "class='navbar__inner'><div class='navbar__items'><a class='navbar__brand' href='/'>"
        "<b class='navbar__title text--truncate'>Tooldocs</b></a><a class='navbar__item "
        "navbar__link'>Docs</a><a class='navbar__item navbar__link'>Blog</a></div></div>"
        "</nav><div id='__docusaurus_skipToContent_fallback' class='main-wrapper mainWrapper_"
        "z2l0'><div class='docsWrapper_hBAB'><div class='docRoot_UBD9'><aside class='theme-"
        "doc-sidebar-container docSidebarContainer_YfHR'><div class='sidebarViewport_aRkj'>"
        "<div class='sidebar_njMd'><nav aria-label='Docs sidebar' class='menu thin-scrollbar "
        "menu_SIkG'><ul class='theme-doc-sidebar-menu menu__list'>"
        + _side_links("theme-doc-sidebar-item-link menu__list-item", "menu__link")
        + "</ul></nav></div></div></aside><main class='docMainContainer_TBSr'><div "
        "class='container padding-top--md padding-bottom--lg'><div class='row'><div "
        "class='col docItemCol_VOVn'><div class='docItemContainer_c0TR'><article><nav "
        "class='theme-doc-breadcrumbs breadcrumbsContainer_Z_bl' aria-label='Breadcrumbs'>"
        "<ul class='breadcrumbs' itemscope itemtype='https://schema.org/BreadcrumbList'><li "
        "class='breadcrumbs__item'><a aria-label='Home page' class='breadcrumbs__link' "
        "href='/'>Home</a></li><li itemscope itemprop='itemListElement' class='breadcrumbs__"
        "item'><span class='breadcrumbs__link'>Guides</span></li><li class='breadcrumbs__"
        "item breadcrumbs__item--active'><span class='breadcrumbs__link'>Deploying</span>"
        "</li></ul></nav><div class='tocCollapsible_ETCw theme-doc-toc-mobile tocMobile_"
        "ITEo'><button type='button' class='clean-btn tocCollapsibleButton_TO0P'>On this "
        "page</button></div><div class='theme-doc-markdown markdown'><header><h1>Deploying"
        f"</h1></header><p>{BODY[0]}</p><h2 class='anchor anchorWithStickyNavbar_LWe7' "
        "id='build'>Build<a href='#build' class='hash-link' aria-label='Direct link to "
        f"Build' title='Direct link to Build'>\u200b</a></h2><p>{BODY[1]}</p>"
        "<div class='language-bash codeBlockContainer_Ckt0 theme-code-block'><div "
        "class='codeBlockContent_biex'><pre tabindex='0' class='prism-code language-bash "
        "codeBlock_bY9V thin-scrollbar'><code class='codeBlockLines_e6Vv'><span class='token-"
        f"line'><span class='token plain'>{CODE}</span><br></span></code></pre><div "
        "class='buttonGroup__atx'><button type='button' aria-label='Copy code to clipboard' "
        "title='Copy' class='clean-btn'><span class='copyButtonIcons_eSgA'>Copy</span>"
        f"</button></div></div></div><p>{BODY[2]}</p>{_table()}</div><footer class='theme-"
        "doc-footer docusaurus-mt-lg'><div class='theme-doc-footer-edit-meta-row row'><div "
        "class='col'><a href='https://git.example.org/edit/docs/deploy.md' target='_blank' "
        "rel='noopener noreferrer' class='theme-edit-this-page'>Edit this page</a></div>"
        "<div class='col lastUpdated_vwxv'><span class='theme-last-updated'>Last updated on "
        "<b><time>May 14, 2024</time></b></span></div></div></footer></article><nav "
        "class='pagination-nav docusaurus-mt-lg' aria-label='Docs pages'><a class='pagination-"
        "nav__link pagination-nav__link--prev' href='/docs/install'><div class='pagination-"
        "nav__sublabel'>Previous</div><div class='pagination-nav__label'>Installation guide"
        "</div></a><a class='pagination-nav__link pagination-nav__link--next' href='/docs/"
        "reference'><div class='pagination-nav__sublabel'>Next</div><div class='pagination-"
        "nav__label'>Command reference</div></a></nav></div></div><div class='col col--3'>"
        "<div class='tableOfContents_bqdL thin-scrollbar theme-doc-toc-desktop'><ul "
        f"class='table-of-contents table-of-contents__left-border'>{toc}</ul></div></div>"
        "</div></div></main></div></div></div><footer class='footer footer--dark'><div "
        "class='container container-fluid'><div class='footer__bottom text--center'><div "
        "class='footer__copyright'>Copyright © 2024 Tooldocs. Built with Docusaurus.</div>"
        "</div></div></footer></div>"
    )
    return Family(
        "docusaurus",
        html,
        "https://tooldocs.example.org/docs/guides/deploying",
        must=["Deploying", BODY[0], BODY[1], CODE, BODY[2], ROW],
        must_not=[
            *SIDEBAR,
            "On this page",
            "Build the site",
            "Edit this page",
            "Previous",
            "Skip to main content",
            "Built with Docusaurus",
            "Last updated",
            "Copy",
        ],
    )


def gitbook_like() -> Family:
    # A hosted-docs product rendered by a JavaScript framework: utility classes only, the
    # landmarks (<aside>, <main>, <nav aria-label>) say what is what.
    side = "".join(
        f"<li class='flex flex-col'><a class='flex flex-row items-center px-5 py-1.5 "
        f"text-sm rounded-md' href='/{n}'>{name}</a></li>"
        for n, name in enumerate(SIDEBAR)
    )
    html = page(
        "<div class='scroll-nojump'><header class='flex flex-row h-16 items-center "
        "sticky top-0 z-10 w-full backdrop-blur-lg'><div class='flex gap-4 px-4'><a "
        "href='/'>Tooldocs</a><button class='flex items-center text-sm'>Search…<kbd>Ctrl K"
        "</kbd></button></div></header><div class='flex flex-row max-w-screen-2xl mx-auto'>"
        "<aside class='hidden lg:flex flex-col basis-72 grow-0 shrink-0 sticky top-16'>"
        f"<nav aria-label='Table of contents' class='overflow-y-auto'><ul class='flex "
        f"flex-col gap-y-0.5'>{side}</ul></nav><div class='px-5 py-4 text-xs'><a "
        "href='https://docs.example.net'>Powered by a hosted docs platform</a></div></aside>"
        "<div class='flex-1 relative py-8 lg:px-12 break-anywhere'><main class='relative "
        "min-w-0 flex-1 max-w-3xl mx-auto'><header class='max-w-3xl mx-auto mb-6 space-y-3'>"
        "<nav aria-label='Breadcrumb'><ol class='flex flex-wrap items-center gap-2 text-xs "
        "uppercase'><li><a href='/guides'>Guides</a></li></ol></nav><h1 class='text-4xl "
        "font-bold'>Authentication</h1></header><div class='grid whitespace-pre-wrap'>"
        f"<p class='mx-auto max-w-3xl w-full'>{BODY[0]}</p>"
        f"<p class='mx-auto max-w-3xl w-full'>{BODY[1]}</p><div class='group/codeblock "
        "grid mx-auto max-w-3xl w-full'><div class='flex items-center justify-start gap-2 "
        "text-sm'><button aria-label='Copy'>Copy</button></div><pre class='overflow-auto "
        f"rounded-md border'><code class='inline-grid min-w-full'>{CODE}</code></pre></div>"
        f"<p class='mx-auto max-w-3xl w-full'>{BODY[2]}</p><div class='mx-auto max-w-3xl "
        f"w-full overflow-x-auto'>{_table('w-full table-auto')}</div></div>"
        "<div class='flex flex-row gap-2 mt-6'><a class='group text-sm p-2.5 flex gap-4 "
        "flex-1 flex-row-reverse items-center border rounded' href='/install'><span "
        "class='flex flex-col'><span class='text-xs'>Previous</span><span>Installation "
        "guide</span></span></a><a class='group text-sm p-2.5 flex gap-4 flex-1 items-"
        "center border rounded' href='/reference'><span class='flex flex-col'><span "
        "class='text-xs'>Next</span><span>Command reference</span></span></a></div>"
        "<div class='flex flex-row items-center mt-6 text-sm'><p>Last updated 3 months ago"
        "</p></div></main></div><aside class='hidden xl:flex sticky top-16 basis-56'><div "
        "class='text-xs font-semibold uppercase'>On this page</div><ul><li><a href='#keys'>"
        "Keys and tokens</a></li></ul></aside></div></div>",
        head="<meta name='generator' content='GitBook (a1b2c3d)'>",
    )
    return Family(
        "gitbook-like",
        html,
        "https://tooldocs.example.org/guides/authentication",
        must=["Authentication", BODY[0], BODY[1], CODE, BODY[2], ROW],
        must_not=[
            *SIDEBAR,
            "On this page",
            "Keys and tokens",
            "Previous",
            "Powered by",
            "Last updated",
            "Ctrl K",
        ],
    )


FAMILIES = [sphinx(), mkdocs_material(), docusaurus(), gitbook_like()]

FAILING: frozenset[str] = frozenset()


@pytest.mark.parametrize("family", params(FAMILIES, FAILING))
def test_a_documentation_page_comes_back_as_its_body(family: Family) -> None:
    check(family)
