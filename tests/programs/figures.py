"""A test program whose results a deep dive cites."""


def run(seed: int = 0) -> dict:
    return {"speedup": 1.4066, "attention": {"max_abs_err": 9.284e-07}, "sizes": [8192, 64]}


def main(argv=None) -> int:
    print(run())
    return 0
