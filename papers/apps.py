from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PapersConfig(AppConfig):
    name = "papers"
    verbose_name = _("Papers")
