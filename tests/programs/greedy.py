"""A test program that asks for far more memory than its limit allows."""


def run(seed: int = 0) -> dict:
    block = bytearray(3 * 1024 * 1024 * 1024)
    return {"size": len(block)}


def main(argv=None) -> int:
    run()
    return 0
