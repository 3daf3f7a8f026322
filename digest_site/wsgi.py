import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")
application = get_wsgi_application()

# What is loaded by now (Django, the apps and their modules: some 280,000 objects that the
# collector tracks) lives as long as the worker. Out of the collector's way: a full collection
# walked them all, about 250 ms during which the worker answered nobody (bench machine,
# 2026-12-02), and the requests' long-lived leftovers (caches) set one off now and then.
gc.freeze()
