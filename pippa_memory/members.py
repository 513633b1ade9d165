"""Who a household member is to the memory engine (contract v2): a stable id and a name."""

from django.contrib.auth.models import AbstractBaseUser


def member_id(user: AbstractBaseUser) -> str:
    """The member's stable id for the engine: the Django user's primary key, as a string."""
    return str(user.pk)


def member_name(user: AbstractBaseUser) -> str:
    """The name the engine records beside the id: the full name, else the username."""
    return user.get_full_name() or user.get_username()
