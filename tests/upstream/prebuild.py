"""Build the Go oracles ahead of the tests: `make test` starts this in the background first.

On a fresh clone the Kubernetes oracles (tests/kube) take minutes to compile from an empty
build cache. Started before pytest, the build overlaps the tests that need no Go; a test that
needs an oracle waits on the same lock and finds it built (or builds it, when this failed).
Quiet and never failing: a build error is the tests' to report.
"""
from tests.upstream import driver, kube_build


def main() -> None:
    for build in (lambda: kube_build.build("schedule"), driver.build_oracle):
        try:
            build()
        except Exception:  # noqa: BLE001 - the tests report it, with its message
            pass


if __name__ == "__main__":
    main()
