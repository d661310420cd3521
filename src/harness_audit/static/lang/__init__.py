"""Per-language parsing and the semantic helpers rules are written against."""


class TreeTooDeep(ValueError):
    """A file whose syntax tree is deeper than its language's ceiling: listed as unparsed, never analysed.

    Rules, recon and the symbol helpers walk along the tree, some recursively and some once per node up a chain
    (quadratic on a chain); real code stays under 40 levels, while a valid `x = f()()()…` can be thousands deep.
    """


_GLOBAL_FETCH = frozenset({"fetch", "window.fetch", "globalThis.fetch", "self.fetch"})


def same_origin_request(callee: str, url_text: str) -> bool:
    """A browser `fetch` of a path on the page's own server (`fetch("/api/chat")`, `` fetch(`/api/run/${id}`) ``):
    the request goes to the app's own backend, never straight to a provider, whatever the path looks like. `callee`
    is the called name, `url_text` the URL argument as written (quotes included). A path handed to a client made
    with a base URL (`client.post("/chat/completions")`) is not one: only the global `fetch` has no base."""
    text = url_text.strip().lstrip("'\"`")
    return callee in _GLOBAL_FETCH and text.startswith("/") and not text.startswith("//")
