"""The public read API: dailies, papers and topics as JSON (``/api/v1/…``).

Read-only viewsets over the published content only — the same querysets the pages use, so
nothing reaches the API that the HTML would not show. URLs are in ``dailies/api.py``.
"""
