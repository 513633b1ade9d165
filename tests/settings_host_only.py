"""The host alone: the project's settings with the ``pippa_memory`` plug-in uninstalled."""

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS

INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "pippa_memory"]
