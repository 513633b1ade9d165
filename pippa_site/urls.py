"""The site's URLs: the host's (:mod:`webui.urls`) and the memory plug-in's API and page."""

from django.urls import include, path

from webui.urls import handler404
from webui.urls import urlpatterns as host_urlpatterns

urlpatterns = [
    *host_urlpatterns,
    path("api/memory/", include("pippa_memory.urls")),
    path("memory/", include("pippa_memory.items.urls")),
]

__all__ = ["handler404", "urlpatterns"]
