from django.urls import path

from pippa_memory.brain.views import BrainDoorView

urlpatterns = [path("brain/", BrainDoorView.as_view(), name="brain-door")]
