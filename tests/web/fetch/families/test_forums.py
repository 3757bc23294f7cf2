"""Forum threads and Q&A pages of the common engines: every post or answer body comes back
in order, with at most a short author/date line each, and never the vote widgets,
signatures, reply chrome, member boxes or "who is online" panels around them."""

from __future__ import annotations

import pytest

from ._family import FOOTER, NAV, PROSE, Family, check, json_ld, page, params

SIGNATURE = "Sent from my phone, please excuse the typos and the brevity"
POSTS = [PROSE[0], PROSE[1], PROSE[2], PROSE[3]]


def phpbb() -> Family:
    posts = "".join(
        f"<div id='p{n}' class='post has-profile bg{n % 2 + 1}'><div class='inner'>"
        f"<dl class='postprofile' id='profile{n}'><dt class='has-profile-rank'>"
        f"<a href='/memberlist.php?u={n}' class='username'>walker{n}</a></dt>"
        "<dd class='profile-rank'>Regular member</dd>"
        f"<dd class='profile-posts'><strong>Posts:</strong> {120 + n}</dd>"
        "<dd class='profile-joined'><strong>Joined:</strong> Mon Jan 06, 2020 7:15 pm</dd></dl>"
        f"<div class='postbody'><div id='post_content{n}'>"
        f"<h3 class='first'><a href='#p{n}'>Re: Ridge path after rain</a></h3>"
        "<ul class='post-buttons'><li><a href='/posting.php?mode=quote' title='Reply with "
        "quote' class='button'><span>Quote</span></a></li></ul>"
        f"<p class='author'><a href='#p{n}'>Post</a> by <strong><a href='/u/{n}' "
        f"class='username'>walker{n}</a></strong> » Tue May 14, 2024 9:1{n} am</p>"
        f"<div class='content'>{text}</div>"
        f"<div id='sig{n}' class='signature'>{SIGNATURE}</div>"
        "</div></div><div class='back2top'><a href='#top' class='top' title='Top'>Top</a>"
        "</div></div></div><hr class='divider'>"
        for n, text in enumerate(POSTS)
    )
    action_bar = (
        "<div class='action-bar bar-{}'><a href='/posting.php?mode=reply' class='button'>"
        "<span>Post Reply</span></a><div class='search-box'><input placeholder='Search this "
        "topic…'></div><div class='pagination'>4 posts • Page <strong>1</strong> of "
        "<strong>1</strong></div></div>"
    )
    html = page(
        "<div id='wrap' class='wrap'><div id='page-header'>" + NAV + "</div>"
        "<div id='page-body' class='page-body' role='main'>"
        "<h2 class='topic-title'><a href='/viewtopic.php?t=77'>Ridge path after rain</a></h2>"
        + action_bar.format("top")
        + posts
        + action_bar.format("bottom")
        + "<div class='action-bar actions-jump'><p class='jumpbox-return'><a href='/f/3'>"
        "Return to “Walks and routes”</a></p><div class='jumpbox dropdown-container'>"
        "<span>Jump to</span></div></div>"
        "<div class='stat-block online-list'><h3>Who is online</h3><p>Users browsing this "
        "forum: No registered users and 3 guests</p></div></div>"
        "<div id='page-footer' class='page-footer' role='contentinfo'>"
        "<p>Powered by phpBB® Forum Software © phpBB Limited</p></div></div>"
    )
    return Family(
        "phpbb",
        html,
        "https://forum.example.com/viewtopic.php?t=77",
        must=POSTS,
        must_not=[
            SIGNATURE,
            "Who is online",
            "Users browsing",
            "Jump to",
            "Post Reply",
            "Powered by phpBB",
            "Search this topic",
        ],
    )


def vbulletin() -> Family:
    posts = "".join(
        f"<li class='postbitlegacy postbitim postcontainer old' id='post_{n}'>"
        f"<div class='posthead'><span class='postdate old'><span class='date'>05-14-2024,"
        f"&nbsp;<span class='time'>09:1{n} AM</span></span></span>"
        f"<span class='nodecontrols'><a name='post{n}' href='#post{n}' class='postcounter'>"
        f"#{n + 1}</a></span></div>"
        "<div class='postdetails'><div class='userinfo'><div class='username_container'>"
        f"<a class='username offline popupctrl' href='/member.php?u={n}'><strong>walker{n}"
        "</strong></a></div><span class='usertitle'>Senior Member</span>"
        "<dl class='userinfo_extra'><dt>Join Date</dt> <dd>Jan 2020</dd> <dt>Location</dt> "
        f"<dd>Hills</dd> <dt>Posts</dt> <dd>{1200 + n}</dd></dl></div>"
        "<div class='postbody'><div class='postrow'>"
        "<h2 class='title icon'>Re: Ridge path after rain</h2>"
        f"<div class='content'><div id='post_message_{n}'>"
        f"<blockquote class='postcontent restore '>{text}</blockquote></div></div></div>"
        "<div class='after_content'><blockquote class='signature restore'>"
        f"<div class='signaturecontainer'>{SIGNATURE}</div></blockquote></div>"
        "<div class='cleardiv'></div></div></div>"
        "<div class='postfoot'><div class='textcontrols floatcontainer'>"
        "<span class='postcontrols'><a class='quickreply'>Reply</a> <a class='quote'>Reply "
        "With Quote</a></span></div></div><hr></li>"
        for n, text in enumerate(POSTS)
    )
    html = page(
        NAV + "<div class='body_wrapper'><div id='breadcrumb' class='breadcrumb'><ul "
        "class='floatcontainer'><li class='navbithome'><a href='/'>Home</a></li><li "
        "class='navbit'><a href='/forums/3'>Walks and routes</a></li></ul></div>"
        "<div id='pagetitle'><h1>Thread: <span class='threadtitle'><a href='/t/77'>Ridge "
        "path after rain</a></span></h1></div>"
        "<div id='above_postlist' class='above_postlist'><a class='newcontent_textcontrol'>"
        "Reply to Thread</a><div id='pagination_top' class='pagination_top'>Page 1 of 1"
        "</div></div>"
        f"<div id='postlist' class='postlist restrain'><ol id='posts' class='posts'>{posts}"
        "</ol></div>"
        "<div id='thread_info' class='thread_info block'><h4 class='threadinfohead blockhead'>"
        "Thread Information</h4><div class='thread_info_block blockbody'><p>There are "
        "currently 1 users browsing this thread. (0 members and 1 guests)</p></div></div>"
        "<div class='options_block_container'><h4>Posting Permissions</h4><ul><li>You "
        "<strong>may not</strong> post new threads</li><li>You <strong>may not</strong> post "
        "replies</li></ul></div></div>" + FOOTER
    )
    return Family(
        "vbulletin",
        html,
        "https://forum.example.com/showthread.php?t=77",
        must=POSTS,
        must_not=[
            SIGNATURE,
            "Reply With Quote",
            "users browsing this thread",
            "Posting Permissions",
            "may not",
            "Join Date",
        ],
    )


def vbulletin_tables() -> Family:
    # The older engine's layout: every post a table, the page's panels tables too.
    posts = "".join(
        f"<div id='edit{n}'><table id='post{n}' class='tborder' cellpadding='6' width='100%'>"
        f"<tr><td class='thead'><a name='post{n}'></a>14th May 2024, 09:1{n}</td><td "
        f"class='thead' align='right'>#<a href='/showpost.php?p={n}'>{n + 1}</a></td></tr>"
        f"<tr><td class='alt2' width='175'><a class='bigusername' href='/member.php?u={n}'>"
        f"walker{n}</a><div class='smallfont'>Registered User</div><div class='smallfont'>"
        f"<div>Join Date: Jan 2020</div><div>Posts: {120 + n}</div></div></td>"
        f"<td class='alt1' id='td_post_{n}'><div id='post_message_{n}'>{text}</div>"
        f"<div>__________________<br>{SIGNATURE}</div></td></tr></table></div>"
        for n, text in enumerate(POSTS)
    )
    html = page(
        "<table class='tborder' width='100%'><tr><td class='alt1'><a href='/'>Valley Walkers"
        "</a> &gt; <a href='/forumdisplay.php?f=3'>Walks and routes</a></td><td "
        "class='alt2'><a href='/register.php'>Register</a> <a href='/faq.php'>FAQ</a></td>"
        "</tr></table>"
        + posts
        + "<table class='tborder' width='100%'><thead><tr><td class='thead'>Posting Rules"
        "</td></tr></thead><tbody><tr><td class='alt1'><div>You <strong>may not</strong> "
        "post new threads</div><div>You <strong>may not</strong> post replies</div><div>"
        "<a href='/misc.php?do=bbcode'>BB code</a> is <strong>On</strong></div></td></tr>"
        "</tbody></table><div class='smallfont' align='center'>All times are GMT +1. The "
        "time now is 14:01.</div><div class='smallfont' align='center'>Powered by a "
        "bulletin board engine, version 3.8</div>"
    )
    return Family(
        "vbulletin-tables",
        html,
        "https://forum.example.com/showthread.php?t=77",
        must=POSTS,
        must_not=["Posting Rules", "may not", "All times are GMT", "Powered by"],
    )


def xenforo() -> Family:
    posts = "".join(
        f"<article class='message message--post js-post js-inlineModContainer' "
        f"data-author='walker{n}' data-content='post-{n}' id='js-post-{n}'>"
        "<span class='u-anchorTarget'></span><div class='message-inner'>"
        "<div class='message-cell message-cell--user'><section class='message-user' "
        "aria-label='walker'><div class='message-avatar'><a class='avatar'></a></div>"
        f"<div class='message-userDetails'><h4 class='message-name'><a class='username' "
        f"href='/members/walker{n}.{n}/'>walker{n}</a></h4><h5 class='userTitle "
        "message-userTitle'>Well-known member</h5></div><div class='message-userExtras'>"
        "<dl class='pairs pairs--justified'><dt>Joined</dt><dd>Jan 6, 2020</dd></dl>"
        f"<dl class='pairs pairs--justified'><dt>Messages</dt><dd>{1200 + n}</dd></dl>"
        "<dl class='pairs pairs--justified'><dt>Reaction score</dt><dd>310</dd></dl></div>"
        "<span class='message-userArrow'></span></section></div>"
        "<div class='message-cell message-cell--main'><div class='message-main "
        "js-quickEditTarget'><header class='message-attribution message-attribution--split'>"
        "<ul class='message-attribution-main listInline'><li class='u-concealed'>"
        f"<a href='/threads/77/post-{n}' rel='nofollow'><time class='u-dt' "
        f"datetime='2024-05-14T09:1{n}:00+0100'>May 14, 2024</time></a></li></ul>"
        "<ul class='message-attribution-opposite listInline'><li><a class='message-"
        "attribution-gadget' data-xf-init='share-tooltip'>Share</a></li>"
        f"<li><a href='/threads/77/post-{n}'>#{n + 1}</a></li></ul></header>"
        "<div class='message-content js-messageContent'><div class='message-userContent "
        "lbContainer js-lbContainer'><article class='message-body js-selectToQuote'>"
        f"<div class='bbWrapper'>{text}</div><div class='js-selectToQuoteEnd'>&nbsp;</div>"
        "</article></div><aside class='message-signature'><div class='bbWrapper'>"
        f"{SIGNATURE}</div></aside></div>"
        "<footer class='message-footer'><div class='message-actionBar actionBar'>"
        "<div class='actionBar-set actionBar-set--external'><a class='actionBar-action "
        "actionBar-action--report'>Report</a><a class='actionBar-action actionBar-action--"
        "reply'>Reply</a></div></div><div class='reactionsBar js-reactionsList is-active'>"
        "<a class='reactionsBar-link'>hillfan, moorland and 2 others</a></div>"
        "</footer></div></div></div></article>"
        for n, text in enumerate(POSTS)
    )
    html = page(
        "<div class='p-pageWrapper' id='top'>"
        + NAV
        + "<div class='p-body'><div class='p-body-inner'><div class='p-body-header'>"
        "<div class='p-title'><h1 class='p-title-value'>Ridge path after rain</h1></div>"
        "<div class='p-description'><ul class='listInline listInline--bullet'><li>"
        "Thread starter walker0</li><li>Start date May 14, 2024</li></ul></div></div>"
        "<div class='p-body-main'><div class='p-body-content'><div class='p-body-pageContent'>"
        "<div class='block block--messages'><div class='block-outer'><div class='block-outer-"
        "opposite'><a class='button--link'>Watch</a></div></div><div class='block-container "
        "lbContainer'><div class='block-body js-replyNewMessageContainer'>"
        + posts
        + "</div></div></div><div class='blockMessage blockMessage--error'>You must log in or "
        "register to reply here.</div><div class='block'><div class='block-container'>"
        "<h3 class='block-minorHeader'>Similar threads</h3><div class='block-body'><ul>"
        "<li><a href='/threads/80'>Ridge path in winter</a></li><li><a href='/threads/81'>"
        "Best boots for mud</a></li></ul></div></div></div>"
        "<div class='shareButtons'><span class='shareButtons-label'>Share:</span>"
        "<a class='shareButtons-button--facebook'>Facebook</a></div>"
        "</div></div></div></div></div>" + FOOTER + "</div>"
    )
    return Family(
        "xenforo",
        html,
        "https://forum.example.com/threads/ridge-path-after-rain.77/",
        must=POSTS,
        must_not=[
            SIGNATURE,
            "You must log in or register",
            "Similar threads",
            "Reaction score",
            "hillfan, moorland",
            "Best boots for mud",
        ],
    )


def discourse() -> Family:
    posts = "".join(
        f"<div id='post_{n + 1}' itemscope itemtype='http://schema.org/DiscussionForumPosting' "
        "class='topic-body crawler-post'><div class='crawler-post-meta'><span class='creator' "
        "itemprop='author' itemscope itemtype='http://schema.org/Person'>"
        f"<a itemprop='url' href='/u/walker{n}'><span itemprop='name'>walker{n}</span></a>"
        "</span><span class='crawler-post-infos'><time itemprop='datePublished' "
        f"datetime='2024-05-14T09:1{n}:00Z' class='post-time'>May 14, 2024, 9:1{n}am</time>"
        f"<meta itemprop='dateModified' content='2024-05-14'><span itemprop='position'>{n + 1}"
        "</span></span></div>"
        f"<div class='post' itemprop='text'><p>{text}</p></div>"
        "<div itemprop='interactionStatistic' itemscope itemtype='http://schema.org/"
        "InteractionCounter'><meta itemprop='interactionType' content='http://schema.org/"
        "LikeAction'><meta itemprop='userInteractionCount' content='3'>"
        "<span class='post-likes'>3 Likes</span></div></div>"
        for n, text in enumerate(POSTS)
    )
    related = "".join(
        f"<tr class='topic-list-item'><td class='main-link'><a href='/t/other-{n}/{90 + n}' "
        f"class='title raw-link raw-topic-link'>Another walk worth doing, number {n}</a>"
        f"<div class='link-bottom-line'><a class='badge-category'>Routes</a></div></td>"
        f"<td class='replies'><span class='posts'>{n + 4}</span></td><td class='views'>"
        f"<span class='views'>{n * 40}</span></td><td>May 2024</td></tr>"
        for n in range(5)
    )
    html = page(
        "<header class='d-header'><div class='wrap'><div class='contents'><a href='/'>"
        "Valley Walkers</a></div></div></header>"
        "<div id='main-outlet' class='wrap' role='main'><div id='topic-title'><h1>"
        "<a href='/t/ridge-path-after-rain/77'>Ridge path after rain</a></h1>"
        "<div class='topic-category' itemscope itemtype='http://schema.org/BreadcrumbList'>"
        "<span itemprop='itemListElement'><a class='badge-wrapper'>Routes</a></span></div>"
        "</div>"
        + posts
        + "<div id='related-topics' class='more-topics__list' role='complementary'>"
        "<h3 id='related-topics-title' class='more-topics__list-title'>Related topics</h3>"
        "<div class='topic-list-container' itemscope itemtype='http://schema.org/ItemList'>"
        "<table class='topic-list'><thead><tr><th>Topic</th><th>Replies</th><th>Views</th>"
        f"<th>Activity</th></tr></thead><tbody>{related}</tbody></table></div></div></div>"
        "<footer class='container wrap'><nav class='crawler-nav'><ul><li><a href='/'>Home"
        "</a></li><li><a href='/categories'>Categories</a></li><li><a href='/guidelines'>"
        "Guidelines</a></li><li><a href='/tos'>Terms of Service</a></li></ul></nav>"
        "<p class='powered-by-link'>Powered by Discourse, best viewed with JavaScript "
        "enabled</p></footer>"
    )
    return Family(
        "discourse",
        html,
        "https://discuss.example.com/t/ridge-path-after-rain/77",
        must=POSTS,
        must_not=[
            "Related topics",
            "Another walk worth doing",
            "Powered by Discourse",
            "3 Likes",
            "Terms of Service",
        ],
    )


def invision() -> Family:
    posts = "".join(
        f"<article id='elComment_{n}' class='cPost ipsBox ipsResponsive_pull ipsComment "
        "ipsComment_parent ipsClearfix ipsClear ipsColumns ipsColumns_noSpacing "
        "ipsColumns_collapsePhone'>"
        "<div class='cAuthorPane_mobile ipsResponsive_showPhone'><div class='cAuthorPane_"
        f"content'><h3 class='ipsType_sectionHead cAuthorPane_author'><a>walker{n}</a></h3>"
        "</div></div>"
        "<aside class='ipsComment_author cAuthorPane ipsColumn ipsColumn_medium "
        "ipsResponsive_hidePhone'><h3 class='ipsType_sectionHead cAuthorPane_author "
        f"ipsType_blendLinks ipsType_break'><strong><a href='/profile/{n}'>walker{n}</a>"
        "</strong></h3><ul class='cAuthorPane_info ipsList_reset'><li data-role='group'>"
        f"Members</li><li data-role='stats' class='ipsType_light'>{120 + n} posts</li>"
        "<li class='ipsType_light'>Location: Hills</li></ul></aside>"
        "<div class='ipsColumn ipsColumn_fluid ipsMargin:none'><div id='comment-"
        f"{n}_wrap' data-controller='core.front.core.comment' class='ipsComment_content "
        "ipsType_medium'><div class='ipsComment_meta ipsType_light ipsFlex ipsFlex-ai:center "
        "ipsFlex-jc:between ipsFlex-fd:row-reverse'><div class='ipsType_light ipsType_reset "
        "ipsType_blendLinks ipsComment_toolWrap'><ul class='ipsList_reset ipsComment_tools'>"
        f"<li><a class='ipsType_blendLinks'>#{n + 1}</a></li></ul></div>"
        "<div class='ipsType_reset ipsResponsive_hidePhone'><a class='ipsType_blendLinks'>"
        f"Posted <time datetime='2024-05-14T09:1{n}:00Z'>May 14, 2024</time></a></div></div>"
        "<div class='cPost_contentWrap'><div data-role='commentContent' class='ipsType_normal "
        "ipsType_richText ipsPadding_bottom ipsContained' data-controller='core.front.core."
        f"lightboxedImages'><p>{text}</p></div>"
        "<div class='ipsItemControls'><ul class='ipsComment_controls ipsClearfix ipsItemControls_"
        "left'><li><a class='ipsButton ipsButton_light ipsButton_verySmall'>Quote</a></li>"
        "</ul></div>"
        "<div data-role='memberSignature' class='ipsResponsive_hidePhone'><hr class='ipsHr'>"
        f"<div class='ipsType_light ipsType_richText'>{SIGNATURE}</div></div></div></div>"
        "</div></article>"
        for n, text in enumerate(POSTS)
    )
    ld = json_ld(
        {
            "@context": "http://schema.org",
            "@type": "DiscussionForumPosting",
            "headline": "Ridge path after rain",
            "text": POSTS[0],
            "author": {"@type": "Person", "name": "walker0"},
            "dateCreated": "2024-05-14T09:10:00+0000",
            "interactionStatistic": {"@type": "InteractionCounter", "userInteractionCount": 3},
        }
    )
    html = page(
        "<div id='ipsLayout_header'>" + NAV + "<nav class='ipsBreadcrumb ipsBreadcrumb_top "
        "ipsFaded_withHover'><ul data-role='breadcrumbList'><li><a href='/'>Home</a></li>"
        "<li><a href='/forum/3'>Walks and routes</a></li></ul></nav></div>"
        "<main id='ipsLayout_body' class='ipsLayout_container'><div id='ipsLayout_"
        "contentArea'><div id='ipsLayout_contentWrapper'><div id='ipsLayout_mainArea'>"
        "<div class='ipsPageHeader ipsResponsive_pull ipsBox ipsPadding sm:ipsPadding:half "
        "ipsMargin_bottom'><h1 class='ipsType_pageTitle ipsContained_container'>Ridge path "
        "after rain</h1><div class='ipsPageHeader__meta'>By walker0, May 14, 2024 in "
        "Walks and routes</div></div>"
        "<div class='ipsClearfix'><ul class='ipsToolList ipsToolList_horizontal'><li>"
        "<a class='ipsButton ipsButton_link'>Reply to this topic</a></li><li>"
        "<a class='ipsButton'>Start new topic</a></li></ul></div>"
        f"<div id='comments' data-controller='core.front.core.commentFeed' class='cTopic "
        f"ipsClear ipsSpacer_top'><div data-role='commentFeed'>{posts}</div></div>"
        "<div class='cTopicPostArea ipsBox ipsResponsive_pull ipsPadding ipsSpacer_top'>"
        "<div class='ipsType_center ipsPad cGuestTeaser'><h2 class='ipsType_pageTitle'>Create "
        "an account or sign in to comment</h2><p class='ipsType_light ipsType_normal "
        "ipsType_reset'>You need to be a member in order to leave a comment</p>"
        "<div class='ipsGrid ipsGrid_collapsePhone ipsSpacer_top'><div class='ipsGrid_span6 "
        "cGuestTeaser_left'><h2 class='ipsType_sectionHead'>Create an account</h2><p>Sign up "
        "for a new account in our community. It's easy!</p><a class='ipsButton'>Register a "
        "new account</a></div><div class='ipsGrid_span6 cGuestTeaser_right'><h2 class="
        "'ipsType_sectionHead'>Sign in</h2><p>Already have an account? Sign in here.</p>"
        "<a class='ipsButton'>Sign In Now</a></div></div></div></div>"
        "</div></div></div></main>" + ld + FOOTER
    )
    return Family(
        "invision",
        html,
        "https://forum.example.com/topic/77-ridge-path-after-rain/",
        must=POSTS,
        must_not=[
            SIGNATURE,
            "Create an account or sign in",
            "You need to be a member",
            "Register a new account",
            "Start new topic",
            "Location: Hills",
        ],
    )


QUESTION = (
    "I want to walk the ridge loop in one day, starting from the village church. Is the "
    "lower section passable after a week of rain, or should I take the road to the saddle?"
)
CODE = "route = plan(start='church', end='lake', avoid=['ford'])"


def q_and_a() -> Family:
    def votes(kind: str) -> str:
        return (
            "<div class='votecell post-layout--left'><div class='js-voting-container d-flex "
            "jc-center fd-column ai-stretch gs4 fc-black-200'>"
            f"<button class='js-vote-up-btn' aria-label='Up vote'>Up vote</button>"
            f"<div class='js-vote-count' itemprop='upvoteCount' data-value='42'>42</div>"
            "<button class='js-vote-down-btn' aria-label='Down vote'>Down vote</button>"
            f"<button class='js-bookmark-btn'>Save this {kind}.</button>"
            "<a class='js-post-issue' href='/posts/1/timeline'>Show activity on this post."
            "</a></div></div>"
        )

    def footer(kind: str, verb: str, n: int) -> str:
        return (
            "<div class='mb0'><div class='mt16 d-flex gs8 gsy fw-wrap jc-end ai-start pt4 mb16'>"
            "<div class='flex--item mr16 fl1 w96'><div class='js-post-menu pt2'><div "
            "class='d-flex gs8 s-anchors s-anchors__muted fw-wrap'><a class='js-share-link'>"
            f"Share</a><a class='js-suggest-edit-post'>Improve this {kind}</a><button "
            "class='js-follow-post'>Follow</button></div></div></div>"
            "<div class='post-signature owner flex--item'><div class='user-info'><div "
            f"class='user-action-time'>{verb} <span class='relativetime'>May 14, 2024 at 9:1{n}"
            f"</span></div><div class='user-details'><a href='/users/{n}'>walker{n}</a>"
            "<div class='-flair'><span class='reputation-score'>1,234</span></div></div>"
            "</div></div></div></div>"
            "<div class='comments js-comments-container'><ul class='comments-list'>"
            f"<li class='comment js-comment'><div class='comment-body'><span class="
            f"'comment-copy'>Thanks, that helped.</span></div></li></ul></div>"
            "<div class='js-comment-actions'><a class='js-add-link comments-link'>Add a "
            "comment</a></div>"
        )

    answers = "".join(
        f"<div id='answer-{n}' class='answer js-answer{' accepted-answer' if n == 0 else ''}' "
        f"itemprop='{'acceptedAnswer' if n == 0 else 'suggestedAnswer'}' itemscope "
        "itemtype='https://schema.org/Answer'><div class='post-layout'>"
        + votes("answer")
        + "<div class='answercell post-layout--right'><div class='s-prose js-post-body' "
        f"itemprop='text'><p>{text}</p></div>"
        + footer("answer", "answered", n)
        + "</div></div></div>"
        for n, text in enumerate(POSTS[:3])
    )
    related = "".join(
        f"<div class='spacer'><a class='question-hyperlink' href='/questions/{90 + n}'>"
        f"Which boots for a muddy ridge walk, question {n}?</a></div>"
        for n in range(6)
    )
    html = page(
        "<header class='s-topbar'><a class='s-topbar--logo'>Walking Q&amp;A</a><form "
        "class='s-topbar--searchbar'><input placeholder='Search…'></form><a>Log in</a> "
        "<a>Sign up</a></header>"
        "<div class='container'><div id='left-sidebar' class='left-sidebar'><nav role="
        "'navigation'><ol class='nav-links'><li><a href='/'>Home</a></li><li><a href="
        "'/questions'>Questions</a></li><li><a href='/tags'>Tags</a></li><li><a href="
        "'/users'>Users</a></li></ol></nav></div>"
        "<div id='content' class='snippet-hidden'><div itemprop='mainEntity' itemscope "
        "itemtype='https://schema.org/Question'><div id='question-header' class='d-flex "
        "sm:fd-column'><h1 itemprop='name' class='fs-headline1'><a href='/questions/77/"
        "ridge-loop' class='question-hyperlink'>Is the ridge loop passable after rain?</a>"
        "</h1><div class='ml12'><a class='ws-nowrap s-btn s-btn__filled'>Ask Question</a>"
        "</div></div><div class='d-flex fw-wrap pb8 mb16 bb bc-black-075'><div "
        "class='flex--item ws-nowrap mr16 mb8'><span>Asked</span> <time>May 14, 2024</time>"
        "</div><div class='flex--item ws-nowrap mb8'>Viewed 1k times</div></div>"
        "<div id='mainbar' role='main' aria-label='question and answers'>"
        "<div class='question js-question' id='question'><div class='post-layout'>"
        + votes("question")
        + "<div class='postcell post-layout--right'><div class='s-prose js-post-body' "
        f"itemprop='text'><p>{QUESTION}</p><pre class='lang-py s-code-block'><code>{CODE}"
        "</code></pre></div><div class='mt24 mb12'><div class='post-taglist'><ul "
        "class='ml0 list-ls-none js-post-tag-list-wrapper d-inline'><li><a class='post-tag'>"
        "hiking</a></li><li><a class='post-tag'>weather</a></li></ul></div></div>"
        + footer("question", "asked", 9)
        + "</div></div></div>"
        "<div id='answers'><div id='answers-header'><div class='answers-subheader d-flex "
        "ai-center mb8'><h2 class='mb0' data-answercount='3'>3 Answers</h2><div><label>"
        "Sorted by:</label><select id='answer-sort-dropdown-select-menu'><option>Highest "
        "score (default)</option><option>Date modified (newest first)</option></select>"
        "</div></div></div>"
        + answers
        + "<h2 class='bottom-notice'>Not the answer you're looking for? Browse other "
        "questions tagged <a class='post-tag'>hiking</a> or <a>ask your own question</a>."
        "</h2></div>"
        "<form id='post-form' class='post-form js-add-answer-component'><h2 class='space'>"
        "Your Answer</h2><div class='wmd-container'><textarea></textarea></div><div "
        "class='js-talk-to-us'><h2>Sign up or log in</h2><p>Sign up using Google</p></div>"
        "<div><h2>Post as a guest</h2><label>Name</label><label>Email</label></div>"
        "<button>Post Your Answer</button><p>By clicking “Post Your Answer”, you agree to "
        "our terms of service and acknowledge you have read our privacy policy.</p></form>"
        "</div></div>"
        "<div id='sidebar' class='show-votes' role='complementary'><div class='module "
        f"sidebar-related'><h4 id='h-related'>Related</h4><div>{related}</div></div>"
        "<div id='hot-network-questions' class='module tex2jax_ignore'><h4>Hot Network "
        "Questions</h4><ul><li><a>Why do maps still show the old ford across the river?</a>"
        "</li></ul></div></div></div></div>" + FOOTER,
        head=json_ld(
            {
                "@context": "https://schema.org",
                "@type": "QAPage",
                "mainEntity": {"@type": "Question", "name": "Ridge loop"},
            }
        ),
    )
    return Family(
        "q-and-a",
        html,
        "https://qa.example.com/questions/77/is-the-ridge-loop-passable-after-rain",
        must=[QUESTION, CODE, *POSTS[:3]],
        must_not=[
            "Up vote",
            "Show activity on this post",
            "Your Answer",
            "Hot Network",
            "Add a comment",
            "Improve this",
            "Post as a guest",
            "Sorted by",
            "Which boots for a muddy ridge walk",
            "Save this",
        ],
    )


FAMILIES = [phpbb(), vbulletin(), vbulletin_tables(), xenforo(), discourse(), invision(), q_and_a()]

FAILING: frozenset[str] = frozenset()


@pytest.mark.parametrize("family", params(FAMILIES, FAILING))
def test_a_thread_comes_back_as_every_post_in_order(family: Family) -> None:
    check(family)
