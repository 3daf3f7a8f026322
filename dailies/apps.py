from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DailiesConfig(AppConfig):
    name = "dailies"
    verbose_name = _("Dailies")
