"""Seed glossaries, one TOML file per track slug (``infra.toml``). Read here without the
database, so both the service (``glossary_seed``) and a data migration can use them."""

from __future__ import annotations

import tomllib
from pathlib import Path

GLOSSARY_DIR = Path(__file__).resolve().parent


def glossary_seed_terms(track_slug: str) -> list[dict]:
    """The seed terms of a track: [{en, zh, zh_alternatives, avoid}, …] ([] when none)."""
    path = GLOSSARY_DIR / f"{track_slug}.toml"
    if not path.is_file():
        return []
    with path.open("rb") as f:
        data = tomllib.load(f)
    return [
        {
            "en": term["en"].strip(),
            "zh": term["zh"].strip(),
            "zh_alternatives": [a.strip() for a in term.get("zh_alternatives", [])],
            "avoid": [a.strip() for a in term.get("avoid", [])],
        }
        for term in data.get("term", [])
    ]
