import pytest

from tests.upstream.driver import Oracle, OracleUnavailable, build_oracle, go_binary


@pytest.fixture(scope="session")
def oracle():
    """Kubernetes' own allocator in one batch process; the tests that need it skip without Go."""
    if go_binary() is None:
        pytest.skip("Go is not installed: the upstream differential tests (Kubernetes' allocator as oracle) "
                    "are skipped; the regressions still run against their stored upstream answers")
    try:
        binary = build_oracle()
    except OracleUnavailable as exc:
        pytest.fail(str(exc))
    with Oracle(binary) as process:
        yield process


@pytest.fixture(scope="session")
def validator():
    """kube-apiserver 1.37.2's create path in one batch process; the tests that need it skip without Go."""
    from tests.upstream.apiserver_driver import Validator, ValidatorUnavailable, build_validator
    from tests.upstream.apiserver_driver import go_binary as go

    if go() is None:
        pytest.skip("Go is not installed: the apiserver differential tests (kube-apiserver's validation as "
                    "oracle) are skipped; the validation regressions still run against their stored answers")
    try:
        binary = build_validator()
    except ValidatorUnavailable as exc:
        pytest.fail(str(exc))
    with Validator(binary) as process:
        yield process


@pytest.fixture(scope="session")
def gate_oracle():
    """kube-scheduler 1.37.2's feature-gate library (tests/kube/cmd/gates) in one batch process."""
    from tests.upstream import kube_gates

    try:
        kube_gates.build()
    except kube_gates.Unavailable as exc:
        pytest.skip(str(exc))
    process = kube_gates.GateOracle()
    yield process
    process.close()


@pytest.fixture(scope="session")
def scheduler():
    """kube-scheduler 1.37.2's framework (tests/kube/cmd/schedule) in one batch process; the tests that
    need it skip without Go (their stored regressions still run)."""
    from tests.upstream.scheduler import Scheduler, SchedulerUnavailable, build

    try:
        binary = build()
    except SchedulerUnavailable as exc:
        if "not installed" in str(exc):
            pytest.skip("Go is not installed: the comparison with kube-scheduler 1.37.2 is skipped; the stored "
                        "regressions (tests/upstream/regressions/pods, .../workloads) still run")
        pytest.fail(str(exc))
    with Scheduler(binary) as process:
        yield process
