"""What short blocks of text say about themselves: "Read more: ...", "Related articles",
"Comments", "Photo: ...", "Share".

Inside an article's container, furniture often has no telling class name, but its words give
it away, in every language a site is written in. These lists hold the phrases that sites use
for their furniture in the languages of the pages we test on (English, German, French,
Spanish, Italian, Portuguese, Polish, Dutch). They are matched against whole blocks (a
heading, a paragraph, a list item) after lower-casing and collapsing spaces, never against
words inside running prose, and only blocks of at most ``Tuning.cue_max_chars`` characters
are looked at (by ``_corrections``), so a paragraph of the article that happens to start with
"Related" is safe.

- :func:`section_heading`: a heading (or a line on its own) that opens a furniture section:
  related stories, comments, newsletter, the author's box, tags. It and what follows it
  under the same heading level are left out.
- :func:`read_more`: a "Read more:" / "Lesen Sie auch:" / "Lea también:" line that points to
  another article.
- :func:`credit`: a photo caption or credit line ("Foto: ...", "© ...").
- :func:`controls`: a line made only of control words (share, print, back, advertisement).
"""

from __future__ import annotations

import re

_SPACES = re.compile(r"\s+")
_EDGES = " \t\n:.!?…-–—|>»«\"'•·*#()[]"


def normalise(text: str) -> str:
    """Lower-cased, spaces collapsed, punctuation stripped at both ends."""
    return _SPACES.sub(" ", text).strip().strip(_EDGES).strip().lower()


# Headings of furniture sections. A heading matches when it equals one of these or starts
# with one of the prefixes (``more from`` + a site name).
_SECTION_EXACT = frozenset(
    {
        # English
        "related", "related articles", "related posts", "related stories", "related content",
        "related news", "related reading", "related topics", "more stories", "more news",
        "more articles", "more to read", "you may also like", "you might also like",
        "you may like", "you might like", "recommended", "recommended for you",
        "recommended articles", "recommended stories", "popular", "popular posts",
        "popular articles", "popular stories", "most popular", "most read", "trending",
        "trending now", "latest news", "latest articles", "latest posts", "latest stories",
        "recent posts", "recent articles", "read next", "up next", "what to read next",
        "comments", "comment", "leave a reply", "leave a comment", "post a comment",
        "add a comment", "join the discussion", "join the conversation", "responses",
        "share this", "share this article", "share this post", "share this story",
        "share on", "share", "follow us", "newsletter", "subscribe", "subscribe now",
        "sign up for our newsletter", "get our newsletter", "about the author",
        "about the authors", "about the writer", "tags", "filed under", "previous post",
        "next post", "previous article", "next article", "don't miss", "editor's picks",
        "comments are closed",
        # German
        "mehr zum thema", "das könnte sie auch interessieren",
        "das könnte dich auch interessieren", "das könnte sie interessieren",
        "das könnte dich interessieren", "auch interessant", "ebenfalls interessant",
        "weitere artikel", "weitere beiträge", "weitere nachrichten", "weitere meldungen",
        "weitere themen", "mehr themen", "neueste artikel", "neueste beiträge",
        "aktuelle artikel", "aktuelle beiträge", "meistgelesen", "meistgelesene artikel",
        "meistgelesene", "am meisten gelesen", "beliebte artikel", "beliebte beiträge",
        "ähnliche artikel", "ähnliche beiträge", "verwandte themen", "verwandte artikel",
        "verwandte themenbereiche", "zum weiterlesen", "schon gelesen", "lesen sie auch",
        "auch lesen", "empfehlungen", "unsere empfehlungen", "kommentare", "kommentar",
        "kommentar schreiben", "kommentieren", "ihre meinung", "diskutieren sie mit",
        "teilen", "jetzt teilen", "artikel teilen", "beitrag teilen", "diesen artikel teilen",
        "seite teilen", "über den autor", "über die autorin", "zur person", "zum autor",
        "zur autorin", "schlagwörter", "schlagworte", "stichworte", "themen",
        # Spanish
        "noticias relacionadas", "artículos relacionados", "te puede interesar",
        "le puede interesar", "también te puede interesar", "también le puede interesar",
        "comentarios", "compartir", "comparte", "lo más leído", "más leídas", "lo más visto",
        "más noticias", "últimas noticias", "etiquetas", "temas relacionados",
        # French
        "à lire aussi", "a lire aussi", "lire aussi", "articles similaires",
        "sur le même sujet", "commentaires", "partager", "les plus lus", "à lire également",
        "dans la même rubrique",
        # Italian
        "articoli correlati", "commenti", "condividi", "leggi anche", "potrebbe interessarti",
        # Portuguese
        "notícias relacionadas", "comentários", "compartilhe", "mais lidas", "leia também",
        "veja também",
        # Polish
        "komentarze", "czytaj także", "czytaj też", "zobacz także", "zobacz też",
        "najczęściej czytane", "udostępnij", "polecane",
        # Dutch
        "gerelateerde artikelen", "reacties", "delen", "lees ook", "meest gelezen",
    }
)  # fmt: skip
_SECTION_PREFIXES = (
    "more from ", "more on ", "more in ", "more about ", "mehr von ", "mehr aus ",
    "mehr zu ", "mehr zum thema", "weitere artikel ", "weitere beiträge ", "más de ",
    "plus de ", "więcej ",
)  # fmt: skip
_COMMENT_COUNT = re.compile(
    r"\d+ (?:comments?|kommentare?|comentarios?|commentaires?|commenti|komentarz[ey]?|reacties)"
)

# "Read more" lines: the cue, then (mostly) a link to another article.
_READ_MORE = re.compile(
    r"(?:read (?:more|also|next)|also read|see also|related|more|recommended|"
    r"continue reading|"
    r"lesen sie (?:auch|hier|mehr)|auch lesen|weiterlesen|mehr zum thema|mehr dazu|"
    r"passend (?:dazu|zum thema)|siehe auch|auch interessant|"
    r"le[ae] (?:también|más)|l[eé]e(?:r)? más|(?:le|te) puede interesar|mir[ae]|"
    r"ver también|puedes ver|también puede leer|"
    r"(?:à )?lire (?:aussi|également|la suite)|voir aussi|"
    r"leggi anche|leia (?:também|mais)|veja também|"
    r"czytaj (?:także|też|więcej)|zobacz (?:też|także)|dowiedz się więcej|"
    r"lees (?:ook|meer))\b"
)

# Caption and credit lines.
_CREDIT = re.compile(
    r"(?:(?:photo|foto|image|bild)\s+)?"
    r"(?:foto|fotos|photo|photos|bild|bilder|image|images|credit|credits|quelle|"
    r"titelbild|beitragsbild|bildquelle|bildnachweis|abbildung(?:\s+\d+)?|grafik|"
    r"crédito|créditos|imagen|zdjęcie|fot)\s*(?::|\.\s)|copyright\b"
)

# Words that make a line of controls.
_CONTROL_WORDS = frozenset(
    {
        "zurück", "back", "print", "drucken", "share", "teilen", "tweet", "email", "e-mail",
        "mail", "facebook", "twitter", "x", "linkedin", "whatsapp", "pinterest", "xing",
        "reddit", "telegram", "flipboard", "messenger", "instagram", "youtube", "tiktok",
        "kopieren", "comment", "comments", "kommentieren", "like", "likes",
        "gefällt", "mir", "bild", "anzeigen", "schließen", "vergrößern", "zoom", "close",
        "open", "read", "more", "weiterlesen", "mehr", "top", "nach", "oben", "pdf",
        "download", "herunterladen", "rezept", "merken", "speichern", "save", "bookmark",
        "anzeige", "advertisement", "werbung", "sponsored", "gesponsert", "publicidad",
        "publicité", "reklama", "ad", "ads", "compartir", "partager", "condividi",
        "compartilhe", "udostępnij", "imprimir", "imprimer", "stampa", "drukuj", "listen",
        "anhören", "audio", "vorlesen", "artikel", "article", "to", "the", "this", "on",
        "auf", "per", "via", "and", "und", "or", "oder", "de", "en", "la", "le",
    }
)  # fmt: skip
_CONTROL_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)?")


# The first words any cue can start with, so that a block whose first word is none of them
# (nearly every paragraph of an article) is passed over after one set lookup.
_READ_MORE_STARTS = (
    "read also see related more recommended continue lesen auch weiterlesen mehr passend "
    "siehe lea "
    "lee leer le te mira mire ver puedes también à lire voir leggi leia veja czytaj "
    "zobacz dowiedz lees"
)
_CREDIT_STARTS = (
    "foto fotos photo photos bild bilder image images credit credits quelle titelbild "
    "beitragsbild bildquelle bildnachweis abbildung grafik crédito créditos imagen zdjęcie "
    "fot copyright"
)
# Words that only fill a line of controls ("share on X"), never start a cue worth reading.
_FILLERS = frozenset(
    {"a", "the", "to", "this", "on", "and", "or", "und", "oder", "auf", "per", "via", "de",
     "en", "la", "x", "mir", "mail", "nach", "oben"}
)  # fmt: skip
STARTS = (
    frozenset(
        [phrase.split(" ", 1)[0] for phrase in _SECTION_EXACT]
        + [prefix.split(" ", 1)[0] for prefix in _SECTION_PREFIXES]
        + _READ_MORE_STARTS.split()
        + _CREDIT_STARTS.split()
        + list(_CONTROL_WORDS)
    )
    - _FILLERS
)
_FIRST_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def may_be_cue(first_text: str) -> bool:
    """Whether a block whose text starts with ``first_text`` may be a cue at all: its first
    word starts one, it starts with a number (``12 comments``), or it carries a copyright
    sign."""
    head = first_text.split(None, 1)
    if head:
        word = head[0].strip(_EDGES).lower()
        if word in STARTS or word.isdigit():
            return True
        if word.isalpha():
            return "©" in first_text or "(c)" in first_text.lower()
    found = _FIRST_WORD.search(first_text)
    if found is None:
        return "©" in first_text
    word = found.group(0).lower()
    return word in STARTS or word.isdigit() or "©" in first_text or "(c)" in first_text.lower()


def section_heading(text: str) -> bool:
    """Whether a heading or a line of its own opens a furniture section."""
    found = normalise(text)
    if not found or len(found) > 60:
        return False
    return (
        found in _SECTION_EXACT
        or found.startswith(_SECTION_PREFIXES)
        or _COMMENT_COUNT.fullmatch(found) is not None
    )


def read_more(text: str) -> bool:
    """Whether a short line starts with a "read more" cue."""
    return _READ_MORE.match(normalise(text)) is not None


def credit(text: str) -> bool:
    """Whether a short line is a photo caption's credit: it starts with a credit word, or
    carries a copyright sign."""
    found = normalise(text)
    if not found:
        return False
    lowered = text.lower()
    return _CREDIT.match(found) is not None or "©" in lowered or "(c)" in lowered


def controls(text: str) -> bool:
    """Whether a short line holds nothing but control words (share, print, back...)."""
    found = normalise(text)
    if not found or len(found) > 60:
        return False
    words = _CONTROL_WORD.findall(found)
    if not words:
        return False
    return all(word in _CONTROL_WORDS for word in words) and any(
        word not in ("to", "the", "this", "on", "auf", "per", "via", "and", "und", "or")
        for word in words
    )


# A full date as pages print them: 12.05.2021, 2021-05-12, 12 May 2021, May 12, 2021,
# 12. Mai 2021, 12 de mayo de 2021, 12 maja 2021.
_MONTHS = (
    r"(?:jan(?:uary|uar|vier|eiro)?|feb(?:ruary|ruar)?|f[ée]v(?:rier)?|m[aä]r(?:ch|z|s)?|"
    r"apr(?:il)?|avr(?:il)?|may|mai|ma[iy]o|jun[ei]?|juin|jul[iy]?|juil(?:let)?|"
    r"aug(?:ust)?|ao[uû]t|sep(?:t(?:ember|embre)?)?|oct(?:ober|obre)?|okt(?:ober)?|"
    r"nov(?:ember|embre)?|dec(?:ember)?|d[ée]c(?:embre)?|dez(?:ember)?|enero|febrero|"
    r"marzo|abril|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|stycznia|"
    r"lutego|marca|kwietnia|maja|czerwca|lipca|sierpnia|września|października|"
    r"listopada|grudnia)"
)
_DATE = re.compile(
    r"\b(?:\d{1,2}[./-]\d{1,2}[./-](?:19|20)\d\d|(?:19|20)\d\d-\d\d-\d\d|"
    r"\d{1,2}\.?\s+(?:de\s+)?"
    + _MONTHS
    + r"\.?\s+(?:de\s+)?(?:19|20)\d\d|"
    + _MONTHS
    + r"\.?\s+\d{1,2},?\s+(?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def dates(text: str, most: int) -> int:
    """How many full dates ``text`` shows, counting up to ``most``."""
    found = 0
    for _ in _DATE.finditer(text):
        found += 1
        if found >= most:
            break
    return found
