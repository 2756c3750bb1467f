"""Reading an explorer page's embedded data (what its script reads)."""

import json
import re


def page_data(page) -> dict:
    match = re.search(r'<script id="eqgraph-data" type="application/json">(.*?)</script>', page.html, re.S)
    return json.loads(match.group(1))


def class_holding(data: dict, op: str) -> dict:
    """The e-class with a member of constructor ``op`` (the first)."""
    node = next(n for n in data["nodes"] if n["op"] == op)
    return data["classes"][node["cls"]]


def member(data: dict, eclass: dict, op: str) -> dict:
    return next(data["nodes"][n] for n in eclass["nodes"] if data["nodes"][n]["op"] == op)
