"""A test program that reports which environment variables it was given."""

import os


def run(seed: int = 0) -> dict:
    return {"names": sorted(os.environ), "answer": 42}


def main(argv=None) -> int:
    result = run()
    print("variables:", " ".join(result["names"]))
    return 0
