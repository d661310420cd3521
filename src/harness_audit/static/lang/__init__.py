"""Per-language parsing and the semantic helpers rules are written against."""


class TreeTooDeep(ValueError):
    """A file whose syntax tree is deeper than its language's ceiling: listed as unparsed, never analysed.

    Rules, recon and the symbol helpers walk along the tree, some recursively and some once per node up a chain
    (quadratic on a chain); real code stays under 40 levels, while a valid `x = f()()()…` can be thousands deep.
    """
