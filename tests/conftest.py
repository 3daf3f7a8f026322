"""Fixtures shared by the suite: personas, factories, and the backends in use."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.hashers import get_hashers
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.db import connection, transaction
from django.test import Client, TestCase
from django.utils import translation

# NumPy's BLAS on one thread, as the verifier runs the programs (deepdives.services
# _minimal_env): one thread a core spins on the reference programs' small matrices and costs
# several times the CPU, the more so beside a second xdist worker. The variables reach child
# processes (the worker, manage.py) and a NumPy imported later; one already imported is set.
for _blas_threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_blas_threads] = "1"
if "numpy" in sys.modules:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)

# PBKDF2 (the site's hasher) costs about half a second a user on CI's machine, and the suite
# makes hundreds of staff users; what it checks is who may do what, not the hash.
settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
get_hashers.cache_clear()

# Embedding a paper costs the model about half a second on one core, and the suite publishes
# hundreds of papers; the tests of semantic search turn it on (tests/test_semantic_*.py).
settings.SEARCH_VECTORS = False


def _backends() -> str:
    db = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    tasks = "Redis broker + worker" if settings.REDIS_URL else "in-process (eager)"
    cache_backend = "Redis" if settings.REDIS_URL else "local memory"
    return f"backends: database={db}, tasks={tasks}, cache={cache_backend}"


def pytest_report_header(config) -> str:
    return _backends()


def pytest_terminal_summary(terminalreporter) -> None:
    terminalreporter.write_line(_backends())


@pytest.fixture(autouse=True)
def _clear_cache():
    from digest_site import cache_tags

    # The database is rolled back between tests, so the same rows come back with the same
    # keys: each test starts with no page and no tag version kept.
    cache.clear()
    cache_tags.forget()
    yield
    cache.clear()
    cache_tags.forget()


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts in the default language: a request to a /zh/ page leaves Chinese
    active in the test's thread, and the next test's reverse() would give /zh/ URLs."""
    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture
def unreachable_cache(settings):
    """The cache is a Redis nobody runs: every call to it fails."""
    from tests.cache_servers import free_port, redis_caches

    settings.CACHES = redis_caches(free_port())


@pytest.fixture
def anonymous() -> Client:
    return Client()


def _staff(django_user_model, username: str, codenames: list[str]):
    user = django_user_model.objects.create_user(username, f"{username}@example.org", "pw")
    user.is_staff = True
    user.save()
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


EDIT_CODENAMES = [
    f"{action}_{model}"
    for model in (
        "daily",
        "dailyentry",
        "weeklyroundup",
        "paper",
        "summary",
        "deepdive",
        "track",
        "topic",
    )
    for action in ("view", "add", "change", "delete")
]


@pytest.fixture
def editor(django_user_model):
    """Staff who edit and publish dailies and deep dives."""
    return _staff(
        django_user_model,
        "editor",
        [*EDIT_CODENAMES, "publish_daily", "publish_deepdive", "view_author", "change_author"],
    )


@pytest.fixture
def contributor(django_user_model):
    """Staff who edit dailies but may not publish them."""
    return _staff(django_user_model, "contributor", EDIT_CODENAMES)


@pytest.fixture
def editor_client(editor) -> Client:
    client = Client()
    client.force_login(editor)
    return client


@pytest.fixture
def contributor_client(contributor) -> Client:
    client = Client()
    client.force_login(contributor)
    return client


def _commits(item: pytest.Item) -> bool:
    """Whether a test runs outside a transaction (it commits, and pytest-django flushes the
    database after it), decided as pytest-django decides when it orders the tests; or reads
    the committed demo of ``demo_site``, which pytest-django orders with the tests that use
    no database, after all those."""
    marker = item.get_closest_marker("django_db")
    if marker and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")):
        return True
    fixtures = set(getattr(item, "fixturenames", ()))
    return bool({"transactional_db", "live_server", "demo_site"} & fixtures)


# The module's demo transaction while it is open, with the blocker that lets it be closed.
_open_demo: list[tuple[transaction.Atomic, object]] = []


def _close_module_demo() -> None:
    while _open_demo:
        atomic, blocker = _open_demo.pop()
        with blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # pytest-django runs the tests that commit after all the others, so a module's demo
    # transaction is normally closed by then; when the same module's tests are next to each
    # other across that line (one module, or one xdist worker's share), close it here.
    if _commits(item):
        _close_module_demo()


REFERENCE_TESTS = Path(__file__).resolve().parent / "reference"


def _uses_demo(item: pytest.Item) -> bool:
    return bool(
        {"demo", "indexed_demo", "demo_deep_dives"} & set(getattr(item, "fixturenames", ()))
    )


def pytest_itemcollected(item: pytest.Item) -> None:
    names = set(getattr(item, "fixturenames", ()))
    if "demo_site" in names and (
        item.get_closest_marker("django_db") or {"db", "transactional_db", "live_server"} & names
    ):
        # Its database work would be rolled back or flushed under the module's shared demo,
        # and pytest-django would run it among the tests that need the migrations' rows.
        raise pytest.UsageError(f"{item.nodeid}: demo_site with a database of its own")
    # The slow kinds `make test-fast` leaves out (before -m deselects).
    if "worker" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.worker)
    if REFERENCE_TESTS in item.path.parents:
        item.add_marker(pytest.mark.programs)


def _uses_db(item: pytest.Item) -> bool:
    # A ``demo_site`` test reads a committed demo that is flushed after its module: it must
    # not join a module's first database test (_with_their_module) ahead of other modules'.
    return bool(item.get_closest_marker("django_db")) or bool(
        {"db", "transactional_db", "live_server", "demo_site"}
        & set(getattr(item, "fixturenames", ()))
    )


def _with_their_module(items: list[pytest.Item]) -> list[pytest.Item]:
    """pytest-django puts the tests that use no database after all the others, away from
    their module's: a module-scoped fixture they share with its database tests is then
    made twice (the cross-lingual corpus was embedded again: about a minute). Each joins
    its module's first database test instead; it touches no database, so it may run there."""
    first: dict[pytest.Module, pytest.Item] = {}
    for item in items:
        if _uses_db(item):
            first.setdefault(item.getparent(pytest.Module), item)
    joining: dict[pytest.Item, list[pytest.Item]] = {}
    for item in items:
        module = item.getparent(pytest.Module)
        if not _uses_db(item) and module in first:
            joining.setdefault(first[module], []).append(item)
    moved = {item for group in joining.values() for item in group}
    out = []
    for item in items:
        out += joining.get(item, [])
        if item not in moved:
            out.append(item)
    return out


def pytest_collection_finish(session: pytest.Session) -> None:
    # What the selected tests will need and takes long to make is queued in the background
    # lane (tests/background.py) now: each selected module's ``prebuild(config)``, then the
    # reference programs' runs, which are read late (_programs_late). Under xdist both
    # cores run tests already: the fixtures make what they need when they need it.
    config = session.config
    if config.option.collectonly or hasattr(config, "workerinput"):
        return
    from tests import background

    background.open_lane()
    for module in dict.fromkeys(getattr(item, "module", None) for item in session.items):
        prebuild = getattr(module, "prebuild", None)
        if callable(prebuild):
            prebuild(config)
    names = _programs_wanted(session.items)
    if names:
        from deepdives import registry, services

        for name in names:
            _program_runs[name] = background.submit(services.run_program, registry.PROGRAMS[name])
    config.add_cleanup(background.close_lane)  # first of the cleanups: before their folders go


def _reads_program_runs(item: pytest.Item) -> bool:
    return "program_runs" in getattr(item, "fixturenames", ())


def _programs_late(items: list[pytest.Item]) -> list[pytest.Item]:
    """The tests that read the reference programs' runs as late as their kind allows, so
    that the background lane has made the runs by then: one in a transaction last of those
    (before any test that commits, which leaves the database without the migrations'
    rows), any other last of all."""
    readers = [item for item in items if _reads_program_runs(item)]
    rest = [item for item in items if not _reads_program_runs(item)]
    in_transaction = [item for item in readers if _uses_db(item) and not _commits(item)]
    others = [item for item in readers if item not in in_transaction]
    cut = next((n for n, item in enumerate(rest) if _commits(item)), len(rest))
    return rest[:cut] + in_transaction + rest[cut:] + others


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Within each module's run of tests (pytest-django has already put the tests that commit
    # after the others), the demo's tests come last: the demo, loaded once for them, stays
    # until the module ends, and the module's other tests need an empty database.
    items[:] = _with_their_module(items)
    runs = itertools.groupby(items, key=lambda item: item.getparent(pytest.Module))
    items[:] = [item for _, run in runs for item in sorted(run, key=_uses_demo)]
    items[:] = _programs_late(items)


@pytest.fixture(scope="module")
def _module_demo(request, django_db_setup, django_db_blocker):
    """The demo loaded once for a test module, in a transaction that each test's own nests
    in (a savepoint, rolled back after the test) and that is rolled back after the module;
    the module's tests that use no demo have run before it (see above).

    Its on-commit work (the search index, the content version) is run when any test of the
    module asks for ``indexed_demo``: then the module's ``demo`` tests see it done too; the
    deep dives are loaded with it when any asks for ``demo_deep_dives``.
    Loading it costs one to three seconds, which ~250 tests paid each (issue 33).
    """
    if _commits(request._pyfuncitem):  # it will load the demo itself, and commit it
        yield None
        return
    module = request.node
    asked = {
        name
        for item in request.session.items
        if item.getparent(pytest.Module) is module
        for name in item.fixturenames
    }
    from dailies.demo import demo_load
    from deepdives.demo import demo_load_deep_dives

    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        _open_demo.append((atomic, django_db_blocker))
        with TestCase.captureOnCommitCallbacks(execute="indexed_demo" in asked):
            counts = demo_load()
            if "demo_deep_dives" in asked:
                counts = {**counts, "deep_dives": demo_load_deep_dives()}
    yield counts
    _close_module_demo()


@pytest.fixture
def demo(request, _module_demo, db):
    """The demo content, each test in its own rolled-back transaction; returns its counts."""
    if _commits(request.node):
        from dailies.demo import demo_load

        return demo_load()
    return _module_demo


@pytest.fixture
def demo_deep_dives(request, demo):
    """The demo with its deep dives, as ``manage.py load_demo`` leaves it; returns the counts,
    with ``deep_dives``. Loaded with the module's demo, so in a module that asks for it the
    ``demo`` tests see the deep dives too (loading them cost each test about 0.2 s of CPU)."""
    if _commits(request.node):
        from deepdives.demo import demo_load_deep_dives

        return {**demo, "deep_dives": demo_load_deep_dives()}
    return demo


@pytest.fixture
def indexed_demo(request, _module_demo, db, django_capture_on_commit_callbacks):
    """The demo, with the on-commit work run: the search index holds its 16 papers."""
    if _commits(request.node):
        from dailies.demo import demo_load

        with django_capture_on_commit_callbacks(execute=True):
            return demo_load()
    return _module_demo


def _programs_wanted(items: list[pytest.Item]) -> list[str]:
    """The programs this session's tests read a run of: a program's own module's, or all of
    them for any other test (the every-program check)."""
    from deepdives import registry

    wanted: set[str] = set()
    for item in items:
        if "program_runs" not in getattr(item, "fixturenames", ()):
            continue
        name = item.path.stem.removeprefix("test_")
        if name not in registry.PROGRAMS:
            return list(registry.PROGRAMS)
        wanted.add(name)
    return [name for name in registry.PROGRAMS if name in wanted]


# Each wanted program's run, queued in the background lane when the session's tests are known.
_program_runs: dict[str, Future] = {}


@pytest.fixture(scope="session")
def program_runs(request) -> dict:
    """Each registered reference program run once for the session as the verifier runs it
    (``services.run_program``: a child process under its limits): in the background lane,
    one at a time while the tests before run; those it has not started by now, here, side
    by side on the cores left.

    The every-program check and each program's module of tests read the same run; each used
    to run again in-process for its module (issue 33)."""
    from deepdives import registry, services

    names = _programs_wanted(request.session.items)
    here = [n for n in names if n not in _program_runs or _program_runs[n].cancel()]
    workers = max(1, (os.cpu_count() or 1) - (len(here) < len(names)))
    programs = [registry.PROGRAMS[n] for n in here]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        made = dict(zip(here, pool.map(services.run_program, programs), strict=True))
    return {n: made[n] if n in made else _program_runs[n].result() for n in names}


# The database the settings name, before pytest-django points them at its test copy: the
# developer's own (VAR_DIR's SQLite file, or DATABASE_URL's).
CONFIGURED_DATABASE = str(settings.DATABASES["default"]["NAME"])


def is_test_database(settings_dict: dict, configured: str = CONFIGURED_DATABASE) -> bool:
    """Whether the settings name a database pytest-django made for this run: an in-memory
    SQLite one, or one whose name starts with ``test_`` (any xdist suffix after), and not
    the one the settings named before the run."""
    from django.db.backends.sqlite3.creation import DatabaseCreation

    name = str(settings_dict["NAME"])
    if name == configured:
        return False
    if settings_dict["ENGINE"].endswith("sqlite3") and DatabaseCreation.is_in_memory_db(name):
        return True
    return Path(name).name.startswith("test_")


def refuse_unless_test_database(settings_dict: dict, configured: str = CONFIGURED_DATABASE):
    if not is_test_database(settings_dict, configured):
        raise RuntimeError(f"refusing to write into {settings_dict['NAME']!s}: not a test database")


@pytest.fixture(scope="session")
def _demo_site_database(django_db_setup, django_db_blocker):
    """The test database for ``demo_site``: pytest-django makes one only when some selected
    test asks for the database by its marks or fixtures, which a ``demo_site`` test does not
    (see demo_site), so when none does it is made here, for the session."""
    if is_test_database(connection.settings_dict):
        yield
        return
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        made = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    yield
    with django_db_blocker.unblock():
        teardown_databases(made, verbosity=0)


@pytest.fixture(scope="module")
def demo_site(request, _demo_site_database, django_db_blocker):
    """The URL of a live server with the demo and its deep dives committed, once for a test
    module of browser tests that only read them (each test loading them cost 14 to 25 s under
    load); flushed after the module, as pytest-django flushes after a transactional test.

    The server is the module's own: a test that asks for pytest-django's ``live_server``
    gets a transactional database, flushed after it, which would take the demo with it.
    The database stays open to the server's thread while the module runs (the test itself
    asks for no database)."""
    from django.core.management import call_command
    from pytest_django.live_server_helper import LiveServer

    from dailies.demo import demo_load
    from deepdives.demo import demo_load_deep_dives

    with django_db_blocker.unblock():
        refuse_unless_test_database(connection.settings_dict)
        address = request.config.getvalue("liveserver")
        server = LiveServer(address or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS") or "localhost")
        server._live_server_modified_settings.enable()
        try:
            demo_load()
            demo_load_deep_dives()
            yield server.url
        finally:
            server._live_server_modified_settings.disable()
            server.stop()
            refuse_unless_test_database(connection.settings_dict)
            call_command("flush", verbosity=0, interactive=False, reset_sequences=False)
            # On PostgreSQL a connection left open here outlived the session and stopped
            # pytest-django dropping the test database.
            connection.close()


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium through Playwright, launched once for a test module; each test opens
    its own context (launching it cost each browser test about 1.3 s of CPU).

    While Playwright's sync API is open its event loop counts as running in this thread (its
    dispatcher waits in a greenlet), so Django would refuse the tests' own database work (a
    test's demo, the flush after it) as ORM calls inside an event loop. Nothing runs on that
    loop while a test's code does, so the check is lifted while the module's browser is open."""
    from playwright.sync_api import sync_playwright

    from tests.test_browser import ARGS, CHROMIUM

    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def eager_tasks():
    """Run Celery tasks in-process for one test, whatever broker is configured.

    For tests of what a task does; tests/test_celery_worker.py covers the real worker.
    """
    from digest_site.celery import app

    previous = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = previous


@pytest.fixture
def is_postgres() -> bool:
    return connection.vendor == "postgresql"


@pytest.fixture
def fast_ingest(settings):
    """Ingest with short timeouts, backoffs and arXiv spacing, so misbehaving-server tests
    finish in seconds; the logic is the production logic."""
    settings.ARXIV_MIN_INTERVAL = 0.05
    settings.INGEST_FETCH_POLICY = {
        "connect_timeout": 2.0,
        "read_timeout": 0.6,
        "attempts": 3,
        "backoff_base": 0.05,
        "backoff_cap": 0.2,
        "retry_after_cap": 2.0,
    }
    return settings


@pytest.fixture
def recorded_server(settings):
    """A real server on 127.0.0.1, which ingest may fetch from (it refuses private hosts)."""
    from tests.recorded_server import RecordedServer

    settings.INGEST_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    with RecordedServer() as server:
        yield server


@pytest.fixture
def llm_server():
    """A real chat-completions server on 127.0.0.1 answering with recorded replies."""
    from papers import llm_client
    from tests.llm_server import LLMServer

    # What a provider answered in is remembered per process; a port may be reused.
    llm_client._answering_format.clear()
    with LLMServer() as server:
        yield server


ROOT = Path(__file__).resolve().parent.parent


def _test_database_url() -> str:
    """The URL of the database this test run actually uses (pytest-django's test_ copy)."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture
def worker_env() -> dict[str, str]:
    """Extra environment for the worker process; a test module overrides it (e.g. to point
    the worker at a recorded LLM server)."""
    return {}


@pytest.fixture
def worker(transactional_db, tmp_path, worker_env):
    """A real Celery worker process on Redis, using this run's PostgreSQL test database.

    Its log goes to a file (a pipe nobody reads would fill up and stall the worker)."""
    env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(),
        "REDIS_URL": settings.REDIS_URL,
        **worker_env,
    }
    env["INGEST_ALLOWED_PRIVATE_HOSTS"] = "127.0.0.1"  # the recorded server
    log_path = tmp_path / "worker.log"
    log_file = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "digest_site",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--hostname",
            f"test-{os.getpid()}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    try:
        from digest_site.celery import app

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"worker exited early:\n{log_path.read_text()}")
            if app.control.ping(timeout=1.0):
                break
        else:
            pytest.fail("worker did not answer a ping within 60 s")
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log_file.close()
        connection.close()


@pytest.fixture
def smtp_server(settings):
    """A real SMTP server on 127.0.0.1 that stores what it receives; Django mails to it."""
    from tests.smtp_server import SMTPServer

    with SMTPServer() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = server.host, server.port
        settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.EMAIL_TIMEOUT = 5
        yield server
