"""Ingest: fetch sources politely, parse every format we meet, normalise, upsert, audit."""
