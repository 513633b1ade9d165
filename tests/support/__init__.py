"""Helpers the tests share (fixtures are in the conftest.py files): never a test module."""
