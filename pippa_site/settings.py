"""The site's settings: the household WebUI (:mod:`pippa_site.host_settings`) with the memory
plug-in installed. This package composes the two apps, so it is the one place that imports both
apps' ``conf``; ``webui`` imports nothing of ``pippa_memory``. The production profile,
``pippa_site.settings_production``, builds on this module and hardens it.
"""

from pippa_memory.conf import from_environment as memory_from_environment
from pippa_site.host_settings import *  # noqa: F403
from pippa_site.host_settings import INSTALLED_APPS, env

INSTALLED_APPS = [*INSTALLED_APPS, "pippa_memory"]
ROOT_URLCONF = "pippa_site.urls"

# The memory plug-in's knobs: the PIPPA_MEMORY_* variables that are set; the rest take their
# defaults from pippa_memory/conf.py, where each is stated once and described. ENABLED=false closes
# every seam and door on this side; an unset URL makes memory behave as if the engine were down.
PIPPA_MEMORY = memory_from_environment(env)
