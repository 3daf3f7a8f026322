"""The Celery application. Tasks live in each app's ``tasks.py`` and stay thin."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "digest_site.settings")

app = Celery("digest_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The CDN purge (digest_site/tasks.py): the site package is not an app.
app.autodiscover_tasks(["digest_site"])
