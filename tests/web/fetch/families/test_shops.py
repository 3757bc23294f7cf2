"""Product pages of the common shop platforms: the product's name, price, description and
specification table come back; recommendation carousels, review widgets' chrome, the basket
form and shipping boilerplate do not."""

from __future__ import annotations

import pytest

from ._family import FOOTER, NAV, PROSE, Family, check, json_ld, page, params

DESCRIPTION = [PROSE[10], PROSE[11], PROSE[12]]
SHIPPING = "Free shipping on orders over $50, and returns are accepted within 30 days"


def _product_ld(name: str, price: str, currency: str) -> str:
    return json_ld(
        {
            "@context": "https://schema.org/",
            "@type": "Product",
            "name": name,
            "image": ["https://shop.example.com/i/1.jpg"],
            "description": DESCRIPTION[0],
            "sku": "TT-2",
            "brand": {"@type": "Brand", "name": "Valley"},
            "offers": {
                "@type": "Offer",
                "price": price,
                "priceCurrency": currency,
                "availability": "https://schema.org/InStock",
            },
        }
    )


def _cards(cls: str, title_cls: str, names: list[str], price: str, button: str) -> str:
    return "".join(
        f"<li class='{cls}'><a href='/products/{n}' class='card-link'><img src='/i/{n}.jpg' "
        f"alt=''><h3 class='{title_cls}'>{name}</h3></a><span class='price'>{price}</span>"
        f"<button class='add-to-cart'>{button}</button></li>"
        for n, name in enumerate(names)
    )


OTHERS = [
    "Ultralight Trekking Pole",
    "Down Sleeping Bag Minus Five",
    "Camp Stove Mini",
    "Insulated Mug Steel",
]


def shopify() -> Family:
    specs = "".join(
        f"<tr><th>{key}</th><td>{value}</td></tr>"
        for key, value in [
            ("Weight", "1.9 kg"),
            ("Packed size", "45 x 15 cm"),
            ("Berths", "2"),
            ("Poles", "Aluminium DAC"),
        ]
    )
    html = page(
        "<div class='announcement-bar'><p>Free delivery this week only</p></div>"
        + NAV
        + "<main id='MainContent' class='content-for-layout focus-none' role='main'>"
        "<section id='shopify-section-template--main' class='shopify-section section'>"
        "<section class='page-width section-template--main-padding'><div class='product "
        "product--large product--left product--thumbnail_slider grid grid--1-col "
        "grid--2-col-tablet'><div class='grid__item product__media-wrapper'><media-gallery "
        "class='product__media-wrapper'><ul class='product__media-list contains-media "
        "grid grid--peek list-unstyled slider slider--mobile'><li class='product__media-item "
        "grid__item slider__slide'><img src='/i/1.jpg' alt='Trail Tent Two pitched'></li>"
        "</ul></media-gallery></div><div class='product__info-wrapper grid__item'>"
        "<section id='ProductInfo-template--main' class='product__info-container "
        "product__column-sticky'><p class='product__text inline-richtext caption-with-"
        "letter-spacing'>VALLEY OUTDOOR</p><div class='product__title'><h1>Trail Tent Two"
        "</h1></div><div class='no-js-hidden' id='price-template--main' role='status'>"
        "<div class='price price--large price--show-badge'><div class='price__container'>"
        "<div class='price__regular'><span class='visually-hidden visually-hidden--inline'>"
        "Regular price</span><span class='price-item price-item--regular'>$249.00 USD"
        "</span></div></div></div></div><div class='product__tax caption rte'>Tax included. "
        "<a href='/policies/shipping-policy'>Shipping</a> calculated at checkout.</div>"
        "<product-form class='product-form'><form method='post' action='/cart/add' "
        "class='form' novalidate='novalidate'><div class='product-form__input "
        "product-form__quantity'><label class='form__label'>Quantity</label><quantity-input "
        "class='quantity'><button class='quantity__button' name='minus'>−</button><input "
        "class='quantity__input' value='1'><button class='quantity__button' name='plus'>+"
        "</button></quantity-input></div><div class='product-form__buttons'><button "
        "type='submit' class='product-form__submit button button--full-width'>Add to cart"
        "</button><div class='shopify-payment-button'>Buy it now</div></div></form>"
        "</product-form><div class='product__description rte quick-add-hidden'>"
        + "".join(f"<p>{text}</p>" for text in DESCRIPTION)
        + f"<table>{specs}</table></div>"
        "<div class='product__accordion accordion quick-add-hidden'><details><summary>"
        "<div class='summary__title'><h2 class='h4 accordion__title'>Shipping &amp; Returns"
        f"</h2></div></summary><div class='accordion__content rte'><p>{SHIPPING}.</p></div>"
        "</details></div><share-button class='share-button'><button class='share-button__"
        "button'>Share</button></share-button></section></div></div></section></section>"
        "<section class='shopify-section section'><product-recommendations class='related-"
        "products page-width'><h2 class='related-products__heading'>You may also like</h2>"
        "<ul class='grid product-grid grid--4-col-desktop'>"
        + _cards("grid__item", "card__heading", OTHERS, "$39.00", "Add to cart")
        + "</ul></product-recommendations></section>"
        "<section class='shopify-section'><div class='jdgm-widget jdgm-review-widget'>"
        "<div class='jdgm-rev-widg__header'><h2 class='jdgm-rev-widg__title'>Customer "
        "Reviews</h2><div class='jdgm-rev-widg__summary'>Be the first to write a review"
        "</div><a class='jdgm-write-rev-link'>Write a review</a></div></div></section>"
        "</main>" + FOOTER,
        head=_product_ld("Trail Tent Two", "249.00", "USD")
        + "<meta property='og:type' content='product'>",
    )
    return Family(
        "shopify",
        html,
        "https://shop.example.com/products/trail-tent-two",
        must=["Trail Tent Two", "$249.00", *DESCRIPTION, "| Weight | 1.9 kg |"],
        must_not=[
            "You may also like",
            *OTHERS,
            "Add to cart",
            "Write a review",
            SHIPPING,
            "Quantity",
            "Buy it now",
            "Free delivery this week",
        ],
    )


def woocommerce() -> Family:
    attrs = "".join(
        f"<tr class='woocommerce-product-attributes-item woocommerce-product-attributes-item--"
        f"attribute_{key.lower()}'><th class='woocommerce-product-attributes-item__label'>{key}"
        f"</th><td class='woocommerce-product-attributes-item__value'><p>{value}</p></td></tr>"
        for key, value in [
            ("Weight", "1.2 kg"),
            ("Dimensions", "52 x 30 x 20 cm"),
            ("Material", "Waxed canvas"),
        ]
    )
    related = "".join(
        f"<li class='product type-product post-{20 + n} status-publish instock'><a href="
        f"'/product/{n}/' class='woocommerce-LoopProduct-link woocommerce-loop-product__link'>"
        f"<img src='/i/{n}.jpg' alt=''><h2 class='woocommerce-loop-product__title'>{name}</h2>"
        "<span class='price'><span class='woocommerce-Price-amount amount'><bdi><span "
        "class='woocommerce-Price-currencySymbol'>£</span>49.00</bdi></span></span></a>"
        "<a href='?add-to-cart=20' class='button product_type_simple add_to_cart_button "
        "ajax_add_to_cart'>Add to basket</a></li>"
        for n, name in enumerate(OTHERS)
    )
    html = page(
        NAV + "<div id='content' class='site-content'><div class='col-full'><div id='primary' "
        "class='content-area'><main id='main' class='site-main' role='main'>"
        "<nav class='woocommerce-breadcrumb'><a href='/'>Home</a> / <a href='/c/packs'>Packs"
        "</a> / Canvas Backpack 30</nav><div class='woocommerce-notices-wrapper'></div>"
        "<div id='product-12' class='product type-product post-12 status-publish first "
        "instock product_cat-packs has-post-thumbnail shipping-taxable purchasable "
        "product-type-simple'><div class='woocommerce-product-gallery woocommerce-product-"
        "gallery--with-images images'><figure class='woocommerce-product-gallery__wrapper'>"
        "<div class='woocommerce-product-gallery__image'><img src='/i/b.jpg' alt=''></div>"
        "</figure></div><div class='summary entry-summary'><h1 class='product_title "
        "entry-title'>Canvas Backpack 30</h1><p class='price'><span class='woocommerce-"
        "Price-amount amount'><bdi><span class='woocommerce-Price-currencySymbol'>£</span>"
        "89.00</bdi></span></p><div class='woocommerce-product-details__short-description'>"
        f"<p>{DESCRIPTION[0]}</p></div><form class='cart' method='post'><div class='quantity'>"
        "<label class='screen-reader-text'>Canvas Backpack 30 quantity</label><input "
        "type='number' class='input-text qty text' value='1'></div><button type='submit' "
        "class='single_add_to_cart_button button alt'>Add to basket</button></form>"
        "<div class='product_meta'><span class='sku_wrapper'>SKU: <span class='sku'>CB-30"
        "</span></span> <span class='posted_in'>Category: <a href='/c/packs' rel='tag'>"
        "Packs</a></span></div></div>"
        "<div class='woocommerce-tabs wc-tabs-wrapper'><ul class='tabs wc-tabs' "
        "role='tablist'><li class='description_tab' role='tab'><a href='#tab-description'>"
        "Description</a></li><li class='additional_information_tab' role='tab'><a "
        "href='#tab-additional_information'>Additional information</a></li><li "
        "class='reviews_tab' role='tab'><a href='#tab-reviews'>Reviews (0)</a></li></ul>"
        "<div class='woocommerce-Tabs-panel woocommerce-Tabs-panel--description panel "
        "entry-content wc-tab' id='tab-description' role='tabpanel'><h2>Description</h2>"
        f"<p>{DESCRIPTION[1]}</p><p>{DESCRIPTION[2]}</p></div>"
        "<div class='woocommerce-Tabs-panel woocommerce-Tabs-panel--additional_information "
        "panel entry-content wc-tab' id='tab-additional_information' role='tabpanel'>"
        "<h2>Additional information</h2><table class='woocommerce-product-attributes "
        f"shop_attributes'>{attrs}</table></div>"
        "<div class='woocommerce-Tabs-panel woocommerce-Tabs-panel--reviews panel "
        "entry-content wc-tab' id='tab-reviews' role='tabpanel'><div id='reviews' "
        "class='woocommerce-Reviews'><div id='comments'><h2 class='woocommerce-Reviews-"
        "title'>Reviews</h2><p class='woocommerce-noreviews'>There are no reviews yet.</p>"
        "</div><div id='review_form_wrapper'><div id='review_form'><div id='respond' "
        "class='comment-respond'><span id='reply-title' class='comment-reply-title'>Be the "
        "first to review “Canvas Backpack 30”</span><form class='comment-form'><p "
        "class='comment-notes'><span id='email-notes'>Your email address will not be "
        "published.</span> Required fields are marked *</p><p class='comment-form-comment'>"
        "<label>Your review *</label><textarea></textarea></p><p class='form-submit'><input "
        "type='submit' value='Submit'></p></form></div></div></div></div></div></div>"
        "<section class='related products'><h2>Related products</h2><ul class='products "
        f"columns-4'>{related}</ul></section></div></main></div>"
        "<div id='secondary' class='widget-area' role='complementary'><div class='widget "
        "woocommerce widget_shopping_cart'><h2 class='widgettitle'>Basket</h2><p class="
        "'woocommerce-mini-cart__empty-message'>No products in the basket.</p></div></div>"
        "</div></div>" + FOOTER,
        head=_product_ld("Canvas Backpack 30", "89.00", "GBP"),
    )
    return Family(
        "woocommerce",
        html,
        "https://shop.example.com/product/canvas-backpack-30/",
        must=["Canvas Backpack 30", "89.00", *DESCRIPTION, "| Weight | 1.2 kg |"],
        must_not=[
            "Related products",
            *OTHERS,
            "Add to basket",
            "Be the first to review",
            "Your email address will not be published",
            "There are no reviews yet",
            "No products in the basket",
        ],
    )


def magento() -> Family:
    specs = "".join(
        f"<tr><th class='col label' scope='row'>{key}</th><td class='col data' "
        f"data-th='{key}'>{value}</td></tr>"
        for key, value in [
            ("Material", "Recycled nylon"),
            ("Weight", "480 g"),
            ("Fit", "Regular"),
        ]
    )
    related = "".join(
        f"<li class='item product product-item'><div class='product-item-info'><a "
        f"class='product photo product-item-photo'><img alt=''></a><div class='product "
        f"details product-item-details'><strong class='product name product-item-name'><a "
        f"class='product-item-link'>{name}</a></strong><div class='price-box'><span "
        "class='price'>€35.00</span></div><div class='product actions product-item-actions'>"
        "<button class='action tocart primary'><span>Add to Cart</span></button></div>"
        "</div></div></li>"
        for name in OTHERS
    )
    html = page(
        "<div class='page-wrapper'><header class='page-header'><div class='panel wrapper'>"
        "<div class='panel header'><ul class='header links'><li><a>Sign In</a></li><li>"
        "<a>Create an Account</a></li></ul></div></div><div class='header content'>"
        "<a class='logo'>Valley</a><div data-block='minicart' class='minicart-wrapper'>"
        "<a class='action showcart'><span class='text'>My Cart</span></a></div></div>"
        "</header><div class='sections nav-sections'><nav class='navigation' role="
        "'navigation'><ul><li><a>Men</a></li><li><a>Women</a></li><li><a>Gear</a></li>"
        "</ul></nav></div><div class='breadcrumbs'><ul class='items'><li class='item home'>"
        "<a>Home</a></li><li class='item product'><strong>Summit Jacket</strong></li></ul>"
        "</div><main id='maincontent' class='page-main'><div class='page-title-wrapper "
        "product'><h1 class='page-title'><span class='base' data-ui-id='page-title-wrapper' "
        "itemprop='name'>Summit Jacket</span></h1></div><div class='columns'><div "
        "class='column main'><div class='product-info-main'><div class='product-info-price'>"
        "<div class='product-reviews-summary empty'><div class='reviews-actions'><a "
        "class='action add'>Be the first to review this product</a></div></div>"
        "<div class='price-box price-final_price' data-role='priceBox'><span class='price-"
        "container price-final_price tax weee' itemprop='offers' itemscope itemtype="
        "'http://schema.org/Offer'><span id='product-price-1' data-price-amount='120' "
        "class='price-wrapper'><span class='price'>€120.00</span></span><meta itemprop="
        "'price' content='120'></span></div><div class='product-info-stock-sku'><div "
        "class='stock available' title='Availability'><span>In stock</span></div><div "
        "class='product attribute sku'><strong class='type'>SKU</strong><div class='value' "
        "itemprop='sku'>SJ-01</div></div></div></div>"
        "<div class='product-add-form'><form id='product_addtocart_form'><div class='box-"
        "tocart'><div class='fieldset'><div class='field qty'><label class='label'><span>Qty"
        "</span></label><div class='control'><input type='number' value='1'></div></div>"
        "<div class='actions'><button class='action primary tocart' id='product-addtocart-"
        "button'><span>Add to Cart</span></button></div></div></div></form></div>"
        "<div class='product-social-links'><div class='product-addto-links'><a class='action "
        "towishlist'><span>Add to Wish List</span></a><a class='action tocompare'><span>Add "
        "to Compare</span></a></div><a class='action mailto friend'><span>Email</span></a>"
        "</div></div><div class='product media'><div class='gallery-placeholder'><img "
        "alt='main product photo'></div></div>"
        "<div class='product info detailed'><div class='product data items'>"
        "<div class='data item title active' id='tab-label-description'><a class='data "
        "switch'>Details</a></div><div class='data item content' id='description'><div "
        "class='product attribute description'><div class='value'>"
        + "".join(f"<p>{text}</p>" for text in DESCRIPTION)
        + "</div></div></div><div class='data item title' id='tab-label-additional'><a "
        "class='data switch'>More Information</a></div><div class='data item content' "
        "id='additional'><div class='additional-attributes-wrapper table-wrapper'><table "
        "class='data table additional-attributes' id='product-attribute-specs-table'>"
        f"<caption class='table-caption'>More Information</caption><tbody>{specs}</tbody>"
        "</table></div></div><div class='data item title' id='tab-label-reviews'><a "
        "class='data switch'>Reviews</a></div><div class='data item content' id='reviews'>"
        "<div id='product-review-container'></div><div class='block review-add'><div "
        "class='block-title'><strong>You're reviewing:</strong></div><div class='block-"
        "content'><form class='review-form'><fieldset class='fieldset review-fieldset'>"
        "<legend class='legend review-legend'><span>Your Rating</span></legend><div "
        "class='field review-field-nickname required'><label>Nickname</label><input></div>"
        "<div class='field review-field-summary'><label>Summary</label><input></div>"
        "<button class='action submit primary'>Submit Review</button></fieldset></form>"
        "</div></div></div></div></div>"
        "<div class='block related'><div class='block-title title'><strong id='block-"
        "related-heading' role='heading' aria-level='2'>Related Products</strong></div>"
        "<div class='block-content content'><ol class='products list items product-items'>"
        f"{related}</ol></div></div></div></div></main>"
        "<footer class='page-footer'><div class='footer content'><ul class='footer links'>"
        "<li><a>Search Terms</a></li><li><a>Privacy and Cookie Policy</a></li></ul>"
        "<div class='block newsletter'><strong>Newsletter</strong><input placeholder='Enter "
        "your email address'><button>Subscribe</button></div></div></footer>"
        "<small class='copyright'><span>Copyright © 2024 Valley Outfitters</span></small>"
        "</div>",
        head=_product_ld("Summit Jacket", "120.00", "EUR"),
    )
    return Family(
        "magento",
        html,
        "https://shop.example.com/summit-jacket.html",
        must=["Summit Jacket", "€120.00", *DESCRIPTION, "| Material | Recycled nylon |"],
        must_not=[
            "Related Products",
            *OTHERS,
            "Add to Cart",
            "Add to Wish List",
            "Submit Review",
            "Be the first to review",
            "Nickname",
            "Subscribe",
            "Create an Account",
        ],
    )


FAMILIES = [shopify(), woocommerce(), magento()]

FAILING: frozenset[str] = frozenset()


@pytest.mark.parametrize("family", params(FAMILIES, FAILING))
def test_a_product_page_comes_back_as_the_product(family: Family) -> None:
    check(family)
