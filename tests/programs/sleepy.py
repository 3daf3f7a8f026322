"""A test program that never finishes: the verifier must stop it at its time limit."""

import time


def run(seed: int = 0) -> dict:
    while True:
        time.sleep(0.05)


def main(argv=None) -> int:
    print("starting and then hanging", flush=True)
    run()
    return 0
