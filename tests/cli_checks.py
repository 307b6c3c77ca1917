"""What the command line must say about any vocabulary file ``ubpe.load`` reads (shared by the
specification tests of the families)."""

from __future__ import annotations


def cli_encode_and_compare_agree(path: str, doc: str, ids: list[int], capsys) -> str:
    """``ubpe encode`` prints ``ids`` (the API's encoding of ``doc``), ``ubpe compare`` counts
    them on its ``native`` row beside ``fewest``, and ``ubpe inspect`` runs: its output, for the
    caller's own check."""
    from ubpe.cli import main

    assert main(["encode", path, "--text", doc]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in ids]
    assert main(["compare", path, "--text", doc, "--encoders", "native,fewest"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[2].split()[:2] == ["native", str(len(ids))] and rows[3].startswith("fewest")
    assert main(["inspect", path, "--top", "2"]) == 0
    return capsys.readouterr().out
