"""Texts that stress the pre-tokenizer patterns, shared by the scanner's kernel tests and the
byte-level specification tests."""

from hypothesis import strategies as st

TRICKY = (
    "aZſsSdDmMtTlLvVrReE'' \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\u200b"
    "09١٢½Ⅻ.,;!?-_/\\\"#(){}*é\u0301中文🎉👍🏽ÅK"
)


# o200k's letter classes overlap ([\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]* then [\p{Ll}\p{Lm}\p{Lo}\p{M}]+):
# Lu, Lt, Ll, Lm and Lo letters of several scripts, combining marks (Mn, Mc, Me), digits of
# several scripts, contractions in mixed case, and what ` ?[^\s\p{L}\p{N}]+[\r\n/]*` ends on.
O200K_ATOMS = list(
    "aAzZsSſdDmMtTlLvVrReEßÉéΣσςДдǅǈᾈʰʼˆ々ー中カ한ª"  # letters: Lu Ll Lt Lm Lo
    "\u0301\u0308\u0903\u20dd"  # marks: Mn Mn Mc Me
    "09١٢४½Ⅻ²"  # digits and other numbers
    ".,;!?-_#(){}*\"\\/'"  # punctuation, the slash and the apostrophe
    " \t\n\r\x0b\x0c\x85\xa0\u2028\u3000\u200b🎉👍🏽"
) + ["'s", "'S", "'t", "'T", "'re", "'RE", "'rE", "'ve", "'Ve", "'m", "'M", "'ll", "'Ll", "'LL",
     "'d", "'D", "'ſ", "Hello", "HELLO", "ǅemal", "DŽ", "ʰA", "Aʰ", "AB\u0301", "a/\n/", " !/\r\n"]
o200k_texts = st.lists(st.sampled_from(O200K_ATOMS), max_size=25).map("".join)
