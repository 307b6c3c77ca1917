"""A 0.3.0 model's mapper and weights read the usual way (`ubpe.io.ubpe030._usual_entries`,
C loops) give what the field-by-field reading gives (`_checked_entries`), and nothing for a
file that reading refuses: random small mappers, right and wrong."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.errors import ModelFormatError
from ubpe.io.ubpe030 import _checked_entries, _usual_entries

ITEMS = st.one_of(st.integers(-2, 9), st.booleans(), st.sampled_from([1.0, "3", None, 2 ** 70]))
SEQS = st.one_of(st.lists(ITEMS, max_size=4), st.lists(st.integers(0, 9), min_size=1, max_size=4),
                 st.tuples(st.integers(0, 9), st.integers(0, 9)).map(list), st.integers(0, 9), st.just("12"))
WEIGHTS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.just("x"), st.booleans())


@st.composite
def files(draw):
    n_base = draw(st.integers(1, 5))
    n = draw(st.integers(0, 5))
    keys = [str(n_base + k) for k in range(n)]
    if draw(st.booleans()):  # a key missing, doubled, out of order or not a number
        keys = draw(st.permutations(keys + draw(st.lists(st.sampled_from(["0", "x", str(n_base), "99"]), max_size=2))))
    mapper = {key: draw(SEQS) for key in keys}
    weights = {key: draw(WEIGHTS) for key in (keys if draw(st.booleans()) else draw(st.permutations(keys)))}
    return mapper, weights, n_base


@st.composite
def usual_files(draw):
    """Files as a writer makes them (tokens in order, pairs or pieces of ints, float weights),
    some with one field spoiled."""
    n_base, n = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    classic = draw(st.booleans())
    limit = n_base + n if classic else n_base
    mapper = {str(n_base + k): draw(st.lists(st.integers(0, limit - 1), min_size=2, max_size=2 if classic else 4))
              for k in range(n)}
    weights = {key: draw(st.floats(-5, 5)) for key in mapper}
    key = draw(st.sampled_from(sorted(mapper)))
    spoil = draw(st.sampled_from(["none", "none", "self", "high", "negative", "weight", "short", "bool"]))
    if spoil == "self":
        mapper[key][0] = int(key)
    elif spoil == "high":
        mapper[key][-1] = n_base + n
    elif spoil == "negative":
        mapper[key][0] = -1
    elif spoil == "weight":
        weights[key] = float("nan")
    elif spoil == "short":
        mapper[key] = mapper[key][:1]
    elif spoil == "bool":
        mapper[key][0] = True
    return mapper, weights, n_base


@settings(max_examples=2000, deadline=None)
@given(st.one_of(files(), usual_files()), st.booleans())
def test_the_usual_reading_agrees_with_the_checked_one(file, classic):
    mapper, weights, n_base = file
    usual = _usual_entries(mapper, weights, n_base, classic)
    try:
        checked = _checked_entries(mapper, weights, n_base, classic)
    except ModelFormatError:
        assert usual is None
        return
    if usual is not None:
        assert usual == checked
        assert all(type(s) is tuple for s in usual[0]) and all(type(w) is float for w in usual[1])
