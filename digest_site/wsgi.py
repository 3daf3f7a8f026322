import gc
import os

from django.core.wsgi import get_wsgi_application

# The collector's youngest generation is collected after this many new container objects,
# not CPython's 700: a render makes thousands, so the default collected about once a
# request and, through the older generations, walked the kept caches every few hundred:
# 0.26 ms of an uncached daily's server time in collections, 0.05 ms at 10,000 (3,000
# renders each, bench machine of 2026-12-02). Garbage in cycles waits a request or two.
YOUNG_COLLECTED_AFTER = 10_000

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")
application = get_wsgi_application()

# What is loaded by now (Django, the apps and their modules: some 280,000 objects that the
# collector tracks) lives as long as the worker. Out of the collector's way: a full collection
# walked them all, about 250 ms during which the worker answered nobody (bench machine,
# 2026-12-02), and the requests' long-lived leftovers (caches) set one off now and then.
gc.freeze()
gc.set_threshold(YOUNG_COLLECTED_AFTER, *gc.get_threshold()[1:])
