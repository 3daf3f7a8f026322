import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")
application = get_wsgi_application()

# What is loaded by now (Django, the apps and their modules) lives as long as the worker: out
# of the collector's way, so that a full collection does not walk it all.
gc.freeze()
