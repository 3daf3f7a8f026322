"""Drafting the writing of a daily: per-language headlines, summaries, takeaways, headline
numbers and intros, by a machine drafter, checked against the source (``grounding``) and
stored with their provenance (``service``)."""
