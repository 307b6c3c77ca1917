"""``ubpe decode``: token ids (plain lines, JSON lists or ``encode``'s records) back to documents."""

from __future__ import annotations

import argparse
import json
import sys

from .inputs import CLIError, ids_of_line, input_files, load_model, parse_ints, read_file, split_docs


def run(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    if args.ids is not None:
        sequences = [parse_ints(line, "--ids") for line in args.ids]
    else:
        names = args.inputs or (["-"] if not sys.stdin.isatty() else [])
        if not names:
            raise CLIError("no input: give files of ids, '-' for stdin, or --ids")
        sequences = [
            ids_of_line(line, f"{name}:{number}")
            for name in input_files(names, "*")
            for number, line in enumerate(split_docs(read_file(name), "line"), start=1)
        ]
    text = model.symbol_type is str
    for tokens in sequences:
        decoded = model.decode(tokens)
        if args.format == "json":
            sys.stdout.write(json.dumps(decoded, ensure_ascii=False) + "\n")
        else:
            sys.stdout.write((decoded if text else " ".join(map(str, decoded))) + "\n")
    return 0
