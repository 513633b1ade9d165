"""The memory page's URLs, which the host mounts at ``memory/`` when the plug-in is installed."""

from django.urls import path

from pippa_memory.items import truth_views, views

urlpatterns = [
    path("", views.memory_page, name="memory-page"),
    path("items/<str:item_id>/forget/", views.forget_item, name="memory-forget"),
    path("items/<str:item_id>/scope/", views.change_scope, name="memory-scope"),
    path("items/<str:item_id>/keep/", views.keep_item, name="memory-keep"),
    path("preference/", views.save_preference, name="memory-preference"),
    path("add/", truth_views.add_memory, name="memory-add"),
    path("items/<str:item_id>/correct/", truth_views.correct_memory, name="memory-correct"),
    path("items/<str:item_id>/restore/", truth_views.restore_memory, name="memory-restore"),
    path("members/<str:member>/forget/", views.forget_member, name="memory-member-forget"),
]
