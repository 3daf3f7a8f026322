"""Pages against a static file, in production mode: gunicorn on PostgreSQL + Redis, wrk.

Creates a scratch database (``bench_pages``), migrates it and loads the demo, collects the
static files, renders the 10-28 daily page and writes its bytes (with .gz and .br beside
them, as collectstatic does) as a static file. Then, with ``wrk`` against gunicorn (2 sync
workers), it measures in one run:

- the static file through WhiteNoise (the yardstick),
- the daily page and the index from the page cache,
- the same two pages rendered on every request (a second gunicorn with ``PAGE_CACHE=0``),
- 64 connections for 60 s on the cached daily page,

and prints req/s, the ratio to the static file, p50/p99 latency and the non-2xx count.
Then, also in the same run:

- the daily page and the static file served by Varnish (deploy/varnish/default.vcl, vmod
  xkey) in front of the cached gunicorn;
- editing hours: the 20 most-visited pages at 64 connections for ``BENCH_EDIT_SECONDS``
  while an editor makes 20 edits through the admin (a summary's headline, over HTTP as a
  browser posts it), on this checkout and on the commit before the page cache was retired
  by tag (``BENCH_BEFORE_REV``, by default the parent of the commit that added
  digest_site/cache_tags.py): p50/p99 and how many pages were rendered per edit.
Every request says ``Accept-Encoding: gzip`` and ``X-Forwarded-Proto: https`` (as behind
the TLS proxy production expects). It also prints the server time of an uncached render of
the daily and the index, measured in-process, and how fast the machine's Python is (a fixed
loop), since those times are absolute.

    .venv/bin/python bench/pages.py

``BENCH_DATABASE_URL`` (default postgres://postgres@127.0.0.1:5432/bench_pages),
``BENCH_REDIS_URL`` (default redis://127.0.0.1:6379/12), ``BENCH_SECONDS`` (10 per run),
``BENCH_LONG_SECONDS`` (60), ``BENCH_WARM_SECONDS`` (2: the unreported run before each
measured one, 0 for none), ``BENCH_START_SECONDS`` (120: how long gunicorn may take to
start), ``BENCH_EDIT_SECONDS`` (60; 0 skips editing hours). Needs ``wrk`` and, for the
Varnish runs, ``varnishd`` with vmod xkey (``apt-get install -y wrk varnish
varnish-modules``; installed if missing and apt-get is available).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
DATABASE_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_pages"
)
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
LONG_SECONDS = int(os.environ.get("BENCH_LONG_SECONDS", "60"))
# Each measured run follows an unreported one of the same requests: a worker's first renders
# of a page (its templates compiled) are its
# start-up, not what the page costs: they put 250-300 ms at the p99 of the first run on a
# fresh gunicorn, and 10-20% off its req/s (uncached daily, bench machine of 2026-12-03).
WARM_SECONDS = int(os.environ.get("BENCH_WARM_SECONDS", "2"))
# How long gunicorn may take to answer its first request (a loaded machine boots slowly).
START_SECONDS = int(os.environ.get("BENCH_START_SECONDS", "120"))
WORKERS = 2
DAILY = "/en/infra/2026-10-28/"
INDEX = "/en/papers/"
STATIC = "/static/bench/daily.html"
HEADERS = {"Accept-Encoding": "gzip", "X-Forwarded-Proto": "https"}
TARGETS = {
    "cached daily": 0.8,
    "cached index": 0.8,
    "uncached daily": 0.1,
    "Varnish: daily": 1.0,
}
EDITOR_PASSWORD = "bench-editor-password-1"
EDIT_SECONDS = int(os.environ.get("BENCH_EDIT_SECONDS", "60"))
EDITS = 20
VARNISHD = shutil.which("varnishd") or "/usr/sbin/varnishd"
VCL = ROOT / "deploy" / "varnish" / "default.vcl"
# gunicorn's entry point for editing hours: the site's WSGI application, counting each
# request that gets past the page cache to a view (a render) in Redis, the admin's aside.
COUNTING_WSGI = """
import os

import redis
from django.core.handlers.base import BaseHandler

_counter = redis.Redis.from_url(os.environ["BENCH_COUNTER_URL"])
_get_response = BaseHandler._get_response


def _counted(self, request):
    if not request.path.startswith("/admin/"):
        _counter.incr("bench:renders")
    return _get_response(self, request)


# Before the application is made: its handler binds the method when it loads the middleware.
BaseHandler._get_response = _counted

from digest_site.wsgi import application  # gunicorn's entry point
"""
# The 20 most-visited public pages of the demo: both home pages and indexes, the three
# newest dailies in both languages, the archive, the topics, the feed, a deep dive and
# the papers of those dailies.
VISITED = """
import django
django.setup()
from django.urls import reverse
from django.utils import translation
from dailies.models import Daily, DailyEntry
from deepdives.models import DeepDive
newest = list(Daily.objects.published().order_by("-date")[:3])
paths = []
track = newest[0].track.slug
for language in ("en", "zh"):
    with translation.override(language):
        paths += [f"/{language}/", f"/{language}/papers/", reverse("dailies:track", args=[track])]
        paths += [daily.get_absolute_url() for daily in newest]
with translation.override("en"):
    paths += ["/en/topics/", reverse("dailies:track_feed", args=[track])]
    paths += [d.get_absolute_url() for d in DeepDive.objects.published()[:1]]
    entries = DailyEntry.objects.filter(daily__in=newest).select_related("paper")
    papers = [reverse("dailies:paper", args=[e.paper.slug]) for e in entries]
    paths += list(dict.fromkeys(papers))[: 20 - len(paths)]
lead = DailyEntry.objects.filter(daily=newest[0], is_lead=True).select_related("paper").first()
print("\\n".join(paths[:20]))
print(lead.paper.summaries.get(language="en").pk)
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ensure_wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    if shutil.which("apt-get"):
        print("wrk is missing: apt-get install -y wrk")
        subprocess.run(["apt-get", "install", "-y", "wrk"], check=False)
        found = shutil.which("wrk")
    if not found:
        sys.exit("wrk is needed: install it with `apt-get install -y wrk` (Debian's package)")
    return found


def _scratch_database(url: str = DATABASE_URL) -> None:
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _environ(work: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "digest_site.settings",
        "DJANGO_ENV": "production",
        "SECRET_KEY": "bench-" + "x" * 50,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": DATABASE_URL,
        "REDIS_URL": REDIS_URL,
        "EMAIL_URL": "console://",
        "CACHE_KEY_PREFIX": "bench-pages",
        "STATIC_ROOT": str(work / "static"),
        "VAR_DIR": str(work / "var"),
        "LOG_LEVEL": "WARNING",
        **extra,
    }


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True)


def _write_static_copy(env: dict[str, str], work: Path) -> bytes:
    """The daily page's bytes as rendered for a reader, written as a static file."""
    import brotli

    code = (
        "import django,sys;django.setup();from django.test import Client;"
        f"r=Client().get({DAILY!r},HTTP_X_FORWARDED_PROTO='https',HTTP_HOST='127.0.0.1');"
        "assert r.status_code==200,r.status_code;sys.stdout.buffer.write(r.content)"
    )
    done = subprocess.run([PYTHON, "-c", code], cwd=ROOT, env=env, capture_output=True)
    if done.returncode:
        sys.exit(f"rendering {DAILY} failed:\n{done.stderr.decode()[-3000:]}")
    body = done.stdout
    target = work / "static" / "bench" / "daily.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(body)
    import gzip

    (target.parent / "daily.html.gz").write_bytes(gzip.compress(body, 9, mtime=0))
    (target.parent / "daily.html.br").write_bytes(brotli.compress(body))
    return body


class Gunicorn:
    def __init__(
        self, env: dict[str, str], log: Path, *, root: Path = ROOT, app: str = "digest_site.wsgi"
    ) -> None:
        self.port = _free_port()
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "gunicorn",
                app,
                "--workers",
                str(WORKERS),
                "--bind",
                f"127.0.0.1:{self.port}",
                "--access-logfile",
                "-" if os.environ.get("BENCH_ACCESS_LOG") else "/dev/null",
            ],
            cwd=root,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            try:
                self.get(STATIC)
                return
            except urllib.error.HTTPError:  # it answers (the editing runs have no copy)
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        sys.exit(f"gunicorn did not start; see {log}")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path: str) -> tuple[int, dict, bytes]:
        request = urllib.request.Request(self.url(path), headers=HEADERS)
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * _UNITS[unit]


def wrk(
    binary: str,
    url: str,
    *,
    connections: int,
    seconds: int,
    script: Path | None = None,
    warm: bool = True,
) -> dict:
    """``wrk`` on ``url`` for ``seconds``, after an unreported run of ``WARM_SECONDS``."""
    command = [binary, "-t2", f"-c{connections}", "--latency", "--timeout", "2s"]
    for name, value in HEADERS.items():
        command += ["-H", f"{name}: {value}"]
    if script is not None:
        command += ["-s", str(script)]
    if WARM_SECONDS and warm:
        subprocess.run([*command, f"-d{WARM_SECONDS}s", url], check=True, capture_output=True)
    out = subprocess.run(
        [*command, f"-d{seconds}s", url], check=True, capture_output=True, text=True
    ).stdout
    result = {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50": _ms(re.search(r"\s50%\s+(\S+)", out).group(1)),
        "p99": _ms(re.search(r"\s99%\s+(\S+)", out).group(1)),
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),
        "non_2xx": int(m.group(1))
        if (m := re.search(r"Non-2xx or 3xx responses: (\d+)", out))
        else 0,
        "errors": sum(
            int(n)
            for n in re.findall(
                r"(?:connect|read|write|timeout) (\d+)", out.split("Socket errors")[-1]
            )
        )
        if "Socket errors" in out
        else 0,
    }
    return result


class Varnish:
    """varnishd in the foreground with the deployed VCL, its backend the given port."""

    def __init__(self, backend_port: int, work: Path) -> None:
        vcl = work / "default.vcl"
        vcl.write_text(VCL.read_text().replace('.port = "8000";', f'.port = "{backend_port}";'))
        self.port = _free_port()
        self.log = (work / "varnish.log").open("w")
        self.proc = subprocess.Popen(
            [VARNISHD, "-F", "-j", "none", "-n", str(work / "varnish"), "-f", str(vcl)]
            + ["-a", f"127.0.0.1:{self.port}", "-s", "malloc,64m"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        sys.exit(f"varnishd did not start; see {work / 'varnish.log'}")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.log.close()


class Editor:
    """An editor in a browser: logs in to the admin and posts a summary's change form with
    what the form holds and a new headline, as a browser submits it."""

    def __init__(self, server: Gunicorn, summary: int) -> None:
        self.server = server
        self.change = f"/admin/papers/summary/{summary}/change/"
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, data: list | None = None):
        import httpx

        origin = f"https://127.0.0.1:{self.server.port}"
        headers = {"X-Forwarded-Proto": "https", "Referer": origin + path}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if data is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        response = httpx.request(
            method,
            self.server.url(path),
            headers=headers,
            content=urlencode(data) if data is not None else None,
            timeout=60,
        )
        for cookie in response.headers.get_list("set-cookie"):
            name, _, rest = cookie.partition("=")
            self.cookies[name.strip()] = rest.split(";")[0]
        return response

    def form(self, path: str, form_id: str) -> list:
        import lxml.html

        page = lxml.html.fromstring(self.request("GET", path).text)
        return list(page.get_element_by_id(form_id).form_values())

    def login(self) -> None:
        values = dict(self.form("/admin/login/", "login-form"))
        values.update(username="bench", password=EDITOR_PASSWORD)
        response = self.request("POST", "/admin/login/", list(values.items()))
        if response.status_code != 302:
            sys.exit(f"the bench editor could not log in: {response.status_code}")

    def edit(self, number: int) -> bool:
        values = [
            (name, f"Headline as edited, take {number}" if name == "headline" else value)
            for name, value in self.form(self.change, "summary_form")
        ]
        return self.request("POST", self.change, values).status_code == 302


def _before_checkout(work: Path) -> tuple[str, Path]:
    """The commit before the page cache was retired by tag, unpacked under ``work``."""
    rev = os.environ.get("BENCH_BEFORE_REV")
    if not rev:
        added = subprocess.run(
            ["git", "log", "--diff-filter=A", "--format=%h", "--", "digest_site/cache_tags.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        if not added:
            sys.exit("set BENCH_BEFORE_REV: no commit adds digest_site/cache_tags.py")
        rev = added[-1] + "^"
    target = work / "before"
    target.mkdir()
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return rev, target


def _prepare(env: dict[str, str], root: Path) -> tuple[list[str], int]:
    """Migrate, load the demo, collect the static files and add the bench editor in the
    database of ``env`` with the code under ``root``; the visited pages and the summary to edit."""
    _scratch_database(env["DATABASE_URL"])
    commands = (("migrate", "--noinput", "-v0"), ("load_demo",), ("collectstatic", "--noinput"))
    for args in commands:
        subprocess.run([PYTHON, "manage.py", *args], cwd=root, env=env, check=True)
    subprocess.run(
        [PYTHON, "manage.py", "createsuperuser", "--noinput", "--username", "bench"]
        + ["--email", "bench@example.org"],
        cwd=root,
        env={**env, "DJANGO_SUPERUSER_PASSWORD": EDITOR_PASSWORD},
        check=True,
    )
    out = subprocess.run(
        [PYTHON, "-c", VISITED], cwd=root, env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    return out[:-1], int(out[-1])


def _editing_hours(binary: str, env: dict[str, str], root: Path, work: Path) -> dict:
    """The visited pages at 64 connections for ``EDIT_SECONDS`` while the editor logs in and
    makes ``EDITS`` edits spread over them; latency, and renders counted past the cache."""
    import redis

    paths, summary = _prepare(env, root)
    counting = work / "counting"
    counting.mkdir(exist_ok=True)
    (counting / "bench_counting.py").write_text(COUNTING_WSGI)
    script = work / "visited.lua"
    script.write_text(
        "paths = {" + ", ".join(f'"{p}"' for p in paths) + "}\n"
        "counter = 0\n"
        "request = function()\n"
        "  counter = counter + 1\n"
        "  return wrk.format(nil, paths[counter % #paths + 1])\n"
        "end\n"
    )
    counter = redis.Redis.from_url(REDIS_URL)
    counter.flushdb()
    server_env = {**env, "PYTHONPATH": str(counting), "BENCH_COUNTER_URL": REDIS_URL}
    server = Gunicorn(
        server_env, work / f"gunicorn-{root.name}.log", root=root, app="bench_counting"
    )
    try:
        for path in paths:  # each page rendered and stored once before the hour starts
            server.get(path)
        counter.delete("bench:renders")
        result: dict = {}
        load = threading.Thread(
            target=lambda: result.update(
                wrk(
                    binary,
                    server.url("/"),
                    connections=64,
                    seconds=EDIT_SECONDS,
                    script=script,
                    warm=False,
                )
            )
        )
        started = time.monotonic()
        load.start()
        editor = Editor(server, summary)
        editor.login()
        made = 0
        for number in range(EDITS):
            time.sleep(max(0.0, started + (number + 0.5) * EDIT_SECONDS / EDITS - time.monotonic()))
            made += editor.edit(number)
        load.join()
        result.update(renders=int(counter.get("bench:renders") or 0), edits=made, pages=len(paths))
    finally:
        server.stop()
    return result


def _render_times(env: dict[str, str], **extra: str) -> str:
    """Server time of an uncached render, in-process (cache off), over 50 renders: the
    wall-clock median, p95 and minimum, and the median of the process's CPU time (on a
    shared machine the minimum and the CPU time say what a render costs, the median what
    it waited). Then where the median render's time goes: the templates (the page's, with
    its context processors), the queries' execution (statement sent to rows fetched), and the rest
    (building and reading querysets, the view's Python, middleware). The daily's entries come
    from the cache after the first render (``digest_site.part_cache``): its second line is
    the render after a retirement of everything, every entry rendered."""
    code = f"""
import time, statistics, django
django.setup()
import django.shortcuts
from django.db import connection
from django.template import loader
from django.test import Client
from django.test.utils import CaptureQueriesContext
spent = dict(templates=0.0, sql=0.0)
def timed(name, function):
    def run(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - started
    return run
django.shortcuts.loader.render_to_string = timed("templates", loader.render_to_string)
def sql(execute, *args):
    return timed("sql", execute)(*args)
import digest_site.wsgi  # as gunicorn's worker loads it: it freezes what was loaded
from digest_site import cache_tags
client = Client()
for path in ({DAILY!r}, {INDEX!r}):
    kw = dict(HTTP_X_FORWARDED_PROTO='https', HTTP_HOST='127.0.0.1')
    for _ in range(10):
        client.get(path, **kw)
    times, cpu, parts = [], [], {{name: [] for name in spent}}
    with connection.execute_wrapper(sql):
        for _ in range(50):
            spent.update(templates=0.0, sql=0.0)
            t, c = time.perf_counter(), time.process_time()
            r = client.get(path, **kw)
            times.append(time.perf_counter() - t); cpu.append(time.process_time() - c)
            for name, value in spent.items():
                parts[name].append(value)
    with CaptureQueriesContext(connection) as q:
        client.get(path, **kw)
    ms = {{name: statistics.median(values) * 1000 for name, values in parts.items()}}
    total = statistics.median(times) * 1000
    print(f"  {{path:<24}} median {{total:6.2f}} ms, "
          f"p95 {{sorted(times)[int(len(times)*0.95)]*1000:6.2f}} ms, "
          f"min {{min(times)*1000:6.2f}} ms, CPU median {{statistics.median(cpu)*1000:6.2f}} ms, "
          f"{{len(q)}} queries, {{len(r.content)}} bytes")
    print(f"  {{'':<24}} templates {{ms['templates']:5.2f}} ms, queries executing "
          f"{{ms['sql']:5.2f}} ms, the rest {{total - ms['templates'] - ms['sql']:5.2f}} ms")
    if path != {DAILY!r}:
        continue
    # The daily's cached entries are retired with it: each render after a
    # retirement of everything renders every entry.
    times, cpu = [], []
    for _ in range(50):
        cache_tags.retire_everything()
        t, c = time.perf_counter(), time.process_time()
        client.get(path, **kw)
        times.append(time.perf_counter() - t); cpu.append(time.process_time() - c)
    with CaptureQueriesContext(connection) as q:
        cache_tags.retire_everything()
        client.get(path, **kw)
    print(f"  {{'  every entry rendered':<24}} median {{statistics.median(times) * 1000:6.2f}} ms, "
          f"p95 {{sorted(times)[int(len(times)*0.95)]*1000:6.2f}} ms, "
          f"min {{min(times)*1000:6.2f}} ms, CPU median {{statistics.median(cpu)*1000:6.2f}} ms, "
          f"{{len(q)}} queries")
"""
    return subprocess.run(
        [PYTHON, "-c", code],
        cwd=ROOT,
        env={**env, "PAGE_CACHE": "0", **extra},
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _yardstick() -> float:
    """Seconds this machine's Python takes for ten million additions (best of three): the
    in-process times are absolute, so this says how fast the machine is that they were
    measured on (0.64 s on the 2-core sandbox of 2026-12-01)."""
    best = float("inf")
    for _ in range(3):
        started, total = time.perf_counter(), 0
        for i in range(10_000_000):
            total += i
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    binary = _ensure_wrk()
    work = Path(tempfile.mkdtemp(prefix="bench-pages-"))
    env = _environ(work)
    print(f"scratch database {DATABASE_URL}, Redis {REDIS_URL}, work dir {work}")
    _scratch_database()
    _manage(env, "migrate", "--noinput", "-v0")
    _manage(env, "load_demo")
    _manage(env, "collectstatic", "--noinput", "-v0")
    body = _write_static_copy(env, work)
    print(f"daily page: {len(body):,} bytes, copied to {STATIC}")
    print(f"machine: 10 million Python additions in {_yardstick():.2f} s")
    print("uncached render, server time in-process (PostgreSQL, page cache off):")
    print(_render_times(env), end="")

    results: dict[str, dict] = {}
    cached = Gunicorn(env, work / "gunicorn-cached.log")
    try:
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()
        for path in (DAILY, INDEX):
            status, headers, _ = cached.get(path)
            assert status == 200 and "public" in headers.get("Cache-Control", ""), headers
        results["static file"] = wrk(binary, cached.url(STATIC), connections=16, seconds=SECONDS)
        results["cached daily"] = wrk(binary, cached.url(DAILY), connections=16, seconds=SECONDS)
        results["cached index"] = wrk(binary, cached.url(INDEX), connections=16, seconds=SECONDS)
        results["cached daily, 64 conn"] = wrk(
            binary, cached.url(DAILY), connections=64, seconds=LONG_SECONDS
        )
        if Path(VARNISHD).exists():
            varnish = Varnish(cached.port, work)
            try:
                for name, path in (("static file", STATIC), ("daily", DAILY)):
                    results[f"Varnish: {name}"] = wrk(
                        binary, varnish.url(path), connections=16, seconds=SECONDS
                    )
            finally:
                varnish.stop()
        else:
            print(f"no {VARNISHD}: the Varnish runs are left out (apt-get install varnish)")
    finally:
        cached.stop()
    uncached = Gunicorn({**env, "PAGE_CACHE": "0"}, work / "gunicorn-uncached.log")
    try:
        results["uncached daily"] = wrk(
            binary, uncached.url(DAILY), connections=16, seconds=SECONDS
        )
        results["uncached index"] = wrk(
            binary, uncached.url(INDEX), connections=16, seconds=SECONDS
        )
    finally:
        uncached.stop()

    editing = {}
    if EDIT_SECONDS:
        rev, before = _before_checkout(work)
        runs = (
            (f"before ({rev})", before, "_before"),
            ("after (this checkout)", ROOT, "_after"),
        )
        for label, root, suffix in runs:
            run_env = {
                **env,
                "DATABASE_URL": DATABASE_URL + suffix,
                "STATIC_ROOT": str(work / f"static{suffix}"),
            }
            editing[label] = _editing_hours(binary, run_env, root, work)

    static = results["static file"]["rps"]
    print(f"\nwrk, {WORKERS} gunicorn workers, 16 connections {SECONDS} s per run")
    print("  (the Varnish rows are against the static file served by Varnish):")
    recheck = env.get("PAGE_CACHE_VERSION_RECHECK_MS")
    recheck = f"{recheck} ms" if recheck else "PAGE_CACHE_VERSION_RECHECK_MS (production's default)"
    print(f"  (each worker re-reads the retired tags at most every {recheck})")
    print(
        f"  {'':<31} {'req/s':>9} {'× static':>9} {'p50':>9} {'p99':>9}"
        f" {'non-2xx':>8} {'errors':>7}"
    )
    for name, r in results.items():
        # Through Varnish, against the static file through Varnish.
        base = results.get("Varnish: static file", {}).get("rps") if "Varnish" in name else None
        target = TARGETS.get(name)
        mark = ""
        ratio = r["rps"] / (base or static)
        if target is not None:
            mark = "  ok" if ratio >= target else f"  below {target}×"
        if name.endswith("64 conn"):
            good = r["non_2xx"] == 0 and r["errors"] == 0 and r["p99"] < 100
            mark = "  ok" if good else "  target: 0 errors, p99 < 100 ms"
        print(
            f"  {name:<31} {r['rps']:9.0f} {ratio:8.2f}× {r['p50']:7.2f}ms "
            f"{r['p99']:7.2f}ms {r['non_2xx']:8d} {r['errors']:7d}{mark}"
        )
    if editing:
        print(
            f"\nediting hours: the {EDITS} edits through the admin in {EDIT_SECONDS} s while the"
            f" {next(iter(editing.values()))['pages']} most-visited pages are read"
            " at 64 connections:"
        )
        print(
            f"  {'':<31} {'req/s':>9} {'p50':>9} {'p99':>9} {'renders':>8} {'per edit':>9}"
            f" {'edits':>6} {'non-2xx':>8} {'errors':>7}"
        )
        for name, r in editing.items():
            print(
                f"  {name:<31} {r['rps']:9.0f} {r['p50']:7.2f}ms {r['p99']:7.2f}ms "
                f"{r['renders']:8d} {r['renders'] / max(r['edits'], 1):9.1f} {r['edits']:6d}"
                f" {r['non_2xx']:8d} {r['errors']:7d}"
            )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
