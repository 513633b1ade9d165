"""The project: settings, URLs, WSGI/ASGI and gunicorn's configuration, composing the host
(``webui``) and the memory plug-in (``pippa_memory``)."""
