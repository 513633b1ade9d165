"""URLs of the household WebUI (the host alone: the site's, :mod:`pippa_site.urls`, add the
memory plug-in's)."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from webui.health import views as health_views
from webui.web import accounts, views
from webui.web import ledger as ledger_views

urlpatterns = [
    path("", views.conversation_list, name="conversation-list"),
    path("conversations/new/", views.conversation_new, name="conversation-new"),
    path(
        "conversations/<uuid:conversation_id>/",
        views.conversation_detail,
        name="conversation-detail",
    ),
    path(
        "conversations/<uuid:conversation_id>/rename/",
        views.conversation_rename,
        name="conversation-rename",
    ),
    path(
        "conversations/<uuid:conversation_id>/model/",
        views.conversation_move,
        name="conversation-move",
    ),
    path(
        "conversations/<uuid:conversation_id>/delete/",
        views.conversation_delete,
        name="conversation-delete",
    ),
    path("vessels/", views.vessel_list, name="vessel-list"),
    path("stream/", views.soul_stream, name="soul-stream"),
    path("stream/wake/", views.soul_stream_wake, name="soul-stream-wake"),
    path("vessels/<slug:slug>/memory-tool/", views.vessel_memory_tool, name="vessel-memory-tool"),
    path("vessels/<slug:slug>/test/", views.vessel_test_connection, name="vessel-test-connection"),
    path("cache/", ledger_views.cache_ledger, name="cache-ledger"),
    path("status/", health_views.health_page, name="health-page"),
    path("status.json", health_views.health_json, name="health-json"),
    path("health/", health_views.load_balancer_health, name="health"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("accounts/login/", accounts.LoginView.as_view(), name="login"),
    path("accounts/logout/", accounts.LogoutView.as_view(), name="logout"),
    path("accounts/", accounts.account, name="account"),
    path(
        "accounts/password_change/",
        accounts.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path("api/", include("webui.api.urls")),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]

handler404 = "webui.web.views.page_not_found"
