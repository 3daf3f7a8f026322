"""Scoring candidates for a track: a rubric of named criteria, each 1–5, and a total on
1.00–5.00 in steps of 0.05. The offline rubric scorer is the default; an LLM judge is used
when one is configured."""
