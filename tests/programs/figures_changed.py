"""The program of ``figures.py`` after a change: one cited result moved, one is gone."""


def run(seed: int = 0) -> dict:
    return {"speedup": 1.5212, "sizes": [8192, 64]}


def main(argv=None) -> int:
    print(run())
    return 0
