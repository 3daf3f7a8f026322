# Paper Daily — the two commands are `make run` and `make test`; everything else is a helper.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# The Django templates, indented by djhtml (`make format`; `make lint` checks them).
TEMPLATES = $(shell find . -path ./.venv -prune -o -path ./node_modules -prune -o -name '*.html' -path '*templates*' -print)
# The site's own links (canonical, hreflang, confirmation mail) follow them unless SITE_URL is set.
export HOST PORT

.PHONY: install run test test-fast lint format migrations-check messages bench worker beat clean

$(STAMP): requirements.lock
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	touch $(STAMP)

install: $(STAMP)

# Measured from a clean clone on the 2-core development machine, loaded by other jobs (load
# average 13-15), fresh SQLite file: install 345 s (first time only), migrate 43 s, load_demo
# 149 s, load_demo_draft 24 s, verify_reference (16 programs) 274 s, 20 s to the first page:
# about 8.5 min to the first page after the install. See README.md.
run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	@# A draft daily from a bundled real arXiv listing, for trying the editor's desk.
	$(BIN)/python manage.py load_demo_draft
	@# Runs the 16 reference programs so the code pages show verified output;
	@# a failing program is reported but does not stop the site from starting.
	-$(BIN)/python manage.py verify_reference
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The edit loop: the suite less the browser, the Celery worker and the reference programs
# (`make test` and CI still run everything).
test-fast: install
	$(BIN)/python -m pytest -m "not browser and not worker and not programs" $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/djhtml --check $(TEMPLATES)
	$(BIN)/lint-imports

format: install
	$(BIN)/djhtml $(TEMPLATES)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

migrations-check: install
	$(BIN)/python manage.py makemigrations --check --dry-run

# Regenerate the gettext catalogs after changing interface strings (needs GNU gettext).
messages: install
	$(BIN)/python manage.py makemessages --locale zh --ignore '.venv/*' --ignore 'var/*'
	$(BIN)/python manage.py compilemessages --locale zh --ignore '.venv/*'

bench: install
	@set -e; found=0; for script in bench/*.py; do \
		[ -e "$$script" ] || continue; found=1; echo "== $$script"; $(BIN)/python "$$script"; \
	done; [ $$found = 1 ] || echo "No benchmarks yet."

worker: install
	$(BIN)/celery -A digest_site worker --loglevel INFO

beat: install
	$(BIN)/celery -A digest_site beat --loglevel INFO

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache
