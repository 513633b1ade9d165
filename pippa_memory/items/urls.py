"""The memory page's URLs, which the host mounts at ``memory/`` when the plug-in is installed."""

from django.urls import path

from pippa_memory.items import views

urlpatterns = [
    path("", views.memory_page, name="memory-page"),
    path("items/<str:item_id>/forget/", views.forget_item, name="memory-forget"),
    path("items/<str:item_id>/scope/", views.change_scope, name="memory-scope"),
    path("items/<str:item_id>/keep/", views.keep_item, name="memory-keep"),
    path("preference/", views.save_preference, name="memory-preference"),
    path("members/<str:member>/forget/", views.forget_member, name="memory-member-forget"),
]
