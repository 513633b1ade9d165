"""The JSON API the chat page itself uses (Django REST framework, session auth with CSRF)."""
